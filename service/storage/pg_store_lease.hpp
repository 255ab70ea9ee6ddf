#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "pricing/error.hpp"
#include "service/storage/pg_store.hpp"

// Private to PgStore's own files (pg_store_*.cpp): the pool's lease and the one error every
// part answers when the database cannot be reached.
namespace gpucost::storage {

class PgStore::Lease {
public:
    Lease(PgStore& store, std::size_t slot) : store_(store), slot_(slot) {}
    ~Lease() {
        std::lock_guard<std::mutex> lock(store_.pool_mutex_);
        auto& conn = store_.pool_[slot_];
        if (conn && !conn->is_open()) {
            conn.reset();
        }
        store_.free_slots_.push_back(slot_);
        store_.pool_cv_.notify_one();
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease(Lease&&) = delete;
    Lease& operator=(Lease&&) = delete;

    pqxx::connection& conn() { return *store_.pool_[slot_]; }
    void Drop() {
        std::lock_guard<std::mutex> lock(store_.pool_mutex_);
        store_.pool_[slot_].reset();
    }

private:
    PgStore& store_;
    std::size_t slot_;
};

inline pricing::Error Unavailable(const std::string& detail) {
    return pricing::MakeError(pricing::ErrorCode::kUnavailable, detail);
}

}  // namespace gpucost::storage
