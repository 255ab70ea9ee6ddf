#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/model_library.hpp"
#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/rent_vs_buy.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"
#include "pricing/plan_reference.hpp"
#include "service/http/codec/csv_writer.hpp"
#include "service/http/codec/json_reader.hpp"

namespace gpucost::http {

// POST /v1/plans/spot (see openapi.yaml SpotPlanRequest). Workload decoding (a training
// job instead of job_hours) is layered on in plan_routes.cpp.
[[nodiscard]] pricing::Result<pricing::plan::SpotPlanRequest> DecodeSpotPlanRequest(
    const nlohmann::json& body, const std::vector<std::string>& extra_keys = {});
// The answer as JSON text with `assumptions_json` (EncodeAssumptions), written without a DOM
// (byte-identical to one).
std::string EncodeSpotPlan(const pricing::plan::SpotPlan& plan, std::string_view assumptions_json);

// POST /v1/plans/rent-vs-buy.
[[nodiscard]] pricing::Result<pricing::plan::RentVsBuyRequest> DecodeRentVsBuyRequest(
    const nlohmann::json& body);
// The answer as JSON text with `assumptions_json`, written without a DOM (byte-identical to
// one).
std::string EncodeRentVsBuyPlan(const pricing::plan::RentVsBuyPlan& plan,
                                std::string_view assumptions_json);
// The month-by-month cumulative series as a table.
CsvTable CumulativeCsv(const pricing::plan::RentVsBuyPlan& plan);

// The optional `workload` of a spot plan: a training request as /v1/estimates/training takes
// it, without `hardware` (the spot offering and `nodes` supply it). Errors point under
// /workload. nullopt when the body has no workload.
[[nodiscard]] pricing::Result<std::optional<pricing::estimate::TrainingRequest>> DecodeSpotWorkload(
    const nlohmann::json& body, const pricing::ModelLibrary& models);

// POST /v1/plans/training: the estimator's training request (without `hardware`) plus
// constraints, sort, limit, offset, uncertainty and spot.
[[nodiscard]] pricing::Result<pricing::plan::TrainingPlanRequest> DecodeTrainingPlanRequest(
    const nlohmann::json& body, const pricing::ModelLibrary& models);
// One row per option of the page.
CsvTable OptionsCsv(const pricing::plan::TrainingPlan& plan);

// Ids in a spot or rent-vs-buy body that the catalog must know (offering ids, the buy
// accelerator): an unknown one is 422 naming its field with the closest known ids, as
// accelerators in estimates and plan constraints are; 404 is kept for ids in the path.
[[nodiscard]] pricing::Status CheckBodyIds(const pricing::plan::SpotPlanRequest& request,
                                           const pricing::Catalog& catalog);
[[nodiscard]] pricing::Status CheckBodyIds(const pricing::plan::RentVsBuyRequest& request,
                                           const pricing::Catalog& catalog);

// Today's UTC date (YYYY-MM-DD): price ages and the budget view's default start.
std::string TodayUtcDate();

// The training plan as POST /v1/plans/training answers it (saved scenarios re-run the same):
// the plan, the request's paging it echoes, and the workload model's consistency warnings,
// which follow the price warnings.
struct TrainingAnswer {
    pricing::plan::TrainingPlan plan;  // options point into the catalog given
    bool include_infeasible = false;
    pricing::plan::TrainingPlanSort sort = pricing::plan::TrainingPlanSort::kExpectedCost;
    std::size_t limit = 0;
    std::size_t offset = 0;
    std::vector<pricing::FieldError> model_warnings;
    std::optional<std::string> next_cursor;  // the page after this one (plan_cursor.hpp)
};
[[nodiscard]] pricing::Result<TrainingAnswer> AnswerTrainingPlan(
    pricing::plan::TrainingPlanRequest request, const pricing::Catalog& catalog,
    const pricing::PlanReference& reference, const std::string& today, unsigned cpus = 1);
// The answer as JSON text, `assumptions` set to `assumptions_json` (EncodeAssumptions), written
// without a DOM (byte-identical to one).
std::string EncodeTrainingPlan(const TrainingAnswer& answer, std::string_view assumptions_json);

// The inference plan as POST /v1/plans/inference answers it: constraint ids resolved
// case-insensitively (unknown ones 422 with close matches), every option planned for
// best_by_provider, then the requested page; model warnings as in training plans.
struct InferenceAnswer {
    pricing::plan::InferencePlan page;  // the requested page of options
    // From every option: the cheapest per provider, cheapest first; the cheapest of all with
    // why, and warnings about its price.
    std::vector<pricing::plan::InferencePlanOption> best_by_provider;
    std::optional<pricing::plan::InferencePlanOption> recommendation;
    std::string reasoning;
    std::vector<std::string> price_warnings;
    std::vector<pricing::FieldError> stale_warnings;  // best_by_provider's stale entries
    // The recommendation's cash by calendar month from the request's start date (or today).
    std::optional<pricing::plan::ServingBudgetView> budget;
    std::string catalog_version;
    std::vector<pricing::FieldError> model_warnings;
    std::size_t offset = 0;           // where the page starts among the options planned
    std::size_t available_count = 0;  // options planned (at most kMaxPlanLimit) to page through
    std::optional<std::string> next_cursor;  // the page after this one (plan_cursor.hpp)
};
// `reference` gives what each accelerator is offered for and how many instances one customer
// can get of each offering. The page is the `request.limit` options from `offset`.
[[nodiscard]] pricing::Result<InferenceAnswer> AnswerInferencePlan(
    pricing::plan::InferencePlanRequest request, const pricing::Catalog& catalog,
    const pricing::PlanReference& reference, std::size_t offset = 0);

// POST /v1/plans/inference.
[[nodiscard]] pricing::Result<pricing::plan::InferencePlanRequest> DecodeInferencePlanRequest(
    const nlohmann::json& body, const pricing::ModelLibrary& models);
// The answer as JSON text with `assumptions_json`, written without a DOM (byte-identical to
// one).
std::string EncodeInferencePlan(const InferenceAnswer& answer, std::string_view assumptions_json);
// The options of the requested page, one row each, with the catalog version and currency.
CsvTable OptionsCsv(const InferenceAnswer& answer);

}  // namespace gpucost::http
