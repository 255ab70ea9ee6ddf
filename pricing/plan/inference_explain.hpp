#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/plan/inference_plan.hpp"

namespace gpucost::pricing::plan {

// What an inference plan recommends, in the planner's words (as training_explain.cpp says it
// for training plans): the cheapest option, why, the cheapest per provider for comparison, and
// warnings about the recommended price.
struct InferenceRecommendation {
    // From every option planned: the cheapest per provider, cheapest first (its cheapest
    // whose price is not stale when it has one, unless `include_stale`).
    std::vector<InferencePlanOption> best_by_provider;
    std::optional<InferencePlanOption> recommendation;  // none when nothing qualifies
    std::string reasoning;
    std::vector<std::string> price_warnings;  // an old, estimated or unverified price
    // A provider's best named with a stale price (it has no other; never with include_stale),
    // each at /best_by_provider/N/offering.
    std::vector<FieldError> stale_warnings;
};

// `plan` holds every option planned, cheapest monthly first, their price ages set
// (StatePriceAges). The recommendation is the cheapest whose price is not stale when one is
// (any, with `include_stale`). The option texts name accelerators from `catalog`.
[[nodiscard]] InferenceRecommendation RecommendInference(const InferencePlan& plan,
                                                         const Catalog& catalog,
                                                         bool include_stale);

// Sets each option's price_age_days (whole days from its price's as_of to `today`,
// YYYY-MM-DD, as training options carry it) and price_state.
void StatePriceAges(std::vector<InferencePlanOption>& options, const std::string& today);

}  // namespace gpucost::pricing::plan
