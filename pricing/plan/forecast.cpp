#include "pricing/plan/forecast.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "pricing/calendar.hpp"

namespace gpucost::pricing::plan {
namespace {

// "YYYY-MM" -> {"YYYY-MM-01", first day of the next month}.
std::pair<std::string, std::string> MonthBounds(const std::string& month) {
    int year = std::stoi(month.substr(0, 4));
    int mon = std::stoi(month.substr(5, 2));
    int next_year = mon == 12 ? year + 1 : year;
    int next_mon = mon == 12 ? 1 : mon + 1;
    std::string next =
        std::to_string(next_year) + (next_mon < 10 ? "-0" : "-") + std::to_string(next_mon) + "-01";
    return {month + "-01", next};
}

ForecastCharge Base(const TrainingPlanOption& o, const std::string& month, ChargeKind kind) {
    ForecastCharge c;
    auto [start, end] = MonthBounds(month);
    c.period_start = start;
    c.period_end = end;
    c.kind = kind;
    c.offering = o.offering;
    c.nodes = o.nodes;
    return c;
}

// The owned capacity's hours in one month: paid by its commitment (BilledCost 0), effective
// at the commitment's own rate (FOCUS's amortised usage of a prepaid commitment).
ForecastCharge OwnedCharge(const Offering* offering, int nodes, const ComputeMonth& m,
                           double list_usd_per_hour) {
    ForecastCharge c;
    auto [start, end] = MonthBounds(m.month);
    c.period_start = start;
    c.period_end = end;
    c.offering = offering;
    c.nodes = nodes;
    c.owned = true;
    c.pricing_quantity = m.owned_instance_hours;
    c.list_unit_price_usd = list_usd_per_hour;
    c.list_cost_usd = list_usd_per_hour * m.owned_instance_hours;
    c.effective_cost_usd = m.owned_sunk_usd;
    c.effective_unit_price_usd = m.owned_sunk_usd / m.owned_instance_hours;
    c.billed_cost_usd = 0;
    c.accelerator_hours = m.owned_instance_hours * offering->accelerator_count;
    return c;
}

// The run's instance-hours in `month` (its wall-clock hours there on every node).
double RunInstanceHoursIn(const std::vector<MonthShare>& run, const std::string& month, int nodes) {
    for (const MonthShare& m : run) {
        if (m.month == month) return m.hours * nodes;
    }
    return 0;
}

// A term's month or a capacity block: the hours it reserves by month (a block's from the
// start, over its billed hours) and those the run uses of them.
void MarkReserved(const TrainingPlanOption& o, long long start_day, double term_share,
                  ForecastCharge& c) {
    const auto run = SplitHoursByMonth(start_day, o.expected_wall_clock_hours);
    c.reserved_from = IsoDateFromDays(start_day);
    std::vector<MonthShare> reserved;
    if (o.offering->price_type == PriceType::kCapacityBlock) {
        reserved = SplitHoursByMonth(start_day, o.billed_hours);
        for (MonthShare& m : reserved) m.hours *= o.nodes * term_share;
    } else {
        reserved.push_back({c.period_start.substr(0, 7), c.pricing_quantity});
    }
    for (const MonthShare& m : reserved) {
        const double used = std::min(m.hours, RunInstanceHoursIn(run, m.month, o.nodes));
        auto [start, end] = MonthBounds(m.month);
        c.reserved_months.push_back({start, end, m.hours, used});
    }
}

void AddCompute(const TrainingPlanOption& o, const std::vector<OwnedCapacity>& owned,
                long long start_day, double list_usd_per_hour, std::vector<ForecastCharge>& out) {
    const double effective_usd_per_hour = o.offering->price.usd_per_hour;
    const double total_usd = o.expected_cost_usd;
    // Terms and blocks bill whole periods: with owned capacity their instance-hours shrink by
    // the bill's share, so a row's cost stays its unit price x its quantity.
    const bool hourly = o.offering->price_type == PriceType::kOnDemand ||
                        o.offering->price_type == PriceType::kSpot;
    const double term_share = !hourly && o.owned && o.owned->without_owned_cost_usd > 0
                                  ? total_usd / o.owned->without_owned_cost_usd
                                  : 1.0;
    for (const ComputeMonth& m : ComputeByMonth(owned, o, start_day)) {
        if (m.owned_instance_hours > 0) {
            out.push_back(OwnedCharge(o.offering, o.nodes, m, list_usd_per_hour));
        }
        if (m.marginal_usd <= 0) continue;
        ForecastCharge c = Base(o, m.month, ChargeKind::kCompute);
        const double share = total_usd > 0 ? m.marginal_usd / total_usd : 0;
        c.pricing_quantity = hourly ? m.instance_hours : m.instance_hours * term_share;
        if (o.offering->price_type == PriceType::kCapacityBlock) {
            c.category = ChargeCategoryKind::kPurchase;
            c.pricing_quantity = o.billed_hours * o.nodes * term_share;
        }
        c.list_unit_price_usd = list_usd_per_hour;
        c.effective_unit_price_usd = effective_usd_per_hour;
        c.effective_cost_usd = m.marginal_usd;
        // The list cost scales the effective one by the list/effective ratio, so a spot
        // overhead or a block's unused hours carry over to it.
        c.list_cost_usd = effective_usd_per_hour > 0
                              ? c.effective_cost_usd * list_usd_per_hour / effective_usd_per_hour
                              : 0;
        c.accelerator_hours = c.pricing_quantity * o.offering->accelerator_count;
        c.cost_usd_p10 = o.cost_usd_p10 * share;
        c.cost_usd_p90 = o.cost_usd_p90 * share;
        if (!hourly) MarkReserved(o, start_day, term_share, c);
        out.push_back(std::move(c));
    }
}

void AddData(const TrainingPlanOption& o, const BudgetView& budget,
             const TrainingPlanRequest& request, long long start_day,
             std::vector<ForecastCharge>& out) {
    const double run_hours = o.expected_wall_clock_hours;
    if (run_hours <= 0) return;
    const auto run = SplitHoursByMonth(start_day, run_hours);
    if (budget.storage_usd && request.data.stored_gb) {
        for (const MonthShare& m : run) {
            ForecastCharge c = Base(o, m.month, ChargeKind::kStorage);
            c.pricing_unit = "GB-Months";
            c.pricing_quantity = *request.data.stored_gb * m.hours / kHoursPerStorageMonth;
            c.effective_cost_usd = *budget.storage_usd * m.hours / run_hours;
            c.list_cost_usd = c.effective_cost_usd;  // data prices are list prices
            c.effective_unit_price_usd =
                c.pricing_quantity > 0 ? c.effective_cost_usd / c.pricing_quantity : 0;
            c.list_unit_price_usd = c.effective_unit_price_usd;
            out.push_back(std::move(c));
        }
    }
    if (budget.egress_usd && request.data.egress_gb && !run.empty()) {
        ForecastCharge c = Base(o, run.back().month, ChargeKind::kEgress);
        c.pricing_unit = "GB";
        c.pricing_quantity = *request.data.egress_gb;
        c.effective_cost_usd = *budget.egress_usd;
        c.list_cost_usd = c.effective_cost_usd;
        c.effective_unit_price_usd =
            c.pricing_quantity > 0 ? c.effective_cost_usd / c.pricing_quantity : 0;
        c.list_unit_price_usd = c.effective_unit_price_usd;
        out.push_back(std::move(c));
    }
}

}  // namespace

std::vector<ComputeMonth> ComputeByMonth(const std::vector<OwnedCapacity>& owned,
                                         const TrainingPlanOption& r, long long start_day) {
    std::vector<ComputeMonth> out;
    const PriceType type = r.offering->price_type;
    if (type == PriceType::kCapacityBlock) {
        // Paid in full at reservation.
        out.push_back({IsoDateFromDays(start_day).substr(0, 7), r.expected_cost_usd, 0, 0, 0});
        return out;
    }
    const bool hourly = type == PriceType::kOnDemand || type == PriceType::kSpot;
    // Hourly use, or a term billed month by month over its hours.
    const double hours = hourly ? r.expected_wall_clock_hours : r.billed_hours;
    if (hours <= 0) return out;
    const double uncovered_total =
        r.expected_wall_clock_hours * r.nodes - (r.owned ? r.owned->instance_hours : 0);
    double start_hour = static_cast<double>(start_day) * kHoursPerDay;
    const double run_end_hour = start_hour + r.expected_wall_clock_hours;
    for (const MonthShare& m : SplitHoursByMonth(start_day, hours)) {
        ComputeMonth c{m.month, r.expected_cost_usd * m.hours / hours, m.hours * r.nodes, 0, 0};
        if (r.owned) {
            // Owned hours count only while the run uses them (a term outlasts the run).
            const OwnedCover cover = CoverRun(owned, r.offering->id, r.nodes, start_hour,
                                              std::min(start_hour + m.hours, run_end_hour));
            c.owned_instance_hours = cover.instance_hours;
            c.owned_sunk_usd = cover.sunk_usd;
            if (hourly) {
                // The month pays for the hours owned capacity does not cover.
                c.instance_hours -= cover.instance_hours;
                if (c.instance_hours < kOwnedHoursResidue) c.instance_hours = 0;
                c.marginal_usd = uncovered_total > kOwnedHoursResidue
                                     ? r.expected_cost_usd * c.instance_hours / uncovered_total
                                     : 0.0;
            }
        }
        start_hour += m.hours;
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<ComputeMonth> ServingComputeByMonth(const std::vector<OwnedCapacity>& owned,
                                                const InferencePlanOption& option,
                                                long long start_day, long long end_day) {
    std::vector<ComputeMonth> out;
    if (option.offering == nullptr || end_day <= start_day) return out;
    const double usd_per_hour = option.offering->price.usd_per_hour;
    const double cluster_usd_per_hour = option.nodes * usd_per_hour;
    const double hours = static_cast<double>(end_day - start_day) * kServingHoursPerDay;
    double start_hour = static_cast<double>(start_day) * kHoursPerDay;
    for (const MonthShare& m : SplitHoursByMonth(start_day, hours)) {
        ComputeMonth c{m.month, cluster_usd_per_hour * m.hours, m.hours * option.nodes, 0, 0};
        const OwnedCover cover = owned.empty() ? OwnedCover{}
                                               : CoverRun(owned, option.offering->id, option.nodes,
                                                          start_hour, start_hour + m.hours);
        if (cover.instance_hours > 0) {
            c.owned_instance_hours = cover.instance_hours;
            c.owned_sunk_usd = cover.sunk_usd;
            c.instance_hours -= cover.instance_hours;
            if (c.instance_hours < kOwnedHoursResidue) c.instance_hours = 0;
            c.marginal_usd = usd_per_hour * c.instance_hours;
        }
        start_hour += m.hours;
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<ForecastCharge> ForecastServing(const InferencePlanOption& option,
                                            const ServingBudgetView& budget,
                                            double list_usd_per_hour,
                                            const std::vector<OwnedCapacity>& owned) {
    std::vector<ForecastCharge> out;
    const auto start = DaysFromIsoDate(budget.start_date);
    const auto end = DaysFromIsoDate(budget.end_date);
    if (!start || !end || *end <= *start || option.offering == nullptr) return out;
    const double effective_usd_per_hour = option.offering->price.usd_per_hour;
    for (const ComputeMonth& m : ServingComputeByMonth(owned, option, *start, *end)) {
        if (m.owned_instance_hours > 0) {
            out.push_back(OwnedCharge(option.offering, option.nodes, m, list_usd_per_hour));
        }
        if (m.instance_hours <= 0) continue;
        const double instance_hours = m.instance_hours;
        ForecastCharge c;
        auto [period_start, period_end] = MonthBounds(m.month);
        c.period_start = period_start;
        c.period_end = period_end;
        c.offering = option.offering;
        c.nodes = option.nodes;
        c.pricing_quantity = instance_hours;
        c.list_unit_price_usd = list_usd_per_hour;
        c.effective_unit_price_usd = effective_usd_per_hour;
        c.list_cost_usd = instance_hours * list_usd_per_hour;
        c.effective_cost_usd = instance_hours * effective_usd_per_hour;
        c.accelerator_hours = instance_hours * option.offering->accelerator_count;
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<ForecastCharge> WithUnusedOwned(const std::vector<ForecastCharge>& charges,
                                            const std::vector<OwnedCapacity>& owned) {
    int owned_nodes = 0;
    for (const OwnedCapacity& e : owned) owned_nodes += e.nodes;
    if (owned_nodes == 0) return charges;
    // Per month and offering: the first compute charge (its period and list price) and the
    // owned hours the charges use.
    std::map<std::pair<std::string, std::string>, std::pair<const ForecastCharge*, double>> used;
    for (const ForecastCharge& c : charges) {
        if (c.offering == nullptr || c.kind != ChargeKind::kCompute) continue;
        auto& entry = used[{c.period_start, c.offering->id}];
        if (entry.first == nullptr) entry.first = &c;
        if (c.owned && !c.unused) entry.second += c.pricing_quantity;
    }
    std::map<std::pair<std::string, std::string>, ForecastCharge> idle_by_key;
    for (const auto& [key, entry] : used) {
        const ForecastCharge& first = *entry.first;
        const auto start = DaysFromIsoDate(first.period_start);
        const auto end = DaysFromIsoDate(first.period_end);
        if (!start || !end) continue;
        const OwnedCover reserved = CoverRun(owned, first.offering->id, owned_nodes,
                                             static_cast<double>(*start) * kHoursPerDay,
                                             static_cast<double>(*end) * kHoursPerDay);
        const double idle = StatedOwnedHours(reserved.instance_hours - entry.second);
        if (idle <= kOwnedHoursResidue) continue;
        ForecastCharge c;
        c.period_start = first.period_start;
        c.period_end = first.period_end;
        c.offering = first.offering;
        c.path = first.path;
        c.owned = true;
        c.unused = true;
        c.pricing_quantity = idle;
        c.list_unit_price_usd = first.list_unit_price_usd;
        c.list_cost_usd = idle * first.list_unit_price_usd;
        c.effective_cost_usd = reserved.sunk_usd * idle / reserved.instance_hours;
        c.effective_unit_price_usd = c.effective_cost_usd / idle;
        c.billed_cost_usd = 0;
        idle_by_key.emplace(key, std::move(c));
    }
    // Each month's idle hours after the last charge of that month and offering.
    std::vector<ForecastCharge> out;
    for (std::size_t i = 0; i < charges.size(); ++i) {
        out.push_back(charges[i]);
        const ForecastCharge& c = charges[i];
        if (c.offering == nullptr || c.kind != ChargeKind::kCompute) continue;
        const auto key = std::make_pair(c.period_start, c.offering->id);
        const auto idle = idle_by_key.find(key);
        if (idle == idle_by_key.end()) continue;
        bool last = true;
        for (std::size_t j = i + 1; j < charges.size() && last; ++j) {
            last = charges[j].offering == nullptr || charges[j].kind != ChargeKind::kCompute ||
                   std::make_pair(charges[j].period_start, charges[j].offering->id) != key;
        }
        if (last) out.push_back(idle->second);
    }
    return out;
}

namespace {

ForecastCharge MonthCharge(long long month_day, ChargeKind kind, const char* path) {
    ForecastCharge c;
    auto [start, end] = MonthBounds(IsoDateFromDays(month_day).substr(0, 7));
    c.period_start = start;
    c.period_end = end;
    c.kind = kind;
    c.path = path;
    return c;
}

// Sets a charge's quantity, prices and costs: `quantity` of `unit` at `effective` per unit
// (list: `list` per unit).
void Price(ForecastCharge& c, double quantity, const char* unit, double effective, double list) {
    c.pricing_quantity = quantity;
    c.pricing_unit = unit;
    c.effective_unit_price_usd = effective;
    c.list_unit_price_usd = list;
    c.effective_cost_usd = quantity * effective;
    c.list_cost_usd = quantity * list;
}

// The rent path's hours owned capacity covers in one month (a price book's owned_capacity):
// paid by the commitment (BilledCost 0), effective at its own rate, as a training plan's.
ForecastCharge RentOwnedCharge(ForecastCharge c, const Offering& offering, const RentMonth& m,
                               double list_usd_per_hour) {
    c.offering = &offering;
    c.owned = true;
    Price(c, m.owned_instance_hours, "Hours", m.owned_sunk_usd / m.owned_instance_hours,
          list_usd_per_hour);
    c.effective_cost_usd = m.owned_sunk_usd;
    c.billed_cost_usd = 0;
    c.accelerator_hours = m.owned_instance_hours * offering.accelerator_count;
    return c;
}

void AddRentPath(const RentVsBuyPlan& plan, const Offering* offering, double list_usd_per_hour,
                 long long first_day, std::vector<ForecastCharge>& out) {
    for (int i = 0; i < plan.rent_billed_months; ++i) {
        ForecastCharge c =
            MonthCharge(AddCalendarMonths(first_day, i), ChargeKind::kCompute, "rent");
        c.accelerator = plan.accelerator.value_or("");
        // With owned capacity the month's marginal rent; its covered hours are a row of their
        // own, paid by the commitment (RentOwnedCharge).
        const RentMonth* owned = i < static_cast<int>(plan.rent_months.size())
                                     ? &plan.rent_months[static_cast<std::size_t>(i)]
                                     : nullptr;
        if (owned != nullptr && owned->owned_instance_hours > 0 && offering != nullptr) {
            out.push_back(RentOwnedCharge(c, *offering, *owned, list_usd_per_hour));
        }
        const double monthly = owned != nullptr ? owned->usd : plan.monthly_rent_usd;
        if (owned != nullptr && monthly <= 0) continue;  // wholly covered: no rent billed
        if (offering != nullptr && offering->price.usd_per_hour > 0) {
            c.offering = offering;
            c.nodes = plan.rent_nodes.value_or(0);
            const double instance_hours = monthly / offering->price.usd_per_hour;
            Price(c, instance_hours, "Hours", offering->price.usd_per_hour, list_usd_per_hour);
            c.accelerator_hours = instance_hours * offering->accelerator_count;
        } else if (plan.rent_usd_per_accelerator_hour && *plan.rent_usd_per_accelerator_hour > 0) {
            const double hours = monthly / *plan.rent_usd_per_accelerator_hour;
            Price(c, hours, "Hours", *plan.rent_usd_per_accelerator_hour,
                  *plan.rent_usd_per_accelerator_hour);
            c.accelerator_hours = hours;
        } else {
            Price(c, 1, "Months", monthly, monthly);
        }
        c.effective_cost_usd = monthly;  // exactly the plan's month, not a product's rounding
        out.push_back(std::move(c));
    }
}

void AddBuyPath(const RentVsBuyPlan& plan, long long first_day, std::vector<ForecastCharge>& out) {
    const int accelerators = plan.total_accelerators.value_or(0);
    auto owned = [&](ForecastCharge c) {
        c.accelerator = plan.accelerator.value_or("");
        c.accelerators = accelerators;
        return c;
    };
    ForecastCharge purchase = owned(MonthCharge(first_day, ChargeKind::kHardware, "buy"));
    purchase.category = ChargeCategoryKind::kPurchase;
    Price(purchase, 1, "Units", plan.capex_usd, plan.capex_usd);
    purchase.billed_cost_usd = plan.capex_usd;
    purchase.contracted_cost_usd = plan.capex_usd;
    purchase.effective_cost_usd = 0;  // amortised into the months it serves
    out.push_back(std::move(purchase));
    if (plan.horizon_months < 1) return;
    const double amortised_usd =
        (plan.capex_usd - plan.residual_value_at_horizon_usd) / plan.horizon_months;
    // Owned accelerator-hours in a model month: the hardware's amortisation is their price.
    const double owned_hours = accelerators * kHoursPerMonth;
    for (int i = 0; i < plan.horizon_months; ++i) {
        const long long day = AddCalendarMonths(first_day, i);
        ForecastCharge use = owned(MonthCharge(day, ChargeKind::kHardware, "buy"));
        use.owned = true;
        if (owned_hours > 0) {
            Price(use, owned_hours, "Hours", amortised_usd / owned_hours,
                  amortised_usd / owned_hours);
            use.accelerator_hours = owned_hours;
        } else {
            Price(use, 1, "Months", amortised_usd, amortised_usd);
        }
        use.effective_cost_usd = amortised_usd;
        use.billed_cost_usd = 0;  // paid by the purchase
        out.push_back(std::move(use));
        ForecastCharge opex = owned(MonthCharge(day, ChargeKind::kOperations, "buy"));
        opex.recurring = true;
        Price(opex, 1, "Months", plan.opex_usd_per_month, plan.opex_usd_per_month);
        out.push_back(std::move(opex));
    }
}

}  // namespace

std::vector<ForecastCharge> ForecastRentVsBuy(const RentVsBuyPlan& plan,
                                              const Offering* rent_offering,
                                              double rent_list_usd_per_hour,
                                              const std::string& first_month) {
    std::vector<ForecastCharge> out;
    const auto first_day = DaysFromIsoDate(first_month + "-01");
    if (!first_day) return out;
    AddRentPath(plan, rent_offering, rent_list_usd_per_hour, *first_day, out);
    AddBuyPath(plan, *first_day, out);
    return out;
}

std::vector<ForecastCharge> ForecastTraining(const TrainingPlan& plan,
                                             const TrainingPlanRequest& request,
                                             double list_usd_per_hour) {
    std::vector<ForecastCharge> out;
    if (!plan.recommendation || !plan.budget) return out;
    auto start_day = DaysFromIsoDate(plan.budget->start_date);
    if (!start_day) return out;
    AddCompute(*plan.recommendation, request.owned_capacity, *start_day, list_usd_per_hour, out);
    AddData(*plan.recommendation, *plan.budget, request, *start_day, out);
    return out;
}

}  // namespace gpucost::pricing::plan
