#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/error.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "service/ports/catalog_store.hpp"
#include "service/ports/seed_intervals.hpp"

namespace gpucost::storage {

using ports::OfferingHistory;
using ports::PriceInterval;
using ports::TimestampUs;

// An API key as the server keeps it in memory to authenticate requests: never the key.
struct KeyRecord {
    std::int64_t id = 0;
    std::string prefix;
    std::string salt;      // 16 raw bytes
    std::string key_hash;  // 32 raw bytes: SHA-256(salt || key)
    ports::KeyScope scope = ports::KeyScope::kRead;
    std::string name;
    bool revoked = false;
    std::string default_price_book;  // the key's default book id; empty: list prices
    std::string team = ports::kDefaultTeam;
};

// Everything the database holds about the catalog at one revision, in memory. Pure data;
// loaded by history_loader, turned into snapshots by BuildSnapshot. Offerings are shared
// between revisions: a write replaces the pointers of the offerings it changed and keeps
// the others (ApplyChange), so a new revision costs a pointer per offering, not a copy.
struct CatalogHistory {
    std::int64_t revision = 0;
    std::vector<pricing::Accelerator> accelerators;
    // ordered by id; prices by valid_from, id
    std::vector<std::shared_ptr<const OfferingHistory>> offerings;
    std::vector<KeyRecord> keys;
};

// The catalog version a revision is served as: "pg-r7".
std::string RevisionVersion(std::int64_t revision);

// The offering with `id`, or null.
const OfferingHistory* FindHistory(const CatalogHistory& history, std::string_view id);

// What one revision changed, as its NOTIFY payload names it, so that every replica applies
// exactly that to its snapshot instead of reloading the catalog.
struct CatalogChange {
    std::vector<std::string> offering_ids;  // offerings created, repriced or retired
    bool keys = false;                      // API keys created or revoked
    bool everything = false;                // unknown or bulk (seed, import): reload
};

// The NOTIFY payload for `revision`: "REV" alone means "reload everything" (what older
// binaries send, and what a change too large for one payload becomes); then one line per
// change: "k" for the keys, "o:ID" per offering.
std::string EncodeChange(std::int64_t revision, const CatalogChange& change);
// nullopt when the payload is not one (its revision unreadable).
std::optional<std::pair<std::int64_t, CatalogChange>> DecodeChange(std::string_view payload);

// The next revision: `base` with the offerings named in `change` replaced by `loaded` (their
// rows read after the change; an id missing from `loaded` no longer exists) and, when
// change.keys, the keys replaced by `keys`. Unchanged offerings are shared with `base`.
CatalogHistory ApplyChange(const CatalogHistory& base, std::int64_t revision,
                           const CatalogChange& change, std::vector<OfferingHistory> loaded,
                           std::vector<KeyRecord> keys);

// The current snapshot of `next` (ApplyChange's result) built from `base_current` (the
// snapshot of the revision before) by re-pricing only the offerings `change` names: the
// unchanged offerings are shared with `base_current` (InMemoryCatalog::Patch), never copied
// or re-derived from their history.
[[nodiscard]] pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> PatchSnapshot(
    const pricing::InMemoryCatalog& base_current, const CatalogHistory& next,
    const CatalogChange& change);

// Every instant at which some offering's snapshot at t can change (each valid_from and
// valid_to), ascending and unique. Two instants with the same count of change points at or
// before them have the same BuildSnapshot content (only the version string differs), which
// is what the as_of cache keys on.
std::vector<TimestampUs> ChangePoints(const CatalogHistory& history);

// The catalog served at `at`, or the current one when `at` is nullopt:
// * current: every offering that is not retired, priced by its open interval;
// * at t: every offering with a non-empty interval containing t, priced by it.
// Other observations recorded with valid_from <= t (all of them for current) become
// superseded_prices. kInternal when the data breaks the one-current-price rule.
[[nodiscard]] pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> BuildSnapshot(
    const CatalogHistory& history, std::optional<TimestampUs> at);

// The seed observations' validity intervals: the rule both stores share (service/ports/).
using ports::SeedIntervals;

// Where a new price observation goes in one offering's served timeline (PlacePrice).
struct PricePlacement {
    // The rule (SelectCurrentPrice; a tie goes to the new write) makes it current: the
    // current row closes at now and the new row is valid from now, open-ended.
    bool current = false;
    TimestampUs valid_from = 0;
    std::optional<TimestampUs> valid_to;  // nullopt exactly when current
    // Existing rows whose interval shrinks to make room, as (row id, new valid_to); a row
    // wholly covered gets the empty interval [valid_from, valid_from).
    std::vector<std::pair<std::int64_t, TimestampUs>> shortened;
};

// Places `price` (recorded at now_us) in `history`'s served timeline by the current-price
// rule, so that a back-dated observation never becomes current just by being written last
//. When it beats the current price it is current from now (no rewrite of what
// was served). Otherwise it takes over, from midnight UTC of its as_of day, every instant
// whose served row it beats, up to the first later row that beats it, and the rows in
// that span are shortened; when it beats nothing there it is recorded with an empty
// interval at its day. Rows are never removed. REQUIRES: a valid as_of date, history not
// retired.
PricePlacement PlacePrice(const OfferingHistory& history, const pricing::PriceObservation& price,
                          TimestampUs now_us);

// Applies `placement` to `history` in memory, with `row_id` for the new row: what a batch of
// writes does between two prices of the same offering.
void ApplyPlacement(OfferingHistory& history, const PricePlacement& placement,
                    const pricing::PriceObservation& price, std::int64_t row_id,
                    TimestampUs now_us);

}  // namespace gpucost::storage
