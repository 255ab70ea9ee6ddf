#pragma once

// Plan vs actual (issue 25): a plan's forecast spend against the spend imported from the
// clouds' FOCUS exports, by calendar month, with the gap split into price and quantity.

#include <map>
#include <string>
#include <vector>

namespace gpucost::pricing {

// Spend in one currency over some period.
struct SpendFigures {
    double accelerator_hours = 0;
    double effective_cost = 0;
    double list_cost = 0;
    // effective_cost / accelerator_hours; 0 without hours.
    double EffectivePerAcceleratorHour() const {
        return accelerator_hours > 0 ? effective_cost / accelerator_hours : 0;
    }
};

struct MonthComparison {
    std::string month;  // YYYY-MM
    SpendFigures planned;
    SpendFigures actual;
};

// The gap actual - planned effective cost, split so the parts add up exactly:
// price effect = (actual price - planned price) x planned hours (discounts, spot, another
// offering), quantity effect = (actual hours - planned hours) x actual price (more or fewer
// accelerator-hours than planned). Prices are effective cost per accelerator-hour.
struct PlanVsActual {
    SpendFigures planned;
    SpendFigures actual;
    std::vector<MonthComparison> months;  // every month either side has, ascending
    double gap = 0;
    double price_effect = 0;
    double quantity_effect = 0;
    std::string explanation;  // the gap in words, with the split
};

// Below this share of the planned cost a gap is "on plan" in the explanation; judgement.
inline constexpr double kOnPlanFraction = 0.02;

// Compares planned and actual spend keyed by month (YYYY-MM), all in `currency` (named in
// the explanation).
PlanVsActual ComparePlanToActual(const std::map<std::string, SpendFigures>& planned_by_month,
                                 const std::map<std::string, SpendFigures>& actual_by_month,
                                 const std::string& currency);

}  // namespace gpucost::pricing
