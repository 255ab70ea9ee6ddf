#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"

namespace gpucost::pricing::plan {

// Defaults of the rent-vs-buy model; each is echoed under `assumptions` with its source and
// can be overridden in the request.
//
// Chassis, CPUs, memory, NICs and switch ports on top of the accelerators' price: 8-GPU HGX
// H100 servers sold for about $300K while the GPUs were about $25-30K each (judgement from
// list prices).
inline constexpr double kDefaultChassisOverheadFraction = 0.30;
// Host power (CPUs, memory, NICs, fans) on top of accelerator TDP: NVIDIA's DGX H100
// datasheet gives 10.2 kW system maximum for 8 x 700 W GPUs (+82% at maximum); typical draw
// is lower. Judgement.
inline constexpr double kDefaultServerPowerOverheadFraction = 0.5;
// Power usage effectiveness: Uptime Institute's 2023 survey average is 1.58; modern
// colocation quotes 1.3-1.4.
inline constexpr double kDefaultPue = 1.4;
// US industrial electricity price, about $0.08/kWh in 2023 (EIA Electric Power Monthly,
// table 5.6.A); commercial about $0.13. Judgement between the two.
inline constexpr double kDefaultUsdPerKwh = 0.10;
// Rack space, cooling capacity and network per accelerator, energy excluded. Judgement from
// colocation quotes of $150-250 per kW-month at ~1.3 kW per accelerator incl. host.
inline constexpr double kDefaultHostingUsdPerAcceleratorMonth = 150.0;
// Operations staff per accelerator: a fully loaded engineer (~$15K/month) per ~300
// accelerators. Judgement.
inline constexpr double kDefaultStaffUsdPerAcceleratorMonth = 50.0;
// Share of owned accelerator-hours actually used when the workload does not say.
// Judgement: well-run shared clusters report 60-80% allocation.
inline constexpr double kDefaultUtilization = 0.7;
// buy.utilization and the share of the owned capacity that rent.accelerator_hours_per_month
// fills describe the same workload; further apart than this (absolute) they draw a warning.
// Judgement: a monthly estimate of hours is rarely closer than a few percent.
inline constexpr double kUtilizationMismatchTolerance = 0.05;
// rent.usd_per_month and the monthly rent its hourly figures give (rate x hours) further
// apart than this share of the larger draw a warning. Judgement: beyond rounding of a quote.
inline constexpr double kRentReadingsTolerance = 0.01;
// US MACRS 5-year class for computers; hyperscalers depreciate servers over 5-6 years.
inline constexpr double kDefaultDepreciationYears = 5.0;
// Resale value at the end of depreciation, as a share of capex (judgement: five-year-old
// datacentre GPUs resell for 5-15% of their price).
inline constexpr double kDefaultResidualValueFraction = 0.10;
// Annual cost of capital used to discount both cash flows (judgement).
inline constexpr double kDefaultDiscountRateAnnual = 0.08;

// The buy side: either direct (capex_usd, opex_usd_per_month) or derived from an accelerator
// (catalog id supplies TDP and purchase price unless overridden) and a count. A direct value
// wins over the derived one field by field.
struct BuySide {
    std::optional<double> capex_usd;
    std::optional<double> opex_usd_per_month;
    std::optional<std::string> accelerator;
    std::optional<int> total_accelerators;   // owned, across all servers
    std::optional<double> server_price_usd;  // whole purchase; replaces price x count x overhead
    std::optional<double> purchase_price_usd_per_accelerator;
    std::optional<double> chassis_overhead_fraction;
    std::optional<double> tdp_w;  // per accelerator
    std::optional<double> server_power_overhead_fraction;
    std::optional<double> utilization;
    std::optional<double> pue;
    std::optional<double> usd_per_kwh;
    std::optional<double> hosting_usd_per_accelerator_month;
    std::optional<double> staff_usd_per_month;
    std::optional<double> depreciation_years;
    std::optional<double> residual_value_fraction;
};

// The rent side: usd_per_month directly, or a rate per accelerator-hour (given, or the
// offering's usd_per_hour / accelerator_count) times accelerator_hours_per_month (default:
// the owned accelerators x 730 h x utilization, i.e. the same work).
struct RentSide {
    std::optional<double> usd_per_month;
    std::optional<std::string> offering_id;
    // With offering_id: rent the same instance type in the same region under this price
    // type (the catalog's sibling offering) instead of the offering's own.
    std::optional<PriceType> price_type;
    std::optional<double> usd_per_accelerator_hour;
    std::optional<double> accelerator_hours_per_month;
};

struct RentVsBuyRequest {
    BuySide buy;
    RentSide rent;
    std::optional<double> discount_rate_annual;
    std::optional<int> horizon_months;  // default: depreciation years x 12

    // Ranges; every failing field as a JSON pointer ("/buy/pue"), kInvalidArgument.
    [[nodiscard]] Status Validate() const;
};

// One month of the chart: cumulative cash spent up to the end of `month` (month 0 = the
// purchase). own_net_of_resale_usd subtracts what the hardware would resell for then.
struct CumulativePoint {
    int month = 0;
    double rent_usd = 0;
    double own_usd = 0;
    double own_net_of_resale_usd = 0;
};

// Renting the same instance type (of the rent offering, same region) under one price type,
// compared with buying. On-demand pays the rented accelerator-hours; a commitment reserves
// the owned accelerators' capacity (whole instances) every hour of whole terms, used or not.
struct RentOption {
    PriceType price_type = PriceType::kOnDemand;
    std::string offering_id;
    double usd_per_accelerator_hour = 0;
    int nodes = 0;  // commitments: instances reserved
    double monthly_usd = 0;
    int billed_months = 0;  // the horizon, or whole terms covering it
    double total_usd = 0;   // monthly x billed months
    double npv_usd = 0;
    bool cheaper_than_buying = false;  // npv below owning's
    std::string as_of;
    bool as_of_estimated = false;
    bool verified = false;
};

enum class RentVsBuyRecommendation { kRent, kBuy };
const char* RentVsBuyRecommendationName(RentVsBuyRecommendation recommendation);  // rent|buy

struct RentVsBuyPlan {
    double capex_usd = 0;
    double opex_usd_per_month = 0;
    std::optional<int> total_accelerators;
    std::optional<std::string> accelerator;
    double monthly_rent_usd = 0;
    // The rent offering's price type (null without an offering). Under a commitment the rent
    // reserves whole instances (`rent_nodes`) for every hour of whole terms, used or not.
    std::optional<PriceType> rent_price_type;
    std::optional<int> rent_nodes;
    // Months of rent paid: the horizon, or whole commitment terms covering it.
    int rent_billed_months = 0;
    // Amortised owning cost: (capex - residual) / depreciation months + opex.
    double monthly_own_usd = 0;
    std::optional<double> rent_usd_per_accelerator_hour;
    std::optional<double> accelerator_hours_per_month;
    std::optional<double> utilization;  // of the owned accelerators
    // Months of cash until owning has cost no more than renting (no resale counted); null
    // when the monthly running cost of owning is at least the rent, i.e. never.
    std::optional<double> break_even_months;
    bool breaks_even_within_horizon = false;
    // Same with both cash flows discounted; null when it never breaks even.
    std::optional<double> discounted_break_even_months;
    // Utilisation of the owned accelerators at which renting the same accelerator-hours
    // costs as much as owning (amortised); null without a count and an hourly rent rate, or
    // when renting is cheaper at any utilisation. Above 1 owning never pays off.
    std::optional<double> break_even_utilization;
    int horizon_months = 0;
    double discount_rate_annual = 0;
    double total_rent_usd = 0;
    double total_own_usd = 0;  // capex + opex over the horizon - resale value at its end
    double npv_rent_usd = 0;
    double npv_own_usd = 0;
    double residual_value_at_horizon_usd = 0;
    RentVsBuyRecommendation recommendation = RentVsBuyRecommendation::kRent;
    std::string reasoning;
    std::vector<CumulativePoint> cumulative;
    // With a rent offering and an accelerator count: on-demand, 1-year and 3-year
    // commitments of that instance type, where the catalog has them.
    std::vector<RentOption> rent_options;
    std::string catalog_version;  // the catalog snapshot the prices came from
    Assumptions assumptions;
    // Inputs that disagree, kept as given: buy.utilization against the share of the owned
    // capacity the rented hours fill.
    std::vector<FieldError> warnings;
};

// Computes the comparison. kInvalidArgument for invalid or missing inputs (naming the field),
// kNotFound for an unknown accelerator or offering id, kFailedPrecondition when a needed
// catalog figure (TDP, purchase price) is not published for the accelerator, or when the
// rented accelerator-hours exceed what the owned accelerators can deliver.
[[nodiscard]] Result<RentVsBuyPlan> PlanRentVsBuy(const RentVsBuyRequest& request,
                                                  const Catalog& catalog);

}  // namespace gpucost::pricing::plan
