#pragma once

// A plan as a spend forecast (issue 25): the recommended option's charges split by calendar
// month, the figures a FOCUS forecast row carries (service/http/codec/focus_codec.hpp writes them).

#include <optional>
#include <string>
#include <vector>

#include "pricing/offering.hpp"
#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/training_plan.hpp"

namespace gpucost::pricing::plan {

enum class ChargeKind { kCompute, kStorage, kEgress };
// Usage is paid as used; a purchase is paid up front (capacity blocks).
enum class ChargeCategoryKind { kUsage, kPurchase };

// One charge in one calendar month. Periods are UTC dates, [start, end): the month's first
// day and the next month's. Quantities: instance-hours ("Hours") for compute, GB-months for
// storage, GB for egress. Costs in USD; list_* at the catalog's list price, effective_* at
// the price the plan used (a price book's, or list).
struct ForecastCharge {
    std::string period_start;
    std::string period_end;
    ChargeKind kind = ChargeKind::kCompute;
    ChargeCategoryKind category = ChargeCategoryKind::kUsage;
    const Offering* offering = nullptr;  // the option's offering (all kinds)
    int nodes = 0;
    double pricing_quantity = 0;
    const char* pricing_unit = "Hours";
    double list_unit_price_usd = 0;
    double effective_unit_price_usd = 0;
    double list_cost_usd = 0;
    double effective_cost_usd = 0;
    double accelerator_hours = 0;  // compute only
    // The option's p10/p90 cost spread in the same share (compute only).
    std::optional<double> cost_usd_p10;
    std::optional<double> cost_usd_p90;
};

// GB-months per GB kept one hour: a month of kHoursPerMonth (730) hours, as the providers'
// storage prices are quoted per GB-month.
inline constexpr double kHoursPerStorageMonth = 730.0;

// The training plan's recommended option as monthly charges from the budget's start date,
// matching budget.monthly month by month: compute over the expected hours (commitments over
// their billed hours; a capacity block one purchase in its first month), storage over the run,
// egress in its last month. `list_usd_per_hour` is the offering's list price (the same as its
// price without a book). Empty without a recommendation or a budget view.
std::vector<ForecastCharge> ForecastTraining(const TrainingPlan& plan,
                                             const TrainingPlanRequest& request,
                                             double list_usd_per_hour);

// Months a serving forecast covers from its first month: a budget year, as the serving budget
// view's default (inference_plan.hpp); judgement.
inline constexpr int kServingForecastMonths = kDefaultServingBudgetMonths;

// A serving option run around the clock for `months` calendar months from `first_month`
// (YYYY-MM): one compute charge per month of its days x 24 hours on every node (so a month's
// cost is nodes x price x its hours, not the 730-hour average of monthly_cost_usd). Empty
// when `first_month` is malformed or months < 1.
std::vector<ForecastCharge> ForecastServing(const InferencePlanOption& option,
                                            const std::string& first_month,
                                            double list_usd_per_hour,
                                            int months = kServingForecastMonths);

}  // namespace gpucost::pricing::plan
