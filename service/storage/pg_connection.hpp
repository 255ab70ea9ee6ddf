#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

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

// A host name's numeric addresses (none when it does not resolve); blocks as long as the
// system resolver does.
using HostResolver = std::function<std::vector<std::string>(const std::string& host)>;
// The system resolver (getaddrinfo): each address once, in its order.
std::vector<std::string> ResolveWithSystem(const std::string& host);

// `conninfo` with its host resolved within `timeout` on a thread of its own, and `hostaddr`
// set when the name has exactly one address (with several, e.g. localhost's IPv4 and IPv6,
// libpq tries each itself, and the name has just been seen to resolve in time). libpq's
// connect_timeout does not cover the lookup (getaddrinfo blocks), and a container network's DNS can
// miss a query while containers join it, after which glibc's resolver waits 5 s per try and per
// server: a write then waited past 20 s for its first pooled connection, and its client (nginx, 10
// s) gave up on an answer that came later. Unchanged when there is nothing to resolve (a socket
// directory, a numeric address, hostaddr already set, several hosts). Throws
// pqxx::broken_connection when the name does not resolve in time or at all.
std::string WithResolvedHost(const std::string& conninfo, std::chrono::milliseconds timeout,
                             const HostResolver& resolve = ResolveWithSystem);

// Opens a connection (its host resolved within kConnectTimeoutS) and sets statement_timeout.
// Throws pqxx::broken_connection.
std::unique_ptr<pqxx::connection> Connect(const std::string& url);

// SQLSTATE of a pqxx error, or "" when it carries none.
std::string SqlState(const std::exception& e);

}  // namespace gpucost::storage
