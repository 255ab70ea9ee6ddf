#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/offering.hpp"
#include "pricing/offering_list.hpp"

namespace gpucost::pricing {

// Prices older than this many days are counted apart (older_than_90_days; a quarter: providers
// reprice GPU instances several times a year, e.g. AWS's June-2025 P4/P5 cut of up to 45%).
// Whether a price is stale is its provider's bound (kStalenessBounds).
inline constexpr int kStalePriceDays = 90;
// Older than this, a price predates at least two quarterly repricings.
inline constexpr int kVeryStalePriceDays = 180;

// How long a provider's price stays current without its source confirming it again (a sync,
// an import or a dated source; the price's as_of). Older, a price is `stale`: shown with its
// age, counted in /v1/catalog, and left out of a plan's recommendation unless the request
// sets include_stale. Declared once here; docs/prices.md ("Stale prices") repeats the table.
struct StalenessBound {
    std::string_view provider;
    int stale_after_days;
    std::string_view why;
};
// Providers not in the table (a price book's own rows, a provider added later).
inline constexpr int kDefaultStaleAfterDays = 30;
inline constexpr std::array<StalenessBound, 7> kStalenessBounds{{
    {"aws", 30,
     "list prices change by announcement (the June-2025 P4/P5 cut of up to 45 %) and the "
     "price list offer files are republished within days; a month-old price may already "
     "predate one"},
    {"gcp", 30,
     "Cloud Billing Catalog SKUs change by announcement; GCP changes spot prices at most "
     "once a month"},
    {"azure", 30, "Retail Prices API rows change by announcement, as AWS's do"},
    {"coreweave", 30, "a published list page that changes with new hardware generations"},
    {"lambda", 7, "a single public price list that changes without announcement as capacity moves"},
    {"runpod", 7, "marketplace-style per-GPU prices that move with supply week to week"},
    {"vastai", 7,
     "a live marketplace of host-set listings (peers re-read it every 10 minutes); the "
     "catalog keeps a median, which moves within days"},
}};

// The days after which `provider`'s prices are stale (kDefaultStaleAfterDays if unlisted).
[[nodiscard]] int StaleAfterDays(std::string_view provider);

// A current price's standing on a day: confirmed within its provider's bound (`current`),
// within it but dated by estimate because its source is undated (`estimated_date`: never
// called current), or older than the bound (`stale`).
enum class PriceState { kCurrent, kEstimatedDate, kStale };
[[nodiscard]] const char* PriceStateName(PriceState state);
// `age_days` from the price's as_of to today; unknown (nullopt) is judged by the date alone.
[[nodiscard]] PriceState StateOfPrice(const Offering& o, std::optional<long long> age_days);

// Stale prices of one provider on `today`.
struct ProviderStaleness {
    std::string provider;
    int stale_after_days = kDefaultStaleAfterDays;
    std::size_t current_price_count = 0;
    std::size_t stale_count = 0;
    long oldest_age_days = 0;  // the provider's least recently confirmed price
};

// How old the current prices of a catalog are on `today`.
struct PriceAges {
    std::string today;                     // YYYY-MM-DD the ages are counted to
    std::size_t current_price_count = 0;   // one per offering
    std::size_t older_than_90_days = 0;    // as_of more than kStalePriceDays before today
    std::size_t older_than_180_days = 0;   // more than kVeryStalePriceDays
    std::size_t estimated_date_count = 0;  // as_of_estimated: the source was undated
    std::size_t unverified_count = 0;
    std::size_t stale_count = 0;                 // older than their provider's StaleAfterDays
    std::vector<ProviderStaleness> by_provider;  // by provider id
};

// Counts over each offering's current price. Dates that do not parse count as neither old nor
// new (the loader rejects them anyway).
PriceAges SummarizePriceAges(const OfferingList& offerings, std::string_view today);

// Days from `from` to `to` (both YYYY-MM-DD); nullopt when either is not a date.
std::optional<long> DaysBetween(std::string_view from, std::string_view to);

}  // namespace gpucost::pricing
