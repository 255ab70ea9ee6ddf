#pragma once

// Plan vs actual: a plan's forecast spend against the spend imported from the
// clouds' FOCUS exports, by calendar month, with the gap split into price and quantity.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pricing/plan/forecast.hpp"

namespace gpucost::pricing {

// Spend in one currency over some period. ComparePlanToActual states the costs to the cent.
struct SpendFigures {
    double accelerator_hours = 0;
    double effective_cost = 0;
    double list_cost = 0;
    // effective_cost / accelerator_hours; 0 without hours.
    double EffectivePerAcceleratorHour() const {
        return accelerator_hours > 0 ? effective_cost / accelerator_hours : 0;
    }
};

// The gap actual - planned effective cost and its two parts (PlanVsActual says how), each to the
// cent, the parts adding up to the gap exactly.
struct GapSplit {
    double gap = 0;
    double price_effect = 0;
    double quantity_effect = 0;
};

// The split of PlanVsActual for any pair of figures (a month's or the totals): parts adding
// up exactly to the gap; without actual hours there is no actual price and the whole gap is
// quantity.
GapSplit SplitGap(const SpendFigures& planned, const SpendFigures& actual);

struct MonthComparison {
    std::string month;  // YYYY-MM
    SpendFigures planned;
    SpendFigures actual;
    GapSplit split;  // this month's gap, split as the totals' is
};

// The gap actual - planned effective cost, split so the parts add up exactly:
// price effect = (actual price - planned price) x planned hours (discounts, spot, another
// offering), quantity effect = (actual hours - planned hours) x actual price (more or fewer
// accelerator-hours than planned). Prices are effective cost per accelerator-hour.
struct PlanVsActual {
    SpendFigures planned;
    SpendFigures actual;
    std::vector<MonthComparison> months;  // every month either side has, ascending
    // The totals' split (the months' splits need not add up to it: each month has its own
    // prices).
    double gap = 0;
    double price_effect = 0;
    double quantity_effect = 0;
    std::string explanation;  // the gap in words, with the split
};

// Below this share of the planned cost a gap is "on plan" in the explanation; judgement.
inline constexpr double kOnPlanFraction = 0.02;

// Compares planned and actual spend keyed by month (YYYY-MM), all in `currency` (named in
// the explanation). Money as answers state it (money.hpp): each month's costs to the cent, the
// totals the sums of the months' cents, gaps and their parts to the cent.
PlanVsActual ComparePlanToActual(const std::map<std::string, SpendFigures>& planned_by_month,
                                 const std::map<std::string, SpendFigures>& actual_by_month,
                                 const std::string& currency);

// The plan and the bill over the months billed to date: every month up to and including the
// last one with charges (`through_month`). The months after it are not billed yet: counting
// their planned spend against no charges would read as under-spend. A month inside the range
// without charges does count (nothing was spent then).
struct PlanToDate {
    std::string through_month;           // YYYY-MM
    std::size_t months = 0;              // in the plan or the bill, up to through_month
    double planned = 0;                  // to the cent
    double actual = 0;                   // effective cost, to the cent
    double gap = 0;                      // actual - planned, to the cent
    std::optional<double> gap_fraction;  // gap / planned; none without a planned amount
};

// `comparison` up to `through_month`; nullopt when that is empty (no month billed yet).
std::optional<PlanToDate> CompareToDate(const PlanVsActual& comparison,
                                        const std::string& through_month);

// One kind of accelerator charge, for splitting the price effect: hours under a commitment
// (a reservation, owned capacity, a commitment's rate: FOCUS PricingCategory Committed), or an
// offering billed as used (on demand, spot, another offering), named by its id.
struct PriceClassSpend {
    bool committed = false;
    std::string offering_id;  // ignored when committed: commitments are one class
    double accelerator_hours = 0;
    double effective_cost = 0;
};

// The price effect (SplitGap's, to the cent) split so that the parts add up to it exactly.
// Every class is priced at a reference: the plan's price for it, or the bill's for a class the
// plan did not have. With H_p the planned accelerator-hours, s_c the share of hours under
// commitments, r_c their reference price and r_o the reference price of the hours billed as
// used (their mix's average; the plan's mix, or the bill's when the plan had none):
//   rate     = H_p x sum_k s_actual,k x (r_actual,k - ref_k)   (a class paid another price)
//   coverage = H_p x (s_actual,c - s_planned,c) x (r_c - r_o,planned)   (more or fewer hours
//              under commitments than planned)
//   mix      = H_p x (1 - s_actual,c) x (r_o,actual - r_o,planned)   (hours moved between
//              offerings billed as used: spot, another offering)
// which add up to (actual - planned price) x H_p. Rate and coverage to the cent, mix the rest
// of the price effect; all three 0 without planned or actual hours.
struct PriceEffectSplit {
    double rate = 0;
    double coverage = 0;
    double mix = 0;
};
PriceEffectSplit SplitPriceEffect(const std::vector<PriceClassSpend>& planned,
                                  const std::vector<PriceClassSpend>& actual, double price_effect);

// The months of `by_month` up to and including `through_month` (YYYY-MM): what a headline over
// the months billed so far compares, so the months not billed yet are not read as a saving.
std::map<std::string, SpendFigures> MonthsThrough(
    const std::map<std::string, SpendFigures>& by_month, const std::string& through_month);

// The months after the last one billed, re-forecast from the run rate billed so far: each
// remaining month's planned cost x (actual / planned effective cost over the months billed),
// the rate the bill has run at against the plan. Without planned spend to date there is no
// rate and the remaining months keep their planned cost.
struct RunRateReforecast {
    struct Month {
        std::string month;      // YYYY-MM
        double planned = 0;     // to the cent
        double reforecast = 0;  // to the cent
    };
    std::string through_month;
    std::optional<double> run_rate;   // actual / planned to date; none without planned spend
    double planned_to_date = 0;       // to the cent
    double actual_to_date = 0;        // to the cent
    std::vector<Month> remaining;     // the months after through_month, ascending
    double planned_remaining = 0;     // to the cent
    double reforecast_remaining = 0;  // the remaining months' reforecasts added, to the cent
    double planned_total = 0;         // the whole plan, to the cent
    double reforecast_total = 0;      // actual to date + reforecast remaining, to the cent
};

// `comparison` re-forecast after `through_month`; nullopt when nothing is billed yet (empty).
std::optional<RunRateReforecast> ReforecastFromRunRate(const PlanVsActual& comparison,
                                                       const std::string& through_month);

// A plan forecast's accelerator charges (plan/forecast.hpp, compute only) by month: the planned
// side of the split. Storage and egress are left out, as imports keep accelerator rows only.
std::map<std::string, SpendFigures> PlannedAcceleratorSpend(
    const std::vector<plan::ForecastCharge>& charges);

// The same accelerator charges by month and kind (PriceClassSpend): owned capacity's hours
// and an offering under a commitment's terms are committed, the rest by offering.
std::map<std::string, std::vector<PriceClassSpend>> PlannedPriceClasses(
    const std::vector<plan::ForecastCharge>& charges);

// The speed a training run shows so far (a scenario's recorded progress): the accelerator-hours
// the bill shows for the tokens done against the hours the estimate gives those tokens (the
// plan's accelerator-hours in proportion to tokens done / tokens planned). ratio > 1: slower
// than estimated (more hours per token); what `calibration` multiplies later plans' hours by.
struct ImpliedSpeed {
    double tokens_done_b = 0;
    double tokens_planned_b = 0;
    double estimated_accelerator_hours = 0;  // for tokens_done_b
    double actual_accelerator_hours = 0;
    double actual_to_estimated_hours_ratio = 0;
};

// nullopt when there is nothing to measure: no tokens planned or done, or no planned or no
// actual accelerator-hours.
std::optional<ImpliedSpeed> ImpliedSpeedOf(double tokens_done_b, double tokens_planned_b,
                                           double planned_accelerator_hours,
                                           double actual_accelerator_hours);

// The measured ratios `calibration` accepts: a run that took more than 4x, or less than a
// quarter of, the hours its estimate gave is more likely mis-tagged or mis-recorded than a
// lesson for the estimator (whose own efficiency spread is tens of percent). Judgement.
inline constexpr double kMinCalibrationRatio = 0.25;
inline constexpr double kMaxCalibrationRatio = 4.0;

// Several runs' speeds combined as one factor on later estimates' hours: all actual over all
// estimated accelerator-hours, i.e. the runs' ratios weighted by their estimated hours (a long
// run says more than a short one). 1 without runs.
double CombinedHoursRatio(const std::vector<ImpliedSpeed>& speeds);

}  // namespace gpucost::pricing
