// Stage 5 of a training plan: the summaries over the options that meet every constraint,
// the requested page, and when none does, which constraints bind and by how much.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "pricing/field_checker.hpp"
#include "pricing/plan/training_stages.hpp"

namespace gpucost::pricing::plan::training_stages {
namespace {

// A probability constraint is met from above; hours and dollars from below.
bool HigherIsBetter(const std::string& constraint) {
    return constraint == "deadline_confidence" || constraint == "budget_confidence";
}

std::string ValueText(const std::string& constraint, double value) {
    if (HigherIsBetter(constraint)) return Fixed(100.0 * value, 1) + "%";
    return constraint == "budget_usd" ? UsdText(value) : Fixed(value, 1) + " h";
}

std::string BindingMessage(const std::string& name, const BindingConstraint& b) {
    if (HigherIsBetter(name)) {
        const std::string goal =
            name == "budget_confidence" ? "stay within the budget" : "finish by the deadline";
        return name + " " + ValueText(name, b.limit) + ": the option most likely to " + goal +
               (b.others_met ? " that meets every other constraint" : "") +
               " does so with probability " + ValueText(name, b.best_value) + ", " +
               Fixed(100.0 * b.shortfall, 1) + " points short";
    }
    const bool time = name == "deadline_hours";
    const std::string subject = std::string(time ? "the fastest option" : "the cheapest option") +
                                (b.others_met ? " that meets every other constraint" : "");
    std::string relative;
    if (b.limit > 0) {
        relative = b.shortfall > 10 * b.limit
                       ? " (" + Fixed(b.best_value / b.limit, 0) + " times the limit)"
                       : " (" + Fixed(100.0 * b.shortfall / b.limit, 1) + "% more)";
    }
    return name + " " + ValueText(name, b.limit) + ": " + subject + (time ? " takes " : " costs ") +
           ValueText(name, b.best_value) + ", " + ValueText(name, b.shortfall) + " over" + relative;
}

// The first `count` options in `sort` order. Before() orders every pair of options (ties
// end at the offering id and node count), so the partial order of the page is the order a
// full sort gives; only the page is sorted.
std::vector<const TrainingPlanOption*> FirstInOrder(std::vector<const TrainingPlanOption*> order,
                                                    std::size_t count, TrainingPlanSort sort) {
    auto in_order = [sort](const auto* a, const auto* b) { return Before(*a, *b, sort); };
    if (count >= order.size()) {
        std::sort(order.begin(), order.end(), in_order);
        return order;
    }
    const auto middle = order.begin() + static_cast<std::ptrdiff_t>(count);
    std::partial_sort(order.begin(), middle, order.end(), in_order);
    order.erase(middle, order.end());
    return order;
}

// Of each set of options with equal expected hours, the first in time order (the cheapest,
// then the lowest id and node count). Offerings of one shape copied across regions share
// their hours, so at 20,000 offerings this is a few hundred of tens of thousands.
std::vector<const TrainingPlanOption*> FirstPerTime(
    const std::vector<const TrainingPlanOption*>& options) {
    std::unordered_map<double, std::size_t> index;  // hours -> position in `out`
    std::vector<const TrainingPlanOption*> out;
    for (const TrainingPlanOption* o : options) {
        auto [it, fresh] = index.try_emplace(o->expected_wall_clock_hours, out.size());
        if (fresh) {
            out.push_back(o);
        } else if (Before(*o, *out[it->second], TrainingPlanSort::kTime)) {
            out[it->second] = o;
        }
    }
    return out;
}

}  // namespace

BindingTally::BindingTally(const TrainingPlanRequest& request)
    : constraints_(request.constraints) {}

void BindingTally::Note(std::size_t slot, double limit, double value, bool only_this) {
    Slot& s = slots_[slot];
    if (!s.violated) {
        s.violated = true;
        s.limit = limit;
    }
    // Compared signed so that lower is better; turned back in Result.
    const double sign = slot == kConfidenceSlot || slot == kBudgetConfidenceSlot ? -1.0 : 1.0;
    if (only_this && (!s.others_met || sign * value < s.best_value)) {
        s.others_met = true;
        s.best_value = sign * value;
    }
}

void BindingTally::Add(const TrainingPlanOption& o) {
    const TrainingPlanConstraints& c = constraints_;
    const bool only_one = o.meets_deadline != o.within_budget;
    if (!o.meets_deadline) {
        if (o.expected_wall_clock_hours <= *c.deadline_hours) {
            Note(kConfidenceSlot, c.deadline_confidence.value_or(kDefaultDeadlineConfidence),
                 o.deadline_probability.value_or(0), only_one);
        } else {
            Note(kHoursSlot, *c.deadline_hours, o.expected_wall_clock_hours, only_one);
        }
    }
    if (!o.within_budget) {
        if (o.ExpectedTotalUsd() <= *c.budget_usd) {
            Note(kBudgetConfidenceSlot, c.budget_confidence.value_or(kDefaultBudgetConfidence),
                 o.budget_probability.value_or(0), only_one);
        } else {
            Note(kBudgetSlot, *c.budget_usd, o.ExpectedTotalUsd(), only_one);
        }
    }
    // What the option reaches on each constraint, whether it meets it or not, signed so that
    // lower is better (an option a bound cleared has no probability yet; it meets the
    // confidence).
    const std::array<double, 4> reached = {
        o.ExpectedTotalUsd(), o.within_budget ? -1.0 : -o.budget_probability.value_or(0),
        o.meets_deadline ? -1.0 : -o.deadline_probability.value_or(0), o.expected_wall_clock_hours};
    for (std::size_t k = 0; k < kNames.size(); ++k) {
        slots_[k].reached = std::min(slots_[k].reached, reached[k]);
    }
}

std::vector<BindingConstraint> BindingTally::Result() const {
    std::vector<BindingConstraint> list;
    for (std::size_t k = 0; k < kNames.size(); ++k) {  // in the names' order
        const Slot& s = slots_[k];
        if (!s.violated) continue;
        const std::string name = kNames[k];
        const double sign = HigherIsBetter(name) ? -1.0 : 1.0;
        BindingConstraint b;
        b.constraint = name;
        b.limit = s.limit;
        b.others_met = s.others_met;
        b.best_value = s.best_value;
        if (!b.others_met) {
            b.best_value = std::min(b.best_value, s.reached);
            // Met by some option: not binding alone.
            if (b.best_value <= sign * b.limit) continue;
        }
        b.best_value *= sign;
        b.shortfall = sign * (b.best_value - b.limit);
        b.message = BindingMessage(name, b);
        list.push_back(b);
    }
    return list;
}

bool TrustedPrice(const TrainingPlanOption& o, double max_price_age_days) {
    const PriceObservation& p = o.offering->price;
    return p.verified && !p.as_of_estimated &&
           (!o.price_age_days || static_cast<double>(*o.price_age_days) <= max_price_age_days);
}

void Rank(const TrainingPlanRequest& request, const std::vector<TrainingPlanOption>& options,
          TrainingPlan& plan, std::size_t infeasible_not_kept, const BindingTally& binding) {
    // The options stay where they are; the summaries and the page refer to them and copy
    // only what the plan returns.
    std::vector<const TrainingPlanOption*> feasible;
    std::vector<const TrainingPlanOption*> infeasible;
    for (const auto& o : options) {
        (o.Feasible() ? feasible : infeasible).push_back(&o);
    }
    plan.feasible_count = feasible.size();
    plan.infeasible_count = infeasible.size() + infeasible_not_kept;

    // A stale price is not served as the cheapest while a current one meets every
    // constraint, unless the request lets stale prices rank as any other (include_stale):
    // `cheapest` and each provider's best are the cheapest with a price that is not stale,
    // a stale one only where there is none (Explain warns of it).
    const auto ranks_first = [&request](const TrainingPlanOption& o) {
        return request.include_stale || o.price_state != PriceState::kStale;
    };
    const auto cheaper_pick = [&ranks_first](const TrainingPlanOption& o,
                                             const TrainingPlanOption* best) {
        if (best == nullptr) return true;
        if (ranks_first(o) != ranks_first(*best)) return ranks_first(o);
        return Before(o, *best, TrainingPlanSort::kExpectedCost);
    };
    const TrainingPlanOption* cheapest = nullptr;
    const TrainingPlanOption* cheapest_of_all = nullptr;
    const TrainingPlanOption* cheapest_trusted = nullptr;
    const TrainingPlanOption* fastest = nullptr;
    const double max_age = request.max_price_age_days.value_or(kDefaultMaxPriceAgeDays);
    for (const auto* o : feasible) {
        if (cheaper_pick(*o, cheapest)) cheapest = o;
        if (cheapest_of_all == nullptr ||
            Before(*o, *cheapest_of_all, TrainingPlanSort::kExpectedCost)) {
            cheapest_of_all = o;
        }
        if (TrustedPrice(*o, max_age) && ranks_first(*o) &&
            (cheapest_trusted == nullptr ||
             Before(*o, *cheapest_trusted, TrainingPlanSort::kExpectedCost))) {
            cheapest_trusted = o;
        }
        if (fastest == nullptr || Before(*o, *fastest, TrainingPlanSort::kTime)) {
            fastest = o;
        }
    }
    if (cheapest != nullptr) plan.cheapest = *cheapest;
    if (cheapest_of_all != cheapest) plan.cheaper_stale = *cheapest_of_all;
    if (cheapest_trusted != nullptr) plan.cheapest_trusted = *cheapest_trusted;
    if (fastest != nullptr) plan.fastest = *fastest;

    // Pareto front: walk from fastest (ties: cheaper first); keep each option cheaper than
    // every faster one. Of options with equal expected hours only the first in that order
    // can be kept (the others cost as much or more), so one per distinct time is sorted.
    std::vector<const TrainingPlanOption*> by_time = FirstPerTime(feasible);
    std::sort(by_time.begin(), by_time.end(),
              [](const auto* a, const auto* b) { return Before(*a, *b, TrainingPlanSort::kTime); });
    double cheapest_so_far = std::numeric_limits<double>::infinity();
    for (const auto* o : by_time) {
        if (o->ExpectedTotalUsd() < cheapest_so_far) {
            cheapest_so_far = o->ExpectedTotalUsd();
            plan.pareto_front.push_back(*o);
        }
    }

    std::map<std::string, const TrainingPlanOption*> per_provider;
    for (const auto* o : feasible) {
        auto& best = per_provider[o->offering->provider];
        if (cheaper_pick(*o, best)) best = o;
    }
    for (const auto& [provider, o] : per_provider) {
        plan.best_by_provider.push_back(*o);
    }
    std::sort(
        plan.best_by_provider.begin(), plan.best_by_provider.end(),
        [](const auto& a, const auto& b) { return Before(a, b, TrainingPlanSort::kExpectedCost); });

    if (feasible.empty()) {
        plan.binding_constraints = binding.Result();
    }

    // The page: feasible options in `sort` order, then (when asked) the rest in that order.
    plan.total_count = feasible.size() + (request.include_infeasible ? infeasible.size() : 0);
    const std::size_t end = std::min(plan.total_count, request.offset + request.limit);
    std::vector<const TrainingPlanOption*> page = FirstInOrder(feasible, end, request.sort);
    if (end > feasible.size()) {  // only with include_infeasible
        const std::vector<const TrainingPlanOption*> more =
            FirstInOrder(infeasible, end - feasible.size(), request.sort);
        page.insert(page.end(), more.begin(), more.end());
    }
    for (std::size_t i = request.offset; i < end; ++i) {
        plan.options.push_back(*page[i]);
        if (!page[i]->Feasible()) {
            ListViolations(request, plan.options.back());
        }
    }
}

}  // namespace gpucost::pricing::plan::training_stages
