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
#include "service/http/catalog_store.hpp"
#include "service/storage/catalog_history.hpp"

namespace gpucost::storage {

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
// whole catalog history (loaded at Open, reloaded when catalog_state.revision changes:
// LISTEN/NOTIFY plus a periodic check); writes go through a small connection pool, one
// transaction each, serialised on the catalog_state row lock. Thread-safe.
class PgStore final : public http::CatalogStore {
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
    pricing::Result<std::shared_ptr<const pricing::Catalog>> At(http::TimestampUs at) const override;
    pricing::Result<http::OfferingHistory> History(std::string_view id) const override;
    http::StoreHealth Health() const override;
    std::optional<http::Principal> Authenticate(std::string_view key) const override;

    pricing::Result<http::StoredResponse> PutPrice(const http::WriteRequest& request,
                                                   std::string_view id, const http::NewPrice& price,
                                                   const HistoryEncoder& encode) override;
    pricing::Result<http::StoredResponse> CreateOfferings(
        const http::WriteRequest& request, const std::vector<pricing::Offering>& offerings,
        const CreatedEncoder& encode) override;
    pricing::Result<http::StoredResponse> RetireOffering(const http::WriteRequest& request,
                                                         std::string_view id,
                                                         const HistoryEncoder& encode) override;

    pricing::Result<http::Scenario> SaveScenario(const http::WriteRequest& request,
                                                 const http::Scenario& draft) override;
    pricing::Result<std::vector<http::Scenario>> ListScenarios(std::size_t limit,
                                                               std::int64_t after_id) override;
    pricing::Result<http::Scenario> GetScenario(std::int64_t id) override;

    // Revision of the snapshot being served.
    std::int64_t Revision() const;
    // Blocks until the snapshot has at least `revision` or `timeout` passes; true if reached.
    bool WaitForRevision(std::int64_t revision, std::chrono::milliseconds timeout) const;

private:
    explicit PgStore(PgStoreOptions options);

    struct Snapshot {
        std::shared_ptr<const CatalogHistory> history;
        std::shared_ptr<const pricing::InMemoryCatalog> current;
    };

    // A pooled connection, returned on destruction (dropped if it broke).
    class Lease;
    pricing::Result<std::unique_ptr<Lease>> Checkout();

    // Runs `body` in a transaction that holds the catalog_state lock, with the
    // Idempotency-Key protocol, retries and in-doubt handling; bumps the revision when the
    // body succeeds.
    using WriteBody = std::function<pricing::Result<http::StoredResponse>(
        pqxx::work& tx, http::TimestampUs now_us)>;
    pricing::Result<http::StoredResponse> RunWrite(const http::WriteRequest& request,
                                                   const WriteBody& body);
    // Runs a read or a single-statement write on a pooled connection (no retry).
    template <typename T>
    pricing::Result<T> RunSimple(const std::function<pricing::Result<T>(pqxx::connection&)>& body);

    pricing::Status Reload(pqxx::connection& conn);
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
