#pragma once

// The route table and the route groups that fill it: what a file under routes/ needs to add
// its routes. The server's wiring (limits, hooks, the body-limit and keyed-route tables) is in
// router.hpp, which only router.cpp, main.cpp and the tests that start a server include.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <httplib.h>
#include <nlohmann/json_fwd.hpp>

#include "service/http/deps.hpp"
#include "service/http/transport/cors.hpp"

namespace gpucost::http {

// A route handler that is a function of the dependencies: bound to `deps` for RouteTable.
using DepsHandler = void (*)(const Deps& deps, const httplib::Request& req, httplib::Response& res);
inline std::function<void(const httplib::Request&, httplib::Response&)> Bind(const Deps& deps,
                                                                             DepsHandler serve) {
    return [deps, serve](const httplib::Request& req, httplib::Response& res) {
        serve(deps, req, res);
    };
}

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
        Handler handler;
        bool needs_length = true;  // a POST/PUT without Content-Length is 411
    };
    void Add(const std::string& method, const std::string& pattern, Handler handler,
             bool needs_length = true);
    std::vector<Route> routes_;
};

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
