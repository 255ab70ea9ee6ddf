#include "pricing/plan_vs_actual.hpp"

#include <cmath>
#include <set>

#include "pricing/plan/field_checker.hpp"

namespace gpucost::pricing {
namespace {

void Add(SpendFigures& total, const SpendFigures& part) {
    total.accelerator_hours += part.accelerator_hours;
    total.effective_cost += part.effective_cost;
    total.list_cost += part.list_cost;
}

std::string Money(double value, const std::string& currency) {
    return (value < 0 ? "-" : "") + plan::Fixed(std::fabs(value), 2) + " " + currency;
}

std::string Percent(double part, double whole) {
    if (whole == 0) return "n/a";
    double p = 100 * part / whole;
    return (p >= 0 ? "+" : "") + plan::Fixed(p, 1) + " %";
}

std::string Explain(const PlanVsActual& r, const std::string& currency) {
    const double planned = r.planned.effective_cost;
    std::string out = "Actual spend " + Money(r.actual.effective_cost, currency) + " against " +
                      Money(planned, currency) + " planned: a gap of " + Money(r.gap, currency) +
                      " (" + Percent(r.gap, planned) + "). ";
    if (planned > 0 && std::fabs(r.gap) <= kOnPlanFraction * planned) {
        return out + "On plan.";
    }
    out += "Quantity: " + plan::Fixed(r.actual.accelerator_hours, 1) +
           " accelerator-hours against " + plan::Fixed(r.planned.accelerator_hours, 1) +
           " planned (" +
           Percent(r.actual.accelerator_hours - r.planned.accelerator_hours,
                   r.planned.accelerator_hours) +
           "), " + Money(r.quantity_effect, currency) + " of the gap. ";
    out += "Price: " + plan::Fixed(r.actual.EffectivePerAcceleratorHour(), 4) + " " + currency +
           " paid per accelerator-hour against " +
           plan::Fixed(r.planned.EffectivePerAcceleratorHour(), 4) + " planned (" +
           Percent(r.actual.EffectivePerAcceleratorHour() - r.planned.EffectivePerAcceleratorHour(),
                   r.planned.EffectivePerAcceleratorHour()) +
           ": discounts, spot or another offering), " + Money(r.price_effect, currency) +
           " of the gap. ";
    const double price = std::fabs(r.price_effect);
    const double quantity = std::fabs(r.quantity_effect);
    if (price >= 2 * quantity) return out + "Mostly price.";
    if (quantity >= 2 * price) return out + "Mostly quantity.";
    return out + "Both price and quantity.";
}

}  // namespace

PlanVsActual ComparePlanToActual(const std::map<std::string, SpendFigures>& planned_by_month,
                                 const std::map<std::string, SpendFigures>& actual_by_month,
                                 const std::string& currency) {
    PlanVsActual r;
    std::set<std::string> months;
    for (const auto& [m, f] : planned_by_month) months.insert(m);
    for (const auto& [m, f] : actual_by_month) months.insert(m);
    for (const std::string& m : months) {
        MonthComparison c{m, {}, {}, {}};
        if (auto it = planned_by_month.find(m); it != planned_by_month.end())
            c.planned = it->second;
        if (auto it = actual_by_month.find(m); it != actual_by_month.end()) c.actual = it->second;
        c.split = SplitGap(c.planned, c.actual);
        Add(r.planned, c.planned);
        Add(r.actual, c.actual);
        r.months.push_back(std::move(c));
    }
    const GapSplit total = SplitGap(r.planned, r.actual);
    r.gap = total.gap;
    r.price_effect = total.price_effect;
    r.quantity_effect = total.quantity_effect;
    r.explanation = Explain(r, currency);
    return r;
}

GapSplit SplitGap(const SpendFigures& planned, const SpendFigures& actual) {
    GapSplit s;
    s.gap = actual.effective_cost - planned.effective_cost;
    // Without actual hours there is no actual price: the whole gap is quantity.
    if (actual.accelerator_hours <= 0) {
        s.quantity_effect = s.gap;
        return s;
    }
    const double planned_price = planned.EffectivePerAcceleratorHour();
    const double actual_price = actual.EffectivePerAcceleratorHour();
    s.price_effect = (actual_price - planned_price) * planned.accelerator_hours;
    s.quantity_effect = (actual.accelerator_hours - planned.accelerator_hours) * actual_price;
    return s;
}

std::map<std::string, SpendFigures> PlannedAcceleratorSpend(
    const std::vector<plan::ForecastCharge>& charges) {
    std::map<std::string, SpendFigures> by_month;
    for (const plan::ForecastCharge& c : charges) {
        if (c.kind != plan::ChargeKind::kCompute) continue;
        SpendFigures& f = by_month[c.period_start.substr(0, 7)];
        f.accelerator_hours += c.accelerator_hours;
        f.effective_cost += c.effective_cost_usd;
        f.list_cost += c.list_cost_usd;
    }
    return by_month;
}

std::optional<ImpliedSpeed> ImpliedSpeedOf(double tokens_done_b, double tokens_planned_b,
                                           double planned_accelerator_hours,
                                           double actual_accelerator_hours) {
    if (tokens_done_b <= 0 || tokens_planned_b <= 0 || planned_accelerator_hours <= 0 ||
        actual_accelerator_hours <= 0) {
        return std::nullopt;
    }
    ImpliedSpeed s;
    s.tokens_done_b = tokens_done_b;
    s.tokens_planned_b = tokens_planned_b;
    s.estimated_accelerator_hours = planned_accelerator_hours * tokens_done_b / tokens_planned_b;
    s.actual_accelerator_hours = actual_accelerator_hours;
    s.actual_to_estimated_hours_ratio = actual_accelerator_hours / s.estimated_accelerator_hours;
    return s;
}

double CombinedHoursRatio(const std::vector<ImpliedSpeed>& speeds) {
    double actual = 0;
    double estimated = 0;
    for (const ImpliedSpeed& s : speeds) {
        actual += s.actual_accelerator_hours;
        estimated += s.estimated_accelerator_hours;
    }
    return estimated > 0 ? actual / estimated : 1.0;
}

}  // namespace gpucost::pricing
