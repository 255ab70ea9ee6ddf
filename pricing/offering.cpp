#include "pricing/offering.hpp"

#include <array>
#include <cassert>
#include <cmath>

#include "pricing/csv.hpp"
#include "pricing/embedded_providers.hpp"

namespace gpucost::pricing {

std::string_view PriceTypeName(PriceType type) {
    switch (type) {
        case PriceType::kOnDemand:
            return "on_demand";
        case PriceType::kSpot:
            return "spot";
        case PriceType::kCommit1y:
            return "commit_1y";
        case PriceType::kCommit3y:
            return "commit_3y";
        case PriceType::kCapacityBlock:
            return "capacity_block";
    }
    return "on_demand";
}

std::optional<PriceType> ParsePriceType(std::string_view name) {
    constexpr std::array kTypes = {PriceType::kOnDemand, PriceType::kSpot, PriceType::kCommit1y,
                                   PriceType::kCommit3y, PriceType::kCapacityBlock};
    for (PriceType t : kTypes) {
        if (PriceTypeName(t) == name) {
            return t;
        }
    }
    return std::nullopt;
}

// The provider table is schema/seed/providers.csv, compiled in (pricing/CMakeLists.txt): a
// provider is added there, with its display name, and nowhere else in C++. The file is checked
// by its test; a malformed row would leave the list without it, never half a provider.
const std::vector<Provider>& KnownProviders() {
    static const std::vector<Provider> kProviders = [] {
        std::vector<Provider> providers;
        auto records = ParseCsv(embedded::kProvidersCsv, "providers.csv");
        if (!records.ok()) return providers;
        for (const CsvRecord& r : records.value()) {
            if (r.line == 1 || r.fields.size() != 3) continue;
            providers.push_back({r.fields[0], r.fields[1], r.fields[2]});
        }
        return providers;
    }();
    return kProviders;
}

const Provider* FindProvider(std::string_view id) {
    for (const Provider& p : KnownProviders()) {
        if (p.id == id) {
            return &p;
        }
    }
    return nullptr;
}

std::optional<SpotInterruptionBucket> ParseSpotInterruptionBucket(std::string_view label) {
    static const std::array<SpotInterruptionBucket, 5> kBuckets = {{
        {"<5%", 0, 5},
        {"5-10%", 5, 11},
        {"10-15%", 11, 16},
        {"15-20%", 16, 22},
        {">20%", 22, 100},
    }};
    for (const auto& b : kBuckets) {
        if (b.label == label) {
            return b;
        }
    }
    return std::nullopt;
}

std::size_t SelectCurrentPrice(const std::vector<PriceObservation>& observations) {
    assert(!observations.empty());
    std::size_t best = 0;
    auto better = [](const PriceObservation& a, const PriceObservation& b) {
        if (a.verified != b.verified) {
            return a.verified;
        }
        if (a.as_of != b.as_of) {
            return a.as_of > b.as_of;  // ISO dates order lexicographically
        }
        return !a.as_of_estimated && b.as_of_estimated;
    };
    for (std::size_t i = 1; i < observations.size(); ++i) {
        if (better(observations[i], observations[best])) {
            best = i;
        }
    }
    return best;
}

bool IsUsableUsdPerHour(double usd_per_hour) {
    // Written so that NaN, which compares false with everything, is refused.
    return std::isfinite(usd_per_hour) && usd_per_hour >= 0 && usd_per_hour <= kMaxUsdPerHour;
}

}  // namespace gpucost::pricing
