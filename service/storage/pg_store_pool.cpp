#include "service/storage/pg_store.hpp"

#include <mutex>

#include "service/log.hpp"
#include "service/storage/pg_connection.hpp"

#include "service/storage/pg_store_lease.hpp"

// PgStore's connection pool: leases of the connections writes and scenario calls use.
namespace gpucost::storage {

pricing::Result<std::unique_ptr<PgStore::Lease>> PgStore::Checkout() {
    std::size_t slot = 0;
    bool needs_connect = false;
    {
        std::unique_lock<std::mutex> lock(pool_mutex_);
        if (!pool_cv_.wait_for(lock, options_.checkout_timeout,
                               [this] { return !free_slots_.empty(); })) {
            return Unavailable("all database connections are busy; retry shortly");
        }
        slot = free_slots_.back();
        needs_connect = !pool_[slot];
        if (needs_connect && std::chrono::steady_clock::now() < next_connect_at_) {
            // The slot stays free (it was not taken); fail fast while the backoff runs.
            return Unavailable(
                "the database is unreachable; retrying the connection in the "
                "background");
        }
        free_slots_.pop_back();
    }
    auto lease = std::make_unique<Lease>(*this, slot);
    if (needs_connect) {
        try {
            auto conn = Connect(options_.database_url);
            std::lock_guard<std::mutex> lock(pool_mutex_);
            pool_[slot] = std::move(conn);
            connect_backoff_ = std::chrono::milliseconds(0);
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(pool_mutex_);
            connect_backoff_ =
                std::clamp(connect_backoff_ * 2, options_.reconnect_min, options_.reconnect_max);
            next_connect_at_ = std::chrono::steady_clock::now() + connect_backoff_;
            return Unavailable("the database is unreachable; retry later");
        }
    }
    return lease;
}

// Connects the pool's idle, closed slots on the refresher's thread, so that a write takes a
// connection that is already open: while the database is reachable a request waits on
// neither a name lookup nor a connect (a container network's DNS can miss queries for
// seconds while containers join it).
void PgStore::FillPool() {
    for (;;) {
        std::size_t slot = 0;
        {
            std::lock_guard<std::mutex> lock(pool_mutex_);
            auto closed = std::find_if(free_slots_.begin(), free_slots_.end(),
                                       [this](std::size_t s) { return !pool_[s]; });
            if (closed == free_slots_.end()) {
                return;
            }
            slot = *closed;
            free_slots_.erase(closed);
        }
        std::unique_ptr<pqxx::connection> conn;
        try {
            conn = Connect(options_.database_url);
        } catch (const std::exception& e) {
            log::Debug("pool connection not opened ahead", {{"error", e.what()}});
        }
        const bool opened = conn != nullptr;
        {
            std::lock_guard<std::mutex> lock(pool_mutex_);
            pool_[slot] = std::move(conn);
            free_slots_.push_back(slot);
        }
        pool_cv_.notify_one();
        if (!opened) {
            return;
        }
    }
}

}  // namespace gpucost::storage
