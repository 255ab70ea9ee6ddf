#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucost::pricing {

// How an offering is bought. Names are the API strings.
enum class PriceType { kOnDemand, kSpot, kCommit1y, kCommit3y, kCapacityBlock };
// How many there are: the most a list of price types needs to name.
inline constexpr std::size_t kPriceTypeCount =
    static_cast<std::size_t>(PriceType::kCapacityBlock) + 1;

// "on_demand", "spot", "commit_1y", "commit_3y", "capacity_block".
std::string_view PriceTypeName(PriceType type);
std::optional<PriceType> ParsePriceType(std::string_view name);

// A cloud or marketplace we carry prices for.
struct Provider {
    std::string id;    // "aws"
    std::string name;  // "AWS"
    std::string kind;  // hyperscaler | neocloud | marketplace
};

// Every provider the catalog may contain, in display order.
const std::vector<Provider>& KnownProviders();
const Provider* FindProvider(std::string_view id);

// AWS Spot Advisor interruption-frequency bucket (share of spot instances interrupted in a
// month). Bounds are spotinfo's: <5% (0..5], 5-10% (5..11], 10-15% (11..16], 15-20% (16..22],
// >20% (22..100].
struct SpotInterruptionBucket {
    std::string label;  // "<5%"
    double min_percent_per_month = 0;
    double max_percent_per_month = 0;
};
std::optional<SpotInterruptionBucket> ParseSpotInterruptionBucket(std::string_view label);

// The highest hourly price of one offering that the catalog takes from any writer (the price
// routes, the CSV catalog, `gpucost import`): far above any instance sold, far below where a
// plan's products of hours and prices stop being finite.
inline constexpr double kMaxUsdPerHour = 1'000'000;

// Whether `usd_per_hour` can be a catalog price: finite and from 0 to kMaxUsdPerHour. NaN,
// infinities and negatives are refused where prices are written and left out where they are
// ranked, so none can be the cheapest.
bool IsUsableUsdPerHour(double usd_per_hour);

// One observed price of an offering, with provenance. `as_of` is an ISO date (YYYY-MM-DD);
// `as_of_estimated` is true when the source was undated and the date was inferred (see
// schema/seed/README.md). Unverified observations are served only when nothing verified exists.
struct PriceObservation {
    double usd_per_hour = 0;  // whole offering (all accelerator_count accelerators)
    std::string as_of;
    bool as_of_estimated = false;
    std::string source;
    bool verified = false;
    std::string notes;
};

// A thing one can rent: an instance type in a region under one price type. `price` is the
// current price (see SelectCurrentPrice); `superseded_prices` are the other observations,
// newest first, kept for provenance.
struct Offering {
    std::string id;
    std::string provider;  // Provider::id
    std::string instance_type;
    std::string accelerator;  // Accelerator::id
    int accelerator_count = 1;
    std::optional<double> accelerator_memory_gb;
    std::optional<double> vcpus;
    std::optional<double> ram_gib;
    std::string interconnect;
    std::optional<double> scale_out_gbit_per_s;
    std::string region;
    PriceType price_type = PriceType::kOnDemand;
    std::optional<SpotInterruptionBucket> spot_interruption;
    std::string notes;
    PriceObservation price;
    std::vector<PriceObservation> superseded_prices;

    // price.usd_per_hour / accelerator_count.
    double UsdPerAcceleratorHour() const {
        return price.usd_per_hour / static_cast<double>(accelerator_count);
    }
};

// Picks the observation that is served as current: the most recent verified one; when none
// is verified, the most recent unverified one. "Most recent" compares as_of; on equal dates
// a dated observation beats an estimated one, then the earlier observation in the input wins.
// REQUIRES: !observations.empty(). Returns the index into `observations`.
std::size_t SelectCurrentPrice(const std::vector<PriceObservation>& observations);

}  // namespace gpucost::pricing
