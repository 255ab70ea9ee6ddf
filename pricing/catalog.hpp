#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"
#include "pricing/offering_list.hpp"

namespace gpucost::pricing {

// Provenance and size of a catalog snapshot.
struct CatalogInfo {
    std::string version;  // content hash of the data, stable across restarts
    std::string origin;   // "embedded" or the directory/database it came from
    std::size_t accelerator_count = 0;
    std::size_t offering_count = 0;
    std::size_t unverified_offering_count = 0;
    std::size_t price_observation_count = 0;
    std::string oldest_as_of;  // over current prices
    std::string newest_as_of;
};

// Per-provider summary over current prices.
struct ProviderSummary {
    Provider provider;
    std::size_t offering_count = 0;
    std::vector<std::pair<PriceType, std::size_t>> offerings_by_price_type;
    std::vector<std::string> accelerators;  // ids, sorted
    std::vector<std::string> regions;       // sorted
    std::string oldest_as_of;
    std::string newest_as_of;
};

// Ids (accelerators, offerings, providers, regions) are lowercase slugs and compare
// case-insensitively (docs/api.md): every lookup and filter uses this key.
inline std::string IdKey(std::string_view id) {
    std::string key(id);
    for (char& c : key) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return key;
}

// The catalog port: read access to accelerators and offerings. Implementations are
// immutable snapshots or decorators over one; every method is const and thread-safe.
class Catalog {
public:
    Catalog() = default;
    virtual ~Catalog() = default;
    Catalog(const Catalog&) = delete;
    Catalog& operator=(const Catalog&) = delete;
    Catalog(Catalog&&) = delete;
    Catalog& operator=(Catalog&&) = delete;

    // All accelerators, ordered by id.
    virtual const std::vector<Accelerator>& Accelerators() const = 0;
    // All offerings with their current price, ordered by id. A list that reads as a vector
    // of Offering and shares its offerings with the catalog's other versions.
    virtual const OfferingList& Offerings() const = 0;
    // kNotFound when no accelerator has this id (compared case-insensitively: IdKey).
    [[nodiscard]] virtual Result<Accelerator> FindAccelerator(std::string_view id) const = 0;
    // kNotFound when no offering has this id (compared case-insensitively: IdKey).
    [[nodiscard]] virtual Result<Offering> FindOffering(std::string_view id) const = 0;
    virtual CatalogInfo Describe() const = 0;
    // One entry per known provider that has at least one offering.
    virtual std::vector<ProviderSummary> Providers() const = 0;
};

}  // namespace gpucost::pricing
