#include "service/http/codec/commitment_codec.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "pricing/calendar.hpp"
#include "pricing/money.hpp"
#include "pricing/plan/forecast.hpp"
#include "service/http/codec/focus_codec.hpp"
#include "service/http/codec/json_text.hpp"

namespace gpucost::http {
namespace {

using json = nlohmann::json;
namespace pl = pricing::plan;

constexpr const char* kStartDate = "start_date";
constexpr const char* kSlipDays = "slip_days";

pricing::Error Invalid(const std::string& field, const std::string& detail) {
    return pricing::MakeError(pricing::ErrorCode::kInvalidArgument, detail, field);
}

// The date an hour since 1970 falls on (YYYY-MM-DD).
std::string DateOfHour(double hour) {
    return pricing::IsoDateFromDays(
        static_cast<long long>(std::floor(hour / pricing::kHoursPerDay)));
}

json Usd(double usd) {
    return Num(pricing::RoundToCents(usd));
}

json Hours(double hours) {
    return Num(pricing::StatedOwnedHours(hours));
}

// Utilisations are fractions to 1e-6: enough to read 0.833333 and to add up by hand.
json Fraction(double f) {
    return Num(std::round(f * 1e6) / 1e6);
}

json OutcomeJson(const pl::CommitmentOutcome& o) {
    return {{"saving_usd", Usd(o.saving_usd)},
            {"unused_cost_usd", Usd(o.unused_cost_usd)},
            {"unused_instance_hours", Hours(o.unused_instance_hours)},
            {"used_instance_hours", Hours(o.used_instance_hours)},
            {"utilisation", Fraction(o.utilisation)}};
}

json LineJson(const pl::CommitmentLine& l) {
    return {{"break_even_utilisation", Fraction(l.break_even_utilisation)},
            {"commit_usd_per_hour", Num(pricing::RoundToMicroUsd(l.commit_usd_per_hour))},
            {"commitment_cost_usd", Usd(l.commitment_cost_usd)},
            {"expected", OutcomeJson(l.expected)},
            {"instances", l.instances},
            {"offering_id", l.commitment->id},
            {"on_demand_offering_id", l.on_demand->id},
            {"on_demand_usd_per_hour", Num(pricing::RoundToMicroUsd(l.on_demand_usd_per_hour))},
            {"p10_duration", OutcomeJson(l.p10_duration)},
            {"p90_duration", OutcomeJson(l.p90_duration)},
            {"slipped", OutcomeJson(l.slipped)},
            {"start_date", DateOfHour(l.start_hour)},
            {"term", pl::TermName(l.term_hours)},
            {"term_hours", Num(l.term_hours)}};
}

json ScenariosJson(const pl::CommitmentPlan& plan, const std::vector<pl::PlannedDemand>& demand) {
    std::map<std::string, std::string> skipped;
    for (const pl::SkippedDemand& s : plan.skipped) skipped[s.holder] = s.reason;
    json out = json::array();
    for (const pl::PlannedDemand& d : demand) {
        auto it = skipped.find(d.holder);
        out.push_back({{"counted", it == skipped.end()},
                       {"expected_hours", Hours(d.end_hour - d.start_hour)},
                       {"nodes", d.nodes},
                       {"offering_id", d.offering ? json(d.offering->id) : json(nullptr)},
                       {"plan", d.plan_kind},
                       {"scenario_id", d.holder},
                       {"skipped_reason", it == skipped.end() ? json(nullptr) : json(it->second)},
                       {"start_date", DateOfHour(d.start_hour)}});
    }
    return out;
}

json DemandJson(const pl::CommitmentPlan& plan) {
    json out = json::array();
    for (const pl::OfferingDemand& d : plan.demand) {
        json terms = json::array();
        for (const pricing::Offering* o : d.terms_offered) terms.push_back(o->id);
        out.push_back({{"offering_id", d.on_demand->id},
                       {"owned_instance_hours", Hours(d.owned_instance_hours)},
                       {"peak_instances", d.peak_instances},
                       {"planned_instance_hours", Hours(d.planned_instance_hours)},
                       {"terms_offered", std::move(terms)}});
    }
    return out;
}

json OptionalFraction(const std::optional<double>& f) {
    return f ? Fraction(*f) : json(nullptr);
}

json OwnedUseJson(const std::vector<pl::OwnedMonthUse>& uses) {
    json out = json::array();
    for (const pl::OwnedMonthUse& u : uses) {
        out.push_back(
            {{"actual_committed_instance_hours", Hours(u.actual_committed_instance_hours)},
             {"actual_coverage", OptionalFraction(u.actual_coverage)},
             {"actual_instance_hours", Hours(u.actual_instance_hours)},
             {"actual_utilisation", OptionalFraction(u.actual_utilisation)},
             {"coverage", OptionalFraction(u.coverage)},
             {"held_instance_hours", Hours(u.held_instance_hours)},
             {"month", u.month},
             {"offering_id", u.offering_id},
             {"planned_instance_hours", Hours(u.planned_instance_hours)},
             {"reserved_instance_hours", Hours(u.reserved_instance_hours)},
             {"utilisation", Fraction(u.utilisation)}});
    }
    return out;
}

}  // namespace

pricing::Result<CommitmentOptions> DecodeCommitmentRequest(const json& body) {
    CommitmentOptions out;
    if (!body.is_object()) return Invalid("/", "the request is a JSON object");
    for (const auto& [key, value] : body.items()) {
        if (key != kStartDate && key != kSlipDays) {
            return Invalid("/" + key, "unknown member (known: price_book, start_date, slip_days)");
        }
    }
    if (body.contains(kStartDate)) {
        const json& v = body[kStartDate];
        const auto day = v.is_string() ? pricing::DaysFromIsoDate(v.get<std::string>())
                                       : std::optional<long long>();
        if (!day) return Invalid("/start_date", "a date, YYYY-MM-DD");
        out.start_hour = static_cast<double>(*day) * pricing::kHoursPerDay;
    }
    if (body.contains(kSlipDays)) {
        const json& v = body[kSlipDays];
        if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > pl::kMaxSlipDays) {
            return Invalid("/slip_days", "a number of days from 0 to 1095 (a 3-year term)");
        }
        out.slip_days = v.get<double>();
    }
    return out;
}

std::string EncodeCommitmentPlan(const pl::CommitmentPlan& plan,
                                 const std::vector<pl::PlannedDemand>& demand,
                                 const std::vector<pl::OwnedMonthUse>& owned_use,
                                 std::string_view assumptions_json) {
    json lines = json::array();
    for (const pl::CommitmentLine& l : plan.lines) lines.push_back(LineJson(l));
    json answer = {
        {"commitments", std::move(lines)},
        {"demand", DemandJson(plan)},
        {"owned_use", OwnedUseJson(owned_use)},
        {"pricing_basis", "list"},
        {"scenarios", ScenariosJson(plan, demand)},
        {"start_date", plan.demand.empty() ? json(nullptr) : json(DateOfHour(plan.start_hour))},
        {"totals",
         {{"commitment_cost_usd", Usd(plan.commitment_cost_usd)},
          {"expected_saving_usd", Usd(plan.expected_saving_usd)},
          {"slipped_saving_usd", Usd(plan.slipped_saving_usd)}}}};
    std::string text = ToJsonText(answer);
    // Assumptions come encoded at the caller's detail; they are the answer's first member.
    return "{\"assumptions\":" + std::string(assumptions_json) + "," + text.substr(1);
}

CsvTable CommitmentCsv(const pl::CommitmentPlan& plan) {
    CsvTable t;
    t.header = {"offering_id",
                "on_demand_offering_id",
                "term",
                "start_date",
                "instances",
                "commit_usd_per_hour",
                "on_demand_usd_per_hour",
                "break_even_utilisation",
                "commitment_cost_usd"};
    for (const char* what : {"expected", "p10_duration", "p90_duration", "slipped"}) {
        for (const char* figure : {"utilisation", "unused_cost_usd", "saving_usd"}) {
            t.header.push_back(std::string(what) + "_" + figure);
        }
    }
    for (const pl::CommitmentLine& l : plan.lines) {
        std::vector<std::string> row = {l.commitment->id,
                                        l.on_demand->id,
                                        pl::TermName(l.term_hours),
                                        DateOfHour(l.start_hour),
                                        std::to_string(l.instances),
                                        CsvNumber(l.commit_usd_per_hour),
                                        CsvNumber(l.on_demand_usd_per_hour),
                                        CsvNumber(l.break_even_utilisation),
                                        CsvUsd(l.commitment_cost_usd)};
        for (const pl::CommitmentOutcome* o :
             {&l.expected, &l.p10_duration, &l.p90_duration, &l.slipped}) {
            row.push_back(CsvNumber(o->utilisation));
            row.push_back(CsvUsd(o->unused_cost_usd));
            row.push_back(CsvUsd(o->saving_usd));
        }
        t.rows.push_back(std::move(row));
    }
    return t;
}

CsvTable CommitmentFocusCsv(const pl::CommitmentPlan& plan, const PricingView& view,
                            const std::string& catalog_version) {
    FocusContext context;
    context.plan_kind = "commitments";
    context.catalog_version = catalog_version;
    if (view.priced) {
        context.pricing_basis = "price_book";
        context.price_book = view.priced->Book().name;
        context.price_book_id = view.priced->Book().id;
        context.price_book_version = view.priced->Book().version;
    }
    std::vector<pl::ForecastCharge> charges;
    for (const pl::CommitmentLine& l : plan.lines) {
        double list_rate = l.commit_usd_per_hour;
        if (view.priced) {
            if (const pricing::AppliedPrice* p = view.priced->PriceOf(l.commitment->id)) {
                list_rate = p->list_usd_per_hour;
            }
        }
        // One Recurring purchase per month of the term, with the month's hours the saved
        // plans use and those they leave (the shared writer's Used and Unused rows).
        for (const pl::CommitmentMonth& m : l.months) {
            pl::ForecastCharge c;
            c.period_start = DateOfHour(m.from_hour);
            c.period_end = DateOfHour(m.until_hour);
            c.category = pl::ChargeCategoryKind::kPurchase;
            c.offering = l.commitment;
            c.nodes = l.instances;
            c.pricing_quantity = m.reserved_instance_hours;
            c.list_unit_price_usd = list_rate;
            c.effective_unit_price_usd = l.commit_usd_per_hour;
            c.list_cost_usd = c.pricing_quantity * list_rate;
            c.effective_cost_usd = c.pricing_quantity * l.commit_usd_per_hour;
            c.accelerator_hours = c.pricing_quantity * l.commitment->accelerator_count;
            c.reserved_from = DateOfHour(l.start_hour);
            c.reserved_months.push_back(
                {c.period_start, c.period_end, m.reserved_instance_hours, m.used_instance_hours});
            charges.push_back(std::move(c));
        }
    }
    return FocusForecastCsv(charges, context);
}

}  // namespace gpucost::http
