#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"

namespace gpucost::http {

// Port between the HTTP handlers and a writable catalog (PostgreSQL mode). Implemented in
// service/storage/, wired in service/main.cpp; absent (null) in embedded mode, where writes
// answer 503. Snapshot reads (Current, At, History, Authenticate) come from memory and keep
// working while the database is down; writes and scenario calls need the database.

// Microseconds since 1970-01-01T00:00:00Z.
using TimestampUs = std::int64_t;

// read: the key's team's things; admin: also writes them (and the shared catalog); org
// (finance): reads every team's books, scenarios and actual spend, writes nothing.
enum class KeyScope { kRead, kAdmin, kOrg };
std::string_view KeyScopeName(KeyScope scope);  // "read" | "admin" | "org"

// Every key belongs to a team (schema/migrations/008_teams.sql); keys issued before teams, and
// keys issued without --team, belong to this one.
inline constexpr char kDefaultTeam[] = "default";

// Who is calling: the API key that authenticated the request.
struct Principal {
    std::int64_t key_id = 0;
    std::string name;
    std::string prefix;  // the non-secret part of the key, safe to log
    KeyScope scope = KeyScope::kRead;
    // The stored price book a plan made with this key is priced with when it names none
    // (docs/database.md, "A team key's default book"); empty: list prices.
    std::string default_price_book;
    std::string team = kDefaultTeam;  // the team that owns what this key writes
};

// Whether `caller` (none: no key sent) reads what team `owner` owns: a key of that team, or an
// org key (docs/database.md, "Teams and who reads what").
inline bool ReadsTeam(const std::optional<Principal>& caller, std::string_view owner) {
    return caller && (caller->scope == KeyScope::kOrg || caller->team == owner);
}

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

// Body, status and ETag of a write's answer. Stored with the Idempotency-Key in the same
// transaction as the write, so that a retry replays it byte for byte.
struct StoredResponse {
    int status = 200;
    std::string body;
    std::string etag;
    bool replayed = false;
};

// The answer of a delete: 204, no body (recorded with the Idempotency-Key as any other).
inline StoredResponse DeletedAnswer() {
    return {204, "", "", false};
}

struct WriteRequest {
    Principal principal;
    std::string idempotency_key;  // empty: none sent
    std::string request_hash;     // fingerprint of method, path and body
    std::optional<std::string> if_match;
};

struct NewPrice {
    double usd_per_hour = 0;
    std::string as_of;  // YYYY-MM-DD of the observation
    bool as_of_estimated = false;
    std::string source;
    bool verified = true;
    std::string notes;
};

// One price of a batch write (CatalogStore::PutPrices).
struct PriceUpdate {
    std::string offering_id;
    NewPrice price;
};

// Error.field of a failed If-Match check (the handlers answer 412 for it).
inline constexpr char kIfMatchField[] = "If-Match";

struct StoreHealth {
    bool database_connected = false;
    std::int64_t revision = 0;
    double snapshot_age_s = 0;  // since the snapshot was last confirmed current
    // Empty while the database schema is at this binary's version (checked at start and with
    // every periodic refresh); otherwise what differs, in words without hosts or credentials.
    std::string schema_problem;
};

// A training scenario's progress: tokens trained so far (billions) and when (PUT
// /v1/scenarios/{id}/progress; docs/billing.md).
struct ScenarioProgress {
    double tokens_done_b = 0;
    TimestampUs as_of_us = 0;
};

struct Scenario {
    std::int64_t id = 0;
    std::string name;
    std::string plan_kind;  // which plan endpoint evaluates it
    std::string request_json;
    std::string saved_result_json;
    std::int64_t catalog_revision = 0;  // deprecated: catalog_version names it (0.2.0)
    // The catalog version the saved answer was computed on: that answer's own catalog_version.
    std::string catalog_version;
    std::vector<std::string> tags;  // in the order given
    TimestampUs created_at_us = 0;
    // The owner: the name of the key that saved it. Any key of that name in its team, or an
    // admin key of its team, may change or delete the scenario.
    std::string created_by;
    std::int64_t version = 1;  // bumped on every change; the ETag is ScenarioEtag(version)
    std::optional<ScenarioProgress> progress;  // none recorded yet
    std::string team = kDefaultTeam;           // the owning team: its saver's
    // The saved request carries a price book (stored, a key's default, or inline) or
    // `calibration`: only keys that ReadsTeam(team) read it (schema/migrations/008_teams.sql).
    bool confidential = false;
    // SaveScenario only: this is the scenario an earlier request with the same Idempotency-Key
    // saved (nothing new was saved).
    bool replayed = false;
};

// Strong entity tag of a scenario version: "\"s<version>\"".
std::string ScenarioEtag(std::int64_t version);

// Error.field of a change refused because the caller is neither the scenario's owner nor an
// admin (kFailedPrecondition with this field: the handlers answer 403).
inline constexpr char kOwnerField[] = "owner";

// GET /v1/scenarios filters; empty: any.
struct ScenarioFilter {
    std::string plan_kind;
    std::string tag;
    std::string created_by;  // key name
    // Who lists: none (anonymous) sees the scenarios that are not confidential; a key also its
    // own team's; an org key every scenario.
    std::optional<Principal> reader;
};

struct ScenarioPage {
    std::vector<Scenario> items;   // by id, after the cursor, at most the limit asked for
    std::int64_t total_count = 0;  // every scenario the filter matches, cursor aside
};

// PATCH /v1/scenarios/{id}: members absent stay as they are.
struct ScenarioChange {
    std::optional<std::string> name;
    std::optional<std::vector<std::string>> tags;
    std::optional<ScenarioProgress> progress;  // PUT /v1/scenarios/{id}/progress
};

class CatalogStore {
public:
    CatalogStore() = default;
    virtual ~CatalogStore() = default;
    CatalogStore(const CatalogStore&) = delete;
    CatalogStore& operator=(const CatalogStore&) = delete;
    CatalogStore(CatalogStore&&) = delete;
    CatalogStore& operator=(CatalogStore&&) = delete;

    using HistoryEncoder = std::function<StoredResponse(const OfferingHistory&)>;
    using CreatedEncoder = std::function<StoredResponse(const std::vector<OfferingHistory>&)>;

    // The current snapshot (never null).
    virtual std::shared_ptr<const pricing::Catalog> Current() const = 0;
    // The catalog as it was served at `at`: each offering with the price valid then;
    // offerings without a valid price then are absent.
    [[nodiscard]] virtual pricing::Result<std::shared_ptr<const pricing::Catalog>> At(
        TimestampUs at) const = 0;
    // kNotFound for an unknown offering id.
    [[nodiscard]] virtual pricing::Result<OfferingHistory> History(std::string_view id) const = 0;
    virtual StoreHealth Health() const = 0;
    // The key's principal, or nullopt for an unknown, malformed or revoked key.
    virtual std::optional<Principal> Authenticate(std::string_view key) const = 0;

    // Writes. Each runs in one transaction with the Idempotency-Key record; kUnavailable
    // when the database cannot be reached (or the commit outcome is unknown), kNotFound,
    // kFailedPrecondition (409; field kIfMatchField: 412), kInvalidArgument (422).
    [[nodiscard]] virtual pricing::Result<StoredResponse> PutPrice(
        const WriteRequest& request, std::string_view id, const NewPrice& price,
        const HistoryEncoder& encode) = 0;
    // Several prices in one write, all or nothing, each placed by the same rule as PutPrice
    // (several for one offering apply in order): what `gpucost import` writes. No If-Match.
    // `encode` gets the histories of the offerings changed, in the order first named.
    // The default applies PutPrice one by one (not atomic); PgStore overrides it with one
    // transaction and one change notification.
    using HistoriesEncoder = std::function<StoredResponse(const std::vector<OfferingHistory>&)>;
    [[nodiscard]] virtual pricing::Result<StoredResponse> PutPrices(
        const WriteRequest& request, const std::vector<PriceUpdate>& prices,
        const HistoriesEncoder& encode) {
        std::vector<OfferingHistory> changed;
        for (const PriceUpdate& p : prices) {
            auto put = PutPrice(request, p.offering_id, p.price,
                                [](const OfferingHistory&) { return StoredResponse{}; });
            if (!put.ok()) {
                return put.error();
            }
        }
        for (const PriceUpdate& p : prices) {
            if (std::none_of(changed.begin(), changed.end(), [&](const OfferingHistory& h) {
                    return h.offering.id == p.offering_id;
                })) {
                if (auto h = History(p.offering_id); h.ok()) {
                    changed.push_back(std::move(h).value());
                }
            }
        }
        return encode(changed);
    }
    // Offerings carry their first price in `price`.
    [[nodiscard]] virtual pricing::Result<StoredResponse> CreateOfferings(
        const WriteRequest& request, const std::vector<pricing::Offering>& offerings,
        const CreatedEncoder& encode) = 0;
    [[nodiscard]] virtual pricing::Result<StoredResponse> RetireOffering(
        const WriteRequest& request, std::string_view id, const HistoryEncoder& encode) = 0;

    // Saves `draft` by request.principal. With an Idempotency-Key, a retry of the same request
    // (request_hash) returns the scenario saved the first time (replayed), a different request
    // with that key is kInvalidArgument on field Idempotency-Key.
    [[nodiscard]] virtual pricing::Result<Scenario> SaveScenario(const WriteRequest& request,
                                                                 const Scenario& draft) = 0;
    [[nodiscard]] virtual pricing::Result<std::vector<Scenario>> ListScenarios(
        std::size_t limit, std::int64_t after_id) = 0;
    [[nodiscard]] virtual pricing::Result<Scenario> GetScenario(std::int64_t id) = 0;
    // One page of the scenarios `filter` matches (limit of them after `after_id`, by id), with
    // the count of all it matches.
    [[nodiscard]] virtual pricing::Result<ScenarioPage> FindScenarios(const ScenarioFilter& filter,
                                                                      std::size_t limit,
                                                                      std::int64_t after_id) = 0;
    // Changes, or deletes, scenario `id` for request.principal, in one transaction: kNotFound
    // for an unknown id or a confidential scenario of another team; kFailedPrecondition on
    // kOwnerField when the principal is of another team, or neither an admin nor of the
    // owner's name (403), on kIfMatchField when request.if_match names
    // another version (412). The change bumps the version and answers the scenario after it,
    // as `encode` answers it; the delete answers DeletedAnswer(). Both with the
    // Idempotency-Key protocol of the catalog writes: a retry of the same request is answered
    // the recorded answer (replayed) before the If-Match or the owner is judged again.
    using ScenarioEncoder = std::function<StoredResponse(const Scenario&)>;
    [[nodiscard]] virtual pricing::Result<StoredResponse> UpdateScenario(
        const WriteRequest& request, std::int64_t id, const ScenarioChange& change,
        const ScenarioEncoder& encode) = 0;
    [[nodiscard]] virtual pricing::Result<StoredResponse> DeleteScenario(
        const WriteRequest& request, std::int64_t id) = 0;
};

}  // namespace gpucost::http
