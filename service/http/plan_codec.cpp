#include "service/http/plan_codec.hpp"

#include <climits>
#include <cmath>
#include <set>

#include "service/http/json_codec.hpp"

namespace gpucost::http {
namespace {

using pricing::ErrorCode;

// JSON pointer escaping (RFC 6901): '~' -> "~0", '/' -> "~1"; long keys are cut.
std::string EscapePointerToken(const std::string& key) {
    std::string out;
    for (char c : key.substr(0, 64)) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

json Opt(const std::optional<double>& v) { return v ? Num(*v) : json(nullptr); }

template <typename T>
json OptValue(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

}  // namespace

JsonReader::JsonReader(const json& object, std::string pointer)
    : object_(object), pointer_(std::move(pointer)) {}

std::string JsonReader::PointerOf(const std::string& key) const {
    return pointer_ + "/" + EscapePointerToken(key);
}

void JsonReader::Fail(ErrorCode code, const std::string& key, const std::string& detail) {
    if (!error_) {
        const std::string field = PointerOf(key);
        error_ = pricing::MakeError(code, field + ": " + detail, field);
    }
}

const json* JsonReader::Member(const std::string& key) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
        return nullptr;
    }
    return &*it;
}

std::optional<double> JsonReader::Number(const std::string& key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_number()) {
        Fail(ErrorCode::kMalformed, key, "must be a number");
        return std::nullopt;
    }
    return v->get<double>();
}

std::optional<int> JsonReader::Int(const std::string& key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (v->is_number_integer()) {
        if (v->is_number_unsigned()) {
            auto u = v->get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(INT_MAX)) {
                Fail(ErrorCode::kInvalidArgument, key, "is too large");
                return std::nullopt;
            }
            return static_cast<int>(u);
        }
        auto i = v->get<std::int64_t>();
        if (i > INT_MAX || i < INT_MIN) {
            Fail(ErrorCode::kInvalidArgument, key, "is out of range");
            return std::nullopt;
        }
        return static_cast<int>(i);
    }
    if (v->is_number_float()) {
        double d = v->get<double>();
        if (std::isfinite(d) && d == std::floor(d)) {
            if (d > static_cast<double>(INT_MAX) || d < static_cast<double>(INT_MIN)) {
                Fail(ErrorCode::kInvalidArgument, key, "is out of range");
                return std::nullopt;
            }
            return static_cast<int>(d);
        }
    }
    Fail(ErrorCode::kMalformed, key, "must be an integer");
    return std::nullopt;
}

std::optional<std::string> JsonReader::String(const std::string& key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_string()) {
        Fail(ErrorCode::kMalformed, key, "must be a string");
        return std::nullopt;
    }
    return v->get<std::string>();
}

std::optional<bool> JsonReader::Bool(const std::string& key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_boolean()) {
        Fail(ErrorCode::kMalformed, key, "must be true or false");
        return std::nullopt;
    }
    return v->get<bool>();
}

std::optional<std::vector<std::string>> JsonReader::Strings(const std::string& key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_array()) {
        Fail(ErrorCode::kMalformed, key, "must be an array of strings");
        return std::nullopt;
    }
    std::vector<std::string> out;
    for (const json& item : *v) {
        if (!item.is_string()) {
            Fail(ErrorCode::kMalformed, key, "must be an array of strings");
            return std::nullopt;
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

const json* JsonReader::Object(const std::string& key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return nullptr;
    }
    if (!v->is_object()) {
        Fail(ErrorCode::kMalformed, key, "must be an object");
        return nullptr;
    }
    return v;
}

void JsonReader::OnlyKnown(const std::vector<std::string>& known) {
    std::set<std::string> allowed(known.begin(), known.end());
    for (auto it = object_.begin(); it != object_.end(); ++it) {
        if (allowed.count(it.key()) == 0) {
            std::string list;
            for (const auto& k : allowed) {
                list += (list.empty() ? "" : ", ") + k;
            }
            Fail(ErrorCode::kMalformed, it.key(), "unknown member; known members: " + list);
            return;
        }
    }
}

json ToJson(const pricing::Assumptions& assumptions) {
    json out = json::array();
    for (const auto& a : assumptions) {
        out.push_back({{"name", a.name},
                       {"value", Num(a.value)},
                       {"unit", a.unit},
                       {"description", a.description},
                       {"source", a.source}});
    }
    return out;
}

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
    q.spot_offering_id = r.String("spot_offering_id");
    q.on_demand_offering_id = r.String("on_demand_offering_id");
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

json ToJson(const pricing::plan::SpotPlan& p) {
    return {{"job_hours", Num(p.job_hours)},
            {"on_demand_usd_per_hour", Num(p.on_demand_usd_per_hour)},
            {"spot_usd_per_hour", Num(p.spot_usd_per_hour)},
            {"spot_offering_id", OptValue(p.spot_offering_id)},
            {"on_demand_offering_id", OptValue(p.on_demand_offering_id)},
            {"interruption_bucket", OptValue(p.interruption_bucket)},
            {"interruptions_per_hour", Num(p.interruptions_per_hour)},
            {"mean_hours_between_interruptions", Opt(p.mean_hours_between_interruptions)},
            {"checkpoint_minutes", Num(p.checkpoint_hours * 60.0)},
            {"restart_minutes", Num(p.restart_hours * 60.0)},
            {"checkpoint_interval_hours", Num(p.checkpoint_interval_hours)},
            {"young_checkpoint_interval_hours", Opt(p.young_checkpoint_interval_hours)},
            {"expected_interruptions", Num(p.expected_interruptions)},
            {"expected_overhead_fraction", Num(p.expected_overhead_fraction)},
            {"expected_spot_hours", Num(p.expected_spot_hours)},
            {"expected_spot_cost_usd", Num(p.expected_spot_cost_usd)},
            {"on_demand_hours", Num(p.on_demand_hours)},
            {"on_demand_cost_usd", Num(p.on_demand_cost_usd)},
            {"expected_savings_usd", Num(p.expected_savings_usd)},
            {"expected_savings_fraction", Num(p.expected_savings_fraction)},
            {"deadline_hours", Opt(p.deadline_hours)},
            {"spot_deadline_probability", Opt(p.spot_deadline_probability)},
            {"on_demand_deadline_probability", Opt(p.on_demand_deadline_probability)},
            {"mixed_slack_hours", Opt(p.mixed_slack_hours)},
            {"recommendation", pricing::plan::SpotRecommendationName(p.recommendation)},
            {"reasoning", p.reasoning},
            {"assumptions", ToJson(p.assumptions)}};
}

pricing::Result<pricing::plan::RentVsBuyRequest> DecodeRentVsBuyRequest(const json& body) {
    JsonReader r(body, "");
    r.OnlyKnown({"buy", "rent", "discount_rate_annual", "horizon_months"});
    pricing::plan::RentVsBuyRequest q;
    q.discount_rate_annual = r.Number("discount_rate_annual");
    q.horizon_months = r.Int("horizon_months");
    const json* buy = r.Object("buy");
    const json* rent = r.Object("rent");
    if (r.ok() && buy == nullptr) {
        r.Fail(ErrorCode::kMalformed, "buy", "is required");
    }
    if (r.ok() && rent == nullptr) {
        r.Fail(ErrorCode::kMalformed, "rent", "is required");
    }
    if (!r.ok()) {
        return r.error();
    }
    JsonReader b(*buy, "/buy");
    b.OnlyKnown({"capex_usd", "opex_usd_per_month", "accelerator", "accelerator_count",
                 "server_price_usd", "purchase_price_usd_per_accelerator",
                 "chassis_overhead_fraction", "tdp_w", "server_power_overhead_fraction",
                 "utilization", "pue", "usd_per_kwh", "hosting_usd_per_accelerator_month",
                 "staff_usd_per_month", "depreciation_years", "residual_value_fraction"});
    q.buy.capex_usd = b.Number("capex_usd");
    q.buy.opex_usd_per_month = b.Number("opex_usd_per_month");
    q.buy.accelerator = b.String("accelerator");
    q.buy.accelerator_count = b.Int("accelerator_count");
    q.buy.server_price_usd = b.Number("server_price_usd");
    q.buy.purchase_price_usd_per_accelerator = b.Number("purchase_price_usd_per_accelerator");
    q.buy.chassis_overhead_fraction = b.Number("chassis_overhead_fraction");
    q.buy.tdp_w = b.Number("tdp_w");
    q.buy.server_power_overhead_fraction = b.Number("server_power_overhead_fraction");
    q.buy.utilization = b.Number("utilization");
    q.buy.pue = b.Number("pue");
    q.buy.usd_per_kwh = b.Number("usd_per_kwh");
    q.buy.hosting_usd_per_accelerator_month = b.Number("hosting_usd_per_accelerator_month");
    q.buy.staff_usd_per_month = b.Number("staff_usd_per_month");
    q.buy.depreciation_years = b.Number("depreciation_years");
    q.buy.residual_value_fraction = b.Number("residual_value_fraction");
    if (!b.ok()) {
        return b.error();
    }
    JsonReader t(*rent, "/rent");
    t.OnlyKnown({"usd_per_month", "offering_id", "usd_per_accelerator_hour",
                 "accelerator_hours_per_month"});
    q.rent.usd_per_month = t.Number("usd_per_month");
    q.rent.offering_id = t.String("offering_id");
    q.rent.usd_per_accelerator_hour = t.Number("usd_per_accelerator_hour");
    q.rent.accelerator_hours_per_month = t.Number("accelerator_hours_per_month");
    if (!t.ok()) {
        return t.error();
    }
    return q;
}

json ToJson(const pricing::plan::RentVsBuyPlan& p) {
    json cumulative = json::array();
    for (const auto& point : p.cumulative) {
        cumulative.push_back({{"month", point.month},
                              {"rent_usd", Num(point.rent_usd)},
                              {"own_usd", Num(point.own_usd)},
                              {"own_net_of_resale_usd", Num(point.own_net_of_resale_usd)}});
    }
    return {{"recommendation", pricing::plan::RentVsBuyRecommendationName(p.recommendation)},
            {"reasoning", p.reasoning},
            {"break_even_months", Opt(p.break_even_months)},
            {"breaks_even_within_horizon", p.breaks_even_within_horizon},
            {"discounted_break_even_months", Opt(p.discounted_break_even_months)},
            {"break_even_utilization", Opt(p.break_even_utilization)},
            {"utilization", Opt(p.utilization)},
            {"monthly_rent_usd", Num(p.monthly_rent_usd)},
            {"monthly_own_usd", Num(p.monthly_own_usd)},
            {"capex_usd", Num(p.capex_usd)},
            {"opex_usd_per_month", Num(p.opex_usd_per_month)},
            {"accelerator", OptValue(p.accelerator)},
            {"accelerator_count", OptValue(p.accelerator_count)},
            {"rent_usd_per_accelerator_hour", Opt(p.rent_usd_per_accelerator_hour)},
            {"accelerator_hours_per_month", Opt(p.accelerator_hours_per_month)},
            {"horizon_months", p.horizon_months},
            {"discount_rate_annual", Num(p.discount_rate_annual)},
            {"total_rent_usd", Num(p.total_rent_usd)},
            {"total_own_usd", Num(p.total_own_usd)},
            {"npv_rent_usd", Num(p.npv_rent_usd)},
            {"npv_own_usd", Num(p.npv_own_usd)},
            {"residual_value_at_horizon_usd", Num(p.residual_value_at_horizon_usd)},
            {"cumulative", std::move(cumulative)},
            {"assumptions", ToJson(p.assumptions)}};
}

CsvTable CumulativeCsv(const pricing::plan::RentVsBuyPlan& plan) {
    CsvTable table;
    table.header = {"month", "rent_usd", "own_usd", "own_net_of_resale_usd"};
    for (const auto& point : plan.cumulative) {
        table.rows.push_back({std::to_string(point.month), CsvNumber(point.rent_usd),
                              CsvNumber(point.own_usd), CsvNumber(point.own_net_of_resale_usd)});
    }
    return table;
}

}  // namespace gpucost::http
