#include "pricing/plan/forecast.hpp"

#include <string>
#include <utility>

#include "pricing/plan/calendar.hpp"

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

void AddCompute(const TrainingPlanOption& o, long long start_day, double list_usd_per_hour,
                std::vector<ForecastCharge>& out) {
    const PriceType type = o.offering->price_type;
    const double effective_usd_per_hour = o.offering->price.usd_per_hour;
    auto fill = [&](ForecastCharge& c, double instance_hours, double share) {
        c.pricing_quantity = instance_hours;
        c.list_unit_price_usd = list_usd_per_hour;
        c.effective_unit_price_usd = effective_usd_per_hour;
        c.effective_cost_usd = o.expected_cost_usd * share;
        // The list cost scales the effective one by the list/effective ratio, so a spot
        // overhead or a block's unused hours carry over to it.
        c.list_cost_usd = effective_usd_per_hour > 0
                              ? c.effective_cost_usd * list_usd_per_hour / effective_usd_per_hour
                              : 0;
        c.accelerator_hours = instance_hours * o.offering->accelerator_count;
        c.cost_usd_p10 = o.cost_usd_p10 * share;
        c.cost_usd_p90 = o.cost_usd_p90 * share;
    };
    if (type == PriceType::kCapacityBlock) {
        ForecastCharge c = Base(o, IsoDateFromDays(start_day).substr(0, 7), ChargeKind::kCompute);
        c.category = ChargeCategoryKind::kPurchase;
        fill(c, o.billed_hours * o.nodes, 1.0);
        out.push_back(std::move(c));
        return;
    }
    const bool committed = type == PriceType::kCommit1y || type == PriceType::kCommit3y;
    const double hours = committed ? o.billed_hours : o.expected_wall_clock_hours;
    if (hours <= 0) return;
    for (const MonthShare& m : SplitHoursByMonth(start_day, hours)) {
        ForecastCharge c = Base(o, m.month, ChargeKind::kCompute);
        fill(c, m.hours * o.nodes, m.hours / hours);
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

std::vector<ForecastCharge> ForecastServing(const InferencePlanOption& option,
                                            const std::string& first_month,
                                            double list_usd_per_hour, int months) {
    std::vector<ForecastCharge> out;
    auto day = DaysFromIsoDate(first_month + "-01");
    if (!day || option.offering == nullptr) return out;
    const double effective_usd_per_hour = option.offering->price.usd_per_hour;
    for (int i = 0; i < months; ++i) {
        const std::string month = IsoDateFromDays(*day).substr(0, 7);
        auto [start, end] = MonthBounds(month);
        auto next = DaysFromIsoDate(end);
        if (!next) break;
        const double instance_hours = static_cast<double>(*next - *day) * 24.0 * option.nodes;
        ForecastCharge c;
        c.period_start = start;
        c.period_end = end;
        c.offering = option.offering;
        c.nodes = option.nodes;
        c.pricing_quantity = instance_hours;
        c.list_unit_price_usd = list_usd_per_hour;
        c.effective_unit_price_usd = effective_usd_per_hour;
        c.list_cost_usd = instance_hours * list_usd_per_hour;
        c.effective_cost_usd = instance_hours * effective_usd_per_hour;
        c.accelerator_hours = instance_hours * option.offering->accelerator_count;
        out.push_back(std::move(c));
        day = next;
    }
    return out;
}

std::vector<ForecastCharge> ForecastTraining(const TrainingPlan& plan,
                                             const TrainingPlanRequest& request,
                                             double list_usd_per_hour) {
    std::vector<ForecastCharge> out;
    if (!plan.recommendation || !plan.budget) return out;
    auto start_day = DaysFromIsoDate(plan.budget->start_date);
    if (!start_day) return out;
    AddCompute(*plan.recommendation, *start_day, list_usd_per_hour, out);
    AddData(*plan.recommendation, *plan.budget, request, *start_day, out);
    return out;
}

}  // namespace gpucost::pricing::plan
