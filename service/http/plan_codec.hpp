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

namespace gpucost::http {

// Typed reads of one JSON object of a request body, each failure recorded against a JSON
// pointer. `object` must outlive the reader. The first failure is kept: a wrong type is kMalformed (400); an integer out of
// the int range is kInvalidArgument (422). A null member counts as absent.
class JsonReader {
public:
    JsonReader(const nlohmann::json& object, std::string pointer);

    std::optional<double> Number(const std::string& key);
    std::optional<int> Int(const std::string& key);
    std::optional<std::string> String(const std::string& key);
    std::optional<bool> Bool(const std::string& key);
    // An array of strings (at most kMaxJsonArrayLength by the parser).
    std::optional<std::vector<std::string>> Strings(const std::string& key);
    // A nested object, or nullptr when absent (or on a type error, which is recorded).
    const nlohmann::json* Object(const std::string& key);
    // Fails (kMalformed) on the first member not in `known`.
    void OnlyKnown(const std::vector<std::string>& known);
    // Records a failure found by the caller.
    void Fail(pricing::ErrorCode code, const std::string& key, const std::string& detail);

    std::string PointerOf(const std::string& key) const;
    bool ok() const { return !error_.has_value(); }
    const pricing::Error& error() const { return *error_; }

private:
    const nlohmann::json* Member(const std::string& key) const;
    const nlohmann::json& object_;
    std::string pointer_;
    std::optional<pricing::Error> error_;
};

// `assumptions` array: [{name, value, unit, description, source}].
nlohmann::json ToJson(const pricing::Assumptions& assumptions);

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
