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
        MonthComparison c{m, {}, {}};
        if (auto it = planned_by_month.find(m); it != planned_by_month.end())
            c.planned = it->second;
        if (auto it = actual_by_month.find(m); it != actual_by_month.end()) c.actual = it->second;
        Add(r.planned, c.planned);
        Add(r.actual, c.actual);
        r.months.push_back(std::move(c));
    }
    r.gap = r.actual.effective_cost - r.planned.effective_cost;
    const double planned_price = r.planned.EffectivePerAcceleratorHour();
    const double actual_price = r.actual.EffectivePerAcceleratorHour();
    r.price_effect = (actual_price - planned_price) * r.planned.accelerator_hours;
    r.quantity_effect = (r.actual.accelerator_hours - r.planned.accelerator_hours) * actual_price;
    // Without actual hours there is no actual price: the whole gap is quantity.
    if (r.actual.accelerator_hours <= 0) {
        r.price_effect = 0;
        r.quantity_effect = r.gap;
    }
    r.explanation = Explain(r, currency);
    return r;
}

}  // namespace gpucost::pricing
