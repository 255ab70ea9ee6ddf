#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"
#include "service/ports/principal.hpp"
#include "service/ports/scenario_store.hpp"
#include "service/ports/write_request.hpp"

namespace gpucost::ports {

// The writable catalog (PostgreSQL mode), as four small ports the routes take as they need:
// CatalogReads, CatalogWrites, KeyAuthenticator (principal.hpp) and StoreHealthProbe, plus
// ScenarioStore (scenario_store.hpp). Implemented by storage::PgStore and MemoryCatalogStore,
// wired in service/main.cpp; absent (null) in embedded mode, where writes answer 503. Snapshot
// reads (Current, At, History, Authenticate) come from memory and keep working while the
// database is down; writes and scenario calls need the database.

// One price row with the interval during which it was the served price:
// [valid_from_us, valid_to_us); no valid_to_us = current. An empty interval means the
// observation was recorded but never served.
struct PriceInterval {
    std::int64_t id = 0;
    pricing::PriceObservation observation;
    TimestampUs valid_from_us = 0;
    std::optional<TimestampUs> valid_to_us;
    TimestampUs recorded_at_us = 0;
};

// An offering with every price it ever had. `offering.price` is the current price, or the
// last served one when the offering is retired.
struct OfferingHistory {
    pricing::Offering offering;
    std::int64_t version = 1;  // bumped on every write; the ETag is derived from it
    // The catalog version this state of the offering belongs to: the served snapshot's for a
    // read, the revision the write makes for a write's answer ("pg-r8").
    std::string catalog_version;
    std::optional<TimestampUs> retired_at_us;
    std::vector<PriceInterval> prices;  // by valid_from, then id
};

// Strong entity tag of an offering version: "\"v<version>\"".
std::string OfferingEtag(std::int64_t version);

struct NewPrice {
    double usd_per_hour = 0;
    std::string as_of;  // YYYY-MM-DD of the observation
    bool as_of_estimated = false;
    std::string source;
    bool verified = true;
    std::string notes;
};

// One price of a batch write (CatalogWrites::PutPrices).
struct PriceUpdate {
    std::string offering_id;
    NewPrice price;
};

struct StoreHealth {
    bool database_connected = false;
    std::int64_t revision = 0;
    double snapshot_age_s = 0;  // since the snapshot was last confirmed current
    // Empty while the database schema is at this binary's version (checked at start and with
    // every periodic refresh); otherwise what differs, in words without hosts or credentials.
    std::string schema_problem;
};

// The reads port: the served catalog, as it is and as it was.
class CatalogReads {
public:
    CatalogReads() = default;
    virtual ~CatalogReads() = default;
    CatalogReads(const CatalogReads&) = delete;
    CatalogReads& operator=(const CatalogReads&) = delete;
    CatalogReads(CatalogReads&&) = delete;
    CatalogReads& operator=(CatalogReads&&) = delete;

    // The current snapshot (never null).
    virtual std::shared_ptr<const pricing::Catalog> Current() const = 0;
    // The catalog as it was served at `at`: each offering with the price valid then;
    // offerings without a valid price then are absent.
    [[nodiscard]] virtual pricing::Result<std::shared_ptr<const pricing::Catalog>> At(
        TimestampUs at) const = 0;
    // kNotFound for an unknown offering id.
    [[nodiscard]] virtual pricing::Result<OfferingHistory> History(std::string_view id) const = 0;
};

// The writes port: prices and offerings. Each write runs in one transaction with the
// Idempotency-Key record; kUnavailable when the database cannot be reached (or the commit
// outcome is unknown), kNotFound, kFailedPrecondition (409; field kIfMatchField: 412),
// kInvalidArgument (422).
class CatalogWrites {
public:
    CatalogWrites() = default;
    virtual ~CatalogWrites() = default;
    CatalogWrites(const CatalogWrites&) = delete;
    CatalogWrites& operator=(const CatalogWrites&) = delete;
    CatalogWrites(CatalogWrites&&) = delete;
    CatalogWrites& operator=(CatalogWrites&&) = delete;

    using HistoryEncoder = std::function<StoredResponse(const OfferingHistory&)>;
    using HistoriesEncoder = std::function<StoredResponse(const std::vector<OfferingHistory>&)>;
    using CreatedEncoder = HistoriesEncoder;

    [[nodiscard]] virtual pricing::Result<StoredResponse> PutPrice(
        const WriteRequest& request, std::string_view id, const NewPrice& price,
        const HistoryEncoder& encode) = 0;
    // Several prices in one write, all or nothing, each placed by the same rule as PutPrice
    // (several for one offering apply in order): what `gpucost import` writes. No If-Match.
    // `encode` gets the histories of the offerings changed, in the order first named; one
    // change notification.
    [[nodiscard]] virtual pricing::Result<StoredResponse> PutPrices(
        const WriteRequest& request, const std::vector<PriceUpdate>& prices,
        const HistoriesEncoder& encode) = 0;
    // Offerings carry their first price in `price`.
    [[nodiscard]] virtual pricing::Result<StoredResponse> CreateOfferings(
        const WriteRequest& request, const std::vector<pricing::Offering>& offerings,
        const CreatedEncoder& encode) = 0;
    [[nodiscard]] virtual pricing::Result<StoredResponse> RetireOffering(
        const WriteRequest& request, std::string_view id, const HistoryEncoder& encode) = 0;
};

// The health port: whether the database answers, and how fresh the snapshot is.
class StoreHealthProbe {
public:
    StoreHealthProbe() = default;
    virtual ~StoreHealthProbe() = default;
    StoreHealthProbe(const StoreHealthProbe&) = delete;
    StoreHealthProbe& operator=(const StoreHealthProbe&) = delete;
    StoreHealthProbe(StoreHealthProbe&&) = delete;
    StoreHealthProbe& operator=(StoreHealthProbe&&) = delete;

    virtual StoreHealth Health() const = 0;
};

// Everything one database holds for the catalog: what an adapter implements and
// service/main.cpp hands out, each route taking only the ports it uses.
class CatalogStore : public CatalogReads,
                     public CatalogWrites,
                     public KeyAuthenticator,
                     public StoreHealthProbe,
                     public ScenarioStore {};

}  // namespace gpucost::ports
