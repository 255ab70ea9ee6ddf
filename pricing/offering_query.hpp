#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"
#include "pricing/region_table.hpp"

namespace gpucost::pricing {

// Fields offerings can be sorted by (API names in SortFieldName).
enum class OfferingSortField {
    kUsdPerAcceleratorHour,
    kUsdPerHour,
    kAcceleratorCount,
    kAcceleratorMemoryGb,
    kAsOf,
    kProvider,
    kId,
};

struct OfferingSort {
    OfferingSortField field = OfferingSortField::kUsdPerAcceleratorHour;
    bool descending = false;
};

// Parses "usd_per_hour" or "-usd_per_hour" (descending); nullopt for an unknown field.
std::optional<OfferingSort> ParseOfferingSort(const std::string& text);
std::string OfferingSortName(const OfferingSort& sort);

// Default and maximum page size of offering lists.
inline constexpr std::size_t kDefaultPageLimit = 50;
inline constexpr std::size_t kMaxPageLimit = 500;

// A filtered, sorted, paginated read of the offerings. Empty vectors mean "any". Values in
// one vector are alternatives (OR); different fields combine with AND. Numeric bounds are
// inclusive. Accelerator memory is per accelerator in GB; price per accelerator-hour in USD.
struct OfferingQuery {
    std::vector<std::string> providers;
    std::vector<std::string> accelerators;
    std::vector<PriceType> price_types;
    std::vector<std::string> regions;
    // Accelerator families (AcceleratorFamily: "h100" for every H100 variant).
    std::vector<std::string> accelerator_families;
    // Countries and continents (the region table says where each region is).
    Geography geography;
    // Where regions are; needed when `geography` names any place (none: nothing matches).
    const RegionTable* region_table = nullptr;
    std::optional<int> min_accelerator_count;
    std::optional<int> max_accelerator_count;
    std::optional<double> min_accelerator_memory_gb;
    std::optional<double> max_usd_per_accelerator_hour;
    std::optional<bool> verified;
    OfferingSort sort;
    std::size_t limit = kDefaultPageLimit;
    std::string cursor;  // opaque, from a previous page's next_cursor
    // The catalog version the listing runs on: a cursor carries the version its walk began on
    // and is refused on another (prices that changed between pages would move offerings
    // across page boundaries: listed twice or never).
    std::string catalog_version;

    // Range and consistency checks; reports every failing field (kInvalidArgument, field =
    // query parameter name).
    [[nodiscard]] Status Validate() const;
};

// The items point into the offerings the query ran over: keep those alive while using them
// (a listing copies nothing it does not encode).
struct OfferingPage {
    std::vector<const Offering*> items;
    std::size_t total_count = 0;  // matches across all pages
    std::optional<std::string> next_cursor;
};

// A digest of what selects and orders the rows: every filter and the sort, not the limit or
// the cursor. Alternatives are compared as sets (provider=aws,gcp equals provider=gcp,aws).
std::string OfferingQueryDigest(const OfferingQuery& query);

// Runs the query over `offerings`. Ordering is by the sort field, then by id, so pages are
// stable. The cursor encodes the query's digest, the catalog version and the last item's sort
// key and id; kInvalidArgument (field "cursor") when it is not one of ours, kMalformed when it
// was made for another query (other filters or sort), kFailedPrecondition when it was made on
// another catalog version (start again, or in database mode page with as_of fixed).
// REQUIRES: query.Validate() succeeded.
[[nodiscard]] Result<OfferingPage> QueryOfferings(const OfferingList& offerings,
                                                  const OfferingQuery& query);

}  // namespace gpucost::pricing
