// Stage 5 of a training plan: the summaries over the options that meet every constraint,
// the requested page, and when none does, which constraints bind and by how much.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "pricing/plan/field_checker.hpp"
#include "pricing/plan/training_stages.hpp"

namespace gpucost::pricing::plan::training_stages {
namespace {

std::string Money(double usd) { return UsdText(usd); }

std::string ValueText(const std::string& constraint, double value) {
    return constraint == "budget_usd" ? Money(value) : Fixed(value, 1) + " h";
}

// For each violated constraint: the best value among options that meet every other
// constraint (or among all options when none does).
std::vector<BindingConstraint> Binding(const std::vector<TrainingPlanOption>& options) {
    std::map<std::string, BindingConstraint> out;
    for (const TrainingPlanOption& o : options) {
        for (const ConstraintViolation& v : o.violations) {
            const bool only_this = o.violations.size() == 1;
            auto [it, fresh] = out.try_emplace(v.constraint);
            BindingConstraint& b = it->second;
            const bool better = fresh || (only_this && !b.others_met) ||
                                (only_this == b.others_met && v.value < b.best_value);
            if (better) {
                b.constraint = v.constraint;
                b.limit = v.limit;
                b.best_value = v.value;
                b.others_met = only_this;
            }
        }
    }
    std::vector<BindingConstraint> list;
    for (auto& [name, b] : out) {
        b.shortfall = b.best_value - b.limit;
        const bool time = name == "deadline_hours";
        const std::string subject =
            std::string(time ? "the fastest option" : "the cheapest option") +
            (b.others_met ? " that meets every other constraint" : "");
        b.message = name + " " + ValueText(name, b.limit) + ": " + subject +
                    (time ? " takes " : " costs ") + ValueText(name, b.best_value) + ", " +
                    ValueText(name, b.shortfall) + " over (" +
                    (b.shortfall > 10 * b.limit
                         ? Fixed(b.best_value / b.limit, 0) + " times the limit)"
                         : Fixed(100.0 * b.shortfall / b.limit, 1) + "% more)");
        list.push_back(b);
    }
    return list;
}

}  // namespace

void Rank(const TrainingPlanRequest& request, std::vector<TrainingPlanOption> options,
          TrainingPlan& plan) {
    std::vector<TrainingPlanOption> feasible;
    std::vector<TrainingPlanOption> infeasible;
    for (auto& o : options) {
        (o.Feasible() ? feasible : infeasible).push_back(std::move(o));
    }
    plan.feasible_count = feasible.size();
    plan.infeasible_count = infeasible.size();

    for (const auto& o : feasible) {
        if (!plan.cheapest || Before(o, *plan.cheapest, TrainingPlanSort::kExpectedCost)) {
            plan.cheapest = o;
        }
        if (!plan.fastest || Before(o, *plan.fastest, TrainingPlanSort::kTime)) {
            plan.fastest = o;
        }
    }

    // Pareto front: walk from fastest (ties: cheaper first); keep each option cheaper than
    // every faster one.
    std::vector<const TrainingPlanOption*> by_time;
    by_time.reserve(feasible.size());
    for (const auto& o : feasible) {
        by_time.push_back(&o);
    }
    std::sort(by_time.begin(), by_time.end(), [](const auto* a, const auto* b) {
        return Before(*a, *b, TrainingPlanSort::kTime);
    });
    double cheapest_so_far = INFINITY;
    for (const auto* o : by_time) {
        if (o->expected_cost_usd < cheapest_so_far) {
            cheapest_so_far = o->expected_cost_usd;
            plan.pareto_front.push_back(*o);
        }
    }

    std::map<std::string, const TrainingPlanOption*> per_provider;
    for (const auto& o : feasible) {
        auto& best = per_provider[o.offering->provider];
        if (best == nullptr || Before(o, *best, TrainingPlanSort::kExpectedCost)) {
            best = &o;
        }
    }
    for (const auto& [provider, o] : per_provider) {
        plan.best_by_provider.push_back(*o);
    }
    std::sort(plan.best_by_provider.begin(), plan.best_by_provider.end(),
              [](const auto& a, const auto& b) {
                  return Before(a, b, TrainingPlanSort::kExpectedCost);
              });

    if (feasible.empty()) {
        plan.binding_constraints = Binding(infeasible);
    }

    // The page: feasible options in `sort` order, then (when asked) the rest in that order.
    const TrainingPlanSort sort = request.sort;
    auto in_order = [sort](const auto& a, const auto& b) { return Before(a, b, sort); };
    std::sort(feasible.begin(), feasible.end(), in_order);
    std::vector<TrainingPlanOption>& listed = feasible;
    if (request.include_infeasible) {
        std::sort(infeasible.begin(), infeasible.end(), in_order);
        listed.insert(listed.end(), std::make_move_iterator(infeasible.begin()),
                      std::make_move_iterator(infeasible.end()));
    }
    plan.total_count = listed.size();
    const std::size_t end = std::min(listed.size(), request.offset + request.limit);
    if (request.offset < end) {
        plan.options.assign(listed.begin() + static_cast<std::ptrdiff_t>(request.offset),
                            listed.begin() + static_cast<std::ptrdiff_t>(end));
    }
}

}  // namespace gpucost::pricing::plan::training_stages
