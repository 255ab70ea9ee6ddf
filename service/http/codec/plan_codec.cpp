#include "service/http/codec/plan_codec.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>

#include <set>
#include "pricing/money.hpp"
#include "pricing/plan/calendar.hpp"
#include "pricing/plan/field_checker.hpp"
#include "pricing/plan/inference_explain.hpp"
#include "pricing/plan/plan_ids.hpp"

#include "service/http/codec/encoded_cache.hpp"
#include "service/http/codec/estimate_codec.hpp"
#include "service/http/codec/field_table.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_reader.hpp"
#include "service/http/codec/model_codec.hpp"

namespace gpucost::http {

namespace {
// Every plan is written on list prices; a price book's answer is re-marked "price_book" with
// its echo (price_book_codec.cpp, MarkPricingBasis).
constexpr const char* kListPricing = "list";
}  // namespace
namespace {

using pricing::ErrorCode;

// Re-roots an error found in a nested object decoded as if it were the body.
pricing::Error UnderPointer(pricing::Error error, const std::string& prefix) {
    auto reroot = [&](std::string& field) { field = prefix + (field == "/" ? "" : field); };
    std::string old_field = error.field;
    reroot(error.field);
    for (auto& e : error.errors) {
        reroot(e.field);
    }
    if (!old_field.empty() && error.message.rfind(old_field + ":", 0) == 0) {
        error.message = error.field + error.message.substr(old_field.size());
    }
    return error;
}

// An id from a request body, as the catalog's lowercase key: ids compare case-insensitively,
// and the planners compare them with the catalog's spelling.
std::optional<std::string> LowerId(std::optional<std::string> id) {
    if (id) {
        *id = pricing::IdKey(*id);
    }
    return id;
}

// Reads a list of price type names at `key`; an unknown name is 422 naming its element
// (`<key>/<i>`), as an unknown accelerator in constraints is.
std::vector<pricing::PriceType> PriceTypes(JsonReader& r, const std::string& key) {
    std::vector<pricing::PriceType> out;
    const auto names = r.Strings(key).value_or(std::vector<std::string>{});
    for (std::size_t i = 0; i < names.size(); ++i) {
        auto type = pricing::ParsePriceType(names[i]);
        if (!type) {
            r.FailAt(ErrorCode::kInvalidArgument, key, i,
                     "unknown price type '" + names[i].substr(0, 32) +
                         "'; use on_demand, spot, commit_1y, commit_3y or capacity_block");
            return {};
        }
        out.push_back(*type);
    }
    return out;
}

}  // namespace

pricing::Result<pricing::plan::SpotPlanRequest> DecodeSpotPlanRequest(
    const json& body, const std::vector<std::string>& extra_keys) {
    JsonReader r(body, "");
    std::vector<std::string> known = {"job_hours",
                                      "on_demand_usd_per_hour",
                                      "spot_usd_per_hour",
                                      "interruptions_per_hour",
                                      "spot_offering_id",
                                      "on_demand_offering_id",
                                      "nodes",
                                      "checkpoint_minutes",
                                      "restart_minutes",
                                      "checkpoint_interval_hours",
                                      "max_spot_usd_per_hour",
                                      "deadline_hours",
                                      "required_deadline_probability",
                                      "min_savings_fraction"};
    known.insert(known.end(), extra_keys.begin(), extra_keys.end());
    r.OnlyKnown(known);
    pricing::plan::SpotPlanRequest q;
    q.job_hours = r.Number("job_hours");
    q.on_demand_usd_per_hour = r.Number("on_demand_usd_per_hour");
    q.spot_usd_per_hour = r.Number("spot_usd_per_hour");
    q.interruptions_per_hour = r.Number("interruptions_per_hour");
    q.spot_offering_id = LowerId(r.String("spot_offering_id"));
    q.on_demand_offering_id = LowerId(r.String("on_demand_offering_id"));
    q.nodes = r.Int("nodes").value_or(1);
    q.checkpoint_minutes = r.Number("checkpoint_minutes");
    q.restart_minutes = r.Number("restart_minutes");
    q.checkpoint_interval_hours = r.Number("checkpoint_interval_hours");
    q.max_spot_usd_per_hour = r.Number("max_spot_usd_per_hour");
    q.deadline_hours = r.Number("deadline_hours");
    q.required_deadline_probability = r.Number("required_deadline_probability");
    q.min_savings_fraction = r.Number("min_savings_fraction");
    if (!r.ok()) {
        return r.error();
    }
    return q;
}

namespace {

// The spot-risk object of the offering the plan read its interruption rate from, or null.
void WriteSpotRisk(JsonWriter& w, const std::optional<std::string>& bucket_label) {
    const auto bucket =
        bucket_label ? pricing::ParseSpotInterruptionBucket(*bucket_label) : std::nullopt;
    if (!bucket) return w.Null();
    w.BeginObject();
    w.Member("bucket", bucket->label);
    w.Member("max_percent_per_month", bucket->max_percent_per_month);
    w.Member("min_percent_per_month", bucket->min_percent_per_month);
    w.EndObject();
}

void WriteSpotRange(JsonWriter& w, std::string_view key,
                    const std::optional<pricing::plan::SpotRange>& range) {
    w.Key(key);
    if (!range) return w.Null();
    w.BeginObject();
    w.Member("high", range->high);
    w.Member("low", range->low);
    w.EndObject();
}

// A range of amounts as answers state money: both ends to the cent.
std::optional<pricing::plan::SpotRange> InCents(std::optional<pricing::plan::SpotRange> range) {
    if (range) {
        range->low = pricing::RoundToCents(range->low);
        range->high = pricing::RoundToCents(range->high);
    }
    return range;
}

// The members that sort before `job_hours` (apart from EncodeSpotPlan to keep each one
// screen): the checkpoint and interruption figures.
void WriteSpotCheckpointsAndInterruptions(JsonWriter& w, const pricing::plan::SpotPlan& p) {
    w.Member("checkpoint_interval_hours", p.checkpoint_interval_hours);
    w.Member("checkpoint_minutes", p.checkpoint_hours * 60.0);
    w.Member("checkpoints", p.checkpoints);
    w.Member("cluster_interruptions_per_hour", p.cluster_interruptions_per_hour);
    w.Member("currency", pricing::kCurrency);
    w.Member("deadline_hours", p.deadline_hours);
    w.Member("expected_interruptions", p.expected_interruptions);
    w.UsdMember("expected_mixed_cost_usd", p.expected_mixed_cost_usd);
    w.Member("expected_mixed_savings_fraction", p.expected_mixed_savings_fraction);
    w.Member("expected_overhead_fraction", p.expected_overhead_fraction);
    w.Member("expected_savings_fraction", p.expected_savings_fraction);
    w.UsdMember("expected_savings_usd", p.expected_savings_usd);
    w.UsdMember("expected_spot_cost_usd", p.expected_spot_cost_usd);
    WriteSpotRange(w, "expected_spot_cost_usd_range", InCents(p.expected_spot_cost_usd_range));
    w.Member("expected_spot_hours", p.expected_spot_hours);
    w.Member("failure_free_hours", p.failure_free_hours);
    WriteSpotRange(w, "interruption_percent_per_month_range",
                   p.interruption_percent_per_month_range);
    w.Member("interruptions_per_hour", p.interruptions_per_hour);
}

}  // namespace

std::string EncodeSpotPlan(const pricing::plan::SpotPlan& p, std::string_view assumptions_json) {
    std::string out;
    out.reserve(assumptions_json.size() + 2048);
    JsonWriter w(out);
    w.BeginObject();
    w.Key("assumptions");
    w.Raw(assumptions_json);
    w.Member("catalog_version", p.catalog_version);
    WriteSpotCheckpointsAndInterruptions(w, p);
    w.Member("job_hours", p.job_hours);
    w.Member("mean_hours_between_interruptions", p.mean_hours_between_interruptions);
    w.Member("mixed_slack_hours", p.mixed_slack_hours);
    w.Member("nodes", p.nodes);
    w.UsdRateMember("on_demand_cluster_usd_per_hour", p.on_demand_cluster_usd_per_hour);
    w.UsdMember("on_demand_cost_usd", p.on_demand_cost_usd);
    w.Member("on_demand_deadline_probability", p.on_demand_deadline_probability);
    w.Member("on_demand_hours", p.on_demand_hours);
    w.Member("on_demand_offering_id", p.on_demand_offering_id);
    w.UsdRateMember("on_demand_usd_per_hour", p.on_demand_usd_per_hour);
    w.Member("pricing_basis", kListPricing);
    w.Member("reasoning", p.reasoning);
    w.Member("recommendation", pricing::plan::SpotRecommendationName(p.recommendation));
    w.Member("restart_minutes", p.restart_hours * 60.0);
    w.UsdRateMember("spot_cluster_usd_per_hour", p.spot_cluster_usd_per_hour);
    w.Member("spot_deadline_probability", p.spot_deadline_probability);
    WriteSpotRange(w, "spot_deadline_probability_range", p.spot_deadline_probability_range);
    w.Key("spot_interruption");
    WriteSpotRisk(w, p.interruption_bucket);
    w.Member("spot_offering_id", p.spot_offering_id);
    w.UsdRateMember("spot_usd_per_hour", p.spot_usd_per_hour);
    w.Key("warnings");
    WriteWarnings(w, p.warnings);
    w.Member("young_checkpoint_interval_hours", p.young_checkpoint_interval_hours);
    w.EndObject();
    return out;
}

namespace {

using pricing::plan::BuySide;
using pricing::plan::RentSide;

// POST /v1/plans/rent-vs-buy's /buy, in the order its members are read.
const auto kBuyFields = std::to_array<RequestField<BuySide>>({
    {"capex_usd", &Optional<&BuySide::capex_usd>},
    {"opex_usd_per_month", &Optional<&BuySide::opex_usd_per_month>},
    {"accelerator", [](JsonReader& r, std::string_view key,
                       BuySide& buy) { buy.accelerator = LowerId(r.String(key)); }},
    {"total_accelerators", &Optional<&BuySide::total_accelerators>},
    {"server_price_usd", &Optional<&BuySide::server_price_usd>},
    {"purchase_price_usd_per_accelerator", &Optional<&BuySide::purchase_price_usd_per_accelerator>},
    {"chassis_overhead_fraction", &Optional<&BuySide::chassis_overhead_fraction>},
    {"tdp_w", &Optional<&BuySide::tdp_w>},
    {"server_power_overhead_fraction", &Optional<&BuySide::server_power_overhead_fraction>},
    {"utilization", &Optional<&BuySide::utilization>},
    {"pue", &Optional<&BuySide::pue>},
    {"usd_per_kwh", &Optional<&BuySide::usd_per_kwh>},
    {"hosting_usd_per_accelerator_month", &Optional<&BuySide::hosting_usd_per_accelerator_month>},
    {"staff_usd_per_month", &Optional<&BuySide::staff_usd_per_month>},
    {"depreciation_years", &Optional<&BuySide::depreciation_years>},
    {"residual_value_fraction", &Optional<&BuySide::residual_value_fraction>},
    {"hosting_usd_per_kw_month", &Optional<&BuySide::hosting_usd_per_kw_month>},
    {"idle_power_fraction", &Optional<&BuySide::idle_power_fraction>},
    {"network_fraction", &Optional<&BuySide::network_fraction>},
    {"storage_fraction", &Optional<&BuySide::storage_fraction>},
    {"maintenance_fraction_per_year", &Optional<&BuySide::maintenance_fraction_per_year>},
    {"resale_haircut_fraction", &Optional<&BuySide::resale_haircut_fraction>},
});

// POST /v1/plans/rent-vs-buy's /rent.
const auto kRentFields = std::to_array<RequestField<RentSide>>({
    {"price_type",
     [](JsonReader& r, std::string_view key, RentSide& rent) {
         auto type = r.String(key);
         if (!type) return;
         rent.price_type = pricing::ParsePriceType(*type);
         if (!rent.price_type) {
             r.Fail(ErrorCode::kInvalidArgument, key,
                    "unknown price type '" + type->substr(0, 32) +
                        "'; use on_demand, spot, commit_1y, commit_3y or capacity_block");
         }
     }},
    {"usd_per_month", &Optional<&RentSide::usd_per_month>},
    {"offering_id", [](JsonReader& r, std::string_view key,
                       RentSide& rent) { rent.offering_id = LowerId(r.String(key)); }},
    {"usd_per_accelerator_hour", &Optional<&RentSide::usd_per_accelerator_hour>},
    {"accelerator_hours_per_month", &Optional<&RentSide::accelerator_hours_per_month>},
});

}  // namespace

pricing::Result<pricing::plan::RentVsBuyRequest> DecodeRentVsBuyRequest(const json& body) {
    JsonReader r(body, "");
    r.OnlyKnown({"buy", "rent", "discount_rate_annual", "horizon_months"});
    pricing::plan::RentVsBuyRequest q;
    q.discount_rate_annual = r.Number("discount_rate_annual");
    q.horizon_months = r.Int("horizon_months");
    const json* buy = r.Object("buy");
    const json* rent = r.Object("rent");
    if (r.ok() && buy == nullptr) {
        r.Fail(ErrorCode::kInvalidArgument, "buy", "is required");
    }
    if (r.ok() && rent == nullptr) {
        r.Fail(ErrorCode::kInvalidArgument, "rent", "is required");
    }
    if (!r.ok()) {
        return r.error();
    }
    if (auto read = ReadNested(buy, "/buy", q.buy, kBuyFields); !read.ok()) {
        return read.error();
    }
    if (auto read = ReadNested(rent, "/rent", q.rent, kRentFields); !read.ok()) {
        return read.error();
    }
    return q;
}

namespace {

void WriteRentOptions(JsonWriter& w, const std::vector<pricing::plan::RentOption>& options) {
    w.BeginArray();
    for (const auto& r : options) {
        w.BeginObject();
        w.Member("as_of", r.as_of);
        w.Member("as_of_estimated", r.as_of_estimated);
        w.Member("billed_months", r.billed_months);
        w.Member("cheaper_than_buying", r.cheaper_than_buying);
        w.UsdMember("monthly_usd", r.monthly_usd);
        w.Member("nodes", r.nodes);
        w.UsdMember("npv_usd", r.npv_usd);
        w.Member("offering_id", r.offering_id);
        w.Member("price_type", pricing::PriceTypeName(r.price_type));
        w.UsdMember("total_usd", r.total_usd);
        w.UsdRateMember("usd_per_accelerator_hour", r.usd_per_accelerator_hour);
        w.Member("verified", r.verified);
        w.EndObject();
    }
    w.EndArray();
}

void WriteCumulative(JsonWriter& w, const std::vector<pricing::plan::CumulativePoint>& points) {
    w.BeginArray();
    for (const auto& point : points) {
        w.BeginObject();
        w.Member("month", point.month);
        w.UsdMember("own_net_of_resale_usd", point.own_net_of_resale_usd);
        w.UsdMember("own_usd", point.own_usd);
        w.UsdMember("rent_usd", point.rent_usd);
        w.EndObject();
    }
    w.EndArray();
}

// The members that sort before `horizon_months` (apart from EncodeRentVsBuyPlan to keep each
// one screen): the break-even figures, capex and the monthly series.
void WriteBreakEvenAndSeries(JsonWriter& w, const pricing::plan::RentVsBuyPlan& p) {
    w.Member("break_even_months", p.break_even_months);
    w.Member("break_even_utilization", p.break_even_utilization);
    w.Member("breaks_even_within_horizon", p.breaks_even_within_horizon);
    w.UsdMember("capex_usd", p.capex_usd);
    w.Member("catalog_version", p.catalog_version);
    w.Key("cumulative");
    WriteCumulative(w, p.cumulative);
    w.Member("currency", pricing::kCurrency);
    w.Member("discount_rate_annual", p.discount_rate_annual);
    w.Member("discounted_break_even_months", p.discounted_break_even_months);
}

}  // namespace

std::string EncodeRentVsBuyPlan(const pricing::plan::RentVsBuyPlan& p,
                                std::string_view assumptions_json) {
    std::string out;
    out.reserve(assumptions_json.size() + 2048 + 128 * p.cumulative.size());
    JsonWriter w(out);
    w.BeginObject();
    w.Member("accelerator", p.accelerator);
    w.Member("accelerator_hours_per_month", p.accelerator_hours_per_month);
    w.Key("assumptions");
    w.Raw(assumptions_json);
    WriteBreakEvenAndSeries(w, p);
    w.Member("horizon_months", p.horizon_months);
    w.UsdMember("monthly_own_usd", p.monthly_own_usd);
    w.UsdMember("monthly_rent_usd", p.monthly_rent_usd);
    w.UsdMember("npv_own_usd", p.npv_own_usd);
    w.UsdMember("npv_rent_usd", p.npv_rent_usd);
    w.UsdMember("opex_usd_per_month", p.opex_usd_per_month);
    w.Member("pricing_basis", kListPricing);
    w.Member("reasoning", p.reasoning);
    w.Member("recommendation", pricing::plan::RentVsBuyRecommendationName(p.recommendation));
    w.Member("rent_billed_months", p.rent_billed_months);
    w.Member("rent_nodes", p.rent_nodes);
    w.Key("rent_options");
    WriteRentOptions(w, p.rent_options);
    if (p.rent_price_type) {
        w.Member("rent_price_type", pricing::PriceTypeName(*p.rent_price_type));
    } else {
        w.Key("rent_price_type");
        w.Null();
    }
    w.UsdRateMember("rent_usd_per_accelerator_hour", p.rent_usd_per_accelerator_hour);
    w.UsdMember("residual_value_at_horizon_usd", p.residual_value_at_horizon_usd);
    w.Member("total_accelerators", p.total_accelerators);
    w.UsdMember("total_own_usd", p.total_own_usd);
    w.UsdMember("total_rent_usd", p.total_rent_usd);
    w.Member("utilization", p.utilization);
    w.Key("warnings");
    WriteWarnings(w, p.warnings);
    w.EndObject();
    return out;
}

CsvTable CumulativeCsv(const pricing::plan::RentVsBuyPlan& plan) {
    CsvTable table;
    table.header = {"month",    "rent_usd",       "own_usd", "own_net_of_resale_usd",
                    "currency", "catalog_version"};
    for (const auto& point : plan.cumulative) {
        table.rows.push_back({std::to_string(point.month), CsvUsd(point.rent_usd),
                              CsvUsd(point.own_usd), CsvUsd(point.own_net_of_resale_usd),
                              pricing::kCurrency, plan.catalog_version});
    }
    return table;
}

pricing::Result<std::optional<pricing::estimate::TrainingRequest>> DecodeSpotWorkload(
    const json& body) {
    auto it = body.find("workload");
    if (it == body.end() || it->is_null()) {
        return std::optional<pricing::estimate::TrainingRequest>{};
    }
    if (!it->is_object()) {
        return pricing::MakeError(ErrorCode::kMalformed, "/workload: must be an object",
                                  "/workload");
    }
    if (it->contains("hardware")) {
        return pricing::MakeError(ErrorCode::kMalformed,
                                  "/workload/hardware: the spot offering and nodes give the "
                                  "hardware; remove it",
                                  "/workload/hardware");
    }
    auto decoded = DecodeTrainingRequest(*it, nullptr);
    if (!decoded.ok()) {
        return UnderPointer(decoded.error(), "/workload");
    }
    return std::optional<pricing::estimate::TrainingRequest>(std::move(decoded).value());
}

namespace {

using pricing::plan::TrainingPlanRequest;

// The training plan request's /data, /uncertainty and /spot objects.
const auto kDataFields = std::to_array<RequestField<pricing::plan::TrainingDataSizes>>({
    {"stored_gb", &Optional<&pricing::plan::TrainingDataSizes::stored_gb>},
    {"egress_gb", &Optional<&pricing::plan::TrainingDataSizes::egress_gb>},
});
const auto kUncertaintyFields = std::to_array<RequestField<TrainingPlanRequest>>({
    {"efficiency_spread_fraction", &Optional<&TrainingPlanRequest::efficiency_spread_fraction>},
    {"price_spread_fraction", &Optional<&TrainingPlanRequest::price_spread_fraction>},
    {"spot_price_spread_fraction", &Optional<&TrainingPlanRequest::spot_price_spread_fraction>},
});
const auto kSpotFields = std::to_array<RequestField<TrainingPlanRequest>>({
    {"checkpoint_minutes", &Optional<&TrainingPlanRequest::checkpoint_minutes>},
    {"restart_minutes", &Optional<&TrainingPlanRequest::restart_minutes>},
});

using pricing::plan::TrainingPlanConstraints;

// The training plan request's /constraints, in the order they are read; node_counts is read
// apart (each element named by its index).
const auto kPlanConstraintFields = std::to_array<RequestField<TrainingPlanConstraints>>({
    {"deadline_hours", &Optional<&TrainingPlanConstraints::deadline_hours>},
    {"deadline_confidence", &Optional<&TrainingPlanConstraints::deadline_confidence>},
    {"budget_confidence", &Optional<&TrainingPlanConstraints::budget_confidence>},
    {"budget_usd", &Optional<&TrainingPlanConstraints::budget_usd>},
    {"providers", &ListOrEmpty<&TrainingPlanConstraints::providers>},
    {"price_types",
     [](JsonReader& r, std::string_view key, TrainingPlanConstraints& c) {
         c.price_types = PriceTypes(r, std::string(key));
     }},
    {"regions", &ListOrEmpty<&TrainingPlanConstraints::regions>},
    {"accelerators", &ListOrEmpty<&TrainingPlanConstraints::accelerators>},
    {"max_total_accelerators", &Optional<&TrainingPlanConstraints::max_total_accelerators>},
    {"min_total_accelerators", &Optional<&TrainingPlanConstraints::min_total_accelerators>},
    {"max_wall_clock_days", &Optional<&TrainingPlanConstraints::max_wall_clock_days>},
    {"verified_only", &FlagOrFalse<&TrainingPlanConstraints::verified_only>},
    {"max_price_age_days", &Optional<&TrainingPlanConstraints::max_price_age_days>},
    {"node_counts"},
});

// /constraints of a training plan request.
pricing::Status ReadPlanConstraints(const json& constraints,
                                    pricing::plan::TrainingPlanConstraints& out) {
    JsonReader c(constraints, "/constraints");
    c.OnlyKnown(RequestKeys(kPlanConstraintFields));
    ReadFields(c, out, kPlanConstraintFields);
    const json* counts =
        constraints.contains("node_counts") ? &constraints.at("node_counts") : nullptr;
    if (counts == nullptr || counts->is_null()) {
        return c.ok() ? pricing::Status(pricing::Ok{}) : pricing::Status(c.error());
    }
    if (!counts->is_array()) {
        c.Fail(ErrorCode::kMalformed, "node_counts", "must be an array of integers");
    }
    // Each element is read as a member named by its index, so a fault names
    // /constraints/node_counts/<i>: a wrong type is 400, a well-formed integer out of range 422
    // (JsonReader::Int), as for every other integer field.
    for (std::size_t i = 0; c.ok() && i < counts->size(); ++i) {
        const std::string index = std::to_string(i);
        const json wrapped = {{index, (*counts)[i]}};
        JsonReader item(wrapped, "/constraints/node_counts");
        auto n = item.Int(index);
        if (item.ok() && !n) {
            item.Fail(ErrorCode::kMalformed, index, "must be an integer");
        }
        if (!item.ok()) {
            return item.error();
        }
        out.node_counts.push_back(*n);
    }
    return c.ok() ? pricing::Status(pricing::Ok{}) : pricing::Status(c.error());
}

}  // namespace

pricing::Result<pricing::plan::TrainingPlanRequest> DecodeTrainingPlanRequest(const json& body) {
    if (body.contains("hardware")) {
        return pricing::MakeError(ErrorCode::kMalformed,
                                  "/hardware: the planner chooses the hardware; narrow it with "
                                  "constraints (accelerators, providers, max_total_accelerators)",
                                  "/hardware");
    }
    auto workload = DecodeTrainingRequest(
        body, nullptr,
        {"constraints", "sort", "limit", "offset", "cursor", "uncertainty", "spot",
         "include_infeasible", "max_price_age_days", "start_date", "data"});
    if (!workload.ok()) {
        return workload.error();
    }
    pricing::plan::TrainingPlanRequest q;
    q.workload = std::move(workload).value();
    JsonReader r(body, "");
    if (auto sort = r.String("sort")) {
        auto parsed = pricing::plan::ParseTrainingPlanSort(*sort);
        if (!parsed) {
            r.Fail(ErrorCode::kInvalidArgument, "sort", "must be cost, time or expected_cost");
        } else {
            q.sort = *parsed;
        }
    }
    if (auto limit = r.Int("limit")) {
        if (*limit < 0) {
            r.Fail(ErrorCode::kInvalidArgument, "limit", "must be between 1 and 500");
        } else {
            q.limit = static_cast<std::size_t>(*limit);
        }
    }
    if (auto offset = r.Int("offset")) {
        if (*offset < 0) {
            r.Fail(ErrorCode::kInvalidArgument, "offset", "must not be negative");
        } else {
            q.offset = static_cast<std::size_t>(*offset);
        }
    }
    q.include_infeasible = r.Bool("include_infeasible").value_or(false);
    q.max_price_age_days = r.Number("max_price_age_days");
    q.start_date = r.String("start_date");
    const json* constraints = r.Object("constraints");
    const json* uncertainty = r.Object("uncertainty");
    const json* spot = r.Object("spot");
    const json* data = r.Object("data");
    if (!r.ok()) {
        return r.error();
    }
    if (auto read = ReadNested(data, "/data", q.data, kDataFields); !read.ok()) {
        return read.error();
    }
    if (constraints != nullptr) {
        if (auto read = ReadPlanConstraints(*constraints, q.constraints); !read.ok()) {
            return read.error();
        }
    }
    if (auto read = ReadNested(uncertainty, "/uncertainty", q, kUncertaintyFields); !read.ok()) {
        return read.error();
    }
    if (auto read = ReadNested(spot, "/spot", q, kSpotFields); !read.ok()) {
        return read.error();
    }
    return q;
}

// The training plan's answer is written as JSON text, one function per part, members in the
// sorted order nlohmann::json keeps, so the bytes are those a DOM's dump gave (JsonWriter
// checks the order in debug builds). `assumptions` comes encoded from the cache
// (encoded_cache.hpp).
namespace {

void WriteSpotInterruption(JsonWriter& w, const pricing::Offering& o) {
    if (!o.spot_interruption) return w.Null();
    w.BeginObject();
    w.Member("bucket", o.spot_interruption->label);
    w.Member("max_percent_per_month", o.spot_interruption->max_percent_per_month);
    w.Member("min_percent_per_month", o.spot_interruption->min_percent_per_month);
    w.EndObject();
}

// The offering as plan options name it (OfferingSummary's members).
void WriteOfferingSummary(JsonWriter& w, const pricing::Offering& o) {
    w.BeginObject();
    w.Member("accelerator", o.accelerator);
    w.Member("accelerator_count", o.accelerator_count);
    w.Member("as_of", o.price.as_of);
    w.Member("as_of_estimated", o.price.as_of_estimated);
    w.Member("id", o.id);
    w.Member("instance_type", o.instance_type);
    w.Member("price_type", pricing::PriceTypeName(o.price_type));
    w.Member("provider", o.provider);
    w.Member("region", o.region);
    w.Key("spot_interruption");
    WriteSpotInterruption(w, o);
    w.UsdRateMember("usd_per_hour", o.price.usd_per_hour);
    w.Member("verified", o.price.verified);
    w.EndObject();
}

void WriteViolations(JsonWriter& w, const std::vector<pricing::plan::ConstraintViolation>& list) {
    w.BeginArray();
    for (const auto& v : list) {
        w.BeginObject();
        w.Member("constraint", v.constraint);
        w.Member("limit", v.limit);
        w.Member("value", v.value);
        w.EndObject();
    }
    w.EndArray();
}

void WriteOption(JsonWriter& w, const pricing::plan::TrainingPlanOption& o) {
    w.BeginObject();
    w.Member("billed_hours", o.billed_hours);
    w.Member("budget_probability", o.budget_probability);
    w.UsdRateMember("cluster_usd_per_hour", o.cluster_usd_per_hour);
    w.UsdMember("cost_usd", o.cost_usd);
    w.UsdMember("cost_usd_p10", o.cost_usd_p10);
    w.UsdMember("cost_usd_p50", o.cost_usd_p50);
    w.UsdMember("cost_usd_p90", o.cost_usd_p90);
    w.UsdMember("data_cost_usd", o.data_cost_usd);
    w.Member("deadline_probability", o.deadline_probability);
    w.UsdMember("expected_cost_usd", o.expected_cost_usd);
    w.Member("expected_wall_clock_hours", o.expected_wall_clock_hours);
    w.Member("independent_hosts", o.independent_hosts);
    w.Member("interruptions_per_hour", o.interruptions_per_hour);
    w.Member("max_instances", o.max_instances);
    w.Member("meets_deadline", o.meets_deadline);
    w.Member("mfu", o.mfu);
    w.Member("nodes", o.nodes);
    w.Key("offering");
    WriteOfferingSummary(w, *o.offering);
    w.Key("parallelism");
    WriteLayout(w, o.parallelism);
    w.Member("price_age_days", o.price_age_days);
    w.Member("scale_out_gbit_per_s", o.scale_out_gbit_per_s);
    w.Member("total_accelerators", o.total_accelerators);
    w.Member("unused_committed_hours", o.unused_committed_hours);
    w.Key("violations");
    WriteViolations(w, o.violations);
    w.Member("wall_clock_hours", o.wall_clock_hours);
    w.Member("within_budget", o.within_budget);
    w.EndObject();
}

void WriteOptionalOption(JsonWriter& w, const std::optional<pricing::plan::TrainingPlanOption>& o) {
    if (!o) return w.Null();
    WriteOption(w, *o);
}

void WriteOptions(JsonWriter& w, const std::vector<pricing::plan::TrainingPlanOption>& options) {
    w.BeginArray();
    for (const auto& o : options) WriteOption(w, o);
    w.EndArray();
}

void WriteBindingConstraints(JsonWriter& w,
                             const std::vector<pricing::plan::BindingConstraint>& list) {
    w.BeginArray();
    for (const auto& b : list) {
        w.BeginObject();
        w.Member("best_value", b.best_value);
        w.Member("constraint", b.constraint);
        w.Member("limit", b.limit);
        w.Member("message", b.message);
        w.Member("others_met", b.others_met);
        w.Member("shortfall", b.shortfall);
        w.EndObject();
    }
    w.EndArray();
}

void WriteDataPrice(JsonWriter& w, const std::optional<pricing::DataPrice>& price) {
    if (!price) return w.Null();
    w.BeginObject();
    w.Member("as_of", price->as_of);
    w.Member("as_of_estimated", price->as_of_estimated);
    w.UsdRateMember("internet_egress_usd_per_gb", price->internet_egress_usd_per_gb);
    w.UsdRateMember("object_storage_usd_per_gb_month", price->object_storage_usd_per_gb_month);
    w.Member("provider", price->provider);
    w.Member("source", price->source);
    w.Member("verified", price->verified);
    w.EndObject();
}

// A budget view's months (training and serving alike): each {month, usd} to the cent.
void WriteMonthly(JsonWriter& w, const std::vector<pricing::plan::MonthlySpend>& monthly) {
    w.BeginArray();
    for (const auto& m : monthly) {
        w.BeginObject();
        w.Member("month", m.month);
        w.UsdMember("usd", m.usd);
        w.EndObject();
    }
    w.EndArray();
}

void WriteBudget(JsonWriter& w, const std::optional<pricing::plan::BudgetView>& b) {
    if (!b) return w.Null();
    w.BeginObject();
    w.UsdMember("compute_usd", b->compute_usd);
    w.Key("data_prices");
    WriteDataPrice(w, b->data_price);
    w.UsdMember("egress_usd", b->egress_usd);
    w.Key("monthly");
    WriteMonthly(w, b->monthly);
    w.Member("start_date", b->start_date);
    w.Member("start_date_source", b->start_date_source);
    w.UsdMember("storage_usd", b->storage_usd);
    w.UsdMember("total_usd", b->total_usd);
    w.EndObject();
}

// An object of (key, value) pairs as a DOM filled by out[key] = value gave it: keys sorted,
// a repeated key holding its last value.
template <typename Value>
void WriteKeyed(JsonWriter& w, const std::vector<std::pair<std::string, Value>>& pairs) {
    std::vector<const std::pair<std::string, Value>*> sorted;
    sorted.reserve(pairs.size());
    for (const auto& p : pairs) sorted.push_back(&p);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto* a, const auto* b) { return a->first < b->first; });
    w.BeginObject();
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        const bool replaced = i + 1 < sorted.size() && sorted[i + 1]->first == sorted[i]->first;
        if (!replaced) w.Member(sorted[i]->first, sorted[i]->second);
    }
    w.EndObject();
}

// The price warnings (each about the recommended option's offering), then the workload
// model's consistency warnings.
void WritePlanWarnings(JsonWriter& w, const std::vector<std::string>& price_warnings,
                       const std::vector<pricing::FieldError>& model_warnings) {
    w.BeginArray();
    for (const auto& text : price_warnings) WriteWarning(w, "/recommendation/offering", text);
    for (const auto& m : model_warnings) WriteWarning(w, m.field, m.detail);
    w.EndArray();
}

// The members that sort before `options`: the assumptions, the summary options, the counts
// and the request's paging (apart from EncodeTrainingPlan to keep each one screen).
void WriteMembersBeforeOptions(JsonWriter& w, const TrainingAnswer& a,
                               std::string_view assumptions_json) {
    const pricing::plan::TrainingPlan& plan = a.plan;
    w.Key("assumptions");
    w.Raw(assumptions_json);
    w.Key("best_by_provider");
    WriteOptions(w, plan.best_by_provider);
    w.Key("beyond_max_wall_clock");
    WriteOptions(w, plan.beyond_max_wall_clock);
    w.Key("binding_constraints");
    WriteBindingConstraints(w, plan.binding_constraints);
    w.Key("budget");
    WriteBudget(w, plan.budget);
    w.Member("catalog_version", plan.catalog_version);
    w.Key("cheapest");
    WriteOptionalOption(w, plan.cheapest);
    w.Member("currency", pricing::kCurrency);
    w.Member("estimates", plan.estimates);
    w.Key("fastest");
    WriteOptionalOption(w, plan.fastest);
    w.Member("feasible_count", plan.feasible_count);
    w.Member("hardware_shapes", plan.hardware_shapes);
    w.Member("include_infeasible", a.include_infeasible);
    w.Member("infeasible_count", plan.infeasible_count);
    w.Member("limit", a.limit);
    w.Member("max_wall_clock_days", plan.max_wall_clock_days);
    w.Member("next_cursor", a.next_cursor);
    w.Member("offerings_considered", plan.offerings_considered);
    w.Member("offset", a.offset);
}

}  // namespace

std::string EncodeTrainingPlan(const TrainingAnswer& a, std::string_view assumptions_json) {
    const pricing::plan::TrainingPlan& plan = a.plan;
    std::string out;
    out.reserve(assumptions_json.size() + 4096 + 2048 * (plan.options.size() + 8));
    JsonWriter w(out);
    w.BeginObject();
    WriteMembersBeforeOptions(w, a, assumptions_json);
    w.Key("options");
    WriteOptions(w, plan.options);
    w.Key("pareto_front");
    WriteOptions(w, plan.pareto_front);
    w.Member("pricing_basis", kListPricing);
    w.Member("reasoning", plan.reasoning);
    w.Key("recommendation");
    WriteOptionalOption(w, plan.recommendation);
    w.Key("skipped");
    WriteKeyed(w, plan.skipped);
    w.Key("skipped_examples");
    WriteKeyed(w, plan.skipped_examples);
    w.Member("sort", pricing::plan::TrainingPlanSortName(a.sort));
    w.Member("total_count", plan.total_count);
    w.Key("warnings");
    w.BeginArray();
    for (const auto& p : plan.warnings) WriteWarning(w, p.field, p.detail);
    for (const auto& m : a.model_warnings) WriteWarning(w, m.field, m.detail);
    w.EndArray();
    w.EndObject();
    return out;
}

CsvTable OptionsCsv(const pricing::plan::TrainingPlan& plan) {
    CsvTable t;
    t.header = {"offering_id",
                "provider",
                "instance_type",
                "accelerator",
                "price_type",
                "region",
                "offering_usd_per_hour",
                "as_of",
                "nodes",
                "total_accelerators",
                "tensor",
                "pipeline",
                "data",
                "wall_clock_hours",
                "expected_wall_clock_hours",
                "cluster_usd_per_hour",
                "billed_hours",
                "cost_usd",
                "expected_cost_usd",
                "cost_usd_p10",
                "cost_usd_p50",
                "cost_usd_p90",
                "meets_deadline",
                "within_budget",
                "violations",
                "data_cost_usd",
                "deadline_probability",
                "as_of_estimated",
                "verified",
                "currency",
                "catalog_version"};
    for (const auto& o : plan.options) {
        const pricing::Offering& f = *o.offering;
        std::string violations;
        for (const auto& v : o.violations) {
            violations += (violations.empty() ? "" : ";") + v.constraint;
        }
        t.rows.push_back({f.id,
                          f.provider,
                          f.instance_type,
                          f.accelerator,
                          std::string(pricing::PriceTypeName(f.price_type)),
                          f.region,
                          CsvNumber(f.price.usd_per_hour),
                          f.price.as_of,
                          std::to_string(o.nodes),
                          std::to_string(o.total_accelerators),
                          std::to_string(o.parallelism.tensor),
                          std::to_string(o.parallelism.pipeline),
                          std::to_string(o.parallelism.data),
                          CsvNumber(o.wall_clock_hours),
                          CsvNumber(o.expected_wall_clock_hours),
                          CsvNumber(o.cluster_usd_per_hour),
                          CsvNumber(o.billed_hours),
                          CsvUsd(o.cost_usd),
                          CsvUsd(o.expected_cost_usd),
                          CsvUsd(o.cost_usd_p10),
                          CsvUsd(o.cost_usd_p50),
                          CsvUsd(o.cost_usd_p90),
                          o.meets_deadline ? "true" : "false",
                          o.within_budget ? "true" : "false",
                          violations,
                          o.data_cost_usd ? CsvUsd(*o.data_cost_usd) : "",
                          o.deadline_probability ? CsvNumber(*o.deadline_probability) : "",
                          f.price.as_of_estimated ? "true" : "false",
                          f.price.verified ? "true" : "false",
                          pricing::kCurrency,
                          plan.catalog_version});
    }
    return t;
}

namespace {

using pricing::plan::InferencePlanRequest;

// The serving plan request's /traffic, /latency, /constraints and /api_price objects.
const auto kTrafficFields = std::to_array<RequestField<pricing::plan::InferenceTraffic>>({
    {"requests_per_second", &Optional<&pricing::plan::InferenceTraffic::requests_per_second>},
    {"tokens_per_day", &Optional<&pricing::plan::InferenceTraffic::tokens_per_day>},
});
const auto kLatencyFields = std::to_array<RequestField<InferencePlanRequest>>({
    {"max_time_to_first_token_ms", &Optional<&InferencePlanRequest::max_time_to_first_token_ms>},
    {"max_inter_token_latency_ms", &Optional<&InferencePlanRequest::max_inter_token_latency_ms>},
});
const auto kServingConstraintFields = std::to_array<RequestField<InferencePlanRequest>>({
    {"providers", &ListOrEmpty<&InferencePlanRequest::providers>},
    {"price_types",
     [](JsonReader& r, std::string_view key, InferencePlanRequest& q) {
         q.price_types = PriceTypes(r, std::string(key));
     }},
    {"regions", &ListOrEmpty<&InferencePlanRequest::regions>},
    {"accelerators", &ListOrEmpty<&InferencePlanRequest::accelerators>},
    {"verified_only", &FlagOrFalse<&InferencePlanRequest::verified_only>},
    {"max_price_age_days", &Optional<&InferencePlanRequest::max_price_age_days>},
});
const auto kApiPriceFields = std::to_array<RequestField<InferencePlanRequest>>({
    {"usd_per_million_input_tokens",
     &Optional<&InferencePlanRequest::api_usd_per_million_input_tokens>},
    {"usd_per_million_output_tokens",
     &Optional<&InferencePlanRequest::api_usd_per_million_output_tokens>},
});

}  // namespace

pricing::Result<pricing::plan::InferencePlanRequest> DecodeInferencePlanRequest(const json& body) {
    JsonReader r(body, "");
    r.OnlyKnown({"model", "precision", "kv_cache_precision", "input_tokens", "output_tokens",
                 "efficiency", "step_overhead_s", "memory_overhead_gb", "traffic", "latency",
                 "utilization", "constraints", "api_price", "limit", "cursor", "start_date",
                 "budget_months"});
    if (!r.ok()) {
        return r.error();
    }
    // The estimator's decoder reads the workload; the planner picks hardware, batch and
    // tensor parallelism, so a placeholder hardware object stands in for them.
    json workload = json::object();
    for (const char* key :
         {"model", "precision", "kv_cache_precision", "input_tokens", "output_tokens", "efficiency",
          "step_overhead_s", "memory_overhead_gb"}) {
        if (body.contains(key)) {
            workload[key] = body.at(key);
        }
    }
    workload["hardware"] = {{"accelerator", "planner"}, {"total_accelerators", 1}};
    auto decoded = DecodeInferenceRequest(workload, nullptr);
    if (!decoded.ok()) {
        return decoded.error();
    }
    pricing::plan::InferencePlanRequest q;
    q.workload = std::move(decoded).value();
    q.utilization = r.Number("utilization");
    q.start_date = r.String("start_date");
    q.budget_months = r.Int("budget_months");
    if (auto limit = r.Int("limit")) {
        if (*limit < 0) {
            r.Fail(ErrorCode::kInvalidArgument, "limit", "must be between 1 and 500");
        } else {
            q.limit = static_cast<std::size_t>(*limit);
        }
    }
    const json* traffic = r.Object("traffic");
    const json* latency = r.Object("latency");
    const json* constraints = r.Object("constraints");
    const json* api = r.Object("api_price");
    if (r.ok() && traffic == nullptr) {
        r.Fail(ErrorCode::kInvalidArgument, "traffic", "is required");
    }
    if (!r.ok()) {
        return r.error();
    }
    if (auto read = ReadNested(traffic, "/traffic", q.traffic, kTrafficFields); !read.ok()) {
        return read.error();
    }
    if (auto read = ReadNested(latency, "/latency", q, kLatencyFields); !read.ok()) {
        return read.error();
    }
    if (auto read = ReadNested(constraints, "/constraints", q, kServingConstraintFields);
        !read.ok()) {
        return read.error();
    }
    if (auto read = ReadNested(api, "/api_price", q, kApiPriceFields); !read.ok()) {
        return read.error();
    }
    return q;
}

namespace {

void WriteInferenceOption(JsonWriter& w, const pricing::plan::InferencePlanOption& o) {
    w.BeginObject();
    w.UsdMember("api_monthly_cost_usd", o.api_monthly_cost_usd);
    w.Member("batch_size", o.batch_size);
    w.Member("capacity_requests_per_second", o.capacity_requests_per_second);
    w.UsdRateMember("cluster_usd_per_hour", o.nodes * o.offering->price.usd_per_hour);
    w.Member("expert_parallel", o.expert_parallel);
    w.Member("instances_per_replica", o.instances_per_replica);
    w.Member("inter_token_latency_ms", o.inter_token_latency_ms);
    w.Member("max_instances", o.max_instances);
    w.UsdMember("monthly_cost_usd", o.monthly_cost_usd);
    w.Member("nodes", o.nodes);
    w.Key("offering");
    WriteOfferingSummary(w, *o.offering);
    w.Member("output_tokens_per_second_per_replica", o.output_tokens_per_second_per_replica);
    w.Member("pipeline_parallel", o.pipeline_parallel);
    w.Member("price_age_days", o.price_age_days);
    w.Member("reasoning", o.reasoning);
    w.Member("replicas", o.replicas);
    w.Member("savings_vs_api_fraction", o.savings_vs_api_fraction);
    w.Member("spare_replicas", o.spare_replicas);
    w.Member("tensor_parallel", o.tensor_parallel);
    w.Member("time_to_first_token_ms", o.time_to_first_token_ms);
    w.Member("total_accelerators", o.total_accelerators);
    w.UsdRateMember("usd_per_million_input_tokens", o.usd_per_million_input_tokens);
    w.UsdRateMember("usd_per_million_output_tokens", o.usd_per_million_output_tokens);
    w.UsdRateMember("usd_per_million_tokens", o.usd_per_million_tokens);
    w.EndObject();
}

void WriteInferenceOptions(JsonWriter& w,
                           const std::vector<pricing::plan::InferencePlanOption>& options) {
    w.BeginArray();
    for (const auto& o : options) WriteInferenceOption(w, o);
    w.EndArray();
}

// The recommendation's cash by calendar month (ServingBudget), null without one.
void WriteServingBudget(JsonWriter& w, const std::optional<pricing::plan::ServingBudgetView>& b) {
    if (!b) return w.Null();
    w.BeginObject();
    w.Member("end_date", b->end_date);
    w.Key("monthly");
    WriteMonthly(w, b->monthly);
    w.Member("months", b->months);
    w.Member("start_date", b->start_date);
    w.Member("start_date_source", b->start_date_source);
    w.UsdMember("total_usd", b->total_usd);
    w.UsdRateMember("usd_per_day", b->usd_per_day);
    w.EndObject();
}

}  // namespace

std::string EncodeInferencePlan(const InferenceAnswer& a, std::string_view assumptions_json) {
    const pricing::plan::InferencePlan& page = a.page;
    std::string out;
    out.reserve(assumptions_json.size() + 4096 +
                1536 * (page.options.size() + a.best_by_provider.size()));
    JsonWriter w(out);
    w.BeginObject();
    w.Key("assumptions");
    w.Raw(assumptions_json);
    w.Key("best_by_provider");
    WriteInferenceOptions(w, a.best_by_provider);
    w.Key("budget");
    WriteServingBudget(w, a.budget);
    w.Member("catalog_version", a.catalog_version);
    w.Member("currency", pricing::kCurrency);
    w.Member("estimates", page.estimates);
    w.Member("next_cursor", a.next_cursor);
    w.Key("options");
    WriteInferenceOptions(w, page.options);
    w.Member("output_tokens_per_second", page.output_tokens_per_second);
    w.Member("pricing_basis", kListPricing);
    w.Member("reasoning", a.reasoning);
    w.Key("recommendation");
    if (a.recommendation) {
        WriteInferenceOption(w, *a.recommendation);
    } else {
        w.Null();
    }
    w.Member("requests_per_second", page.requests_per_second);
    w.Key("skipped");
    WriteKeyed(w, page.skipped);
    w.Key("skipped_examples");
    WriteKeyed(w, page.skipped_examples);
    w.Member("total_count", page.total_count);
    w.Key("warnings");
    WritePlanWarnings(w, a.price_warnings, a.model_warnings);
    w.EndObject();
    return out;
}

CsvTable OptionsCsv(const InferenceAnswer& answer) {
    const pricing::plan::InferencePlan& plan = answer.page;
    CsvTable t;
    t.header = {"offering_id",
                "provider",
                "instance_type",
                "accelerator",
                "price_type",
                "region",
                "offering_usd_per_hour",
                "tensor_parallel",
                "pipeline_parallel",
                "expert_parallel",
                "instances_per_replica",
                "batch_size",
                "replicas",
                "spare_replicas",
                "nodes",
                "total_accelerators",
                "cluster_usd_per_hour",
                "time_to_first_token_ms",
                "inter_token_latency_ms",
                "monthly_cost_usd",
                "usd_per_million_input_tokens",
                "usd_per_million_output_tokens",
                "usd_per_million_tokens",
                "savings_vs_api_fraction",
                "as_of",
                "as_of_estimated",
                "verified",
                "currency",
                "catalog_version"};
    for (const auto& o : plan.options) {
        const pricing::Offering& f = *o.offering;
        t.rows.push_back({f.id,
                          f.provider,
                          f.instance_type,
                          f.accelerator,
                          std::string(pricing::PriceTypeName(f.price_type)),
                          f.region,
                          CsvNumber(f.price.usd_per_hour),
                          std::to_string(o.tensor_parallel),
                          std::to_string(o.pipeline_parallel),
                          std::to_string(o.expert_parallel),
                          std::to_string(o.instances_per_replica),
                          std::to_string(o.batch_size),
                          std::to_string(o.replicas),
                          std::to_string(o.spare_replicas),
                          std::to_string(o.nodes),
                          std::to_string(o.total_accelerators),
                          CsvNumber(o.nodes * f.price.usd_per_hour),
                          CsvNumber(o.time_to_first_token_ms),
                          CsvNumber(o.inter_token_latency_ms),
                          CsvUsd(o.monthly_cost_usd),
                          CsvNumber(o.usd_per_million_input_tokens),
                          CsvNumber(o.usd_per_million_output_tokens),
                          CsvNumber(o.usd_per_million_tokens),
                          o.savings_vs_api_fraction ? CsvNumber(*o.savings_vs_api_fraction) : "",
                          f.price.as_of,
                          f.price.as_of_estimated ? "true" : "false",
                          f.price.verified ? "true" : "false",
                          pricing::kCurrency,
                          answer.catalog_version});
    }
    return t;
}

namespace {

pricing::Status KnownOffering(const std::optional<std::string>& id, const pricing::Catalog& catalog,
                              const std::string& field) {
    if (!id || catalog.FindOffering(*id).ok()) {
        return pricing::Ok{};
    }
    std::vector<std::string> ids;
    ids.reserve(catalog.Offerings().size());
    for (const auto& o : catalog.Offerings()) {
        ids.push_back(o.id);
    }
    std::string closest;
    for (const auto& match : pricing::plan::CloseMatches(*id, ids)) {
        closest += (closest.empty() ? "" : ", ") + match;
    }
    return pricing::MakeError(ErrorCode::kInvalidArgument,
                              "unknown offering '" + id->substr(0, 200) + "'" +
                                  (closest.empty() ? "" : "; closest known ids: " + closest) +
                                  " (GET /v1/offerings lists all)",
                              field);
}

}  // namespace

pricing::Status CheckBodyIds(const pricing::plan::SpotPlanRequest& request,
                             const pricing::Catalog& catalog) {
    if (auto s = KnownOffering(request.spot_offering_id, catalog, "/spot_offering_id"); !s.ok()) {
        return s;
    }
    return KnownOffering(request.on_demand_offering_id, catalog, "/on_demand_offering_id");
}

pricing::Status CheckBodyIds(const pricing::plan::RentVsBuyRequest& request,
                             const pricing::Catalog& catalog) {
    if (auto s = KnownOffering(request.rent.offering_id, catalog, "/rent/offering_id"); !s.ok()) {
        return s;
    }
    if (request.buy.accelerator && !catalog.FindAccelerator(*request.buy.accelerator).ok()) {
        return UnknownAccelerator(*request.buy.accelerator, catalog, "/buy/accelerator");
    }
    return pricing::Ok{};
}

std::string TodayUtcDate() {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return pricing::plan::IsoDateFromDays(
        std::chrono::duration_cast<std::chrono::hours>(now).count() / 24);
}

namespace {

// Counts the training plans being worked out, across all workers, while it lives. A plan
// spreads its shape estimates over the CPUs the other plans leave: alone on a 2-CPU machine
// it uses both (half the latency for one client); with as many plans in flight as CPUs each
// keeps to its own worker's thread, so plans under load do not slice the CPUs among more
// threads than there are (docs/performance.md, "Plans").
class PlanInFlight {
public:
    PlanInFlight() : plans_(++count_) {}
    ~PlanInFlight() { --count_; }
    PlanInFlight(const PlanInFlight&) = delete;
    PlanInFlight& operator=(const PlanInFlight&) = delete;

    // `cpus`: what the process may use (app::UsableCpus, in Deps).
    int EstimateThreads(unsigned cpus) const {
        return std::max(1, static_cast<int>(std::max(1U, cpus)) / std::max(1, plans_));
    }

private:
    static inline std::atomic<int> count_{0};
    int plans_;
};

// The workload model's consistency warnings (the planner resolves the model itself).
std::vector<pricing::FieldError> ModelWarnings(const pricing::estimate::ModelSpec& spec) {
    auto model = pricing::estimate::DeriveModel(spec);
    return model.ok() ? std::move(model).value().warnings : std::vector<pricing::FieldError>{};
}

}  // namespace

pricing::Result<TrainingAnswer> AnswerTrainingPlan(pricing::plan::TrainingPlanRequest request,
                                                   const pricing::Catalog& catalog,
                                                   const pricing::PlanReference& reference,
                                                   const std::string& today, unsigned cpus) {
    request.today = today;
    const PlanInFlight in_flight;
    request.estimate_threads = in_flight.EstimateThreads(cpus);
    auto plan = pricing::plan::PlanTraining(request, catalog, reference);
    if (!plan.ok()) {
        return plan.error();
    }
    return TrainingAnswer{std::move(plan).value(),
                          request.include_infeasible,
                          request.sort,
                          request.limit,
                          request.offset,
                          ModelWarnings(request.workload.model),
                          std::nullopt};
}

pricing::Result<InferenceAnswer> AnswerInferencePlan(pricing::plan::InferencePlanRequest request,
                                                     const pricing::Catalog& catalog,
                                                     const pricing::PlanReference& reference,
                                                     std::size_t offset) {
    if (auto ids = pricing::plan::ResolveConstraintIds(
            {&request.providers, &request.regions, &request.accelerators}, catalog);
        !ids.ok()) {
        return ids.error();
    }
    const std::size_t limit = request.limit;
    request.today = TodayUtcDate();
    if (request.limit >= 1 && request.limit <= pricing::plan::kMaxPlanLimit) {
        request.limit = pricing::plan::kMaxPlanLimit;
    }
    auto plan = pricing::plan::PlanInference(request, catalog, reference);
    if (!plan.ok()) {
        return plan.error();
    }
    pricing::plan::StatePriceAges(plan.value().options, request.today);
    InferenceAnswer answer;
    answer.page = plan.value();
    // The requested page of the options planned (the planner keeps kMaxPlanLimit of them).
    auto& options = answer.page.options;
    const std::size_t first = std::min(offset, options.size());
    options.erase(options.begin(), options.begin() + static_cast<std::ptrdiff_t>(first));
    options.resize(std::min(options.size(), limit));
    answer.offset = first;
    answer.available_count = plan.value().options.size();
    pricing::plan::InferenceRecommendation recommended =
        pricing::plan::RecommendInference(plan.value(), catalog);
    answer.best_by_provider = std::move(recommended.best_by_provider);
    answer.recommendation = std::move(recommended.recommendation);
    answer.reasoning = std::move(recommended.reasoning);
    answer.price_warnings = std::move(recommended.price_warnings);
    if (answer.recommendation) {
        answer.budget = pricing::plan::ServingBudget(request, *answer.recommendation);
    }
    answer.catalog_version = catalog.Describe().version;
    answer.model_warnings = ModelWarnings(request.workload.model);
    answer.model_warnings.insert(answer.model_warnings.end(), plan.value().warnings.begin(),
                                 plan.value().warnings.end());
    return answer;
}

}  // namespace gpucost::http
