#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/offering.hpp"
#include "pricing/offering_list.hpp"

namespace gpucost::pricing {

// A price older than this many days is stale (a quarter: providers reprice GPU instances
// several times a year, e.g. AWS's June-2025 P4/P5 cut of up to 45%).
inline constexpr int kStalePriceDays = 90;
// Older than this, a price predates at least two quarterly repricings.
inline constexpr int kVeryStalePriceDays = 180;

// How old the current prices of a catalog are on `today`.
struct PriceAges {
    std::string today;                     // YYYY-MM-DD the ages are counted to
    std::size_t current_price_count = 0;   // one per offering
    std::size_t older_than_90_days = 0;    // as_of more than kStalePriceDays before today
    std::size_t older_than_180_days = 0;   // more than kVeryStalePriceDays
    std::size_t estimated_date_count = 0;  // as_of_estimated: the source was undated
    std::size_t unverified_count = 0;
};

// Counts over each offering's current price. Dates that do not parse count as neither old nor
// new (the loader rejects them anyway).
PriceAges SummarizePriceAges(const OfferingList& offerings, std::string_view today);

// Days from `from` to `to` (both YYYY-MM-DD); nullopt when either is not a date.
std::optional<long> DaysBetween(std::string_view from, std::string_view to);

}  // namespace gpucost::pricing
