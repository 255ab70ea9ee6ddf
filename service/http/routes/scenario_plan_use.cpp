#include "service/http/routes/scenario_plan_use.hpp"

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/money.hpp"
#include "pricing/offering.hpp"
#include "pricing/plan/forecast.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/timestamp.hpp"
#include "service/http/routes/owned_ledger.hpp"
#include "service/http/routes/price_book_routes.hpp"

namespace gpucost::http {
namespace {

using json = nlohmann::json;

double PlanNumberAt(const json& object, const char* key) {
    if (!object.is_object()) return 0;
    auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<double>() : 0;
}

std::string StringAt(const json& object, const char* key) {
    if (!object.is_object()) return {};
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The offering summary of a saved option (accelerators, price type, effective price); nullopt
// when it is not one.
std::optional<pricing::Offering> OfferingOf(const json& option) {
    if (!option.is_object() || !option.contains("offering")) return std::nullopt;
    const json& o = option["offering"];
    auto type = pricing::ParsePriceType(StringAt(o, "price_type"));
    const double accelerators = PlanNumberAt(o, "accelerator_count");
    if (!type || accelerators < 1) return std::nullopt;
    pricing::Offering offering;
    offering.id = StringAt(o, "id");
    offering.accelerator_count = static_cast<int>(accelerators);
    offering.price_type = *type;
    offering.price.usd_per_hour = PlanNumberAt(o, "usd_per_hour");
    return offering;
}

// A price book's answer names the list price beside the effective one; a list answer's price
// is the list price.
double ListUsdPerHourOf(const json& option, const pricing::Offering& offering) {
    const double list = PlanNumberAt(option["offering"], "list_usd_per_hour");
    return list > 0 ? list : offering.price.usd_per_hour;
}

// The saved option's `owned` (what owned capacity covered of it); nullopt when it has none.
std::optional<pricing::plan::OwnedUse> OwnedUseOf(const json& option) {
    if (!option.is_object() || !option.contains("owned") || !option["owned"].is_object()) {
        return std::nullopt;
    }
    const json& o = option["owned"];
    return pricing::plan::OwnedUse{PlanNumberAt(o, "instance_hours"), PlanNumberAt(o, "sunk_usd"),
                                   PlanNumberAt(o, "without_owned_cost_usd")};
}

std::vector<pricing::plan::ForecastCharge> TrainingCharges(
    const json& answer, const pricing::Offering& offering,
    const std::vector<pricing::OwnedCapacity>& owned) {
    const json& r = answer["recommendation"];
    pricing::plan::TrainingPlan plan;
    pricing::plan::TrainingPlanOption o;
    o.offering = &offering;
    o.nodes = static_cast<int>(PlanNumberAt(r, "nodes"));
    o.total_accelerators = static_cast<int>(PlanNumberAt(r, "total_accelerators"));
    o.expected_wall_clock_hours = PlanNumberAt(r, "expected_wall_clock_hours");
    o.billed_hours = PlanNumberAt(r, "billed_hours");
    o.expected_cost_usd = PlanNumberAt(r, "expected_cost_usd");
    o.cost_usd_p10 = PlanNumberAt(r, "cost_usd_p10");
    o.cost_usd_p90 = PlanNumberAt(r, "cost_usd_p90");
    o.owned = OwnedUseOf(r);
    plan.recommendation = o;
    plan.budget = pricing::plan::BudgetView{};
    plan.budget->start_date = StringAt(answer["budget"], "start_date");
    // Only compute charges are compared: the request's data (storage, egress) is not needed.
    pricing::plan::TrainingPlanRequest request;
    if (o.owned) request.owned_capacity = owned;
    return pricing::plan::ForecastTraining(plan, request, ListUsdPerHourOf(r, offering));
}

std::vector<pricing::plan::ForecastCharge> ServingCharges(
    const json& answer, const pricing::Offering& offering,
    const std::vector<pricing::OwnedCapacity>& owned) {
    const json& r = answer["recommendation"];
    const json& b = answer["budget"];
    pricing::plan::InferencePlanOption o;
    o.offering = &offering;
    o.nodes = static_cast<int>(PlanNumberAt(r, "nodes"));
    // The saved budget view's dates and months: what ForecastServing spreads the hours over.
    pricing::plan::ServingBudgetView view;
    view.start_date = StringAt(b, "start_date");
    view.end_date = StringAt(b, "end_date");
    view.months = static_cast<int>(PlanNumberAt(b, "months"));
    return pricing::plan::ForecastServing(o, view, ListUsdPerHourOf(r, offering), owned);
}

// The saved budget's monthly cash (`budget.monthly`) by month, list and effective alike.
std::map<std::string, pricing::SpendFigures> BudgetCashByMonth(const json& budget) {
    std::map<std::string, pricing::SpendFigures> planned;
    for (const json& m : budget.value("monthly", json::array())) {
        if (!m.is_object() || !m.value("month", json()).is_string() ||
            !m.value("usd", json()).is_number()) {
            continue;
        }
        pricing::SpendFigures& f = planned[m["month"].get<std::string>()];
        f.effective_cost += m["usd"].get<double>();
        f.list_cost += m["usd"].get<double>();
    }
    return planned;
}

// Adds to `planned` (when it has months) the owned charges among `charges` by month.
void AddOwnedCharges(const std::vector<pricing::plan::ForecastCharge>& charges,
                     std::map<std::string, pricing::SpendFigures>& planned) {
    if (planned.empty()) return;
    for (const pricing::plan::ForecastCharge& c : charges) {
        if (!c.owned) continue;
        pricing::SpendFigures& f = planned[c.period_start.substr(0, 7)];
        f.effective_cost += c.effective_cost_usd;
        f.list_cost += c.effective_cost_usd;
    }
}

// The decomposition every split uses, in words (pricing/plan_vs_actual.hpp PlanVsActual).
constexpr char kDecomposition[] =
    "price effect = (actual - planned USD per accelerator-hour) x planned accelerator-hours; "
    "quantity effect = (actual - planned accelerator-hours) x actual USD per accelerator-hour; "
    "they add up to the gap";

// Money as answers state it (docs/api.md "Money"): amounts to the cent, the rate to 1e-6.
json SpendJson(const pricing::SpendFigures& f) {
    return {{"accelerator_hours", Num(f.accelerator_hours)},
            {"effective_cost_usd", Num(pricing::RoundToCents(f.effective_cost))},
            {"list_cost_usd", Num(pricing::RoundToCents(f.list_cost))},
            {"effective_usd_per_accelerator_hour",
             Num(pricing::RoundToMicroUsd(f.EffectivePerAcceleratorHour()))}};
}

// The months a split covers: all of them, those up to the last billed, or one.
using MonthFilter = std::function<bool(const std::string& month)>;

// The price effect of a split over the months `in` admits, split into rate, commitment
// coverage and mix (pricing::SplitPriceEffect): the plan's charges by kind against the bill's
// USD charges by kind (FOCUS PricingCategory Committed, else by offering).
json PriceEffectJson(const SavedPlanUse& use, const std::vector<ActualClassMonth>& classes,
                     double price_effect, const MonthFilter& in) {
    std::vector<pricing::PriceClassSpend> planned;
    for (const auto& [month, spend] : use.price_classes_by_month) {
        if (in(month)) planned.insert(planned.end(), spend.begin(), spend.end());
    }
    std::vector<pricing::PriceClassSpend> actual;
    for (const ActualClassMonth& c : classes) {
        if (c.billing_currency != "USD" || !in(c.month)) continue;
        actual.push_back({c.pricing_category == "Committed", c.offering_id, c.accelerator_hours,
                          c.effective_cost});
    }
    const pricing::PriceEffectSplit split =
        pricing::SplitPriceEffect(planned, actual, price_effect);
    return {{"rate_usd", Num(split.rate)},
            {"commitment_coverage_usd", Num(split.coverage)},
            {"mix_usd", Num(split.mix)}};
}

json SplitJson(const pricing::GapSplit& split, const SavedPlanUse& use,
               const std::vector<ActualClassMonth>& classes, const MonthFilter& in) {
    return {{"gap_usd", Num(split.gap)},
            {"price_effect_usd", Num(split.price_effect)},
            {"price_effect_split", PriceEffectJson(use, classes, split.price_effect, in)},
            {"quantity_effect_usd", Num(split.quantity_effect)}};
}

json ProgressJson(const Scenario& s, const SavedPlanUse& use,
                  const std::vector<ActualMonth>& tagged) {
    if (!s.progress) return nullptr;
    double actual_hours = 0;
    for (const ActualMonth& m : tagged) actual_hours += m.accelerator_hours;
    json out = {{"tokens_done_b", Num(s.progress->tokens_done_b)},
                {"as_of", FormatTimestamp(s.progress->as_of_us)},
                {"tokens_planned_b", Num(use.tokens_planned_b)},
                {"actual_accelerator_hours", Num(actual_hours)},
                {"estimated_accelerator_hours", nullptr},
                {"actual_to_estimated_hours_ratio", nullptr}};
    if (auto speed = pricing::ImpliedSpeedOf(s.progress->tokens_done_b, use.tokens_planned_b,
                                             use.estimated_accelerator_hours, actual_hours)) {
        out["estimated_accelerator_hours"] = Num(speed->estimated_accelerator_hours);
        out["actual_to_estimated_hours_ratio"] = Num(speed->actual_to_estimated_hours_ratio);
    }
    return out;
}

// The remaining months re-forecast from the run rate billed so far; null before any charge.
json ReforecastJson(const std::optional<pricing::RunRateReforecast>& f) {
    if (!f) return nullptr;
    json months = json::array();
    for (const auto& m : f->remaining) {
        months.push_back({{"month", m.month},
                          {"planned_usd", Num(m.planned)},
                          {"reforecast_usd", Num(m.reforecast)}});
    }
    return {{"through_month", f->through_month},
            {"run_rate", f->run_rate ? json(Num(*f->run_rate)) : json(nullptr)},
            {"planned_to_date_usd", Num(f->planned_to_date)},
            {"actual_to_date_usd", Num(f->actual_to_date)},
            {"months", std::move(months)},
            {"planned_remaining_usd", Num(f->planned_remaining)},
            {"reforecast_remaining_usd", Num(f->reforecast_remaining)},
            {"planned_total_usd", Num(f->planned_total)},
            {"reforecast_total_usd", Num(f->reforecast_total)}};
}

// A split at the top of the answer: the figures, the decomposition and the explanation.
json TopSplitJson(const pricing::PlanVsActual& r, const std::string& over, const SavedPlanUse& use,
                  const std::vector<ActualClassMonth>& classes, const MonthFilter& in) {
    json split = SplitJson({r.gap, r.price_effect, r.quantity_effect}, use, classes, in);
    split["decomposition"] = kDecomposition;
    split["explanation"] = over + r.explanation;
    return split;
}

}  // namespace

void AddAcceleratorComparison(json& answer, const Scenario& s, const SavedPlanUse& use,
                              const std::map<std::string, pricing::SpendFigures>& actual_usd,
                              const std::vector<ActualMonth>& tagged,
                              const std::vector<ActualClassMonth>& classes) {
    const pricing::PlanVsActual r =
        pricing::ComparePlanToActual(use.accelerator_spend_by_month, actual_usd, "USD");
    // The bill's date: the last month with charges. The headline stops there, so months not
    // billed yet are not read as a saving; the whole plan is stated beside it.
    const std::string through_month =
        actual_usd.empty() ? std::string() : actual_usd.rbegin()->first;
    std::map<std::string, const pricing::MonthComparison*> by_month;
    for (const pricing::MonthComparison& m : r.months) by_month[m.month] = &m;
    for (json& month : answer["months"]) {
        auto it = by_month.find(month["month"].get<std::string>());
        const pricing::MonthComparison none{};
        const pricing::MonthComparison& m = it == by_month.end() ? none : *it->second;
        month["planned"] = SpendJson(m.planned);
        month["actual"]["effective_usd_per_accelerator_hour"] =
            Num(m.actual.EffectivePerAcceleratorHour());
        const std::string name = month["month"].get<std::string>();
        month["accelerator_split"] = SplitJson(
            m.split, use, classes, [&name](const std::string& other) { return other == name; });
    }
    answer["planned"] = SpendJson(r.planned);
    answer["actual"]["effective_usd_per_accelerator_hour"] =
        Num(r.actual.EffectivePerAcceleratorHour());
    const MonthFilter every = [](const std::string&) { return true; };
    if (through_month.empty()) {
        answer["accelerator_split"] = TopSplitJson(r, "", use, classes, every);
    } else {
        const pricing::PlanVsActual billed = pricing::ComparePlanToActual(
            pricing::MonthsThrough(use.accelerator_spend_by_month, through_month), actual_usd,
            "USD");
        answer["accelerator_split"] = TopSplitJson(
            billed, "Over the months billed so far (through " + through_month + "): ", use, classes,
            [&through_month](const std::string& m) { return m <= through_month; });
    }
    answer["accelerator_split_full_plan"] =
        TopSplitJson(r, "Over the whole plan: ", use, classes, every);
    answer["reforecast"] = ReforecastJson(pricing::ReforecastFromRunRate(r, through_month));
    answer["progress"] = ProgressJson(s, use, tagged);
}

SavedPlanUse SavedPlanUseOf(const Scenario& s, const std::vector<pricing::OwnedCapacity>& owned) {
    SavedPlanUse use;
    json answer = json::parse(s.saved_result_json, nullptr, false);
    if (answer.is_object() && answer.contains("budget") && answer["budget"].is_object()) {
        use.planned_by_month = BudgetCashByMonth(answer["budget"]);
    }
    if (!answer.is_object() || !answer["recommendation"].is_object() ||
        !answer["budget"].is_object()) {
        return use;
    }
    const std::optional<pricing::Offering> offering = OfferingOf(answer["recommendation"]);
    if (!offering) return use;
    if (s.plan_kind == "training") {
        const auto charges = TrainingCharges(answer, *offering, owned);
        use.accelerator_spend_by_month = pricing::PlannedAcceleratorSpend(charges);
        use.price_classes_by_month = pricing::PlannedPriceClasses(charges);
        AddOwnedCharges(charges, use.planned_by_month);
        const json& r = answer["recommendation"];
        use.estimated_accelerator_hours =
            PlanNumberAt(r, "expected_wall_clock_hours") * PlanNumberAt(r, "total_accelerators");
        use.tokens_planned_b =
            PlanNumberAt(json::parse(s.request_json, nullptr, false), "tokens_b");
    } else if (s.plan_kind == "inference") {
        const auto charges = ServingCharges(answer, *offering, owned);
        use.accelerator_spend_by_month = pricing::PlannedAcceleratorSpend(charges);
        use.price_classes_by_month = pricing::PlannedPriceClasses(charges);
        AddOwnedCharges(charges, use.planned_by_month);
    }
    return use;
}

pricing::Result<std::vector<pricing::OwnedCapacity>> SavedOwnedCapacity(
    const Deps& deps, const Scenario& s, const std::optional<Principal>& caller) {
    json request = json::parse(s.request_json, nullptr, false);
    if (!request.is_object() || !request.contains("price_book")) {
        return std::vector<pricing::OwnedCapacity>();
    }
    json& named = request["price_book"];
    const json answer = json::parse(s.saved_result_json, nullptr, false);
    // A stored book named by id alone was planned at the version the answer echoes, not at
    // whatever version is latest now.
    if (named.is_string()) named = json{{"id", named}};
    if (named.is_object() && named.contains("id") && !named.contains("version") &&
        answer.is_object() && answer.contains("price_book") && answer["price_book"].is_object() &&
        answer["price_book"].contains("version")) {
        named["version"] = answer["price_book"]["version"];
    }
    auto book = ResolvePlanBook(deps, request, caller);
    if (!book.ok()) return book.error();
    if (!book.value()) return std::vector<pricing::OwnedCapacity>();
    // A stored book's scenario was planned on what the scenarios saved before it left.
    auto ledger = LedgerOf(deps, *book.value(), s.id);
    if (!ledger.ok()) return ledger.error();
    if (ledger.value()) return ledger.value()->ledger.left;
    return std::move(book.value()->owned_capacity);
}

}  // namespace gpucost::http
