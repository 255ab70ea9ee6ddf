#pragma once

#include <memory>
#include <string>

#include <pqxx/pqxx>

namespace gpucost::storage {

// How long a connection attempt, a statement and an idle TCP peer may take before libpq
// gives up: bounded so that no request waits on a dead database longer than this.
inline constexpr int kConnectTimeoutS = 2;
inline constexpr int kStatementTimeoutMs = 5000;

// `url` (a postgresql:// URL or a key=value conninfo) with connect_timeout and TCP
// keepalive settings added unless the caller set them.
std::string WithConnectionDefaults(const std::string& url);

// `url` with any password replaced by "***", for logs.
std::string RedactUrl(const std::string& url);

// Opens a connection and sets statement_timeout. Throws pqxx::broken_connection.
std::unique_ptr<pqxx::connection> Connect(const std::string& url);

// SQLSTATE of a pqxx error, or "" when it carries none.
std::string SqlState(const std::exception& e);

}  // namespace gpucost::storage
