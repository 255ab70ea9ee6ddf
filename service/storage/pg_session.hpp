#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <pqxx/pqxx>

#include "pricing/error.hpp"

namespace gpucost::storage {

// One database connection for the low-rate tables beside the catalog (price books): opened on
// first use, reopened after it breaks, one call at a time. PgStore's pool serves the catalog's
// hot paths; these routes write a few times a day and need no pool of their own.
class PgSession {
public:
    explicit PgSession(std::string database_url) : url_(std::move(database_url)) {}

    // Runs `body` on the connection. A broken or unreachable connection is kUnavailable (the
    // connection is dropped and reopened by the next call); any other database error is
    // logged and kInternal.
    template <typename T>
    pricing::Result<T> Run(const std::function<pricing::Result<T>(pqxx::connection&)>& body) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::optional<pricing::Result<T>> out;
        auto failed = CallOnConnection([&](pqxx::connection& conn) { out.emplace(body(conn)); });
        if (failed) return *failed;
        return std::move(*out);
    }

    // True when the database answers a unique-key violation for `e` (SQLSTATE 23505).
    static bool IsUniqueViolation(const std::exception& e);

private:
    // Connects if needed and calls `body`; the error when either failed.
    std::optional<pricing::Error> CallOnConnection(
        const std::function<void(pqxx::connection&)>& body);

    std::string url_;
    std::mutex mutex_;
    std::unique_ptr<pqxx::connection> conn_;
};

}  // namespace gpucost::storage
