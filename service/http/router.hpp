#pragma once

// The server's wiring: transport limits, the body-limit and keyed-route tables, the hooks
// ConfigureServer installs and RegisterRoutes. A route file needs only route_table.hpp (and a
// header that needs only the dependencies, deps.hpp).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <httplib.h>

#include "service/http/deps.hpp"
#include "service/http/route_table.hpp"
#include "service/http/transport/rate_limit.hpp"
#include "service/http/transport/transport.hpp"

namespace gpucost::http {

// Transport limits and pool size (docs/performance.md explains the defaults).
// The bulk offering import (POST /v1/offerings with a JSON array or CSV of up to 1,000
// items): the one route whose body may be larger than max_body_bytes.
inline constexpr char kBulkImportPath[] = "/v1/offerings";
// A FOCUS export sent to POST /v1/actuals: the other route with a body limit of its own.
inline constexpr char kActualsPath[] = "/v1/actuals";

struct ServerOptions {
    std::size_t threads = 16;
    std::size_t max_body_bytes = std::size_t{64} * 1024;
    // POST kBulkImportPath's limit: 1,000 items of about 210 bytes (a minimal offering with its
    // price) are 209 KB; 1 MiB leaves room for notes and sources.
    std::size_t max_bulk_body_bytes = std::size_t{1024} * 1024;
    // POST kActualsPath's limit (--max-actuals-body-bytes): a month of a team's FOCUS charges.
    std::size_t max_actuals_body_bytes = std::size_t{8} * 1024 * 1024;
    // Bytes of request bodies held across all connections (--max-buffered-body-bytes; see
    // TransportOptions::max_buffered_body_bytes).
    std::size_t max_buffered_body_bytes = std::size_t{128} * 1024 * 1024;
    int read_timeout_s = 5;
    int write_timeout_s = 5;
    int keep_alive_timeout_s = 5;
    std::size_t keep_alive_max_count = 1000;
    // EventServer only: a whole request must arrive within this many seconds of its first
    // byte; open connections at most.
    int request_timeout_s = 10;
    std::size_t max_connections = 900;
    std::size_t max_connections_per_address = 64;
    bool access_log = true;
    // Token bucket per API key (when the store accepts the key), else per peer address.
    // Null or disabled: no limit. /healthz and /readyz are never limited.
    std::shared_ptr<RateLimiter> rate_limiter;
    // The store that authenticates keys for the rate limiter's identity (PostgreSQL mode).
    std::shared_ptr<KeyAuthenticator> key_store;
};

// The EventServer settings that match `options`.
TransportOptions TransportFor(const ServerOptions& options);

// The body limit of each route that has one of its own, then of every other request (`path`
// empty): the one table that the transport's framing, the library's (TLS) and the shipped
// nginx's client_max_body_size (docker/nginx.conf, held to it by router_test.cpp) follow.
struct RouteBodyLimit {
    std::string method;
    std::string path;
    std::size_t max_body_bytes = 0;
};
std::vector<RouteBodyLimit> BodyLimitsOf(const ServerOptions& options);

// The routes whose body is read only once the API key in their head is accepted: each needs a
// key of `scope` (and the database) whatever its body says, so a request without one is answered
// from its head and its body never held (EventServer's HeadGate). With --require-read-key every
// /v1/ route needs a read key as well. A route that needs a key only for some bodies (a plan
// naming a stored price book) is not here: its body is what says so.
struct KeyedBodyRoute {
    std::string method;
    std::string pattern;  // as the route table registers it
    KeyScope scope = KeyScope::kRead;
};
const std::vector<KeyedBodyRoute>& KeyedBodyRoutes();

// Whether the route of `head` (a request whose body has not been read) refuses it from its head
// alone: a route of KeyedBodyRoutes (or any /v1/ route under --require-read-key) without a
// database, without a key, with a key the store does not accept, or with a key of too narrow a
// scope. RegisterRoutes installs it as the EventServer's HeadGate.
bool RefusedFromHead(const Deps& deps, const httplib::Request& head);

// Applies limits, timeouts, the thread pool (unless `server` is an EventServer, which has
// its own workers), TCP_NODELAY, the rate limit and the pre-routing, error,
// exception and logging hooks. Requests that cpp-httplib 0.11.4 would mishandle are refused
// before routing: a body over max_body_bytes (413), a chunked body (411), a Content-Encoding
// (415). A Range header is ignored (the whole answer is sent).
void ConfigureServer(httplib::Server& server, const ServerOptions& options);

// Every route of the API (see openapi.yaml).
RouteTable BuildRouteTable(const Deps& deps);

// Declares every route of BuildRouteTable on `server`, and the post-routing hook that adds
// CORS headers for deps.cors_origins to every answer.
void RegisterRoutes(httplib::Server& server, const Deps& deps);

}  // namespace gpucost::http
