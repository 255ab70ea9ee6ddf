#include "pricing/plan/inference_explain.hpp"

#include <algorithm>
#include <cmath>

#include "pricing/calendar.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/plan/price_trust.hpp"
#include "pricing/plan/training_plan.hpp"

namespace gpucost::pricing::plan {

namespace {

std::string InferenceOptionText(const InferencePlanOption& o, const Catalog& catalog) {
    const Offering& f = *o.offering;
    auto a = catalog.FindAccelerator(f.accelerator);
    return std::to_string(o.nodes) + " x " + f.instance_type + " (" +
           std::to_string(o.total_accelerators) + " x " +
           (a.ok() ? a.value().name : f.accelerator) + ", " +
           std::string(PriceTypeName(f.price_type)) + ", " + f.provider + " " + f.region + ")";
}

// The planner lists options cheapest monthly first; the first of each provider is its best,
// the first whose price is not stale when the provider has one (unless stale prices rank as
// any other), as the recommendation is chosen. Kept cheapest first.
std::vector<InferencePlanOption> BestByProvider(const InferencePlan& plan, bool include_stale) {
    std::vector<std::size_t> best;  // positions in plan.options
    for (std::size_t i = 0; i < plan.options.size(); ++i) {
        const InferencePlanOption& o = plan.options[i];
        auto same = std::find_if(best.begin(), best.end(), [&](std::size_t b) {
            return plan.options[b].offering->provider == o.offering->provider;
        });
        if (same == best.end()) {
            best.push_back(i);
        } else if (!include_stale && plan.options[*same].price_state == PriceState::kStale &&
                   o.price_state != PriceState::kStale) {
            *same = i;
        }
    }
    std::sort(best.begin(), best.end());
    std::vector<InferencePlanOption> out;
    out.reserve(best.size());
    for (std::size_t i : best) out.push_back(plan.options[i]);
    return out;
}

// What buying a serving option's price type commits to, beyond the monthly figure.
std::string ServingTermsText(const Offering& o) {
    switch (o.price_type) {
        case PriceType::kSpot:
            return " It runs on spot capacity, which the provider can reclaim at short notice.";
        case PriceType::kCapacityBlock:
            return " It is a capacity block: reserved for a fixed span and paid in full when "
                   "reserved, so a service needs the next block booked before this one ends.";
        case PriceType::kCommit1y:
        case PriceType::kCommit3y:
            return " The commitment bills every hour of its " +
                   std::string(o.price_type == PriceType::kCommit1y ? "1-year" : "3-year") +
                   " term whether the service needs it or not.";
        case PriceType::kOnDemand:
            break;
    }
    return "";
}

// Options left out because they need more instances than one customer can get: large traffic
// is then served only by splitting it, which the planner does not do.
std::string OverCapacityText(const InferencePlan& plan) {
    for (const auto& [reason, count] : plan.skipped) {
        if (reason == "over_capacity" && count > 0) {
            const bool one = count == 1;
            return " " + std::to_string(count) + (one ? " option" : " options") +
                   " needing more instances than one customer can get of " +
                   (one ? "its offering was" : "their offering were") +
                   " left out (skipped.over_capacity); traffic this large can be split across "
                   "offerings or regions.";
        }
    }
    return "";
}

// Owned capacity covering the recommendation: its hours are paid already, so the plan ranks
// by the marginal bill; the fully loaded cost says what the fleet uses of the commitment.
std::string OwnedText(const InferencePlanOption& r) {
    if (!r.owned) return "";
    const ServingOwnedUse& u = *r.owned;
    std::string out = " Owned capacity (the price book's owned_capacity) covers " +
                      Fixed(u.instance_hours, 1) + " h of its " +
                      Fixed(u.window_instance_hours, 1) +
                      " instance-hours over the budget window at no marginal cost: it is paid "
                      "whether used or not.";
    out += u.instance_hours < u.window_instance_hours
               ? " The rest is paid at the effective price: " + UsdText(u.marginal_cost_usd) +
                     " marginal over the window"
               : " Marginal cost over the window: " + UsdText(u.marginal_cost_usd);
    out += " (" + UsdText(r.monthly_cost_usd) + " a month, ranked as such; " +
           UsdText(u.without_owned_monthly_cost_usd) + " a month and " +
           UsdText(u.without_owned_cost_usd) +
           " over the window without it); fully loaded with the owned hours at the "
           "commitment's rate, " +
           UsdText(u.FullyLoadedCostUsd()) + ".";
    return out;
}

// Why the recommended option `r` (the cheapest) wins, with the cheapest of another provider
// (from `best_by_provider`) for comparison.
std::string RecommendationText(const InferencePlan& plan, const InferencePlanOption& r,
                               const std::vector<InferencePlanOption>& best_by_provider,
                               const Catalog& catalog) {
    std::string text =
        "Recommended: " + InferenceOptionText(r, catalog) + " at " + UsdText(r.monthly_cost_usd) +
        " a month, " +
        (plan.total_count == 1 ? std::string("the only option")
                               : "the lowest of " + std::to_string(plan.total_count) + " options") +
        " meeting the latency targets: " + std::to_string(r.replicas) +
        (r.replicas == 1 ? " replica" : " replicas") + " of tensor parallel " +
        std::to_string(r.tensor_parallel) +
        (r.pipeline_parallel > 1
             ? " x pipeline parallel " + std::to_string(r.pipeline_parallel) +
                   " (each replica over " + std::to_string(r.instances_per_replica) + " instances)"
             : std::string()) +
        (r.expert_parallel > 1 ? " with expert parallel " + std::to_string(r.expert_parallel) +
                                     " (attention data parallel; each replica over " +
                                     std::to_string(r.instances_per_replica) + " instances)"
                               : std::string()) +
        " at batch " + std::to_string(r.batch_size) + ", " + Fixed(r.time_to_first_token_ms, 0) +
        " ms to first token, " + Fixed(r.inter_token_latency_ms, 1) + " ms between tokens, " +
        UsdText(r.usd_per_million_input_tokens, 4) + " / " +
        UsdText(r.usd_per_million_output_tokens, 4) + " per million input / output tokens.";
    const auto other =
        std::find_if(best_by_provider.begin(), best_by_provider.end(),
                     [&r](const auto& o) { return o.offering->provider != r.offering->provider; });
    if (other != best_by_provider.end()) {
        const auto& o = *other;
        // Owned capacity can make the recommendation cost nothing at the margin: no ratio then.
        text += " Cheapest from another provider: " + InferenceOptionText(o, catalog) + " at " +
                UsdText(o.monthly_cost_usd) + " a month" +
                (r.monthly_cost_usd > 0
                     ? " (" + SignedPercentText(o.monthly_cost_usd / r.monthly_cost_usd - 1.0) + ")"
                     : "");
        // Its provider may have no current price: the comparison says so (unless it is the
        // cheapest overall, passed over for it, which the stale sentence names).
        const bool named = o.offering == plan.options.front().offering;
        text += o.price_state == PriceState::kStale && !named
                    ? "; it has a " + StalePriceText(*o.offering, o.price_age_days) + "."
                    : ".";
    }
    if (r.savings_vs_api_fraction) {
        text += " Against the API price it " +
                std::string(*r.savings_vs_api_fraction >= 0 ? "saves " : "costs ") +
                Fixed(100.0 * std::fabs(*r.savings_vs_api_fraction), 1) +
                (*r.savings_vs_api_fraction >= 0 ? "%." : "% more.");
    }
    text += ServingTermsText(*r.offering);
    text += OwnedText(r);
    text += OverCapacityText(plan);
    const PriceObservation& price = r.offering->price;
    if (price.as_of_estimated || !price.verified) {
        text += " Its price is dated " + price.as_of +
                (price.as_of_estimated ? " (estimated)" : "") +
                (price.verified ? "" : ", unverified") +
                ": confirm it with the provider before committing budget.";
    }
    return text;
}

}  // namespace

// The cheapest option whose price is not stale, or the cheapest when none is (then the
// reasoning says so) or when stale prices may rank.
const InferencePlanOption& Recommended(const InferencePlan& plan, bool include_stale) {
    if (!include_stale) {
        for (const InferencePlanOption& o : plan.options) {
            if (o.price_state != PriceState::kStale) return o;
        }
    }
    return plan.options.front();
}

// Why the cheapest was passed over for its stale price, or that every price is stale.
std::string StaleText(const InferencePlan& plan, const InferencePlanOption& r, bool include_stale) {
    const InferencePlanOption& c = plan.options.front();
    auto stale = [](const InferencePlanOption& o) {
        return StalePriceText(*o.offering, o.price_age_days);
    };
    if (&c != &r) {
        return " The cheapest, " + c.offering->id + " at " + UsdText(c.monthly_cost_usd) +
               " a month, has a " + stale(c) + " (include_stale: true lets it rank first).";
    }
    if (!include_stale && r.price_state == PriceState::kStale) {
        return " No option with a price that is not stale meets the targets; it has a " + stale(r) +
               ": check the current price.";
    }
    return "";
}

InferenceRecommendation RecommendInference(const InferencePlan& plan, const Catalog& catalog,
                                           bool include_stale) {
    InferenceRecommendation answer;
    answer.best_by_provider = BestByProvider(plan, include_stale);
    if (plan.options.empty()) {
        answer.reasoning =
            "No offering can serve this traffic within the constraints and latency targets; "
            "see skipped and skipped_examples for why each was left out." +
            OverCapacityText(plan);
        return answer;
    }
    // Ages were set by StatePriceAges on these options.
    const InferencePlanOption& r = Recommended(plan, include_stale);
    answer.recommendation = r;
    answer.reasoning = RecommendationText(plan, r, answer.best_by_provider, catalog) +
                       StaleText(plan, r, include_stale);
    answer.price_warnings = PriceWarnings(*r.offering, r.price_age_days, kDefaultMaxPriceAgeDays);
    for (std::size_t i = 0; !include_stale && i < answer.best_by_provider.size(); ++i) {
        const InferencePlanOption& o = answer.best_by_provider[i];
        if (o.price_state != PriceState::kStale) continue;
        answer.stale_warnings.push_back(
            StaleBestWarning(i, *o.offering, o.price_age_days, "meets the targets"));
    }
    return answer;
}

void StatePriceAges(std::vector<InferencePlanOption>& options, const std::string& today_date) {
    const auto today = DaysFromIsoDate(today_date);
    for (auto& o : options) {
        const auto as_of = DaysFromIsoDate(o.offering->price.as_of);
        if (today && as_of) o.price_age_days = *today - *as_of;
        o.price_state = StateOfPrice(*o.offering, o.price_age_days);
    }
}

}  // namespace gpucost::pricing::plan
