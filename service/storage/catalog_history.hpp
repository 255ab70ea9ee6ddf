#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/error.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "service/http/catalog_store.hpp"

namespace gpucost::storage {

using http::OfferingHistory;
using http::PriceInterval;
using http::TimestampUs;

// An API key as the server keeps it in memory to authenticate requests: never the key.
struct KeyRecord {
    std::int64_t id = 0;
    std::string prefix;
    std::string salt;      // 16 raw bytes
    std::string key_hash;  // 32 raw bytes: SHA-256(salt || key)
    http::KeyScope scope = http::KeyScope::kRead;
    std::string name;
    bool revoked = false;
};

// Everything the database holds about the catalog at one revision, in memory. Pure data;
// loaded by history_loader, turned into snapshots by BuildSnapshot.
struct CatalogHistory {
    std::int64_t revision = 0;
    std::vector<pricing::Accelerator> accelerators;
    std::vector<OfferingHistory> offerings;  // ordered by id; prices by valid_from, id
    std::vector<KeyRecord> keys;
};

// The catalog served at `at`, or the current one when `at` is nullopt:
// * current: every offering that is not retired, priced by its open interval;
// * at t: every offering with a non-empty interval containing t, priced by it.
// Other observations recorded with valid_from <= t (all of them for current) become
// superseded_prices. kInternal when the data breaks the one-current-price rule.
[[nodiscard]] pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> BuildSnapshot(
    const CatalogHistory& history, std::optional<TimestampUs> at);

// Validity intervals for the seed observations of one offering, index-aligned with
// `observations`: each date on which the served price changes (by SelectCurrentPrice over
// the observations dated up to that day) starts an interval at that day's midnight UTC;
// the last served observation stays open (nullopt end); an observation never served gets
// the empty interval [its day, its day). REQUIRES: !observations.empty(), valid as_of dates.
std::vector<std::pair<TimestampUs, std::optional<TimestampUs>>> SeedIntervals(
    const std::vector<pricing::PriceObservation>& observations);

}  // namespace gpucost::storage
