#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/assumption.hpp"
#include "pricing/error.hpp"
#include "pricing/catalog.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/rent_vs_buy.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"
#include "service/http/csv_writer.hpp"
#include "service/http/json_reader.hpp"

namespace gpucost::http {



// POST /v1/plans/spot (see openapi.yaml SpotPlanRequest). Workload decoding (a training
// job instead of job_hours) is layered on in plan_routes.cpp.
[[nodiscard]] pricing::Result<pricing::plan::SpotPlanRequest> DecodeSpotPlanRequest(
    const nlohmann::json& body, const std::vector<std::string>& extra_keys = {});
nlohmann::json ToJson(const pricing::plan::SpotPlan& plan);

// POST /v1/plans/rent-vs-buy.
[[nodiscard]] pricing::Result<pricing::plan::RentVsBuyRequest> DecodeRentVsBuyRequest(
    const nlohmann::json& body);
nlohmann::json ToJson(const pricing::plan::RentVsBuyPlan& plan);
// The month-by-month cumulative series as a table.
CsvTable CumulativeCsv(const pricing::plan::RentVsBuyPlan& plan);

// The optional `workload` of a spot plan: a training request as /v1/estimates/training takes
// it, without `hardware` (the spot offering and `nodes` supply it). Errors point under
// /workload. nullopt when the body has no workload.
[[nodiscard]] pricing::Result<std::optional<pricing::estimate::TrainingRequest>>
DecodeSpotWorkload(const nlohmann::json& body);

// POST /v1/plans/training: the estimator's training request (without `hardware`) plus
// constraints, sort, limit, offset, uncertainty and spot.
[[nodiscard]] pricing::Result<pricing::plan::TrainingPlanRequest> DecodeTrainingPlanRequest(
    const nlohmann::json& body);
nlohmann::json ToJson(const pricing::plan::TrainingPlan& plan,
                      const pricing::plan::TrainingPlanRequest& request);
// One row per option of the page.
CsvTable OptionsCsv(const pricing::plan::TrainingPlan& plan);

// POST /v1/plans/inference.
[[nodiscard]] pricing::Result<pricing::plan::InferencePlanRequest> DecodeInferencePlanRequest(
    const nlohmann::json& body);
nlohmann::json ToJson(const pricing::plan::InferencePlan& plan);
CsvTable OptionsCsv(const pricing::plan::InferencePlan& plan);

}  // namespace gpucost::http
