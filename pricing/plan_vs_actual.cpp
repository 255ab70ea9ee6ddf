#include "pricing/plan_vs_actual.hpp"

#include <cmath>
#include <set>

#include "pricing/field_checker.hpp"
#include "pricing/money.hpp"
#include "pricing/usd_sum.hpp"

namespace gpucost::pricing {
namespace {

// Whole cents added as whole cents: a total of months is their sum to the cent.
double AddCents(double a, double b) {
    return FromCents(ToCents(a) + ToCents(b));
}

void Add(SpendFigures& total, const SpendFigures& part) {
    total.accelerator_hours += part.accelerator_hours;
    total.effective_cost = AddCents(total.effective_cost, part.effective_cost);
    total.list_cost = AddCents(total.list_cost, part.list_cost);
}

SpendFigures InCents(SpendFigures f) {
    f.effective_cost = RoundToCents(f.effective_cost);
    f.list_cost = RoundToCents(f.list_cost);
    return f;
}

std::string Money(double value, const std::string& currency) {
    return (value < 0 ? "-" : "") + Fixed(std::fabs(value), 2) + " " + currency;
}

std::string Percent(double part, double whole) {
    if (whole == 0) return "n/a";
    double p = 100 * part / whole;
    return (p >= 0 ? "+" : "") + Fixed(p, 1) + " %";
}

std::string Explain(const PlanVsActual& r, const std::string& currency) {
    const double planned = r.planned.effective_cost;
    std::string out = "Actual spend " + Money(r.actual.effective_cost, currency) + " against " +
                      Money(planned, currency) + " planned: a gap of " + Money(r.gap, currency) +
                      " (" + Percent(r.gap, planned) + "). ";
    if (planned > 0 && std::fabs(r.gap) <= kOnPlanFraction * planned) {
        return out + "On plan.";
    }
    out += "Quantity: " + Fixed(r.actual.accelerator_hours, 1) + " accelerator-hours against " +
           Fixed(r.planned.accelerator_hours, 1) + " planned (" +
           Percent(r.actual.accelerator_hours - r.planned.accelerator_hours,
                   r.planned.accelerator_hours) +
           "), " + Money(r.quantity_effect, currency) + " of the gap. ";
    out += "Price: " + Fixed(r.actual.EffectivePerAcceleratorHour(), 4) + " " + currency +
           " paid per accelerator-hour against " +
           Fixed(r.planned.EffectivePerAcceleratorHour(), 4) + " planned (" +
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
        MonthComparison c{m, {}, {}, {}};
        if (auto it = planned_by_month.find(m); it != planned_by_month.end())
            c.planned = InCents(it->second);
        if (auto it = actual_by_month.find(m); it != actual_by_month.end()) {
            c.actual = InCents(it->second);
        }
        c.split = SplitGap(c.planned, c.actual);
        Add(r.planned, c.planned);
        Add(r.actual, c.actual);
        r.months.push_back(std::move(c));
    }
    const GapSplit total = SplitGap(r.planned, r.actual);
    r.gap = total.gap;
    r.price_effect = total.price_effect;
    r.quantity_effect = total.quantity_effect;
    r.explanation = Explain(r, currency);
    return r;
}

GapSplit SplitGap(const SpendFigures& planned, const SpendFigures& actual) {
    GapSplit s;
    const long long gap_cents = ToCents(actual.effective_cost) - ToCents(planned.effective_cost);
    s.gap = FromCents(gap_cents);
    // Without actual hours there is no actual price: the whole gap is quantity.
    if (actual.accelerator_hours <= 0) {
        s.quantity_effect = s.gap;
        return s;
    }
    const double planned_price = planned.EffectivePerAcceleratorHour();
    const double actual_price = actual.EffectivePerAcceleratorHour();
    // The price effect to the cent; the quantity effect is the rest of the gap, so the two add
    // up to it exactly.
    const long long price_cents =
        ToCents((actual_price - planned_price) * planned.accelerator_hours);
    s.price_effect = FromCents(price_cents);
    s.quantity_effect = FromCents(gap_cents - price_cents);
    return s;
}

std::map<std::string, SpendFigures> PlannedAcceleratorSpend(
    const std::vector<plan::ForecastCharge>& charges) {
    struct Sums {
        double accelerator_hours = 0;
        UsdSum effective_cost;
        UsdSum list_cost;
    };
    std::map<std::string, Sums> sums;
    for (const plan::ForecastCharge& c : charges) {
        if (c.kind != plan::ChargeKind::kCompute) continue;
        Sums& s = sums[c.period_start.substr(0, 7)];
        s.accelerator_hours += c.accelerator_hours;
        s.effective_cost.Add(c.effective_cost_usd);
        s.list_cost.Add(c.list_cost_usd);
    }
    std::map<std::string, SpendFigures> by_month;
    for (const auto& [month, s] : sums) {
        by_month[month] = {s.accelerator_hours, s.effective_cost.RoundedToCents(),
                           s.list_cost.RoundedToCents()};
    }
    return by_month;
}

std::optional<ImpliedSpeed> ImpliedSpeedOf(double tokens_done_b, double tokens_planned_b,
                                           double planned_accelerator_hours,
                                           double actual_accelerator_hours) {
    if (tokens_done_b <= 0 || tokens_planned_b <= 0 || planned_accelerator_hours <= 0 ||
        actual_accelerator_hours <= 0) {
        return std::nullopt;
    }
    ImpliedSpeed s;
    s.tokens_done_b = tokens_done_b;
    s.tokens_planned_b = tokens_planned_b;
    s.estimated_accelerator_hours = planned_accelerator_hours * tokens_done_b / tokens_planned_b;
    s.actual_accelerator_hours = actual_accelerator_hours;
    s.actual_to_estimated_hours_ratio = actual_accelerator_hours / s.estimated_accelerator_hours;
    return s;
}

double CombinedHoursRatio(const std::vector<ImpliedSpeed>& speeds) {
    double actual = 0;
    double estimated = 0;
    for (const ImpliedSpeed& s : speeds) {
        actual += s.actual_accelerator_hours;
        estimated += s.estimated_accelerator_hours;
    }
    return estimated > 0 ? actual / estimated : 1.0;
}

std::optional<PlanToDate> CompareToDate(const PlanVsActual& comparison,
                                        const std::string& through_month) {
    if (through_month.empty()) return std::nullopt;
    PlanToDate out;
    out.through_month = through_month;
    UsdSum planned;
    UsdSum actual;
    for (const MonthComparison& m : comparison.months) {
        if (m.month > through_month) break;  // ascending; YYYY-MM orders as text
        ++out.months;
        planned.Add(RoundToCents(m.planned.effective_cost));
        actual.Add(RoundToCents(m.actual.effective_cost));
    }
    out.planned = planned.RoundedToCents();
    out.actual = actual.RoundedToCents();
    out.gap = RoundToCents(out.actual - out.planned);
    if (out.planned > 0) out.gap_fraction = out.gap / out.planned;
    return out;
}

std::map<std::string, SpendFigures> MonthsThrough(
    const std::map<std::string, SpendFigures>& by_month, const std::string& through_month) {
    std::map<std::string, SpendFigures> out;
    for (const auto& [month, figures] : by_month) {
        if (month <= through_month) out.emplace(month, figures);  // YYYY-MM orders as text
    }
    return out;
}

std::optional<RunRateReforecast> ReforecastFromRunRate(const PlanVsActual& comparison,
                                                       const std::string& through_month) {
    const std::optional<PlanToDate> to_date = CompareToDate(comparison, through_month);
    if (!to_date) return std::nullopt;
    RunRateReforecast out;
    out.through_month = through_month;
    out.planned_to_date = to_date->planned;
    out.actual_to_date = to_date->actual;
    if (to_date->planned > 0) out.run_rate = to_date->actual / to_date->planned;
    UsdSum planned_total;
    UsdSum planned_remaining;
    UsdSum reforecast_remaining;
    for (const MonthComparison& m : comparison.months) {
        const double planned = RoundToCents(m.planned.effective_cost);
        planned_total.Add(planned);
        if (m.month <= through_month) continue;
        const double reforecast = RoundToCents(planned * out.run_rate.value_or(1.0));
        out.remaining.push_back({m.month, planned, reforecast});
        planned_remaining.Add(planned);
        reforecast_remaining.Add(reforecast);
    }
    out.planned_remaining = planned_remaining.RoundedToCents();
    out.reforecast_remaining = reforecast_remaining.RoundedToCents();
    out.planned_total = planned_total.RoundedToCents();
    out.reforecast_total = RoundToCents(out.actual_to_date + out.reforecast_remaining);
    return out;
}

std::map<std::string, std::vector<PriceClassSpend>> PlannedPriceClasses(
    const std::vector<plan::ForecastCharge>& charges) {
    std::map<std::string, std::vector<PriceClassSpend>> out;
    for (const plan::ForecastCharge& c : charges) {
        if (c.kind != plan::ChargeKind::kCompute) continue;
        const bool committed =
            c.owned || (c.offering != nullptr && (c.offering->price_type == PriceType::kCommit1y ||
                                                  c.offering->price_type == PriceType::kCommit3y));
        out[c.period_start.substr(0, 7)].push_back(
            {committed, c.offering != nullptr ? c.offering->id : std::string(), c.accelerator_hours,
             c.effective_cost_usd});
    }
    return out;
}

namespace {

// Accelerator-hours and cost by class: "committed", or the offering's id.
struct ClassTotals {
    std::map<std::string, SpendFigures> by_class;
    double hours = 0;
    double cost = 0;
};

ClassTotals TotalsByClass(const std::vector<PriceClassSpend>& spend) {
    ClassTotals out;
    for (const PriceClassSpend& c : spend) {
        SpendFigures& f =
            out.by_class[c.committed ? std::string("committed") : "offering:" + c.offering_id];
        f.accelerator_hours += c.accelerator_hours;
        f.effective_cost += c.effective_cost;
        out.hours += c.accelerator_hours;
        out.cost += c.effective_cost;
    }
    return out;
}

// Hours at reference prices, committed apart from those billed as used.
struct Mix {
    double committed_hours = 0;
    double committed_cost = 0;
    double other_hours = 0;
    double other_cost = 0;
    void Add(const std::string& name, double hours, double price) {
        if (name == "committed") {
            committed_hours += hours;
            committed_cost += hours * price;
        } else {
            other_hours += hours;
            other_cost += hours * price;
        }
    }
    double OtherPrice() const { return other_hours > 0 ? other_cost / other_hours : 0; }
};

}  // namespace

PriceEffectSplit SplitPriceEffect(const std::vector<PriceClassSpend>& planned,
                                  const std::vector<PriceClassSpend>& actual, double price_effect) {
    const ClassTotals p = TotalsByClass(planned);
    const ClassTotals a = TotalsByClass(actual);
    if (p.hours <= 0 || a.hours <= 0) return {};
    // Each class's reference price: the plan's, else (a class only the bill has) the bill's.
    auto reference = [&](const std::string& name) {
        auto it = p.by_class.find(name);
        if (it != p.by_class.end() && it->second.accelerator_hours > 0) {
            return it->second.EffectivePerAcceleratorHour();
        }
        return a.by_class.at(name).EffectivePerAcceleratorHour();
    };
    double rate = 0;
    Mix actual_mix;  // the bill's hours at the reference prices
    for (const auto& [name, f] : a.by_class) {
        if (f.accelerator_hours <= 0) continue;
        rate += p.hours * (f.accelerator_hours / a.hours) *
                (f.EffectivePerAcceleratorHour() - reference(name));
        actual_mix.Add(name, f.accelerator_hours, reference(name));
    }
    Mix planned_mix;
    for (const auto& [name, f] : p.by_class) {
        if (f.accelerator_hours > 0) planned_mix.Add(name, f.accelerator_hours, reference(name));
    }
    const double planned_share = planned_mix.committed_hours / p.hours;
    const double actual_share = actual_mix.committed_hours / a.hours;
    // The price of the hours billed as used: the plan's, else the bill's (then no mix).
    const double planned_other =
        planned_mix.other_hours > 0 ? planned_mix.OtherPrice() : actual_mix.OtherPrice();
    const double committed_price =
        planned_mix.committed_hours > 0
            ? planned_mix.committed_cost / planned_mix.committed_hours
            : (actual_mix.committed_hours > 0
                   ? actual_mix.committed_cost / actual_mix.committed_hours
                   : 0.0);
    PriceEffectSplit out;
    out.rate = RoundToCents(rate);
    out.coverage =
        RoundToCents(p.hours * (actual_share - planned_share) * (committed_price - planned_other));
    out.mix = RoundToCents(price_effect - out.rate - out.coverage);
    return out;
}

}  // namespace gpucost::pricing
