#include "service/http/codec/plan_codec.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>

#include <set>
#include "pricing/calendar.hpp"
#include "pricing/close_match.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/money.hpp"
#include "pricing/plan/inference_explain.hpp"
#include "pricing/plan/plan_ids.hpp"

#include "service/http/codec/csv_fields.hpp"
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

// Values one offering filter of a plan may list (constraints.providers, .regions,
// .accelerators). Every offering is tested against each value and an unknown value is
// compared with every id the catalog knows; the shipped catalog has 7 providers, 24 regions
// and 27 accelerators, so a filter naming more than 64 names ids that do not exist.
constexpr std::size_t kMaxFilterValues = 64;

// More than `max` entries in the list at `key`: 422 naming the list, before its entries are
// read (`what` names them in the message).
bool TooMany(JsonReader& r, std::string_view key, std::size_t max, const char* what) {
    const json* list = r.Member(key);
    if (list == nullptr || !list->is_array() || list->size() <= max) return false;
    r.Fail(ErrorCode::kInvalidArgument, key, "at most " + std::to_string(max) + " " + what);
    return true;
}

// The row's reader for an offering filter: a list of at most kMaxFilterValues ids.
template <auto Member>
void FilterValues(JsonReader& r, std::string_view key,
                  typename field_detail::MemberPointer<decltype(Member)>::Class& o) {
    if (TooMany(r, key, kMaxFilterValues, "values; leave the filter out to allow any")) return;
    ListOrEmpty<Member>(r, key, o);
}

// Reads a list of price type names at `key`, at most one entry per price type; an unknown name
// is 422 naming its element (`<key>/<i>`), as an unknown accelerator in constraints is.
std::vector<pricing::PriceType> PriceTypes(JsonReader& r, const std::string& key) {
    std::vector<pricing::PriceType> out;
    if (TooMany(r, key, pricing::kPriceTypeCount, "price types (one each)")) return out;
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

namespace {

// The spot plan request's members, in the order they are read.
using pricing::plan::SpotPlanRequest;
const auto kSpotRequestFields = std::to_array<RequestField<SpotPlanRequest>>({
    {"job_hours", &Optional<&SpotPlanRequest::job_hours>},
    {"on_demand_usd_per_hour", &Optional<&SpotPlanRequest::on_demand_usd_per_hour>},
    {"spot_usd_per_hour", &Optional<&SpotPlanRequest::spot_usd_per_hour>},
    {"interruptions_per_hour", &Optional<&SpotPlanRequest::interruptions_per_hour>},
    {"spot_offering_id", [](JsonReader& r, std::string_view key,
                            SpotPlanRequest& q) { q.spot_offering_id = LowerId(r.String(key)); }},
    {"on_demand_offering_id",
     [](JsonReader& r, std::string_view key, SpotPlanRequest& q) {
         q.on_demand_offering_id = LowerId(r.String(key));
     }},
    {"nodes", &OrDefault<&SpotPlanRequest::nodes, 1>},
    {"checkpoint_minutes", &Optional<&SpotPlanRequest::checkpoint_minutes>},
    {"restart_minutes", &Optional<&SpotPlanRequest::restart_minutes>},
    {"checkpoint_interval_hours", &Optional<&SpotPlanRequest::checkpoint_interval_hours>},
    {"max_spot_usd_per_hour", &Optional<&SpotPlanRequest::max_spot_usd_per_hour>},
    {"deadline_hours", &Optional<&SpotPlanRequest::deadline_hours>},
    {"required_deadline_probability", &Optional<&SpotPlanRequest::required_deadline_probability>},
    {"min_savings_fraction", &Optional<&SpotPlanRequest::min_savings_fraction>},
    {"start_date", &Optional<&SpotPlanRequest::start_date>},
});

}  // namespace

pricing::Result<pricing::plan::SpotPlanRequest> DecodeSpotPlanRequest(
    const json& body, const std::vector<std::string>& extra_keys) {
    JsonReader r(body, "");
    r.OnlyKnown(RequestKeys(kSpotRequestFields, extra_keys));
    pricing::plan::SpotPlanRequest q;
    ReadFields(r, q, kSpotRequestFields);
    if (!r.ok()) {
        return r.error();
    }
    return q;
}

namespace {

namespace pl = pricing::plan;

// Rows every plan answer shares.
template <typename T>
void ListPricingBasis(JsonWriter& w, const T& /*plan*/) {
    w.String(kListPricing);
}
template <auto... Path>
void Warnings(JsonWriter& w, const field_detail::ClassOf<Path...>& o) {
    WriteWarnings(w, field_detail::Follow<Path...>(o));
}

// The spot-risk object: {bucket, max_percent_per_month, min_percent_per_month}.
constexpr auto kSpotRiskFields = std::to_array<AnswerField<pricing::SpotInterruptionBucket>>({
    {"bucket", &Scalar<&pricing::SpotInterruptionBucket::label>},
    {"max_percent_per_month", &Scalar<&pricing::SpotInterruptionBucket::max_percent_per_month>},
    {"min_percent_per_month", &Scalar<&pricing::SpotInterruptionBucket::min_percent_per_month>},
});
static_assert(KeysAscending(kSpotRiskFields));

constexpr auto kSpotRangeFields = std::to_array<AnswerField<pl::SpotRange>>({
    {"high", &Scalar<&pl::SpotRange::high>},
    {"low", &Scalar<&pl::SpotRange::low>},
});
static_assert(KeysAscending(kSpotRangeFields));

// A range of amounts as answers state money: both ends to the cent.
std::optional<pl::SpotRange> InCents(std::optional<pl::SpotRange> range) {
    if (range) {
        range->low = pricing::RoundToCents(range->low);
        range->high = pricing::RoundToCents(range->high);
    }
    return range;
}

// The spot-risk object of the offering the plan read its interruption rate from, or null.
void WriteSpotRisk(JsonWriter& w, const pl::SpotPlan& p) {
    const auto bucket = p.interruption_bucket
                            ? pricing::ParseSpotInterruptionBucket(*p.interruption_bucket)
                            : std::nullopt;
    field_detail::WriteObject(w, bucket, kSpotRiskFields);
}

// Owned capacity's share of the on-demand path (a price book's owned_capacity); null when
// none covers it. The same members as a training option's `owned`.
void WriteSpotOwnedUse(JsonWriter& w, const pl::SpotPlan& p) {
    if (!p.owned) return w.Null();
    w.BeginObject();
    w.UsdMember("fully_loaded_cost_usd", p.on_demand_cost_usd + p.owned->sunk_usd);
    w.Member("instance_hours", p.owned->instance_hours);
    w.UsdMember("marginal_cost_usd", p.on_demand_cost_usd);
    w.UsdMember("sunk_usd", p.owned->sunk_usd);
    w.UsdMember("without_owned_cost_usd", p.owned->without_owned_cost_usd);
    w.EndObject();
}

constexpr auto kSpotPlanFields = std::to_array<AnswerField<pl::SpotPlan>>({
    {"catalog_version", &Scalar<&pl::SpotPlan::catalog_version>},
    {"checkpoint_interval_hours", &Scalar<&pl::SpotPlan::checkpoint_interval_hours>},
    {"checkpoint_minutes",
     [](JsonWriter& w, const pl::SpotPlan& p) { w.Number(p.checkpoint_hours * 60.0); }},
    {"checkpoints", &Scalar<&pl::SpotPlan::checkpoints>},
    {"cluster_interruptions_per_hour", &Scalar<&pl::SpotPlan::cluster_interruptions_per_hour>},
    {"currency", &Currency<pl::SpotPlan>},
    {"deadline_hours", &Scalar<&pl::SpotPlan::deadline_hours>},
    {"expected_interruptions", &Scalar<&pl::SpotPlan::expected_interruptions>},
    {"expected_mixed_cost_usd", &Usd<&pl::SpotPlan::expected_mixed_cost_usd>},
    {"expected_mixed_savings_fraction", &Scalar<&pl::SpotPlan::expected_mixed_savings_fraction>},
    {"expected_overhead_fraction", &Scalar<&pl::SpotPlan::expected_overhead_fraction>},
    {"expected_savings_fraction", &Scalar<&pl::SpotPlan::expected_savings_fraction>},
    {"expected_savings_usd", &Usd<&pl::SpotPlan::expected_savings_usd>},
    {"expected_spot_cost_usd", &Usd<&pl::SpotPlan::expected_spot_cost_usd>},
    {"expected_spot_cost_usd_range",
     [](JsonWriter& w, const pl::SpotPlan& p) {
         field_detail::WriteObject(w, InCents(p.expected_spot_cost_usd_range), kSpotRangeFields);
     }},
    {"expected_spot_hours", &Scalar<&pl::SpotPlan::expected_spot_hours>},
    {"failure_free_hours", &Scalar<&pl::SpotPlan::failure_free_hours>},
    {"interruption_percent_per_month_range",
     &Object<kSpotRangeFields, &pl::SpotPlan::interruption_percent_per_month_range>},
    {"interruptions_per_hour", &Scalar<&pl::SpotPlan::interruptions_per_hour>},
    {"job_hours", &Scalar<&pl::SpotPlan::job_hours>},
    {"mean_hours_between_interruptions", &Scalar<&pl::SpotPlan::mean_hours_between_interruptions>},
    {"mixed_slack_hours", &Scalar<&pl::SpotPlan::mixed_slack_hours>},
    {"nodes", &Scalar<&pl::SpotPlan::nodes>},
    {"on_demand_cluster_usd_per_hour", &UsdRate<&pl::SpotPlan::on_demand_cluster_usd_per_hour>},
    {"on_demand_cost_usd", &Usd<&pl::SpotPlan::on_demand_cost_usd>},
    {"on_demand_deadline_probability", &Scalar<&pl::SpotPlan::on_demand_deadline_probability>},
    {"on_demand_hours", &Scalar<&pl::SpotPlan::on_demand_hours>},
    {"on_demand_offering_id", &Scalar<&pl::SpotPlan::on_demand_offering_id>},
    {"on_demand_usd_per_hour", &UsdRate<&pl::SpotPlan::on_demand_usd_per_hour>},
    {"owned", &WriteSpotOwnedUse},
    {"pricing_basis", &ListPricingBasis<pl::SpotPlan>},
    {"reasoning", &Scalar<&pl::SpotPlan::reasoning>},
    {"recommendation", &Named<&pl::SpotRecommendationName, &pl::SpotPlan::recommendation>},
    {"restart_minutes",
     [](JsonWriter& w, const pl::SpotPlan& p) { w.Number(p.restart_hours * 60.0); }},
    {"spot_cluster_usd_per_hour", &UsdRate<&pl::SpotPlan::spot_cluster_usd_per_hour>},
    {"spot_deadline_probability", &Scalar<&pl::SpotPlan::spot_deadline_probability>},
    {"spot_deadline_probability_range",
     &Object<kSpotRangeFields, &pl::SpotPlan::spot_deadline_probability_range>},
    {"spot_interruption", &WriteSpotRisk},
    {"spot_offering_id", &Scalar<&pl::SpotPlan::spot_offering_id>},
    {"spot_usd_per_hour", &UsdRate<&pl::SpotPlan::spot_usd_per_hour>},
    {"start_date", &Scalar<&pl::SpotPlan::start_date>},
    {"start_date_source", &Scalar<&pl::SpotPlan::start_date_source>},
    {"warnings", &Warnings<&pl::SpotPlan::warnings>},
    {"young_checkpoint_interval_hours", &Scalar<&pl::SpotPlan::young_checkpoint_interval_hours>},
});
static_assert(KeysAscending(kSpotPlanFields));

}  // namespace

std::string EncodeSpotPlan(const pricing::plan::SpotPlan& p, std::string_view assumptions_json) {
    std::string out;
    out.reserve(assumptions_json.size() + 2048);
    JsonWriter w(out);
    WriteFields(w, p, kSpotPlanFields, "assumptions", assumptions_json);
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

// The rent-vs-buy request's top level; `buy` and `rent` are read by their own tables.
const auto kRentVsBuyRequestFields = std::to_array<RequestField<pricing::plan::RentVsBuyRequest>>({
    {"buy", nullptr},
    {"rent", nullptr},
    {"discount_rate_annual", &Optional<&pricing::plan::RentVsBuyRequest::discount_rate_annual>},
    {"horizon_months", &Optional<&pricing::plan::RentVsBuyRequest::horizon_months>},
});

}  // namespace

pricing::Result<pricing::plan::RentVsBuyRequest> DecodeRentVsBuyRequest(const json& body) {
    JsonReader r(body, "");
    r.OnlyKnown(RequestKeys(kRentVsBuyRequestFields));
    pricing::plan::RentVsBuyRequest q;
    ReadFields(r, q, kRentVsBuyRequestFields);
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

constexpr auto kRentOptionFields = std::to_array<AnswerField<pl::RentOption>>({
    {"as_of", &Scalar<&pl::RentOption::as_of>},
    {"as_of_estimated", &Scalar<&pl::RentOption::as_of_estimated>},
    {"billed_months", &Scalar<&pl::RentOption::billed_months>},
    {"cheaper_than_buying", &Scalar<&pl::RentOption::cheaper_than_buying>},
    {"monthly_usd", &Usd<&pl::RentOption::monthly_usd>},
    {"nodes", &Scalar<&pl::RentOption::nodes>},
    {"npv_usd", &Usd<&pl::RentOption::npv_usd>},
    {"offering_id", &Scalar<&pl::RentOption::offering_id>},
    {"owned_instance_hours", &Scalar<&pl::RentOption::owned_instance_hours>},
    {"price_type", &Named<&pricing::PriceTypeName, &pl::RentOption::price_type>},
    {"total_usd", &Usd<&pl::RentOption::total_usd>},
    {"usd_per_accelerator_hour", &UsdRate<&pl::RentOption::usd_per_accelerator_hour>},
    {"verified", &Scalar<&pl::RentOption::verified>},
});
static_assert(KeysAscending(kRentOptionFields));

constexpr auto kCumulativeFields = std::to_array<AnswerField<pl::CumulativePoint>>({
    {"month", &Scalar<&pl::CumulativePoint::month>},
    {"own_net_of_resale_usd", &Usd<&pl::CumulativePoint::own_net_of_resale_usd>},
    {"own_usd", &Usd<&pl::CumulativePoint::own_usd>},
    {"rent_usd", &Usd<&pl::CumulativePoint::rent_usd>},
});
static_assert(KeysAscending(kCumulativeFields));

using RentVsBuyPlan = pl::RentVsBuyPlan;

// Owned capacity's share of the rent path (a price book's owned_capacity); null when none
// covers it. A training option's `owned` members, and the month the rent path starts.
void WriteRentOwnedUse(JsonWriter& w, const RentVsBuyPlan& p) {
    if (!p.owned) return w.Null();
    w.BeginObject();
    w.Member("first_month", p.owned->first_month);
    w.UsdMember("fully_loaded_cost_usd", p.total_rent_usd + p.owned->sunk_usd);
    w.Member("instance_hours", p.owned->instance_hours);
    w.UsdMember("marginal_cost_usd", p.total_rent_usd);
    w.UsdMember("sunk_usd", p.owned->sunk_usd);
    w.UsdMember("without_owned_cost_usd", p.owned->without_owned_rent_usd);
    w.EndObject();
}
constexpr auto kRentVsBuyFields = std::to_array<AnswerField<RentVsBuyPlan>>({
    {"accelerator", &Scalar<&RentVsBuyPlan::accelerator>},
    {"accelerator_hours_per_month", &Scalar<&RentVsBuyPlan::accelerator_hours_per_month>},
    {"break_even_months", &Scalar<&RentVsBuyPlan::break_even_months>},
    {"break_even_utilization", &Scalar<&RentVsBuyPlan::break_even_utilization>},
    {"breaks_even_within_horizon", &Scalar<&RentVsBuyPlan::breaks_even_within_horizon>},
    {"capex_usd", &Usd<&RentVsBuyPlan::capex_usd>},
    {"catalog_version", &Scalar<&RentVsBuyPlan::catalog_version>},
    {"cumulative", &Array<kCumulativeFields, &RentVsBuyPlan::cumulative>},
    {"currency", &Currency<RentVsBuyPlan>},
    {"discount_rate_annual", &Scalar<&RentVsBuyPlan::discount_rate_annual>},
    {"discounted_break_even_months", &Scalar<&RentVsBuyPlan::discounted_break_even_months>},
    {"horizon_months", &Scalar<&RentVsBuyPlan::horizon_months>},
    {"monthly_own_usd", &Usd<&RentVsBuyPlan::monthly_own_usd>},
    {"monthly_rent_usd", &Usd<&RentVsBuyPlan::monthly_rent_usd>},
    {"npv_own_usd", &Usd<&RentVsBuyPlan::npv_own_usd>},
    {"npv_rent_usd", &Usd<&RentVsBuyPlan::npv_rent_usd>},
    {"opex_usd_per_month", &Usd<&RentVsBuyPlan::opex_usd_per_month>},
    {"owned", &WriteRentOwnedUse},
    {"pricing_basis", &ListPricingBasis<RentVsBuyPlan>},
    {"reasoning", &Scalar<&RentVsBuyPlan::reasoning>},
    {"recommendation", &Named<&pl::RentVsBuyRecommendationName, &RentVsBuyPlan::recommendation>},
    {"rent_billed_months", &Scalar<&RentVsBuyPlan::rent_billed_months>},
    {"rent_nodes", &Scalar<&RentVsBuyPlan::rent_nodes>},
    {"rent_options", &Array<kRentOptionFields, &RentVsBuyPlan::rent_options>},
    {"rent_price_type", &Named<&pricing::PriceTypeName, &RentVsBuyPlan::rent_price_type>},
    {"rent_usd_per_accelerator_hour", &UsdRate<&RentVsBuyPlan::rent_usd_per_accelerator_hour>},
    {"residual_value_at_horizon_usd", &Usd<&RentVsBuyPlan::residual_value_at_horizon_usd>},
    {"total_accelerators", &Scalar<&RentVsBuyPlan::total_accelerators>},
    {"total_own_usd", &Usd<&RentVsBuyPlan::total_own_usd>},
    {"total_rent_usd", &Usd<&RentVsBuyPlan::total_rent_usd>},
    {"utilization", &Scalar<&RentVsBuyPlan::utilization>},
    {"warnings", &Warnings<&RentVsBuyPlan::warnings>},
});
static_assert(KeysAscending(kRentVsBuyFields));

}  // namespace

std::string EncodeRentVsBuyPlan(const pricing::plan::RentVsBuyPlan& p,
                                std::string_view assumptions_json) {
    std::string out;
    out.reserve(assumptions_json.size() + 2048 + 128 * p.cumulative.size());
    JsonWriter w(out);
    WriteFields(w, p, kRentVsBuyFields, "assumptions", assumptions_json);
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
    const json& body, const pricing::ModelLibrary& models) {
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
    auto decoded = DecodeTrainingRequest(*it, models, nullptr);
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
    {"providers", &FilterValues<&TrainingPlanConstraints::providers>},
    {"price_types",
     [](JsonReader& r, std::string_view key, TrainingPlanConstraints& c) {
         c.price_types = PriceTypes(r, std::string(key));
     }},
    {"regions", &FilterValues<&TrainingPlanConstraints::regions>},
    {"accelerators", &FilterValues<&TrainingPlanConstraints::accelerators>},
    {"accelerator_families", &FilterValues<&TrainingPlanConstraints::accelerator_families>},
    {"countries", &FilterValues<&TrainingPlanConstraints::countries>},
    {"continents", &FilterValues<&TrainingPlanConstraints::continents>},
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
    TooMany(c, "node_counts", pricing::plan::kMaxExplicitNodeCounts,
            "node counts (each is estimated on every hardware shape)");
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

pricing::Result<pricing::plan::TrainingPlanRequest> DecodeTrainingPlanRequest(
    const json& body, const pricing::ModelLibrary& models) {
    if (body.contains("hardware")) {
        return pricing::MakeError(ErrorCode::kMalformed,
                                  "/hardware: the planner chooses the hardware; narrow it with "
                                  "constraints (accelerators, providers, max_total_accelerators)",
                                  "/hardware");
    }
    auto workload = DecodeTrainingRequest(
        body, models, nullptr,
        {"constraints", "sort", "limit", "offset", "cursor", "uncertainty", "spot",
         "include_infeasible", "max_price_age_days", "include_stale", "start_date", "data"});
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
    q.include_stale = r.Bool("include_stale").value_or(false);
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

// The offering as plan options name it (OfferingSummary's members).
using pricing::Offering;
using pricing::PriceObservation;
constexpr auto kOfferingSummaryFields = std::to_array<AnswerField<Offering>>({
    {"accelerator", &Scalar<&Offering::accelerator>},
    {"accelerator_count", &Scalar<&Offering::accelerator_count>},
    {"as_of", &Scalar<&Offering::price, &PriceObservation::as_of>},
    {"as_of_estimated", &Scalar<&Offering::price, &PriceObservation::as_of_estimated>},
    {"id", &Scalar<&Offering::id>},
    {"instance_type", &Scalar<&Offering::instance_type>},
    {"price_type", &Named<&pricing::PriceTypeName, &Offering::price_type>},
    {"provider", &Scalar<&Offering::provider>},
    {"region", &Scalar<&Offering::region>},
    {"spot_interruption", &Object<kSpotRiskFields, &Offering::spot_interruption>},
    {"usd_per_hour", &UsdRate<&Offering::price, &PriceObservation::usd_per_hour>},
    {"verified", &Scalar<&Offering::price, &PriceObservation::verified>},
});
static_assert(KeysAscending(kOfferingSummaryFields));

constexpr auto kViolationFields = std::to_array<AnswerField<pl::ConstraintViolation>>({
    {"constraint", &Scalar<&pl::ConstraintViolation::constraint>},
    {"limit", &Scalar<&pl::ConstraintViolation::limit>},
    {"value", &Scalar<&pl::ConstraintViolation::value>},
});
static_assert(KeysAscending(kViolationFields));

using Option = pl::TrainingPlanOption;

// Owned capacity's share of the run (a price book's owned_capacity); null when none covers it.
void WriteOwnedUse(JsonWriter& w, const Option& o) {
    if (!o.owned) return w.Null();
    w.BeginObject();
    w.UsdMember("fully_loaded_cost_usd", o.FullyLoadedCostUsd());
    w.Member("instance_hours", o.owned->instance_hours);
    w.UsdMember("marginal_cost_usd", o.expected_cost_usd);
    w.UsdMember("sunk_usd", o.owned->sunk_usd);
    w.UsdMember("without_owned_cost_usd", o.owned->without_owned_cost_usd);
    w.EndObject();
}

constexpr auto kTrainingOptionFields = std::to_array<AnswerField<Option>>({
    {"billed_hours", &Scalar<&Option::billed_hours>},
    {"budget_probability", &Scalar<&Option::budget_probability>},
    {"cluster_usd_per_hour", &UsdRate<&Option::cluster_usd_per_hour>},
    {"cost_usd", &Usd<&Option::cost_usd>},
    {"cost_usd_p10", &Usd<&Option::cost_usd_p10>},
    {"cost_usd_p50", &Usd<&Option::cost_usd_p50>},
    {"cost_usd_p90", &Usd<&Option::cost_usd_p90>},
    {"data_cost_usd", &Usd<&Option::data_cost_usd>},
    {"deadline_probability", &Scalar<&Option::deadline_probability>},
    {"expected_cost_usd", &Usd<&Option::expected_cost_usd>},
    {"expected_wall_clock_hours", &Scalar<&Option::expected_wall_clock_hours>},
    {"independent_hosts", &Scalar<&Option::independent_hosts>},
    {"interruptions_per_hour", &Scalar<&Option::interruptions_per_hour>},
    {"max_instances", &Scalar<&Option::max_instances>},
    {"meets_deadline", &Scalar<&Option::meets_deadline>},
    {"mfu", &Scalar<&Option::mfu>},
    {"nodes", &Scalar<&Option::nodes>},
    {"offering", &Object<kOfferingSummaryFields, &Option::offering>},
    {"owned", &WriteOwnedUse},
    {"parallelism", [](JsonWriter& w, const Option& o) { WriteLayout(w, o.parallelism); }},
    {"price_age_days", &Scalar<&Option::price_age_days>},
    {"price_state", &Named<&pricing::PriceStateName, &Option::price_state>},
    {"scale_out_gbit_per_s", &Scalar<&Option::scale_out_gbit_per_s>},
    {"total_accelerators", &Scalar<&Option::total_accelerators>},
    {"unused_committed_hours", &Scalar<&Option::unused_committed_hours>},
    {"violations", &Array<kViolationFields, &Option::violations>},
    {"wall_clock_hours", &Scalar<&Option::wall_clock_hours>},
    {"within_budget", &Scalar<&Option::within_budget>},
});
static_assert(KeysAscending(kTrainingOptionFields));

constexpr auto kBindingConstraintFields = std::to_array<AnswerField<pl::BindingConstraint>>({
    {"best_value", &Scalar<&pl::BindingConstraint::best_value>},
    {"constraint", &Scalar<&pl::BindingConstraint::constraint>},
    {"limit", &Scalar<&pl::BindingConstraint::limit>},
    {"message", &Scalar<&pl::BindingConstraint::message>},
    {"others_met", &Scalar<&pl::BindingConstraint::others_met>},
    {"shortfall", &Scalar<&pl::BindingConstraint::shortfall>},
});
static_assert(KeysAscending(kBindingConstraintFields));

using pricing::DataPrice;
constexpr auto kDataPriceFields = std::to_array<AnswerField<DataPrice>>({
    {"as_of", &Scalar<&DataPrice::as_of>},
    {"as_of_estimated", &Scalar<&DataPrice::as_of_estimated>},
    {"internet_egress_usd_per_gb", &UsdRate<&DataPrice::internet_egress_usd_per_gb>},
    {"object_storage_usd_per_gb_month", &UsdRate<&DataPrice::object_storage_usd_per_gb_month>},
    {"provider", &Scalar<&DataPrice::provider>},
    {"source", &Scalar<&DataPrice::source>},
    {"verified", &Scalar<&DataPrice::verified>},
});
static_assert(KeysAscending(kDataPriceFields));

// A budget view's months (training and serving alike): each {month, usd} to the cent.
constexpr auto kMonthlyFields = std::to_array<AnswerField<pl::MonthlySpend>>({
    {"month", &Scalar<&pl::MonthlySpend::month>},
    {"usd", &Usd<&pl::MonthlySpend::usd>},
});
static_assert(KeysAscending(kMonthlyFields));

using pl::BudgetView;
constexpr auto kBudgetFields = std::to_array<AnswerField<BudgetView>>({
    {"compute_usd", &Usd<&BudgetView::compute_usd>},
    {"data_prices", &Object<kDataPriceFields, &BudgetView::data_price>},
    {"egress_usd", &Usd<&BudgetView::egress_usd>},
    {"monthly", &Array<kMonthlyFields, &BudgetView::monthly>},
    {"owned_usd", &Usd<&BudgetView::owned_usd>},
    {"start_date", &Scalar<&BudgetView::start_date>},
    {"start_date_source", &Scalar<&BudgetView::start_date_source>},
    {"storage_usd", &Usd<&BudgetView::storage_usd>},
    {"total_usd", &Usd<&BudgetView::total_usd>},
});
static_assert(KeysAscending(kBudgetFields));

// An object of (key, value) pairs as a DOM filled by out[key] = value gave it: keys sorted,
// a repeated key holding its last value.
template <auto... Path>
void Keyed(JsonWriter& w, const field_detail::ClassOf<Path...>& o) {
    const auto& pairs = field_detail::Follow<Path...>(o);
    std::vector<const typename std::remove_cvref_t<decltype(pairs)>::value_type*> sorted;
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

// The plan's warnings, then the workload model's consistency warnings.
void WriteTrainingWarnings(JsonWriter& w, const TrainingAnswer& a) {
    w.BeginArray();
    for (const auto& p : a.plan.warnings) WriteWarning(w, p.field, p.detail);
    for (const auto& m : a.model_warnings) WriteWarning(w, m.field, m.detail);
    w.EndArray();
}

using pl::TrainingPlan;
constexpr auto kTrainingPlanFields = std::to_array<AnswerField<TrainingAnswer>>({
    {"best_by_provider",
     &Array<kTrainingOptionFields, &TrainingAnswer::plan, &TrainingPlan::best_by_provider>},
    {"beyond_max_wall_clock",
     &Array<kTrainingOptionFields, &TrainingAnswer::plan, &TrainingPlan::beyond_max_wall_clock>},
    {"binding_constraints",
     &Array<kBindingConstraintFields, &TrainingAnswer::plan, &TrainingPlan::binding_constraints>},
    {"budget", &Object<kBudgetFields, &TrainingAnswer::plan, &TrainingPlan::budget>},
    {"catalog_version", &Scalar<&TrainingAnswer::plan, &TrainingPlan::catalog_version>},
    {"cheapest", &Object<kTrainingOptionFields, &TrainingAnswer::plan, &TrainingPlan::cheapest>},
    {"currency", &Currency<TrainingAnswer>},
    {"estimates", &Scalar<&TrainingAnswer::plan, &TrainingPlan::estimates>},
    {"fastest", &Object<kTrainingOptionFields, &TrainingAnswer::plan, &TrainingPlan::fastest>},
    {"feasible_count", &Scalar<&TrainingAnswer::plan, &TrainingPlan::feasible_count>},
    {"hardware_shapes", &Scalar<&TrainingAnswer::plan, &TrainingPlan::hardware_shapes>},
    {"include_infeasible", &Scalar<&TrainingAnswer::include_infeasible>},
    {"infeasible_count", &Scalar<&TrainingAnswer::plan, &TrainingPlan::infeasible_count>},
    {"limit", &Scalar<&TrainingAnswer::limit>},
    {"max_wall_clock_days", &Scalar<&TrainingAnswer::plan, &TrainingPlan::max_wall_clock_days>},
    {"next_cursor", &Scalar<&TrainingAnswer::next_cursor>},
    {"offerings_considered", &Scalar<&TrainingAnswer::plan, &TrainingPlan::offerings_considered>},
    {"offset", &Scalar<&TrainingAnswer::offset>},
    {"options", &Array<kTrainingOptionFields, &TrainingAnswer::plan, &TrainingPlan::options>},
    {"pareto_front",
     &Array<kTrainingOptionFields, &TrainingAnswer::plan, &TrainingPlan::pareto_front>},
    {"pricing_basis", &ListPricingBasis<TrainingAnswer>},
    {"reasoning", &Scalar<&TrainingAnswer::plan, &TrainingPlan::reasoning>},
    {"recommendation",
     &Object<kTrainingOptionFields, &TrainingAnswer::plan, &TrainingPlan::recommendation>},
    {"skipped", &Keyed<&TrainingAnswer::plan, &TrainingPlan::skipped>},
    {"skipped_examples", &Keyed<&TrainingAnswer::plan, &TrainingPlan::skipped_examples>},
    {"sort", &Named<&pl::TrainingPlanSortName, &TrainingAnswer::sort>},
    {"total_count", &Scalar<&TrainingAnswer::plan, &TrainingPlan::total_count>},
    {"warnings", &WriteTrainingWarnings},
});
static_assert(KeysAscending(kTrainingPlanFields));

}  // namespace

std::string EncodeTrainingPlan(const TrainingAnswer& a, std::string_view assumptions_json) {
    std::string out;
    out.reserve(assumptions_json.size() + 4096 + 2048 * (a.plan.options.size() + 8));
    JsonWriter w(out);
    WriteFields(w, a, kTrainingPlanFields, "assumptions", assumptions_json);
    return out;
}

namespace {

// The columns every options CSV starts with (the offering) and ends with (its provenance and
// the catalog), named as the CSV has always named them.
constexpr auto kOfferingCsvColumns = std::to_array<CsvColumn>({
    {"offering_id", "/offering/id"},
    {"provider", "/offering/provider"},
    {"instance_type", "/offering/instance_type"},
    {"accelerator", "/offering/accelerator"},
    {"price_type", "/offering/price_type"},
    {"region", "/offering/region"},
    {"offering_usd_per_hour", "/offering/usd_per_hour"},
});
constexpr auto kProvenanceCsvColumns = std::to_array<CsvColumn>({
    {"as_of_estimated", "/offering/as_of_estimated"},
    {"verified", "/offering/verified"},
    {"currency", "/currency"},
    {"catalog_version", "/catalog_version"},
});

// The offering's columns, then an option's own.
template <std::size_t N>
constexpr auto OptionCsvColumns(const std::array<CsvColumn, N>& own) {
    std::array<CsvColumn, kOfferingCsvColumns.size() + N> all{};
    std::size_t i = 0;
    for (const auto& c : kOfferingCsvColumns) all[i++] = c;
    for (const auto& c : own) all[i++] = c;
    return all;
}

// The answer-level members each line repeats.
json SharedCsvMembers(const std::string& catalog_version) {
    return {{"catalog_version", catalog_version}, {"currency", pricing::kCurrency}};
}

// The training options CSV's first columns, in the order and with the names spreadsheets
// already read; every other member of kTrainingOptionFields follows, named by its key, and the
// provenance columns end the line (CsvColumnsOf).
constexpr auto kTrainingCsvColumns = OptionCsvColumns(std::to_array<CsvColumn>({
    {"as_of", "/offering/as_of"},
    {"nodes", {}},
    {"total_accelerators", {}},
    {"tensor", "/parallelism/tensor"},
    {"pipeline", "/parallelism/pipeline"},
    {"data", "/parallelism/data"},
    {"wall_clock_hours", {}},
    {"expected_wall_clock_hours", {}},
    {"cluster_usd_per_hour", {}},
    {"billed_hours", {}},
    {"cost_usd", {}},
    {"expected_cost_usd", {}},
    {"cost_usd_p10", {}},
    {"cost_usd_p50", {}},
    {"cost_usd_p90", {}},
    {"meets_deadline", {}},
    {"within_budget", {}},
    {"violations", "/violations", "constraint"},
    {"data_cost_usd", {}},
    {"deadline_probability", {}},
    {"owned_instance_hours", "/owned/instance_hours"},
    {"owned_sunk_usd", "/owned/sunk_usd"},
    {"without_owned_cost_usd", "/owned/without_owned_cost_usd"},
}));

}  // namespace

CsvTable OptionsCsv(const pricing::plan::TrainingPlan& plan) {
    const std::vector<CsvColumn> columns =
        CsvColumnsOf(kTrainingCsvColumns, kTrainingOptionFields, kProvenanceCsvColumns);
    CsvTable t;
    for (const auto& column : columns) t.header.emplace_back(column.name);
    const json shared = SharedCsvMembers(plan.catalog_version);
    for (const auto& o : plan.options) {
        t.rows.push_back(CsvCellsOf(CsvRowOf(o, kTrainingOptionFields, shared), columns));
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
    {"providers", &FilterValues<&InferencePlanRequest::providers>},
    {"price_types",
     [](JsonReader& r, std::string_view key, InferencePlanRequest& q) {
         q.price_types = PriceTypes(r, std::string(key));
     }},
    {"regions", &FilterValues<&InferencePlanRequest::regions>},
    {"accelerators", &FilterValues<&InferencePlanRequest::accelerators>},
    {"verified_only", &FlagOrFalse<&InferencePlanRequest::verified_only>},
    {"max_price_age_days", &Optional<&InferencePlanRequest::max_price_age_days>},
});
// The serving plan request's members: the workload's, which the estimator's decoder reads, then
// the plan's own (one list each; unknown members are refused against both, in this order).
constexpr auto kServingWorkloadKeys = std::to_array<const char*>(
    {"model", "precision", "kv_cache_precision", "weight_precision", "input_tokens",
     "output_tokens", "efficiency", "step_overhead_s", "memory_overhead_gb"});
constexpr auto kServingPlanKeys = std::to_array<const char*>(
    {"traffic", "latency", "utilization", "uncertainty", "constraints", "api_price", "limit",
     "cursor", "start_date", "budget_months", "include_stale"});
const auto kServingUncertaintyFields = std::to_array<RequestField<InferencePlanRequest>>({
    {"throughput_spread_fraction", &Optional<&InferencePlanRequest::throughput_spread_fraction>},
    {"traffic_confidence", &Optional<&InferencePlanRequest::traffic_confidence>},
});
const auto kApiPriceFields = std::to_array<RequestField<InferencePlanRequest>>({
    {"usd_per_million_input_tokens",
     &Optional<&InferencePlanRequest::api_usd_per_million_input_tokens>},
    {"usd_per_million_output_tokens",
     &Optional<&InferencePlanRequest::api_usd_per_million_output_tokens>},
});

}  // namespace

pricing::Result<pricing::plan::InferencePlanRequest> DecodeInferencePlanRequest(
    const json& body, const pricing::ModelLibrary& models) {
    JsonReader r(body, "");
    std::vector<std::string> known(kServingWorkloadKeys.begin(), kServingWorkloadKeys.end());
    known.insert(known.end(), kServingPlanKeys.begin(), kServingPlanKeys.end());
    r.OnlyKnown(known);
    if (!r.ok()) {
        return r.error();
    }
    // The estimator's decoder reads the workload; the planner picks hardware, batch and
    // tensor parallelism, so a placeholder hardware object stands in for them.
    json workload = json::object();
    for (const char* key : kServingWorkloadKeys) {
        if (body.contains(key)) {
            workload[key] = body.at(key);
        }
    }
    workload["hardware"] = {{"accelerator", "planner"}, {"total_accelerators", 1}};
    auto decoded = DecodeInferenceRequest(workload, models, nullptr);
    if (!decoded.ok()) {
        return decoded.error();
    }
    pricing::plan::InferencePlanRequest q;
    q.workload = std::move(decoded).value();
    q.utilization = r.Number("utilization");
    q.start_date = r.String("start_date");
    q.budget_months = r.Int("budget_months");
    q.include_stale = r.Bool("include_stale").value_or(false);
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
    const json* uncertainty = r.Object("uncertainty");
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
    if (auto read = ReadNested(uncertainty, "/uncertainty", q, kServingUncertaintyFields);
        !read.ok()) {
        return read.error();
    }
    return q;
}

namespace {

using ServingOption = pl::InferencePlanOption;

// Owned capacity's share of the option's budget window (a price book's owned_capacity), as
// training's `owned` states it for a run; null when none covers it.
void WriteServingOwnedUse(JsonWriter& w, const ServingOption& o) {
    if (!o.owned) return w.Null();
    w.BeginObject();
    w.UsdMember("fully_loaded_cost_usd", o.owned->FullyLoadedCostUsd());
    w.Member("instance_hours", o.owned->instance_hours);
    w.UsdMember("marginal_cost_usd", o.owned->marginal_cost_usd);
    w.UsdMember("marginal_monthly_cost_usd", o.monthly_cost_usd);
    w.UsdRateMember("marginal_usd_per_million_tokens", o.usd_per_million_tokens);
    w.UsdMember("sunk_usd", o.owned->sunk_usd);
    w.UsdMember("without_owned_cost_usd", o.owned->without_owned_cost_usd);
    w.UsdMember("without_owned_monthly_cost_usd", o.owned->without_owned_monthly_cost_usd);
    w.UsdRateMember("without_owned_usd_per_million_tokens",
                    o.owned->without_owned_usd_per_million_tokens);
    w.EndObject();
}

constexpr auto kServingOptionFields = std::to_array<AnswerField<ServingOption>>({
    {"api_monthly_cost_usd", &Usd<&ServingOption::api_monthly_cost_usd>},
    {"batch_size", &Scalar<&ServingOption::batch_size>},
    {"capacity_requests_per_second", &Scalar<&ServingOption::capacity_requests_per_second>},
    {"cluster_usd_per_hour",
     [](JsonWriter& w, const ServingOption& o) {
         w.Number(pricing::RoundToMicroUsd(o.nodes * o.offering->price.usd_per_hour));
     }},
    {"expert_parallel", &Scalar<&ServingOption::expert_parallel>},
    {"instances_per_replica", &Scalar<&ServingOption::instances_per_replica>},
    {"inter_token_latency_ms", &Scalar<&ServingOption::inter_token_latency_ms>},
    {"max_instances", &Scalar<&ServingOption::max_instances>},
    {"monthly_cost_usd", &Usd<&ServingOption::monthly_cost_usd>},
    {"nodes", &Scalar<&ServingOption::nodes>},
    {"offering", &Object<kOfferingSummaryFields, &ServingOption::offering>},
    {"output_tokens_per_second_per_replica",
     &Scalar<&ServingOption::output_tokens_per_second_per_replica>},
    {"owned", &WriteServingOwnedUse},
    {"pipeline_parallel", &Scalar<&ServingOption::pipeline_parallel>},
    {"price_age_days", &Scalar<&ServingOption::price_age_days>},
    {"price_state", &Named<&pricing::PriceStateName, &ServingOption::price_state>},
    {"reasoning", &Scalar<&ServingOption::reasoning>},
    {"replicas", &Scalar<&ServingOption::replicas>},
    {"savings_vs_api_fraction", &Scalar<&ServingOption::savings_vs_api_fraction>},
    {"spare_replicas", &Scalar<&ServingOption::spare_replicas>},
    {"tensor_parallel", &Scalar<&ServingOption::tensor_parallel>},
    {"time_to_first_token_ms", &Scalar<&ServingOption::time_to_first_token_ms>},
    {"total_accelerators", &Scalar<&ServingOption::total_accelerators>},
    {"traffic_met_probability", &Scalar<&ServingOption::traffic_met_probability>},
    {"usd_per_million_input_tokens", &UsdRate<&ServingOption::usd_per_million_input_tokens>},
    {"usd_per_million_output_tokens", &UsdRate<&ServingOption::usd_per_million_output_tokens>},
    {"usd_per_million_tokens", &UsdRate<&ServingOption::usd_per_million_tokens>},
});
static_assert(KeysAscending(kServingOptionFields));

// The recommendation's cash by calendar month (ServingBudget), null without one.
using pl::ServingBudgetView;
constexpr auto kServingBudgetFields = std::to_array<AnswerField<ServingBudgetView>>({
    {"end_date", &Scalar<&ServingBudgetView::end_date>},
    {"monthly", &Array<kMonthlyFields, &ServingBudgetView::monthly>},
    {"months", &Scalar<&ServingBudgetView::months>},
    {"owned_usd", &Usd<&ServingBudgetView::owned_usd>},
    {"start_date", &Scalar<&ServingBudgetView::start_date>},
    {"start_date_source", &Scalar<&ServingBudgetView::start_date_source>},
    {"total_usd", &Usd<&ServingBudgetView::total_usd>},
    {"usd_per_day", &UsdRate<&ServingBudgetView::usd_per_day>},
});
static_assert(KeysAscending(kServingBudgetFields));

// The price warnings (each about the recommended option's offering), those of stale
// best_by_provider entries, then the workload model's consistency warnings.
void WriteServingWarnings(JsonWriter& w, const InferenceAnswer& a) {
    w.BeginArray();
    for (const auto& text : a.price_warnings) WriteWarning(w, "/recommendation/offering", text);
    for (const auto& s : a.stale_warnings) WriteWarning(w, s.field, s.detail);
    for (const auto& m : a.model_warnings) WriteWarning(w, m.field, m.detail);
    w.EndArray();
}

using pl::InferencePlan;
constexpr auto kInferencePlanFields = std::to_array<AnswerField<InferenceAnswer>>({
    {"best_by_provider", &Array<kServingOptionFields, &InferenceAnswer::best_by_provider>},
    {"budget", &Object<kServingBudgetFields, &InferenceAnswer::budget>},
    {"catalog_version", &Scalar<&InferenceAnswer::catalog_version>},
    {"currency", &Currency<InferenceAnswer>},
    {"estimates", &Scalar<&InferenceAnswer::page, &InferencePlan::estimates>},
    {"next_cursor", &Scalar<&InferenceAnswer::next_cursor>},
    {"options", &Array<kServingOptionFields, &InferenceAnswer::page, &InferencePlan::options>},
    {"output_tokens_per_second",
     &Scalar<&InferenceAnswer::page, &InferencePlan::output_tokens_per_second>},
    {"pricing_basis", &ListPricingBasis<InferenceAnswer>},
    {"reasoning", &Scalar<&InferenceAnswer::reasoning>},
    {"recommendation", &Object<kServingOptionFields, &InferenceAnswer::recommendation>},
    {"requests_per_second", &Scalar<&InferenceAnswer::page, &InferencePlan::requests_per_second>},
    {"skipped", &Keyed<&InferenceAnswer::page, &InferencePlan::skipped>},
    {"skipped_examples", &Keyed<&InferenceAnswer::page, &InferencePlan::skipped_examples>},
    {"total_count", &Scalar<&InferenceAnswer::page, &InferencePlan::total_count>},
    {"warnings", &WriteServingWarnings},
});
static_assert(KeysAscending(kInferencePlanFields));

}  // namespace

std::string EncodeInferencePlan(const InferenceAnswer& a, std::string_view assumptions_json) {
    std::string out;
    out.reserve(assumptions_json.size() + 4096 +
                1536 * (a.page.options.size() + a.best_by_provider.size()));
    JsonWriter w(out);
    WriteFields(w, a, kInferencePlanFields, "assumptions", assumptions_json);
    return out;
}

namespace {

// The serving options CSV's first columns (as kTrainingCsvColumns for training).
constexpr auto kServingCsvColumns = OptionCsvColumns(std::to_array<CsvColumn>({
    {"tensor_parallel", {}},
    {"pipeline_parallel", {}},
    {"expert_parallel", {}},
    {"instances_per_replica", {}},
    {"batch_size", {}},
    {"replicas", {}},
    {"spare_replicas", {}},
    {"nodes", {}},
    {"total_accelerators", {}},
    {"cluster_usd_per_hour", {}},
    {"time_to_first_token_ms", {}},
    {"inter_token_latency_ms", {}},
    {"monthly_cost_usd", {}},
    {"usd_per_million_input_tokens", {}},
    {"usd_per_million_output_tokens", {}},
    {"usd_per_million_tokens", {}},
    {"savings_vs_api_fraction", {}},
    {"as_of", "/offering/as_of"},
    {"owned_instance_hours", "/owned/instance_hours"},
    {"owned_sunk_usd", "/owned/sunk_usd"},
    {"without_owned_monthly_cost_usd", "/owned/without_owned_monthly_cost_usd"},
}));

}  // namespace

CsvTable OptionsCsv(const InferenceAnswer& answer) {
    const std::vector<CsvColumn> columns =
        CsvColumnsOf(kServingCsvColumns, kServingOptionFields, kProvenanceCsvColumns);
    CsvTable t;
    for (const auto& column : columns) t.header.emplace_back(column.name);
    const json shared = SharedCsvMembers(answer.catalog_version);
    for (const auto& o : answer.page.options) {
        t.rows.push_back(CsvCellsOf(CsvRowOf(o, kServingOptionFields, shared), columns));
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
    for (const auto& match : pricing::CloseMatches(*id, ids)) {
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
    return pricing::IsoDateFromDays(std::chrono::duration_cast<std::chrono::hours>(now).count() /
                                    24);
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
        pricing::plan::RecommendInference(plan.value(), catalog, request.include_stale);
    answer.best_by_provider = std::move(recommended.best_by_provider);
    answer.recommendation = std::move(recommended.recommendation);
    answer.reasoning = std::move(recommended.reasoning);
    answer.price_warnings = std::move(recommended.price_warnings);
    answer.stale_warnings = std::move(recommended.stale_warnings);
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
