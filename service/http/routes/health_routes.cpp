#include <chrono>
#include <memory>

#include "pricing/price_age.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/timestamp.hpp"
#include "service/http/route_table.hpp"
#include "service/http/transport/gzip.hpp"

namespace gpucost::http {

namespace {

// A provider's latest sync run for /readyz: when it ended, how, and when the latest imported one
// ended (null: never); null when none is recorded.
json LastSyncJson(const std::vector<ports::ProviderSyncState>& syncs, const std::string& provider) {
    for (const auto& s : syncs) {
        if (s.provider != provider) continue;
        return {{"finished_at", s.last_run_at},
                {"outcome", s.last_outcome},
                {"last_imported_at",
                 s.last_imported_at.empty() ? json(nullptr) : json(s.last_imported_at)}};
    }
    return nullptr;
}

}  // namespace

void AddHealthRoutes(RouteTable& routes, const Deps& deps) {
    routes.Get("/healthz", [deps](const httplib::Request&, httplib::Response& res) {
        auto catalog = deps.catalog();
        auto info = catalog->Describe();
        double uptime_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - deps.started_at)
                .count();
        json body = {{"status", "ok"},
                     {"version", deps.service_version},
                     {"uptime_s", std::round(uptime_s)},
                     // `version` is catalog_version's deprecated name, as in /v1/catalog.
                     {"catalog",
                      {{"catalog_version", info.version},
                       {"version", info.version},
                       {"origin", info.origin},
                       {"offering_count", info.offering_count},
                       {"newest_as_of",
                        info.newest_as_of.empty() ? json(nullptr) : json(info.newest_as_of)}}}};
        if (deps.health) {
            // PostgreSQL mode: without the database, reads go on from the last snapshot.
            StoreHealth h = deps.health->Health();
            body["status"] = h.database_connected ? "ok" : "degraded";
            body["database"] = {{"connected", h.database_connected},
                                {"catalog_revision", h.revision},
                                {"snapshot_age_s", std::round(h.snapshot_age_s * 10) / 10},
                                {"max_snapshot_age_s", deps.max_snapshot_age_s},
                                {"writes", h.database_connected ? "accepted" : "unavailable"}};
            // Why the database is unreachable (libpq's text names hosts and ports) goes to the
            // log only: this probe is open to anyone who can reach the port.
        }
        WriteJson(res, body);
    });

    routes.Get("/readyz", [deps](const httplib::Request& req, httplib::Response& res) {
        if (deps.shutting_down()) {
            res.set_header("Retry-After", "5");
            return WriteFault(res, req, Fault::kShuttingDown, "the server is shutting down");
        }
        if (deps.catalog()->Describe().offering_count == 0) {
            // A migrated database that was never seeded: every plan would answer from nothing.
            res.set_header("Retry-After", "30");
            return WriteFault(res, req, Fault::kCatalogEmpty,
                              "the catalog holds no offerings; seed the database "
                              "(gpucost seed) or import prices before sending traffic");
        }
        if (deps.health) {
            StoreHealth h = deps.health->Health();
            if (!h.schema_problem.empty()) {
                res.set_header("Retry-After", "30");
                return WriteFault(res, req, Fault::kSchemaMismatch, h.schema_problem);
            }
            if (h.snapshot_age_s > deps.max_snapshot_age_s) {
                res.set_header("Retry-After", "5");
                return WriteFault(
                    res, req, Fault::kSnapshotStale,
                    "the catalog snapshot was last confirmed " +
                        std::to_string(static_cast<long long>(h.snapshot_age_s)) +
                        " s ago, longer than the configured maximum; the database is unreachable");
            }
        }
        // Stale prices do not make the service unready (it serves them marked stale); the
        // detail says which providers' prices a sync has not confirmed for how long, and how
        // each provider's latest sync ended (null: none recorded, or no sync log is read).
        const std::vector<ports::ProviderSyncState> syncs =
            deps.sync_states ? deps.sync_states() : std::vector<ports::ProviderSyncState>{};
        json prices = json::array();
        for (const auto& p :
             pricing::SummarizePriceAges(deps.catalog()->Offerings(), TodayUtc()).by_provider) {
            prices.push_back({{"provider", p.provider},
                              {"stale_after_days", p.stale_after_days},
                              {"oldest_age_days", p.oldest_age_days},
                              {"stale_count", p.stale_count},
                              {"last_sync", LastSyncJson(syncs, p.provider)}});
        }
        WriteJson(res, {{"ready", true}, {"price_staleness", std::move(prices)}});
    });

    // The contract is the largest answer (about 150 KB of YAML, a fifth of it gzipped) and the
    // HTTP library does not compress YAML: it is gzipped once here and sent to clients that
    // accept it.
    auto gzipped = std::make_shared<const std::string>(Gzip(deps.openapi_yaml));
    routes.Get(
        "/openapi.yaml", [deps, gzipped](const httplib::Request& req, httplib::Response& res) {
            res.set_header("Vary", "Accept-Encoding");
            if (AcceptsGzip(req.get_header_value("Accept-Encoding"))) {
                res.set_header("Content-Encoding", "gzip");
                res.set_content(gzipped->data(), gzipped->size(), "application/yaml");
                return;
            }
            res.set_content(deps.openapi_yaml.data(), deps.openapi_yaml.size(), "application/yaml");
        });
    // GET / is in web_routes.cpp: browsers get the planning page there, clients this JSON.
}

}  // namespace gpucost::http
