#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "pricing/catalog.hpp"
#include "pricing/plan_reference.hpp"
#include "service/http/metrics.hpp"
#include "service/http/ports.hpp"
#include "service/http/transport/cors.hpp"
#include "service/http/transport/rate_limit.hpp"
#include "service/http/transport/transport.hpp"

namespace gpucost::http {

// The planning page's files (web/, built and embedded at build time); app_js empty: the binary
// was built without them and / explains how to build them.
struct WebBundle {
    std::string_view index_html;
    std::string_view app_js;
    std::string_view app_css;
};

// What the handlers need from the rest of the service. Every member is thread-safe.
// --request-budget-ms's default. The costliest plan the request bounds allow (docs/api.md
// "Request bounds") took 0.6 s of CPU in the sanitized debug build on the shared 2-core VM
// (tests/bench/request_budget_bench.sh; the old bounds' costliest: 40 ms in a release build);
// the tests' and the planning page's plans are far smaller, and a load of 15 on 2 cores
// stretches them about sevenfold. Ten seconds stops only a request that would hold its worker
// far longer (a much larger catalog, a starved machine), as --request-timeout-s does.
inline constexpr int kDefaultRequestBudgetMs = 10000;

struct Deps {
    // The catalog snapshot to serve; called once per request, so a new snapshot can be
    // swapped in behind it at any time.
    std::function<std::shared_ptr<const pricing::Catalog>()> catalog;
    // Static text (built into the binary): every route captures a copy of Deps, so a
    // std::string here cost a copy of the whole document per route (MBs of memory).
    std::string_view openapi_yaml;
    std::string service_version;
    // True once shutdown has begun; /readyz then answers 503.
    std::function<bool()> shutting_down = [] { return false; };
    std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();
    // PostgreSQL mode: the writable catalog with its history, as the ports the routes take
    // (service/ports/), all five from one store (UseStore). Null in embedded mode, where
    // writes, history, as_of and scenarios answer 503.
    std::shared_ptr<CatalogReads> history;
    std::shared_ptr<CatalogWrites> writes;
    std::shared_ptr<KeyAuthenticator> keys;
    std::shared_ptr<StoreHealthProbe> health;
    std::shared_ptr<ScenarioStore> scenarios;
    void UseStore(const std::shared_ptr<CatalogStore>& store) {
        history = store;
        writes = store;
        keys = store;
        health = store;
        scenarios = store;
    }
    // PostgreSQL mode: stored price books (issue 25); null in embedded mode, where
    // /v1/price-books and "price_book": "<id>" answer 409 database_required.
    std::shared_ptr<PriceBookStore> price_books;
    // PostgreSQL mode: imported actual spend (issue 25) and the FOCUS reader that fills it;
    // null in embedded mode, where /v1/actuals and /v1/scenarios/{id}/actuals answer 409
    // database_required.
    std::shared_ptr<ActualsStore> actuals;
    FocusTextReader read_focus;
    // Reads under /v1/ need an API key (read or admin scope) too (--require-read-key).
    bool require_read_key = false;
    // /readyz stays ready while the snapshot was confirmed current this recently.
    double max_snapshot_age_s = 300;
    // Browser origins allowed to call the API (--cors-origins); none by default.
    std::vector<std::string> cors_origins;
    // Redoc's standalone bundle served under /docs (embedded at build time); empty: no page.
    std::string_view redoc_js;
    // The planning page served at / to browsers and its assets under /web/.
    WebBundle web;
    // Request counters and histograms behind GET /metrics; shared by every copy of Deps.
    std::shared_ptr<Metrics> metrics = std::make_shared<Metrics>();
    // The planners' reference data (capacity limits, storage/egress prices, accelerator
    // workloads), loaded with the CSV catalog at start in every mode. Null: an empty one
    // (every offering at the conservative capacity defaults).
    std::shared_ptr<const pricing::PlanReference> plan_reference;
    // CPUs the process may use (app::UsableCpus); a training plan spreads its estimates over
    // those the other plans in flight leave (docs/performance.md, "Plans across idle CPUs").
    unsigned cpus = 1;
    // How long one plan or estimate may compute (--request-budget-ms): past it the answer is
    // 503 request_budget_exceeded (pricing/deadline.hpp), not a worker held for the rest.
    std::chrono::milliseconds request_budget{kDefaultRequestBudgetMs};
};

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

// A route handler that is a function of the dependencies: bound to `deps` for RouteTable.
using DepsHandler = void (*)(const Deps& deps, const httplib::Request& req, httplib::Response& res);
inline std::function<void(const httplib::Request&, httplib::Response&)> Bind(const Deps& deps,
                                                                             DepsHandler serve) {
    return [deps, serve](const httplib::Request& req, httplib::Response& res) {
        serve(deps, req, res);
    };
}

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

// Routes with their methods, so that a path known under another method answers 405 with
// an Allow header and an unknown path answers 404, both as problem+json.
class RouteTable {
public:
    using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

    void Get(const std::string& pattern, Handler handler) {
        Add("GET", pattern, std::move(handler));
    }
    void Post(const std::string& pattern, Handler handler) {
        Add("POST", pattern, std::move(handler));
    }
    // A POST whose body is optional (none documented): sent without Content-Length it is
    // served, not refused with 411 (`curl -X POST` sends none).
    void PostWithoutBody(const std::string& pattern, Handler handler) {
        Add("POST", pattern, std::move(handler), /*needs_length=*/false);
    }
    void Put(const std::string& pattern, Handler handler) {
        Add("PUT", pattern, std::move(handler));
    }
    void Delete(const std::string& pattern, Handler handler) {
        Add("DELETE", pattern, std::move(handler));
    }
    void Patch(const std::string& pattern, Handler handler) {
        Add("PATCH", pattern, std::move(handler));
    }

    // Replaces every handler added so far by wrap(method, pattern, handler) (auth gates).
    void Wrap(const std::function<Handler(const std::string& method, const std::string& pattern,
                                          Handler handler)>& wrap) {
        for (Route& r : routes_) {
            r.handler = wrap(r.method, r.pattern, std::move(r.handler));
        }
    }

    // Registers every route, then per-method fallbacks that produce 404/405 and answer CORS
    // preflights (OPTIONS) for known paths under `cors`.
    void Install(httplib::Server& server, const CorsPolicy& cors = {}) const;

    // (method, OpenAPI-style path) of every route, e.g. ("GET", "/v1/offerings/{id}").
    std::vector<std::pair<std::string, std::string>> Describe() const;

    // The OpenAPI-style path of a route pattern: kIdPattern becomes {id}.
    static std::string Template(const std::string& pattern);

private:
    struct Route {
        std::string method;
        std::string pattern;
        std::regex regex;
        Handler handler;
        bool needs_length = true;  // a POST/PUT without Content-Length is 411
    };
    void Add(const std::string& method, const std::string& pattern, Handler handler,
             bool needs_length = true);
    std::vector<Route> routes_;
};

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

// Regex fragment that captures a path id; Describe() shows it as {id}.
inline constexpr char kIdPattern[] = "([A-Za-z0-9._-]{1,200})";

// Route groups, one per file; each adds its routes to the table.
void AddHealthRoutes(RouteTable& routes, const Deps& deps);
void AddCatalogRoutes(RouteTable& routes, const Deps& deps);
// POST /v1/estimates/{training,inference,roofline} (estimate_routes.cpp).
void AddEstimateRoutes(RouteTable& routes, const Deps& deps);
void AddPlanRoutes(RouteTable& routes, const Deps& deps);
// GET /v1/models and /v1/models/{id}: the model library (model_routes.cpp).
void AddModelRoutes(RouteTable& routes, const Deps& deps);
// PostgreSQL mode: catalog writes, price history, saved scenarios (write_routes.cpp,
// scenario_routes.cpp), and the read-key gate over every /v1/ route (auth.cpp; add last).
void AddWriteRoutes(RouteTable& routes, const Deps& deps);
void AddScenarioRoutes(RouteTable& routes, const Deps& deps);
// /v1/price-books[/{id}]: stored, versioned price books (price_book_routes.cpp).
void AddPriceBookRoutes(RouteTable& routes, const Deps& deps);
// POST /v1/actuals, GET /v1/scenarios/{id}/actuals: actual spend (actuals_routes.cpp).
void AddActualsRoutes(RouteTable& routes, const Deps& deps);
void AddReadKeyGate(RouteTable& routes, const Deps& deps);
// Catalog reads (accelerators, providers, offerings, an offering's history, catalog, models),
// GET / and /openapi.yaml answer a strong ETag that is a digest of the bytes sent, one per
// content coding (conditional.hpp), and 304 to a matching If-None-Match; catalog reads also
// Cache-Control: no-cache and Vary (conditional.cpp). Wraps the routes added before it; add it
// before the read-key gate, which must answer first.
void AddConditionalReads(RouteTable& routes, const Deps& deps);
// GET /metrics (metrics_routes.cpp); InstrumentRoutes wraps every route added before it to
// record its template and in-flight count, ObserveAnswer counts one answer (post-routing).
void AddMetricsRoute(RouteTable& routes, const Deps& deps);
// GET /docs (the Redoc page over /openapi.yaml) and its bundle (docs_routes.cpp).
void AddDocsRoutes(RouteTable& routes, const Deps& deps);
// GET / (the planning page for browsers, the JSON entry point otherwise) and /web/{file}, the
// page's content-hashed assets (web_routes.cpp).
void AddWebRoutes(RouteTable& routes, const Deps& deps);
void InstrumentRoutes(RouteTable& routes, const Deps& deps);
void ObserveAnswer(const Deps& deps, const httplib::Request& req, const httplib::Response& res);

// Writes `body` as application/json with status 200 (or `status`).
void WriteJson(httplib::Response& res, const nlohmann::json& body, int status = 200);

}  // namespace gpucost::http
