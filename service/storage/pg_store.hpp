#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "pricing/error.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "service/ports/catalog_store.hpp"
#include "service/storage/catalog_history.hpp"

namespace gpucost::storage {

// How many as_of snapshots a replica keeps (each about the size of the current one).
inline constexpr std::size_t kAsOfCacheEntries = 2;

struct PgStoreOptions {
    std::string database_url;
    std::size_t pool_size = 4;  // connections for writes and scenarios
    // Fallback check of catalog_state.revision when no NOTIFY arrived (LISTEN/NOTIFY is the
    // fast path).
    std::chrono::milliseconds refresh_interval{1000};
    // Longest wait for a free pooled connection before a request answers 503.
    std::chrono::milliseconds checkout_timeout{500};
    // Whole-transaction attempts on serialization failure, deadlock or a connection lost
    // before COMMIT was sent.
    int max_write_attempts = 3;
    // Reconnect backoff: doubles from min to max after each failed attempt.
    std::chrono::milliseconds reconnect_min{100};
    std::chrono::milliseconds reconnect_max{2000};
};

// The writable catalog on PostgreSQL. Reads are served from an in-memory snapshot of the
// whole catalog history, loaded at Open. Each write's NOTIFY names the rows it changed and
// every replica applies exactly those (ApplyChange, PatchSnapshot); a full reload happens
// only for bulk changes (seed, import), after a missed notification (the periodic check of
// catalog_state.revision) or on reconnecting. Writes go through a small connection pool,
// one transaction each, serialised on the catalog_state row lock; a write returns the
// connection before it waits for its replica to serve it. `as_of` snapshots come from a
// small cache (kAsOfCacheEntries) keyed by the interval between change points. Thread-safe.
class PgStore final : public ports::CatalogStore {
public:
    // Connects, checks that the schema matches this binary (kFailedPrecondition when the
    // database is ahead, behind or altered), loads the first snapshot and starts the
    // refresher. kUnavailable when the database cannot be reached.
    [[nodiscard]] static pricing::Result<std::unique_ptr<PgStore>> Open(PgStoreOptions options);
    ~PgStore() override;
    PgStore(const PgStore&) = delete;
    PgStore& operator=(const PgStore&) = delete;
    PgStore(PgStore&&) = delete;
    PgStore& operator=(PgStore&&) = delete;

    std::shared_ptr<const pricing::Catalog> Current() const override;
    pricing::Result<std::shared_ptr<const pricing::Catalog>> At(
        ports::TimestampUs at) const override;
    pricing::Result<ports::OfferingHistory> History(std::string_view id) const override;
    ports::StoreHealth Health() const override;
    std::optional<ports::Principal> Authenticate(std::string_view key) const override;

    pricing::Result<ports::StoredResponse> PutPrice(const ports::WriteRequest& request,
                                                    std::string_view id,
                                                    const ports::NewPrice& price,
                                                    const HistoryEncoder& encode) override;
    pricing::Result<ports::StoredResponse> PutPrices(const ports::WriteRequest& request,
                                                     const std::vector<ports::PriceUpdate>& prices,
                                                     const HistoriesEncoder& encode) override;
    pricing::Result<ports::StoredResponse> CreateOfferings(
        const ports::WriteRequest& request, const std::vector<pricing::Offering>& offerings,
        const CreatedEncoder& encode) override;
    pricing::Result<ports::StoredResponse> RetireOffering(const ports::WriteRequest& request,
                                                          std::string_view id,
                                                          const HistoryEncoder& encode) override;

    pricing::Result<ports::Scenario> SaveScenario(const ports::WriteRequest& request,
                                                  const ports::Scenario& draft) override;
    pricing::Result<std::vector<ports::Scenario>> ListScenarios(std::size_t limit,
                                                                std::int64_t after_id) override;
    pricing::Result<ports::Scenario> GetScenario(std::int64_t id) override;
    pricing::Result<ports::ScenarioPage> FindScenarios(const ports::ScenarioFilter& filter,
                                                       std::size_t limit,
                                                       std::int64_t after_id) override;
    pricing::Result<ports::StoredResponse> UpdateScenario(const ports::WriteRequest& request,
                                                          std::int64_t id,
                                                          const ports::ScenarioChange& change,
                                                          const ScenarioEncoder& encode) override;
    pricing::Result<ports::StoredResponse> DeleteScenario(const ports::WriteRequest& request,
                                                          std::int64_t id) override;

    // Revision of the snapshot being served.
    std::int64_t Revision() const;
    // Blocks until the snapshot has at least `revision` or `timeout` passes; true if reached.
    bool WaitForRevision(std::int64_t revision, std::chrono::milliseconds timeout) const;

private:
    explicit PgStore(PgStoreOptions options);

    struct Snapshot {
        std::shared_ptr<const CatalogHistory> history;
        std::shared_ptr<const pricing::InMemoryCatalog> current;
        // ChangePoints(*history), computed on the first as_of read of this revision.
        mutable std::once_flag change_points_once;
        mutable std::vector<TimestampUs> change_points;
    };
    // An as_of snapshot shared by every instant between two change points of one revision.
    struct AsOfEntry {
        std::int64_t revision = 0;
        std::size_t interval = 0;  // count of change points at or before the instant
        std::shared_ptr<const pricing::InMemoryCatalog> catalog;
    };

    // A pooled connection, returned on destruction (dropped if it broke).
    class Lease;
    pricing::Result<std::unique_ptr<Lease>> Checkout();
    void FillPool();

    // Runs `body` in a transaction that holds the catalog_state lock, with the
    // Idempotency-Key protocol, retries and in-doubt handling; bumps the revision when the
    // body succeeds.
    // The body adds the ids of the offerings it changed to `changed` (the NOTIFY names them).
    using WriteBody = std::function<pricing::Result<ports::StoredResponse>(
        pqxx::work& tx, ports::TimestampUs now_us, CatalogChange& changed)>;
    pricing::Result<ports::StoredResponse> RunWrite(const ports::WriteRequest& request,
                                                    const WriteBody& body);
    // Waits (without a connection) until this replica serves `revision`, then answers.
    pricing::Result<ports::StoredResponse> AwaitOwnWrite(
        std::int64_t revision, pricing::Result<ports::StoredResponse> outcome) const;
    // Runs a read or a single-statement write on a pooled connection (no retry).
    template <typename T>
    pricing::Result<T> RunSimple(const std::function<pricing::Result<T>(pqxx::connection&)>& body);

    pricing::Status Reload(pqxx::connection& conn);
    // Applies the changes that NOTIFY payloads announced (in order): only the offerings and
    // keys they name are read; a gap in revisions or a bulk change reloads everything.
    void ApplyNotified(pqxx::connection& conn, const std::vector<std::string>& payloads);
    // The as_of snapshot for `at` of `snapshot`'s revision, from the cache or built.
    pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> AsOfCatalog(
        const Snapshot& snapshot, ports::TimestampUs at) const;
    void Install(std::shared_ptr<const CatalogHistory> history,
                 std::shared_ptr<const pricing::InMemoryCatalog> current);
    void RefresherLoop();
    void MarkDown(const std::string& error);
    // CheckSchema on `conn`; what differs becomes /readyz's schema_problem.
    void RecheckSchema(pqxx::connection& conn);
    std::shared_ptr<const Snapshot> Load() const;

    PgStoreOptions options_;

    mutable std::mutex snapshot_mutex_;
    mutable std::condition_variable snapshot_changed_;
    std::shared_ptr<const Snapshot> snapshot_;
    std::chrono::steady_clock::time_point confirmed_at_;  // guarded by snapshot_mutex_

    mutable std::mutex as_of_mutex_;
    mutable std::vector<AsOfEntry> as_of_cache_;  // most recently used last
    // One as_of build at a time: concurrent misses wait for it instead of each building a
    // copy of the catalog (what made RSS grow with the number of readers).
    mutable std::mutex as_of_build_mutex_;

    std::mutex pool_mutex_;
    std::condition_variable pool_cv_;
    std::vector<std::unique_ptr<pqxx::connection>> pool_;  // slot per connection; null = closed
    std::vector<std::size_t> free_slots_;
    std::chrono::steady_clock::time_point next_connect_at_{};  // guarded by pool_mutex_
    std::chrono::milliseconds connect_backoff_{0};             // guarded by pool_mutex_

    std::atomic<bool> connected_{false};
    // What /readyz reports about the schema (CheckSchema at start and on each periodic check);
    // empty while it is at this binary's version.
    mutable std::mutex schema_mutex_;
    std::string schema_problem_;

    std::atomic<bool> stop_{false};
    std::thread refresher_;
};

}  // namespace gpucost::storage
