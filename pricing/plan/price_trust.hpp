#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/error.hpp"
#include "pricing/offering.hpp"

namespace gpucost::pricing::plan {

// The prices a plan trusts (constraints.verified_only, constraints.max_price_age_days): one
// rule and one wording for training and inference plans. `today_days` is today as days since
// the epoch (DaysFromIsoDate), parsed once per plan; without it no price is too old.
struct PriceTrust {
    bool verified_only = false;
    std::optional<double> max_price_age_days;
    std::optional<long long> today_days;
};

// Why a plan with `trust` leaves `o` out: the skipped reason ("price_not_usable" for a price
// that is not finite or outside 0 to kMaxUsdPerHour, whatever `trust` says; "unverified_price";
// "price_too_old") and an example naming the offering; nullopt when its price is trusted.
struct Distrust {
    const char* reason;
    std::string example;
};
[[nodiscard]] std::optional<Distrust> DistrustedPrice(const Offering& o, const PriceTrust& trust);

// Warnings about a shown option's price, in the same words for every plan: older than
// `max_age_days` (its age `age_days` from its as_of to today), dated by estimate, unverified.
[[nodiscard]] std::vector<std::string> PriceWarnings(const Offering& o,
                                                     std::optional<long long> age_days,
                                                     double max_age_days);

// "stale price (confirmed 40 days ago, over aws's 30-day bound)": a price older than its
// provider's staleness bound (price_age.hpp), in the same words for every plan.
[[nodiscard]] std::string StalePriceText(const Offering& o, std::optional<long long> age_days);

// The warning on best_by_provider[index] when a provider's best has a stale price: none of its
// options with a price that is not stale `meets` ("meets every constraint", "meets the targets").
[[nodiscard]] FieldError StaleBestWarning(std::size_t index, const Offering& o,
                                          std::optional<long long> age_days,
                                          std::string_view meets);

}  // namespace gpucost::pricing::plan
