#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/price_book.hpp"

namespace gpucost::pricing::plan {

// Defaults of the rent-vs-buy model; each is echoed under `assumptions` with its source and
// can be overridden in the request.
//
// The server around the accelerators (chassis, CPUs, memory, local NVMe and its InfiniBand or
// RoCE NICs) on top of the accelerators' price: 8-GPU HGX H100 servers sold for about $300K
// (Thinkmate's August-2024 quote: $317K with 8 x 400 Gb/s InfiniBand cards) while the GPUs
// were about $25-30K each (judgement from list prices).
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
// Colocation (rack space, cooling capacity, power distribution; energy billed apart) per kW of
// the servers' IT power, per month. The quotes this model first cited were $150-250 per
// kW-month; 2026 wholesale rates are $150-280 in Ashburn and $180-300 in Silicon Valley, with
// high-density AI halls 20-30 % above the $140-160 Tier-1 average (v2-pseo-ai.pages.dev
// "Colocation Pricing Comparison 2026"). $200 is the middle of the first range and inside
// both of the others. Times the server's kW per accelerator (TDP x (1 + host overhead)): an
// H100 at 1.05 kW pays $210 a month (1.3 kW at the DGX maximum: $260), inside the $195-325
// the old flat $150 fell short of.
inline constexpr double kDefaultHostingUsdPerKwMonth = 200.0;
// Power drawn by an idle owned server, as a share of its draw at full use: an idle H100 or
// H200 draws ~70-75 W of its 700 W (nvidia-smi readings, ~10 %), while the host (CPUs,
// memory, fans, NICs: the 0.5 host overhead) keeps about half its load draw, (0.1 + 0.5 x
// 0.5) / 1.5 = 0.23; rounded up to a quarter for the fabric switches and storage that stay
// powered and are not otherwise counted. Judgement.
inline constexpr double kDefaultIdlePowerFraction = 0.25;
// Cluster network (leaf/spine switches, optics and cables; the NICs are in the server) as a
// share of the servers' price, by the number of 8-accelerator servers: an August-2024 H100
// cluster bill of materials (FS.com 64-port 400 Gb/s InfiniBand switches at $36K, servers at
// $310K with NICs) gives 4.9 % at 64 servers (one switch tier), 11.0 % at 128-2,048 (two
// tiers) and 17.1 % at 4,096 and more (three tiers); one server needs no scale-out fabric.
// Bernstein (2025) puts networking at ~13 % of an AI data centre's spend, against 39 % for
// GPUs.
inline constexpr int kAcceleratorsPerServer = 8;  // HGX/DGX baseboard
inline constexpr double kNetworkFractionOneTier = 0.049;
inline constexpr int kNetworkOneTierMaxServers = 64;
inline constexpr double kNetworkFractionTwoTiers = 0.110;
inline constexpr int kNetworkTwoTiersMaxServers = 2048;
inline constexpr double kNetworkFractionThreeTiers = 0.171;
// Shared storage (parallel file system for data and checkpoints) as a share of the servers'
// price: Bernstein (2025) puts storage at ~1-1.5 % of an AI data centre's spend, whose compute
// hardware is ~58 % of it (GB200 NVL72 rack: $3.4M of $5.9M), i.e. ~2 % of the servers.
inline constexpr double kDefaultStorageFraction = 0.02;
// Hardware support (vendor contract with part replacement) per year, as a share of capex:
// general hardware service contracts run 10-15 % of the purchase price a year (Library
// Technology Reports; TechTarget quotes 10-30 %), NVIDIA's DGX H100 list support 20 %
// (supercluster.blog); OEM HGX servers include a 3-year warranty in their price. Llama 3's
// 16,384 H100 saw 268 GPU-attributed interruptions in 54 days (arXiv 2407.21783 table 5),
// ~11 % of the GPUs a year. 0.10: the low end of the general range, half the DGX list rate.
inline constexpr double kDefaultMaintenanceFractionPerYear = 0.10;
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
// Book value at the end of depreciation, as a share of capex: H100s five years on are valued
// at 10-15 % of list price in the GPU Lease Rate Index's secondary-market curve
// (v2-pseo-ai.pages.dev, 2026); the low end.
inline constexpr double kDefaultResidualValueFraction = 0.10;
// What a used sale loses against that straight-line book value (dealer or ITAD margin,
// de-installation, shipping, no warranty): used units sold as-is fetch 15-25 points less
// than refurbished ones (ComputeForecast, "The secondary market for AI hardware", 2026).
// The middle, applied to every resale the model credits.
inline constexpr double kDefaultResaleHaircutFraction = 0.20;
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
    // Replaces hosting_usd_per_kw_month x the server's kW per accelerator.
    std::optional<double> hosting_usd_per_accelerator_month;
    std::optional<double> hosting_usd_per_kw_month;
    std::optional<double> idle_power_fraction;
    std::optional<double> network_fraction;               // of the servers' price
    std::optional<double> storage_fraction;               // of the servers' price
    std::optional<double> maintenance_fraction_per_year;  // of capex
    std::optional<double> staff_usd_per_month;
    std::optional<double> depreciation_years;
    std::optional<double> residual_value_fraction;
    std::optional<double> resale_haircut_fraction;
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
    // Today's date (YYYY-MM-DD) as the caller's clock says: the purchase, and the rent's
    // first month, fall in its calendar month (as the FOCUS forecast dates them).
    std::string today;
    // Capacity already owned (a price book's owned_capacity, set by the caller from the book,
    // validated there): the rent path's hours it covers are sunk (paid whether or not the
    // company buys), so the rent path pays only the rest (see RentOwnedUse).
    std::vector<OwnedCapacity> owned_capacity;

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
    // Of its rented instance-hours over the billed months, those owned capacity covers (sunk);
    // total_usd and npv_usd pay only the rest.
    double owned_instance_hours = 0;
    std::string as_of;
    bool as_of_estimated = false;
    bool verified = false;
};

// One billed month of the rent path: its marginal rent (the month's rent for the instance-hours
// owned capacity does not cover) and the instance-hours it does cover, at the commitments' own
// rates (sunk: paid whether or not the company buys).
struct RentMonth {
    double usd = 0;
    double owned_instance_hours = 0;
    double owned_sunk_usd = 0;
};

// What owned capacity covers of the rent path over its billed months, from `first_month`
// (YYYY-MM, the month of the purchase): the rent's instance-hours (monthly rent / the
// offering's price) run on as few instances as carry them, spread evenly over each calendar
// month, and the owned entries of the rented offering cover them first. Those hours are sunk,
// so the comparison is between the marginal rent and buying.
struct RentOwnedUse {
    std::string first_month;
    double instance_hours = 0;          // covered, over the billed months
    double sunk_usd = 0;                // those hours at the commitments' usd_per_hour
    double without_owned_rent_usd = 0;  // monthly rent x billed months
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
    // Amortised owning cost: (capex - resale at the end of depreciation) / depreciation months
    // + opex.
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
    // Rent paid over the billed months; with owned capacity, the marginal rent (see
    // RentOwnedUse), as are npv_rent_usd, the cumulative series and the break-evens.
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
    // Owned capacity's share of the rent path; null when it covers none. With it, rent_months
    // holds each billed month's marginal rent and covered hours (empty otherwise: every month
    // pays monthly_rent_usd).
    std::optional<RentOwnedUse> owned;
    std::vector<RentMonth> rent_months;
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
