#include "pricing/plan/rent_vs_buy.hpp"

#include <algorithm>
#include <cmath>

#include "pricing/calendar.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/money.hpp"
#include "pricing/plan/spot.hpp"

namespace gpucost::pricing::plan {
namespace {

constexpr double kMaxUsd = 1e12;
constexpr double kMaxUsdPerMonth = 1e10;
constexpr int kMaxAcceleratorCount = 1'000'000;
constexpr int kMaxHorizonMonths = 360;
// Present values closer than this share are reported as a near tie in the reasoning.
constexpr double kNearTieFraction = 0.02;
// Months of the rent path owned capacity is looked at for (the break-even walks through them
// before the rent is the full monthly rent again): 100 years, far beyond any reservation
// (1-3 year terms). Definition.
constexpr int kMaxOwnedRentMonths = 1200;

// Present value of `usd_per_month` paid at the end of each of `months` months.
double Annuity(double usd_per_month, double months, double monthly_rate) {
    if (monthly_rate <= 0) {
        return usd_per_month * months;
    }
    return usd_per_month * -std::expm1(-months * std::log1p(monthly_rate)) / monthly_rate;
}

// The catalog's offering of the same instance type in the same region under `type`.
const Offering* SiblingOffering(const Catalog& catalog, const Offering& offering, PriceType type) {
    for (const Offering& o : catalog.Offerings()) {
        if (o.provider == offering.provider && o.instance_type == offering.instance_type &&
            o.region == offering.region && o.price_type == type) {
            return &o;
        }
    }
    return nullptr;
}

// Months of a commitment's term; 0 for a price type billed by the hour.
int TermMonths(PriceType type) {
    switch (type) {
        case PriceType::kCommit1y:
            return 12;
        case PriceType::kCommit3y:
            return 36;
        case PriceType::kOnDemand:
        case PriceType::kSpot:
        case PriceType::kCapacityBlock:
            return 0;
    }
    return 0;
}

// Whole terms of `term_months` covering `horizon_months`, in months.
int WholeTermMonths(int horizon_months, int term_months) {
    return ((horizon_months + term_months - 1) / term_months) * term_months;
}

// The months of renting `offering` from `first_day` owned capacity is looked at for: at least
// `billed_months`, and on to the end of its last entry of that offering (at most
// kMaxOwnedRentMonths), so that a break-even after the billed months still sees it.
int OwnedRentMonths(const std::vector<OwnedCapacity>& owned, const Offering& offering,
                    long long first_day, int billed_months) {
    long long last_day = first_day;
    for (const OwnedCapacity& c : owned) {
        const auto hours = OwnedSpanHours(c);
        if (hours && IdKey(c.offering_id) == IdKey(offering.id)) {
            last_day =
                std::max(last_day, static_cast<long long>(std::ceil(hours->second / kHoursPerDay)));
        }
    }
    int months = billed_months;
    while (months < kMaxOwnedRentMonths && AddCalendarMonths(first_day, months) < last_day) {
        ++months;
    }
    return months;
}

// Renting `monthly_usd` of `offering` a month from `first_day`, month by month as owned
// capacity covers it (CoverRun): the month's instance-hours (monthly_usd / the offering's
// price) run on as few instances as carry them (whole instances, 730 h a month each), spread
// evenly over the calendar month's hours, so the month's covered share is the share of those
// instances' hours owned entries cover. The month pays the rest of its rent; the covered hours
// are sunk at the entries' rates (their average over the month).
std::vector<RentMonth> CoverRent(const std::vector<OwnedCapacity>& owned, const Offering& offering,
                                 double monthly_usd, long long first_day, int months) {
    std::vector<RentMonth> out(static_cast<std::size_t>(std::max(0, months)),
                               RentMonth{monthly_usd, 0, 0});
    if (owned.empty() || offering.price.usd_per_hour <= 0 || monthly_usd <= 0) return out;
    const double instance_hours = monthly_usd / offering.price.usd_per_hour;
    const int nodes =
        std::max(1, static_cast<int>(std::ceil(instance_hours / kHoursPerMonth - 1e-9)));
    for (int m = 0; m < months; ++m) {
        const double start_hour =
            static_cast<double>(AddCalendarMonths(first_day, m)) * kHoursPerDay;
        const double end_hour =
            static_cast<double>(AddCalendarMonths(first_day, m + 1)) * kHoursPerDay;
        const OwnedCover cover = CoverRun(owned, offering.id, nodes, start_hour, end_hour);
        if (cover.instance_hours <= 0) continue;
        const double share =
            std::min(1.0, cover.instance_hours / (nodes * (end_hour - start_hour)));
        RentMonth& month = out[static_cast<std::size_t>(m)];
        month.owned_instance_hours = share * instance_hours;
        month.owned_sunk_usd = cover.sunk_usd * month.owned_instance_hours / cover.instance_hours;
        month.usd = 1.0 - share < kOwnedHoursResidue ? 0.0 : monthly_usd * (1.0 - share);
    }
    return out;
}

bool CoversAny(const std::vector<RentMonth>& months) {
    return std::any_of(months.begin(), months.end(),
                       [](const RentMonth& m) { return m.owned_instance_hours > 0; });
}

// Present value of the months' rents, each paid at the end of its month.
double PresentValue(const std::vector<RentMonth>& months, std::size_t count, double monthly_rate) {
    double pv = 0;
    double discount = 1;
    for (std::size_t m = 0; m < count && m < months.size(); ++m) {
        discount /= 1.0 + monthly_rate;
        pv += months[m].usd * discount;
    }
    return pv;
}

// Months until renting has cost as much as owning (capex + opex a month), the rent of month k
// being rent[k] and after the list `tail_rent`, both discounted at `monthly_rate` (0: cash):
// within a month, the continuous annuity the closed form without owned capacity uses. nullopt
// when it never does.
std::optional<double> BreakEvenMonths(double capex_usd, double opex_usd_per_month,
                                      const std::vector<RentMonth>& rent, double tail_rent_usd,
                                      double monthly_rate) {
    double owed = capex_usd;  // still to recover, in money of the purchase month
    double discount = 1;      // to the start of month k
    for (std::size_t k = 0;; ++k) {
        const bool tail = k >= rent.size();
        const double margin = (tail ? tail_rent_usd : rent[k].usd) - opex_usd_per_month;
        if (margin > 0) {
            const double need = owed / (margin * discount);  // undiscounted months
            std::optional<double> months;
            if (monthly_rate <= 0) {
                months = need;
            } else if (need * monthly_rate < 1) {
                months = -std::log1p(-need * monthly_rate) / std::log1p(monthly_rate);
            }
            if (months && (*months <= 1 || tail)) return static_cast<double>(k) + *months;
        }
        if (tail) return std::nullopt;
        owed -= margin * discount / (1.0 + monthly_rate);
        discount /= 1.0 + monthly_rate;
    }
}

// Rent-vs-buy compares a steady monthly rent with owning. A spot offering is interrupted and
// repriced at will and a capacity block is booked for days or weeks, so neither is a monthly
// rent: refused, naming the field that chose it.
Status CheckSteadyRent(const Offering& offering, const RentSide& rent) {
    if (offering.price_type != PriceType::kSpot &&
        offering.price_type != PriceType::kCapacityBlock) {
        return Ok{};
    }
    const std::string field = rent.price_type ? "/rent/price_type" : "/rent/offering_id";
    const std::string what = offering.price_type == PriceType::kSpot
                                 ? "a spot offering (interrupted at the provider's will)"
                                 : "a capacity block (booked for days or weeks)";
    return MakeError(ErrorCode::kInvalidArgument,
                     field + ": '" + offering.id + "' is " + what +
                         "; rent-vs-buy compares a steady monthly rent with owning, so rent "
                         "on_demand or under a commitment here, and price spot against "
                         "on-demand with POST /v1/plans/spot",
                     field);
}

// On-demand pays the rented accelerator-hours; a commitment reserves whole instances
// covering the owned accelerators for every hour of whole terms (8,760 h a year).
std::vector<RentOption> RentOptions(const Catalog& catalog, const Offering& offering, double count,
                                    const RentVsBuyPlan& plan, double monthly_rate,
                                    const std::vector<OwnedCapacity>& owned, long long first_day) {
    std::vector<RentOption> out;
    for (PriceType type : {PriceType::kOnDemand, PriceType::kCommit1y, PriceType::kCommit3y}) {
        const int term_months = TermMonths(type);
        const Offering* o =
            offering.price_type == type ? &offering : SiblingOffering(catalog, offering, type);
        if (o == nullptr || !IsUsableUsdPerHour(o->price.usd_per_hour)) {
            continue;  // a NaN or out-of-range sibling price is no option, never the cheapest
        }
        RentOption r;
        r.price_type = type;
        r.offering_id = o->id;
        r.usd_per_accelerator_hour = o->UsdPerAcceleratorHour();
        r.as_of = o->price.as_of;
        r.as_of_estimated = o->price.as_of_estimated;
        r.verified = o->price.verified;
        if (term_months == 0) {
            r.monthly_usd =
                r.usd_per_accelerator_hour * plan.accelerator_hours_per_month.value_or(0);
            r.billed_months = plan.horizon_months;
        } else {
            r.nodes =
                static_cast<int>(std::ceil(count / static_cast<double>(o->accelerator_count)));
            r.monthly_usd = o->price.usd_per_hour * r.nodes * kHoursPerMonth;
            r.billed_months = WholeTermMonths(plan.horizon_months, term_months);
        }
        r.total_usd = r.monthly_usd * r.billed_months;
        r.npv_usd = Annuity(r.monthly_usd, r.billed_months, monthly_rate);
        const std::vector<RentMonth> months =
            owned.empty() ? std::vector<RentMonth>{}
                          : CoverRent(owned, *o, r.monthly_usd, first_day, r.billed_months);
        if (CoversAny(months)) {
            // As the rent path: the hours owned capacity covers are sunk.
            r.total_usd = 0;
            for (const RentMonth& m : months) {
                r.total_usd += m.usd;
                r.owned_instance_hours += m.owned_instance_hours;
            }
            r.npv_usd = PresentValue(months, months.size(), monthly_rate);
        }
        r.cheaper_than_buying = r.npv_usd < plan.npv_own_usd;
        out.push_back(r);
    }
    return out;
}

// Renting `hours_per_month` and owning `count` accelerators at `utilization` should be the
// same workload. When they are not, the comparison runs as given (the rented hours priced, the
// owned fleet powered at its utilisation) and the answer says that they disagree.
void WarnOnUtilizationMismatch(double utilization, double hours_per_month, double count,
                               RentVsBuyPlan& plan) {
    const double capacity_hours = count * kHoursPerMonth;
    const double implied = std::min(1.0, hours_per_month / capacity_hours);
    if (std::abs(utilization - implied) <= kUtilizationMismatchTolerance) {
        return;
    }
    plan.warnings.push_back(
        {"/buy/utilization",
         "buy.utilization " + Fixed(utilization * 100.0, 0) + "% disagrees with " +
             "rent.accelerator_hours_per_month: " + Fixed(hours_per_month, 0) +
             " accelerator-hours a month fill " + Fixed(implied * 100.0, 0) + "% of the " +
             Fixed(count, 0) + " owned accelerators (" + Fixed(capacity_hours, 0) +
             " h a month). Renting is priced for the hours, owning powered at the "
             "utilisation; give equal figures (or only one) to compare the same workload"});
}

// The comparison prices owning `bought` against renting `rented`: other accelerators do other
// work in an hour (an L4 is not a B200; a 40 GB A100 is not an 80 GB one), so the same hours
// on both compare prices, not the same work. Kept as given, with a warning.
void WarnOnDifferentHardware(const Accelerator& bought, const Offering& rented,
                             RentVsBuyPlan& plan) {
    if (rented.accelerator == bought.id) {
        return;
    }
    plan.warnings.push_back(
        {"/rent/offering_id",
         "the rented offering " + rented.id + " holds " + std::to_string(rented.accelerator_count) +
             " x " + rented.accelerator + " per instance while buy.accelerator is " + bought.id +
             ": both are priced for the same accelerator-hours, yet other accelerators do "
             "another amount of work in an hour; rent an offering of " +
             bought.id + ", or give the hours each side needs for the same work"});
}

// rent.usd_per_month against the monthly rent the hourly figures give (rate x hours, or the
// commitment's reserved instances): further apart than kRentReadingsTolerance they are named.
void WarnOnDisagreeingRent(double hourly_reading, RentVsBuyPlan& plan) {
    const double given = plan.monthly_rent_usd;
    if (std::abs(given - hourly_reading) <=
        kRentReadingsTolerance * std::max(given, hourly_reading)) {
        return;
    }
    plan.warnings.push_back(
        {"/rent/usd_per_month",
         "rent.usd_per_month " + UsdText(given) +
             " disagrees with the hourly figures, which give " + UsdText(hourly_reading) +
             " a month (" + Fixed(*plan.rent_usd_per_accelerator_hour, 2) +
             " USD per accelerator-hour); " +
             "usd_per_month is used throughout, the rate it implies included; give one or "
             "figures that agree"});
}

// Owning recommended although it does not break even (discounted, no resale) within the
// horizon: it wins only through the resale value credited at the horizon, the straight-line
// book value less the used-market haircut. Prices of used accelerators fall in steps as new
// generations ship, which a straight line does not follow, so the answer also names the resale
// price owning needs.
void WarnOnWinByResale(double horizon_discount, double monthly_rate, RentVsBuyPlan& plan) {
    const double horizon = plan.horizon_months;
    const double cost_before_resale =
        plan.capex_usd + Annuity(plan.opex_usd_per_month, horizon, monthly_rate);
    const double needed = (cost_before_resale - plan.npv_rent_usd) / horizon_discount;
    plan.warnings.push_back(
        {"/horizon_months",
         "owning wins over " + Fixed(horizon, 0) +
             " months only through the resale value "
             "credited at the horizon, " +
             UsdText(plan.residual_value_at_horizon_usd) + " (" +
             Fixed(plan.residual_value_at_horizon_usd / plan.capex_usd * 100.0, 1) +
             "% of capex: straight-line book value less the used-market haircut); it stays "
             "cheaper than renting only if the hardware resells for at least " +
             UsdText(needed) + " (" + Fixed(needed / plan.capex_usd * 100.0, 1) +
             "% of capex) then. Used accelerators lose value in steps as new generations ship; "
             "a horizon this short against the depreciation period rests on that price"});
}

bool HasWarning(const RentVsBuyPlan& plan, const std::string& field) {
    return std::any_of(plan.warnings.begin(), plan.warnings.end(),
                       [&](const FieldError& w) { return w.field == field; });
}

// The stages of a rent-vs-buy plan, in order (PlanRentVsBuy runs them); what one stage
// finds that a later one needs, beyond the plan itself, travels in Owning.
struct Owning {
    std::optional<Offering> offering;        // the rented offering, when named
    std::optional<Accelerator> accelerator;  // the bought (or rented) accelerator
    bool has_count = false;                  // buy.total_accelerators given
    double count = 0;                        // owned accelerators; 0 when not given
    int term_months = 0;                     // the rent's commitment term; 0 when hourly
    double servers_usd = 0;  // the servers' share of capex, when derived from accelerators
    // The part of the power bill that scales with utilisation (above the idle floor), at full
    // use; the floor is in opex whatever the use.
    double variable_power_usd_per_month_at_full_use = 0;
    std::optional<double> tdp_w;  // per accelerator, when opex is derived
    double depreciation_months = 0;
    double residual_fraction = 0;
    double resale_haircut = 0;
    double monthly_rate = 0;
    double horizon_discount = 1;
    long long first_day = 0;  // the purchase month's first day (days since 1970)
};

// The offering named by rent.offering_id (or its sibling of rent.price_type), checked to be
// a steady monthly rent.
Status ResolveRentOffering(const RentVsBuyRequest& request, const Catalog& catalog,
                           RentVsBuyPlan& plan, Owning& own) {
    const RentSide& rent = request.rent;
    std::optional<Offering>& offering = own.offering;
    if (rent.offering_id) {
        auto found = catalog.FindOffering(*rent.offering_id);
        if (!found.ok()) {
            return MakeError(ErrorCode::kNotFound,
                             "no offering '" + rent.offering_id->substr(0, 200) + "'",
                             "/rent/offering_id");
        }
        offering = found.value();
        if (rent.price_type && offering->price_type != *rent.price_type) {
            const Offering* sibling = SiblingOffering(catalog, *offering, *rent.price_type);
            if (sibling == nullptr) {
                return MakeError(
                    ErrorCode::kInvalidArgument,
                    "/rent/price_type: no " + std::string(PriceTypeName(*rent.price_type)) +
                        " offering of " + offering->instance_type + " in " + offering->region,
                    "/rent/price_type");
            }
            offering = *sibling;
        }
        if (!IsUsableUsdPerHour(offering->price.usd_per_hour)) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "offering '" + offering->id +
                                 "' has no usable price (not a finite number of USD/h from 0 to "
                                 "1000000); name another",
                             "/rent/offering_id");
        }
        if (auto steady = CheckSteadyRent(*offering, rent); !steady.ok()) {
            return steady.error();
        }
        plan.rent_price_type = offering->price_type;
    }
    return Ok{};
}

// The accelerator bought (or, without one, rented), with a warning when the two differ.
Status ResolveAccelerator(const RentVsBuyRequest& request, const Catalog& catalog,
                          RentVsBuyPlan& plan, Owning& own) {
    const BuySide& buy = request.buy;
    const std::optional<Offering>& offering = own.offering;
    plan.accelerator = buy.accelerator;
    if (!plan.accelerator && offering) {
        plan.accelerator = offering->accelerator;
    }
    std::optional<Accelerator>& accelerator = own.accelerator;
    if (plan.accelerator) {
        auto found = catalog.FindAccelerator(*plan.accelerator);
        if (!found.ok()) {
            return MakeError(ErrorCode::kNotFound,
                             "no accelerator '" + plan.accelerator->substr(0, 200) + "'",
                             "/buy/accelerator");
        }
        accelerator = found.value();
        if (buy.accelerator && offering) {
            WarnOnDifferentHardware(*accelerator, *offering, plan);
        }
    }
    return Ok{};
}

// Rent rate and volume: the monthly rent, read from the given figures or the offering, and the
// instances a commitment reserves.
Status PriceRent(const RentVsBuyRequest& request, RentVsBuyPlan& plan, Owning& own) {
    const BuySide& buy = request.buy;
    const RentSide& rent = request.rent;
    const std::optional<Offering>& offering = own.offering;
    const bool has_count = own.has_count;
    const double count = own.count;
    if (rent.usd_per_accelerator_hour) {
        plan.rent_usd_per_accelerator_hour = rent.usd_per_accelerator_hour;
    } else if (offering) {
        plan.rent_usd_per_accelerator_hour = offering->UsdPerAcceleratorHour();
    }
    plan.accelerator_hours_per_month = rent.accelerator_hours_per_month;
    if (!rent.usd_per_month && !plan.accelerator_hours_per_month) {
        if (!has_count) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "accelerator_hours_per_month is required unless "
                             "buy.total_accelerators is given",
                             "/rent/accelerator_hours_per_month");
        }
        plan.accelerator_hours_per_month =
            count * kHoursPerMonth * buy.utilization.value_or(kDefaultUtilization);
    }
    if (has_count && plan.accelerator_hours_per_month) {
        const double capacity = count * kHoursPerMonth;
        if (*plan.accelerator_hours_per_month > capacity * (1.0 + 1e-9)) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "rented accelerator-hours per month (" +
                                 Fixed(*plan.accelerator_hours_per_month, 0) +
                                 ") exceed what the owned accelerators deliver (" +
                                 Fixed(capacity, 0) + ")",
                             "/rent/accelerator_hours_per_month");
        }
    }
    own.term_months = offering ? TermMonths(offering->price_type) : 0;
    const int term_months = own.term_months;
    if (term_months > 0 && (has_count || plan.accelerator_hours_per_month)) {
        // A commitment reserves whole instances for the owned accelerators (or, without a
        // count, for the rented hours) every hour, used or not.
        const double per_instance = static_cast<double>(offering->accelerator_count);
        const double needed =
            has_count ? count : *plan.accelerator_hours_per_month / kHoursPerMonth;
        plan.rent_nodes = std::max(1, static_cast<int>(std::ceil(needed / per_instance - 1e-9)));
    }
    // The monthly rent read from the hourly figures, when they are there.
    std::optional<double> hourly_reading;
    if (plan.rent_usd_per_accelerator_hour && plan.rent_nodes) {
        hourly_reading = *plan.rent_usd_per_accelerator_hour * offering->accelerator_count *
                         *plan.rent_nodes * kHoursPerMonth;
    } else if (plan.rent_usd_per_accelerator_hour && plan.accelerator_hours_per_month) {
        hourly_reading = *plan.rent_usd_per_accelerator_hour * *plan.accelerator_hours_per_month;
    }
    if (rent.usd_per_month) {
        // The monthly figure given is the rent; a disagreeing hourly reading is named, and
        // the hourly rate used elsewhere (break-even utilisation) becomes the monthly one's.
        plan.monthly_rent_usd = *rent.usd_per_month;
        if (hourly_reading) {
            WarnOnDisagreeingRent(*hourly_reading, plan);
        }
        if (term_months == 0 && plan.accelerator_hours_per_month &&
            *plan.accelerator_hours_per_month > 0) {
            plan.rent_usd_per_accelerator_hour =
                plan.monthly_rent_usd / *plan.accelerator_hours_per_month;
        }
    } else {
        plan.monthly_rent_usd = *hourly_reading;
    }

    return Ok{};
}

// Utilisation of what is owned: given, or the rented hours over the owned capacity.
void EstimateUtilization(const RentVsBuyRequest& request, RentVsBuyPlan& plan, const Owning& own) {
    const BuySide& buy = request.buy;
    const RentSide& rent = request.rent;
    const bool has_count = own.has_count;
    const double count = own.count;
    if (buy.utilization) {
        plan.utilization = buy.utilization;
        if (has_count && rent.accelerator_hours_per_month) {
            WarnOnUtilizationMismatch(*buy.utilization, *rent.accelerator_hours_per_month, count,
                                      plan);
        }
    } else if (has_count && plan.accelerator_hours_per_month) {
        plan.utilization =
            std::min(1.0, *plan.accelerator_hours_per_month / (count * kHoursPerMonth));
    }
}

// The servers' price: server_price_usd, or the accelerators' purchase price plus the chassis.
Status PriceServers(const RentVsBuyRequest& request, RentVsBuyPlan& plan, Owning& own) {
    const BuySide& buy = request.buy;
    const std::optional<Accelerator>& accelerator = own.accelerator;
    Assumptions& echo = plan.assumptions;
    if (buy.server_price_usd) {
        own.servers_usd = *buy.server_price_usd;
        echo.push_back(Echo("server_price_usd", own.servers_usd, "usd",
                            "purchase cost of the servers", true, ""));
        return Ok{};
    }
    std::optional<double> unit_price = buy.purchase_price_usd_per_accelerator;
    if (!unit_price && accelerator) {
        unit_price = accelerator->purchase_price_usd;
    }
    if (!unit_price) {
        return MakeError(
            ErrorCode::kFailedPrecondition,
            "no purchase price: give capex_usd, server_price_usd or "
            "purchase_price_usd_per_accelerator" +
                std::string(accelerator ? " (the catalog has none for " + accelerator->id + ")"
                                        : ""),
            "/buy/purchase_price_usd_per_accelerator");
    }
    const double overhead = buy.chassis_overhead_fraction.value_or(kDefaultChassisOverheadFraction);
    own.servers_usd = *unit_price * own.count * (1.0 + overhead);
    echo.push_back(Echo("purchase_price_usd_per_accelerator", *unit_price, "usd",
                        "purchase price of one accelerator",
                        buy.purchase_price_usd_per_accelerator.has_value(),
                        accelerator ? "catalog: " + accelerator->purchase_price_source + " (" +
                                          accelerator->purchase_price_as_of + ")"
                                    : ""));
    echo.push_back(Echo("chassis_overhead_fraction", overhead, "fraction",
                        "the server around the accelerators (chassis, CPUs, memory, local NVMe, "
                        "InfiniBand/RoCE NICs)",
                        buy.chassis_overhead_fraction.has_value(),
                        "default: judgement from 8-GPU HGX H100 server prices (~$300K; "
                        "Thinkmate's Aug-2024 quote $317K with 8 x 400 Gb/s NICs) against GPUs "
                        "at $25-30K"));
    return Ok{};
}

// The default share of the servers' price the cluster network costs, by the servers it joins,
// with its source.
std::pair<double, std::string> DefaultNetworkFraction(const Owning& own) {
    if (!own.has_count) {
        return {0.0, "default: none without total_accelerators (the servers to join are unknown)"};
    }
    const auto servers = static_cast<int>(std::ceil(own.count / kAcceleratorsPerServer));
    const std::string bom =
        " (Aug-2024 H100 cluster bill of materials: FS.com 400 Gb/s InfiniBand switches and "
        "cables against $310K servers)";
    if (servers <= 1) {
        return {0.0, "default: one server (" + std::to_string(kAcceleratorsPerServer) +
                         " accelerators or fewer) needs no scale-out fabric"};
    }
    if (servers <= kNetworkOneTierMaxServers) {
        return {kNetworkFractionOneTier, "default: one switch tier up to " +
                                             std::to_string(kNetworkOneTierMaxServers) +
                                             " servers, 4.9 % at 64" + bom};
    }
    if (servers <= kNetworkTwoTiersMaxServers) {
        return {kNetworkFractionTwoTiers,
                "default: two switch tiers, 11.0 % at 128-2,048 servers" + bom};
    }
    return {kNetworkFractionThreeTiers,
            "default: three switch tiers, 17.1 % from 4,096 servers" + bom};
}

// Capex: given, or the servers plus the cluster network and shared storage they need.
Status PriceCapex(const RentVsBuyRequest& request, RentVsBuyPlan& plan, Owning& own) {
    const BuySide& buy = request.buy;
    Assumptions& echo = plan.assumptions;
    if (buy.capex_usd) {
        plan.capex_usd = *buy.capex_usd;
        echo.push_back(Echo("capex_usd", plan.capex_usd, "usd", "purchase cost", true, ""));
        return Ok{};
    }
    if (auto s = PriceServers(request, plan, own); !s.ok()) return s.error();
    auto [network, network_source] = DefaultNetworkFraction(own);
    if (buy.network_fraction) {
        network = *buy.network_fraction;
    }
    const double storage = buy.storage_fraction.value_or(kDefaultStorageFraction);
    plan.capex_usd = own.servers_usd * (1.0 + network + storage);
    echo.push_back(Echo("network_fraction", network, "fraction",
                        "cluster network (switches, optics, cables) on top of the servers' price",
                        buy.network_fraction.has_value(), network_source));
    echo.push_back(Echo("storage_fraction", storage, "fraction",
                        "shared storage for data and checkpoints on top of the servers' price",
                        buy.storage_fraction.has_value(),
                        "default: Bernstein 2025, storage ~1-1.5 % of AI data-centre spend whose "
                        "compute hardware is ~58 %"));
    return Ok{};
}

// Power above an idle floor, and colocation per kW of the servers' IT power: the opex terms
// that follow from the accelerators' TDP. Returns their monthly sum at the plan's utilisation.
double PriceFacility(const RentVsBuyRequest& request, RentVsBuyPlan& plan, Owning& own,
                     double utilization) {
    const BuySide& buy = request.buy;
    Assumptions& echo = plan.assumptions;
    const double tdp_w = *own.tdp_w;
    const double host =
        buy.server_power_overhead_fraction.value_or(kDefaultServerPowerOverheadFraction);
    const double pue = buy.pue.value_or(kDefaultPue);
    const double usd_per_kwh = buy.usd_per_kwh.value_or(kDefaultUsdPerKwh);
    const double idle = buy.idle_power_fraction.value_or(kDefaultIdlePowerFraction);
    const double server_kw_per_accelerator = tdp_w / 1000.0 * (1.0 + host);
    const double usd_per_kw_month =
        buy.hosting_usd_per_kw_month.value_or(kDefaultHostingUsdPerKwMonth);
    // Multiplied in this order so that round figures stay round ($200 x 700 W x 1.5 = $210).
    const double hosting = buy.hosting_usd_per_accelerator_month.value_or(usd_per_kw_month * tdp_w *
                                                                          (1.0 + host) / 1000.0);
    const double power_at_full_use =
        own.count * server_kw_per_accelerator * pue * usd_per_kwh * kHoursPerMonth;
    own.variable_power_usd_per_month_at_full_use = power_at_full_use * (1.0 - idle);
    echo.push_back(Echo("tdp_w", tdp_w, "W", "board power of one accelerator",
                        buy.tdp_w.has_value(), "catalog: accelerator TDP"));
    echo.push_back(Echo("server_power_overhead_fraction", host, "fraction",
                        "host power (CPUs, memory, NICs, fans) on top of accelerator TDP",
                        buy.server_power_overhead_fraction.has_value(),
                        "default: judgement, below the DGX H100 datasheet maximum "
                        "(10.2 kW for 8 x 700 W)"));
    echo.push_back(Echo("idle_power_fraction", idle, "fraction",
                        "power an idle server still draws, share of its draw at full use; power "
                        "= full x (idle + (1 - idle) x utilization)",
                        buy.idle_power_fraction.has_value(),
                        "default: judgement (idle H100/H200 ~70-75 W of 700 W by nvidia-smi; "
                        "the host keeps about half its load draw; fabric and storage stay on)"));
    echo.push_back(Echo("pue", pue, "ratio", "datacentre power usage effectiveness",
                        buy.pue.has_value(),
                        "default: Uptime Institute 2023 survey average 1.58; colocation "
                        "quotes 1.3-1.4"));
    echo.push_back(Echo("usd_per_kwh", usd_per_kwh, "usd_per_kwh", "electricity price",
                        buy.usd_per_kwh.has_value(),
                        "default: between US industrial (~0.08, EIA 2023) and commercial "
                        "(~0.13) averages"));
    if (!buy.hosting_usd_per_accelerator_month) {
        echo.push_back(Echo("hosting_usd_per_kw_month", usd_per_kw_month, "usd_per_kw_month",
                            "colocation per kW of server IT power (space, cooling, power "
                            "distribution), energy excluded",
                            buy.hosting_usd_per_kw_month.has_value(),
                            "default: middle of $150-250 per kW-month quotes; 2026 wholesale "
                            "$150-280 (Ashburn), $180-300 (Silicon Valley), AI halls +20-30 %"));
    }
    echo.push_back(Echo("hosting_usd_per_accelerator_month", hosting, "usd_per_month",
                        "colocation per accelerator, energy excluded",
                        buy.hosting_usd_per_accelerator_month.has_value(),
                        "derived: hosting_usd_per_kw_month x tdp_w / 1000 x (1 + "
                        "server_power_overhead_fraction)"));
    return power_at_full_use * (idle + (1.0 - idle) * utilization) + hosting * own.count;
}

// Opex: given, or power at the utilisation above an idle floor, hosting, hardware support and
// staff.
Status PriceOpex(const RentVsBuyRequest& request, RentVsBuyPlan& plan, Owning& own) {
    const BuySide& buy = request.buy;
    const std::optional<Accelerator>& accelerator = own.accelerator;
    Assumptions& echo = plan.assumptions;
    if (buy.opex_usd_per_month) {
        plan.opex_usd_per_month = *buy.opex_usd_per_month;
        echo.push_back(Echo("opex_usd_per_month", plan.opex_usd_per_month, "usd_per_month",
                            "running cost of owning", true, ""));
        return Ok{};
    }
    own.tdp_w = buy.tdp_w;
    if (!own.tdp_w && accelerator) {
        own.tdp_w = accelerator->tdp_w;
    }
    if (!own.tdp_w) {
        return MakeError(
            ErrorCode::kFailedPrecondition,
            "no power figure: give buy.tdp_w or opex_usd_per_month" +
                std::string(accelerator ? " (the catalog has no TDP for " + accelerator->id + ")"
                                        : ""),
            "/buy/tdp_w");
    }
    const double utilization = plan.utilization.value_or(kDefaultUtilization);
    const double facility = PriceFacility(request, plan, own, utilization);
    const double maintenance_per_year =
        buy.maintenance_fraction_per_year.value_or(kDefaultMaintenanceFractionPerYear);
    const double staff =
        buy.staff_usd_per_month.value_or(kDefaultStaffUsdPerAcceleratorMonth * own.count);
    plan.opex_usd_per_month = facility + plan.capex_usd * maintenance_per_year / 12.0 + staff;
    echo.push_back(Echo("utilization", utilization, "fraction",
                        "share of owned accelerator-hours in use; power above the idle floor "
                        "scales with it",
                        buy.utilization.has_value(),
                        plan.utilization ? "derived: rented accelerator-hours / owned capacity"
                                         : "default: judgement (60-80% in shared clusters)"));
    echo.push_back(Echo("maintenance_fraction_per_year", maintenance_per_year, "fraction_per_year",
                        "hardware support and part replacement per year, share of capex",
                        buy.maintenance_fraction_per_year.has_value(),
                        "default: low end of the 10-15 % a year hardware service contracts "
                        "cost; half NVIDIA's DGX H100 list support (20 %)"));
    echo.push_back(Echo("staff_usd_per_month", staff, "usd_per_month",
                        "operations staff for the owned hardware",
                        buy.staff_usd_per_month.has_value(),
                        "default: $50 per accelerator-month (one ~$15K/month engineer per "
                        "~300 accelerators; judgement)"));
    plan.utilization = utilization;
    return Ok{};
}

// Resale value after `months`: the straight-line book value from capex down to the residual,
// less the used-market haircut.
double Resale(const RentVsBuyPlan& plan, const Owning& own, double months) {
    const double worn = std::min(1.0, months / own.depreciation_months);
    return plan.capex_usd * (1.0 - (1.0 - own.residual_fraction) * worn) *
           (1.0 - own.resale_haircut);
}

// Both cash flows over the horizon: depreciation and resale, break-even months, totals and
// present values.
void CompareCashFlows(const RentVsBuyRequest& request, RentVsBuyPlan& plan, Owning& own) {
    const BuySide& buy = request.buy;
    Assumptions& echo = plan.assumptions;
    const int term_months = own.term_months;
    const double depreciation_years = buy.depreciation_years.value_or(kDefaultDepreciationYears);
    own.residual_fraction = buy.residual_value_fraction.value_or(kDefaultResidualValueFraction);
    own.resale_haircut = buy.resale_haircut_fraction.value_or(kDefaultResaleHaircutFraction);
    const double rate = request.discount_rate_annual.value_or(kDefaultDiscountRateAnnual);
    own.depreciation_months = depreciation_years * 12.0;
    const double depreciation_months = own.depreciation_months;
    plan.horizon_months = request.horizon_months.value_or(
        std::clamp(static_cast<int>(std::lround(depreciation_months)), 1, kMaxHorizonMonths));
    plan.discount_rate_annual = rate;
    echo.push_back(Echo("depreciation_years", depreciation_years, "years",
                        "straight-line depreciation period", buy.depreciation_years.has_value(),
                        "default: US MACRS 5-year class for computers"));
    echo.push_back(Echo("residual_value_fraction", own.residual_fraction, "fraction",
                        "book value at the end of depreciation, share of capex",
                        buy.residual_value_fraction.has_value(),
                        "default: low end of the 10-15 % the GPU Lease Rate Index gives "
                        "five-year-old H100s (2026)"));
    echo.push_back(Echo("resale_haircut_fraction", own.resale_haircut, "fraction",
                        "what a used sale loses against book value (dealer margin, "
                        "de-installation, shipping); every resale credited is book x (1 - this)",
                        buy.resale_haircut_fraction.has_value(),
                        "default: used units fetch 15-25 points less than refurbished ones "
                        "(ComputeForecast 2026); the middle"));
    echo.push_back(Echo("discount_rate_annual", rate, "fraction_per_year",
                        "cost of capital used to discount both cash flows",
                        request.discount_rate_annual.has_value(), "default: judgement"));
    echo.push_back(Echo("horizon_months", plan.horizon_months, "months", "comparison horizon",
                        request.horizon_months.has_value(), "default: depreciation period"));

    plan.monthly_own_usd =
        (plan.capex_usd - Resale(plan, own, depreciation_months)) / depreciation_months +
        plan.opex_usd_per_month;

    const double margin = plan.monthly_rent_usd - plan.opex_usd_per_month;
    own.monthly_rate = std::pow(1.0 + rate, 1.0 / 12.0) - 1.0;
    const double monthly_rate = own.monthly_rate;
    const auto horizon = static_cast<double>(plan.horizon_months);
    if (margin > 0) {
        plan.break_even_months = plan.capex_usd / margin;
        if (monthly_rate <= 0) {
            plan.discounted_break_even_months = plan.break_even_months;
        } else if (plan.capex_usd * monthly_rate < margin) {
            plan.discounted_break_even_months =
                -std::log1p(-plan.capex_usd * monthly_rate / margin) / std::log1p(monthly_rate);
        }
    }

    plan.residual_value_at_horizon_usd = Resale(plan, own, horizon);
    plan.rent_billed_months =
        term_months > 0 ? WholeTermMonths(plan.horizon_months, term_months) : plan.horizon_months;
    const auto billed = static_cast<double>(plan.rent_billed_months);
    plan.total_rent_usd = plan.monthly_rent_usd * billed;
    plan.total_own_usd =
        plan.capex_usd + plan.opex_usd_per_month * horizon - plan.residual_value_at_horizon_usd;
    own.horizon_discount = std::exp(-horizon * std::log1p(monthly_rate));
    const double horizon_discount = own.horizon_discount;
    plan.npv_rent_usd = Annuity(plan.monthly_rent_usd, billed, monthly_rate);
    plan.npv_own_usd = plan.capex_usd + Annuity(plan.opex_usd_per_month, horizon, monthly_rate) -
                       plan.residual_value_at_horizon_usd * horizon_discount;

    // On the recommendation's basis: the discounted break-even (no resale) within the horizon.
    plan.breaks_even_within_horizon =
        plan.discounted_break_even_months && *plan.discounted_break_even_months <= horizon;
}

// Owned capacity of the rented offering: the rent path's covered hours are sunk (paid whether
// or not the company buys), so the rent path's totals, present value and break-evens are
// those of the marginal rent, month by month from the purchase month.
void CoverRentWithOwned(const RentVsBuyRequest& request, RentVsBuyPlan& plan, Owning& own) {
    const auto today = DaysFromIsoDate(request.today);
    if (request.owned_capacity.empty() || !own.offering || !today) return;
    const std::string first_month = IsoDateFromDays(*today).substr(0, 7);
    own.first_day = *DaysFromIsoDate(first_month + "-01");
    const int months = OwnedRentMonths(request.owned_capacity, *own.offering, own.first_day,
                                       plan.rent_billed_months);
    std::vector<RentMonth> rent = CoverRent(request.owned_capacity, *own.offering,
                                            plan.monthly_rent_usd, own.first_day, months);
    if (!CoversAny(rent)) return;
    const auto billed = static_cast<std::size_t>(plan.rent_billed_months);
    plan.break_even_months =
        BreakEvenMonths(plan.capex_usd, plan.opex_usd_per_month, rent, plan.monthly_rent_usd, 0.0);
    plan.discounted_break_even_months = BreakEvenMonths(
        plan.capex_usd, plan.opex_usd_per_month, rent, plan.monthly_rent_usd, own.monthly_rate);
    plan.breaks_even_within_horizon =
        plan.discounted_break_even_months &&
        *plan.discounted_break_even_months <= static_cast<double>(plan.horizon_months);
    plan.npv_rent_usd = PresentValue(rent, billed, own.monthly_rate);
    rent.resize(billed);
    RentOwnedUse use{first_month, 0, 0, plan.monthly_rent_usd * static_cast<double>(billed)};
    plan.total_rent_usd = 0;
    for (const RentMonth& m : rent) {
        use.instance_hours += m.owned_instance_hours;
        use.sunk_usd += m.owned_sunk_usd;
        plan.total_rent_usd += m.usd;
    }
    use.instance_hours = StatedOwnedHours(use.instance_hours);
    plan.owned = use;
    plan.rent_months = std::move(rent);
}

// Break-even utilisation on the recommendation's basis (hourly rent only).
void FindBreakEvenUtilization(RentVsBuyPlan& plan, const Owning& own) {
    const bool has_count = own.has_count;
    const double count = own.count;
    const int term_months = own.term_months;
    const double monthly_rate = own.monthly_rate;
    const double horizon_discount = own.horizon_discount;
    const double variable_power = own.variable_power_usd_per_month_at_full_use;
    const auto horizon = static_cast<double>(plan.horizon_months);
    // Break-even utilisation on the recommendation's basis (present values over the horizon,
    // resale credited): capex - PV(resale) + A x (fixed opex + variable power x u) = A x rent
    // rate x capacity x u, with A the horizon's annuity factor and the idle floor's power in
    // the fixed opex. With no discounting and the horizon
    // at the depreciation period this is the amortised monthly balance. A commitment costs the
    // same at any utilisation, so it has none.
    // With owned capacity the marginal rent is not proportional to the hours rented (the
    // owned hours come first at any utilisation), so there is no single rate to balance.
    if (has_count && plan.rent_usd_per_accelerator_hour && term_months == 0 && !plan.owned) {
        const double annuity = Annuity(1.0, horizon, monthly_rate);
        const double fixed_opex =
            plan.opex_usd_per_month - variable_power * plan.utilization.value_or(0.0);
        const double rent_at_full_use =
            *plan.rent_usd_per_accelerator_hour * count * kHoursPerMonth;
        const double slope = annuity * (rent_at_full_use - variable_power);
        if (slope > 0) {
            plan.break_even_utilization =
                (plan.capex_usd - plan.residual_value_at_horizon_usd * horizon_discount +
                 annuity * fixed_opex) /
                slope;
        }
    }
}

// The month-by-month cumulative series of both sides.
void Accumulate(RentVsBuyPlan& plan, const Owning& own) {
    plan.cumulative.reserve(static_cast<std::size_t>(plan.horizon_months) + 1);
    double rent_usd = 0;  // the marginal rent with owned capacity, else months x the rent
    for (int m = 0; m <= plan.horizon_months; ++m) {
        const auto months = static_cast<double>(m);
        const double owned = plan.capex_usd + plan.opex_usd_per_month * months;
        if (plan.rent_months.empty()) rent_usd = plan.monthly_rent_usd * months;
        plan.cumulative.push_back({m, rent_usd, owned, owned - Resale(plan, own, months)});
        if (!plan.rent_months.empty() && m < static_cast<int>(plan.rent_months.size())) {
            rent_usd += plan.rent_months[static_cast<std::size_t>(m)].usd;
        }
    }
}

// rent or buy on present value, and why in words.
void Recommend(const RentVsBuyRequest& request, RentVsBuyPlan& plan, const Owning& own) {
    const RentSide& rent = request.rent;
    const std::optional<Offering>& offering = own.offering;
    const double count = own.count;
    const double rate = plan.discount_rate_annual;
    const double monthly_rate = own.monthly_rate;
    const double horizon_discount = own.horizon_discount;
    const auto horizon = static_cast<double>(plan.horizon_months);
    const bool buy_wins = plan.npv_own_usd < plan.npv_rent_usd;
    plan.recommendation = buy_wins ? RentVsBuyRecommendation::kBuy : RentVsBuyRecommendation::kRent;
    if (buy_wins && !plan.breaks_even_within_horizon && plan.capex_usd > 0) {
        WarnOnWinByResale(horizon_discount, monthly_rate, plan);
    }
    std::string why = "over " + Fixed(horizon, 0) + " months at " + Fixed(rate * 100.0, 1) +
                      "% a year, owning costs " + UsdText(plan.npv_own_usd) +
                      " in present value (net of " + UsdText(plan.residual_value_at_horizon_usd) +
                      " resale) against " + UsdText(plan.npv_rent_usd) + " for renting; ";
    if (plan.rent_nodes && !rent.usd_per_month) {
        why += "the rent is a " + std::string(PriceTypeName(offering->price_type)) +
               " commitment: " + std::to_string(*plan.rent_nodes) + " x " +
               offering->instance_type + " reserved every hour (" + UsdText(plan.monthly_rent_usd) +
               "/month, used or not), billed for " + std::to_string(plan.rent_billed_months) +
               " months of whole terms; ";
    }
    if (!plan.break_even_months) {
        why += "owning never breaks even: its running cost (" + UsdText(plan.opex_usd_per_month) +
               "/month) is at least the rent (" + UsdText(plan.monthly_rent_usd) + "/month)";
    } else {
        why += "cash break-even after " + Fixed(*plan.break_even_months, 1) + " months (" +
               Fixed(*plan.break_even_months / 12.0, 1) + " years), ";
        why += plan.discounted_break_even_months
                   ? "discounted after " + Fixed(*plan.discounted_break_even_months, 1) + " months"
                   : "never once discounted";
        why += plan.breaks_even_within_horizon ? "" : ", beyond the horizon";
    }
    if (plan.break_even_utilization && plan.utilization) {
        // One decimal where whole percents would read alike ("above 17%, yours is 17%").
        const int decimals = std::lround(*plan.break_even_utilization * 100.0) ==
                                     std::lround(*plan.utilization * 100.0)
                                 ? 1
                                 : 0;
        why += *plan.break_even_utilization > 1.0
                   ? "; in present value owning pays at no utilisation (renting every owned "
                     "hour costs less), yours is "
                   : "; in present value owning pays at utilisation above " +
                         Fixed(*plan.break_even_utilization * 100.0, decimals) + "%, yours is ";
        why += Fixed(*plan.utilization * 100.0, decimals) + "%";
        if (HasWarning(plan, "/buy/utilization")) {
            why += " (buy.utilization; the rented hours fill " +
                   Fixed(*plan.accelerator_hours_per_month / (count * kHoursPerMonth) * 100.0, 0) +
                   "% of the owned capacity: the two sides describe different workloads, see "
                   "warnings)";
        }
    }
    const double gap = std::abs(plan.npv_own_usd - plan.npv_rent_usd);
    if (gap < kNearTieFraction * std::max(plan.npv_own_usd, plan.npv_rent_usd)) {
        why += "; a near tie (within " + Fixed(kNearTieFraction * 100.0, 0) +
               "%), so flexibility, capacity access and risk should decide";
    }
    if (!plan.rent_options.empty()) {
        why += "; renting " + offering->instance_type + " instead:";
        for (std::size_t i = 0; i < plan.rent_options.size(); ++i) {
            const RentOption& r = plan.rent_options[i];
            why += std::string(i > 0 ? "," : "") + " " + std::string(PriceTypeName(r.price_type)) +
                   " " + UsdText(r.npv_usd) + " (" + UsdText(r.monthly_usd) + "/month for " +
                   std::to_string(r.billed_months) + " months" +
                   (r.cheaper_than_buying ? ", cheaper than buying)" : ")");
        }
    }
    if (HasWarning(plan, "/horizon_months")) {
        why +=
            "; owning wins only by reselling the hardware at its book value (less the "
            "used-market haircut) after " +
            Fixed(horizon, 0) + " months (see warnings)";
    }
    if (HasWarning(plan, "/rent/offering_id")) {
        why += "; the rented " + offering->accelerator + " is not the " + *plan.accelerator +
               " you would buy, so this compares prices for the same hours, not the same work "
               "(see warnings)";
    }
    plan.reasoning = why;
}

// What owned capacity did to the rent path, for the reasoning: what it covers and what the
// rent path then pays, or that the book's entries cover none of it.
std::string OwnedRentText(const RentVsBuyRequest& request, const RentVsBuyPlan& plan,
                          const Owning& own) {
    if (request.owned_capacity.empty()) return "";
    if (!plan.owned) {
        return "; the price book's owned capacity covers none of the rent path's hours (" +
               (own.offering ? "no entry of " + own.offering->id + " over the " +
                                   std::to_string(plan.rent_billed_months) + " billed months"
                             : std::string("the rent names no offering")) +
               "), so every month pays the full rent";
    }
    return "; owned capacity (the price book's owned_capacity) covers " +
           Fixed(plan.owned->instance_hours, 1) + " instance-hours of " + own.offering->id +
           " the rent path would use from " + plan.owned->first_month +
           " at no marginal cost (paid whether or not you buy: " + UsdText(plan.owned->sunk_usd) +
           " at the commitment's rate), so renting costs " + UsdText(plan.total_rent_usd) +
           " at the margin over " + std::to_string(plan.rent_billed_months) + " months against " +
           UsdText(plan.owned->without_owned_rent_usd) +
           " without it; its present value and the break-evens above are the marginal rent's";
}

}  // namespace

const char* RentVsBuyRecommendationName(RentVsBuyRecommendation recommendation) {
    switch (recommendation) {
        case RentVsBuyRecommendation::kRent:
            return "rent";
        case RentVsBuyRecommendation::kBuy:
            return "buy";
    }
    return "rent";
}

namespace {

// Money as answers state it (pricing/money.hpp), once the recommendation is made: capex, opex,
// rent and resale to the cent, and every total and cumulative point rebuilt from them in whole
// cents, so that capex + months x opex - resale is the own side and months x monthly rent the
// rent side exactly, as a budget tool recomputing them gets.
void StateMoneyInCents(RentVsBuyPlan& plan) {
    const long long capex = ToCents(plan.capex_usd);
    const long long opex = ToCents(plan.opex_usd_per_month);
    const long long rent = ToCents(plan.monthly_rent_usd);
    const long long resale = ToCents(plan.residual_value_at_horizon_usd);
    plan.capex_usd = FromCents(capex);
    plan.opex_usd_per_month = FromCents(opex);
    plan.monthly_rent_usd = FromCents(rent);
    plan.residual_value_at_horizon_usd = FromCents(resale);
    plan.monthly_own_usd = RoundToCents(plan.monthly_own_usd);
    plan.npv_own_usd = RoundToCents(plan.npv_own_usd);
    plan.npv_rent_usd = RoundToCents(plan.npv_rent_usd);
    // With owned capacity each month's marginal rent to the cent, and the totals their sums.
    std::vector<long long> rent_by_month;
    for (RentMonth& m : plan.rent_months) {
        rent_by_month.push_back(ToCents(m.usd));
        m.usd = FromCents(rent_by_month.back());
    }
    auto rent_cents_until = [&](int months) {
        if (plan.rent_months.empty()) return rent * months;
        long long sum = 0;
        for (int m = 0; m < months && m < static_cast<int>(rent_by_month.size()); ++m) {
            sum += rent_by_month[static_cast<std::size_t>(m)];
        }
        return sum;
    };
    plan.total_rent_usd = FromCents(rent_cents_until(plan.rent_billed_months));
    if (plan.owned) {
        plan.owned->sunk_usd = RoundToCents(plan.owned->sunk_usd);
        plan.owned->without_owned_rent_usd = FromCents(rent * plan.rent_billed_months);
    }
    plan.total_own_usd = FromCents(capex + opex * plan.horizon_months - resale);
    for (CumulativePoint& point : plan.cumulative) {
        const long long resale_then = ToCents(point.own_usd - point.own_net_of_resale_usd);
        const long long owned = capex + opex * point.month;
        point.rent_usd = FromCents(rent_cents_until(point.month));
        point.own_usd = FromCents(owned);
        point.own_net_of_resale_usd =
            FromCents(owned - (point.month == plan.horizon_months ? resale : resale_then));
    }
    for (RentOption& option : plan.rent_options) {
        const long long monthly = ToCents(option.monthly_usd);
        option.monthly_usd = FromCents(monthly);
        option.total_usd = option.owned_instance_hours > 0
                               ? RoundToCents(option.total_usd)
                               : FromCents(monthly * option.billed_months);
        option.npv_usd = RoundToCents(option.npv_usd);
    }
}

}  // namespace

Status RentVsBuyRequest::Validate() const {
    FieldChecker check;
    check.Range(buy.capex_usd, "/buy/capex_usd", 0, kMaxUsd);
    check.Range(buy.opex_usd_per_month, "/buy/opex_usd_per_month", 0, kMaxUsdPerMonth);
    if (buy.total_accelerators) {
        check.IntRange(*buy.total_accelerators, "/buy/total_accelerators", 1, kMaxAcceleratorCount);
    }
    check.Range(buy.server_price_usd, "/buy/server_price_usd", 0, kMaxUsd);
    check.Range(buy.purchase_price_usd_per_accelerator, "/buy/purchase_price_usd_per_accelerator",
                0, 1e8);
    check.Range(buy.chassis_overhead_fraction, "/buy/chassis_overhead_fraction", 0, 10);
    check.Range(buy.tdp_w, "/buy/tdp_w", 0, 1e5, true);
    check.Range(buy.server_power_overhead_fraction, "/buy/server_power_overhead_fraction", 0, 10);
    check.Range(buy.utilization, "/buy/utilization", 0, 1);
    check.Range(buy.pue, "/buy/pue", 1, 5);
    check.Range(buy.usd_per_kwh, "/buy/usd_per_kwh", 0, 10);
    check.Range(buy.hosting_usd_per_accelerator_month, "/buy/hosting_usd_per_accelerator_month", 0,
                1e6);
    check.Range(buy.hosting_usd_per_kw_month, "/buy/hosting_usd_per_kw_month", 0, 1e6);
    check.Range(buy.idle_power_fraction, "/buy/idle_power_fraction", 0, 1);
    check.Range(buy.network_fraction, "/buy/network_fraction", 0, 10);
    check.Range(buy.storage_fraction, "/buy/storage_fraction", 0, 10);
    check.Range(buy.maintenance_fraction_per_year, "/buy/maintenance_fraction_per_year", 0, 1);
    check.Range(buy.staff_usd_per_month, "/buy/staff_usd_per_month", 0, kMaxUsdPerMonth);
    // At least a month: a denormal period made the monthly depreciation infinite.
    check.Range(buy.depreciation_years, "/buy/depreciation_years", 1.0 / 12.0, 30);
    check.Range(buy.residual_value_fraction, "/buy/residual_value_fraction", 0, 0.99);
    check.Range(buy.resale_haircut_fraction, "/buy/resale_haircut_fraction", 0, 1);
    check.Range(rent.usd_per_month, "/rent/usd_per_month", 0, kMaxUsdPerMonth);
    check.Range(rent.usd_per_accelerator_hour, "/rent/usd_per_accelerator_hour", 0, 1e5);
    check.Range(rent.accelerator_hours_per_month, "/rent/accelerator_hours_per_month", 0, 1e9,
                true);
    check.Range(discount_rate_annual, "/discount_rate_annual", 0, 1);
    if (horizon_months) {
        check.IntRange(*horizon_months, "/horizon_months", 1, kMaxHorizonMonths);
    }
    if (!buy.capex_usd && !buy.server_price_usd && !buy.total_accelerators) {
        check.Fail("/buy/capex_usd",
                   "is required unless server_price_usd or total_accelerators is given");
    }
    if (!buy.opex_usd_per_month && !buy.total_accelerators) {
        check.Fail("/buy/opex_usd_per_month", "is required unless total_accelerators is given");
    }
    if (!rent.usd_per_month && !rent.usd_per_accelerator_hour && !rent.offering_id) {
        check.Fail("/rent/usd_per_month",
                   "give usd_per_month, usd_per_accelerator_hour or offering_id");
    }
    return check.Done();
}

Result<RentVsBuyPlan> PlanRentVsBuy(const RentVsBuyRequest& request, const Catalog& catalog) {
    if (auto valid = request.Validate(); !valid.ok()) {
        return valid.error();
    }
    RentVsBuyPlan plan;
    plan.catalog_version = catalog.Describe().version;
    Owning own;
    if (auto s = ResolveRentOffering(request, catalog, plan, own); !s.ok()) return s.error();
    if (auto s = ResolveAccelerator(request, catalog, plan, own); !s.ok()) return s.error();
    plan.total_accelerators = request.buy.total_accelerators;
    own.has_count = request.buy.total_accelerators.has_value();
    own.count = static_cast<double>(request.buy.total_accelerators.value_or(0));
    if (auto s = PriceRent(request, plan, own); !s.ok()) return s.error();
    EstimateUtilization(request, plan, own);
    if (auto s = PriceCapex(request, plan, own); !s.ok()) return s.error();
    if (auto s = PriceOpex(request, plan, own); !s.ok()) return s.error();
    CompareCashFlows(request, plan, own);
    CoverRentWithOwned(request, plan, own);
    FindBreakEvenUtilization(plan, own);
    Accumulate(plan, own);
    if (own.offering && own.has_count) {
        plan.rent_options = RentOptions(
            catalog, *own.offering, own.count, plan, own.monthly_rate,
            plan.owned ? request.owned_capacity : std::vector<OwnedCapacity>{}, own.first_day);
    }
    Recommend(request, plan, own);
    StateMoneyInCents(plan);
    plan.reasoning += OwnedRentText(request, plan, own);
    if (!request.owned_capacity.empty() && !plan.owned) {
        plan.warnings.push_back(
            OwnedCoversNothing(request.owned_capacity, "the rent path's hours over " +
                                                           std::to_string(plan.rent_billed_months) +
                                                           " billed months"));
    }
    return plan;
}

}  // namespace gpucost::pricing::plan
