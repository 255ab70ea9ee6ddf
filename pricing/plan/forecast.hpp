#pragma once

// A plan as a spend forecast: the recommended option's charges split by calendar
// month, the figures a FOCUS forecast row carries (service/http/codec/focus_codec.hpp writes them).

#include <optional>
#include <string>
#include <vector>

#include "pricing/offering.hpp"
#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/rent_vs_buy.hpp"
#include "pricing/plan/training_plan.hpp"

namespace gpucost::pricing::plan {

// kHardware: owned accelerators (rent-vs-buy's buy path): their purchase and its amortisation;
// kOperations: their running costs (opex).
enum class ChargeKind { kCompute, kStorage, kEgress, kHardware, kOperations };
// Usage is paid as used; a purchase is paid up front (capacity blocks).
enum class ChargeCategoryKind { kUsage, kPurchase };

// A month of hours paid ahead (a commitment term's month, a capacity block's months): the
// instance-hours reserved and those the run uses of them, so a FOCUS forecast can write the
// purchase apart from its used and unused hours.
struct ReservedMonth {
    std::string period_start;  // the month's first day and the next month's, as a charge's
    std::string period_end;
    double reserved_instance_hours = 0;
    double used_instance_hours = 0;
};

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
    // What the invoice says: the effective cost, except owned capacity's hours (0: paid by
    // the commitment's own bill).
    std::optional<double> billed_cost_usd;
    // The contracted price x quantity when the effective cost is not it (a purchase amortised
    // into later months); nullopt: the effective cost.
    std::optional<double> contracted_cost_usd;
    // Hours of owned capacity (a price book's owned_capacity, or rent-vs-buy's owned hardware
    // amortised), paid by their purchase: billed 0.
    bool owned = false;
    // Owned capacity's hours in the month that no plan uses: reserved and paid, idle
    // (UnusedOwnedCharges); `owned` is set too.
    bool unused = false;
    // Compute paid ahead for reserved hours (a commitment term's month; a capacity block's
    // purchase): by calendar month, the hours reserved and those the run uses of them, and the
    // run's start date (YYYY-MM-DD), which names the reservation. Empty otherwise.
    std::vector<ReservedMonth> reserved_months;
    std::string reserved_from;
    // Billed every month whatever the use (rent-vs-buy's opex): ChargeFrequency Recurring.
    bool recurring = false;
    // Rent-vs-buy: which path the charge belongs to, "rent" or "buy" (Tags' `gpucost-path`);
    // empty for other plans.
    std::string path;
    // Without an offering (owned hardware, a rent quoted per month): the accelerator and how
    // many, for x_Accelerator and x_Accelerators.
    std::string accelerator;
    int accelerators = 0;
    double accelerator_hours = 0;  // compute only
    // The option's p10/p90 cost spread in the same share (compute only).
    std::optional<double> cost_usd_p10;
    std::optional<double> cost_usd_p90;
};

// The recommendation's compute by calendar month from the budget's first day, as the budget
// view and the FOCUS forecast split it: `marginal_usd` of the expected bill (hourly prices: by
// the month's uncovered instance-hours; terms: by their billed hours; a capacity block: all
// in the first month), `instance_hours` those the month pays for (hourly; terms: billed), and
// what owned capacity covers in the month (over the expected run's hours).
struct ComputeMonth {
    std::string month;  // YYYY-MM
    double marginal_usd = 0;
    double instance_hours = 0;
    double owned_instance_hours = 0;
    double owned_sunk_usd = 0;
};
std::vector<ComputeMonth> ComputeByMonth(const std::vector<OwnedCapacity>& owned,
                                         const TrainingPlanOption& recommendation,
                                         long long start_day);

// A serving option's compute by calendar month over its budget window [start_day, end_day),
// run around the clock on every node (the ServingBudget view's split): `instance_hours` those
// the month pays for, `marginal_usd` them at the option's price, and what owned capacity covers
// in the month (CoverRun over the month's hours), so a month a reservation covers pays only
// its uncovered hours. Without cover a month's marginal_usd is nodes x price x its hours.
std::vector<ComputeMonth> ServingComputeByMonth(const std::vector<OwnedCapacity>& owned,
                                                const InferencePlanOption& option,
                                                long long start_day, long long end_day);

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

// A serving option run around the clock over its budget view (ServingBudget: from
// `start_date` to `end_date`, budget_months calendar months): one compute charge per calendar
// month of its hours on every node, so the rows add up to the budget's `monthly` month by
// month (a month's cost is nodes x price x its hours, not the 730-hour average of
// monthly_cost_usd). With `owned` (the price book's owned_capacity) the hours it covers are
// owned charges per month (billed 0, effective at the commitment's rate) and the compute rows
// carry the uncovered hours only (ServingComputeByMonth), so the billed costs add up to the
// budget's monthly (the marginal cash). Empty when the view's dates are malformed.
std::vector<ForecastCharge> ForecastServing(const InferencePlanOption& option,
                                            const ServingBudgetView& budget,
                                            double list_usd_per_hour,
                                            const std::vector<OwnedCapacity>& owned = {});

// `charges` with the instance-hours that `owned` reserves of each offering they run on, in
// each calendar month they fall in, that no charge uses (reserved less the owned charges'
// hours): one charge per month and offering after that month's last charge of it, `owned` and
// `unused`, billed 0, effective at the entries' own rates (their average over the month's
// reserved hours), list at the month's list price. With a ledger, `owned` is what the plans
// ahead left, so the hours they hold are not idle.
std::vector<ForecastCharge> WithUnusedOwned(const std::vector<ForecastCharge>& charges,
                                            const std::vector<OwnedCapacity>& owned);

// A rent-vs-buy plan's two paths as monthly charges from `first_month` (YYYY-MM; the month
// of the purchase), each month one rent-vs-buy model month (kHoursPerMonth, 730 h) dated by
// calendar month, so the rows add up to the plan's totals:
// - rent: one usage charge per billed month (rent_billed_months) of monthly_rent_usd; with
//   `rent_offering` (the offering rented, under the plan's price type) in instance-hours at
//   its effective price, list cost at `rent_list_usd_per_hour`; else accelerator-hours at
//   the rent rate, or one month at the monthly rent;
// - buy: the purchase (capex) in the first month, billed then with no effective cost (FOCUS:
//   a purchase covering future use is amortised into it); per month of the horizon the
//   hardware's amortisation ((capex - resale value at the horizon) / horizon months: billed
//   0, effective) and the opex (billed and effective). Effective costs add up to
//   total_own_usd, billed costs to capex + opex x horizon (the cash).
std::vector<ForecastCharge> ForecastRentVsBuy(const RentVsBuyPlan& plan,
                                              const Offering* rent_offering,
                                              double rent_list_usd_per_hour,
                                              const std::string& first_month);

}  // namespace gpucost::pricing::plan
