#include <chrono>
#include <optional>

#include "service/http/codec/timestamp.hpp"
#include "service/http/metrics.hpp"
#include "service/http/route_table.hpp"
#include "service/http/transport/request_context.hpp"
#include "service/log.hpp"

namespace gpucost::http {
namespace {

// An RFC 3339 instant as Unix seconds; nullopt when empty or unreadable.
std::optional<double> UnixSeconds(const std::string& at) {
    if (at.empty()) return std::nullopt;
    auto parsed = ParseAsOf(at, "finished_at");
    if (!parsed.ok()) return std::nullopt;
    return static_cast<double>(parsed.value()) / 1e6;
}

std::vector<ProviderSyncMetrics> SyncRunMetrics(const Deps& deps) {
    std::vector<ProviderSyncMetrics> out;
    if (!deps.sync_states) return out;
    for (const auto& state : deps.sync_states()) {
        auto last_run_s = UnixSeconds(state.last_run_at);
        if (!last_run_s) continue;
        out.push_back(
            {state.provider, *last_run_s, state.last_outcome, UnixSeconds(state.last_imported_at)});
    }
    return out;
}

MetricsSnapshot Snapshot(const Deps& deps) {
    MetricsSnapshot s;
    auto info = deps.catalog()->Describe();
    s.catalog_offering_count = info.offering_count;
    s.catalog_accelerator_count = info.accelerator_count;
    s.version = deps.service_version;
    s.log_lines_dropped = log::DroppedLines();
    // A scan of every current price (a millisecond at 20,000 offerings), once per scrape.
    s.price_staleness =
        pricing::SummarizePriceAges(deps.catalog()->Offerings(), TodayUtc()).by_provider;
    s.sync_runs = SyncRunMetrics(deps);
    if (deps.health) {
        StoreHealth h = deps.health->Health();
        s.catalog_snapshot_age_s = h.snapshot_age_s;
        s.database_up = h.database_connected;
    } else {
        // Embedded mode: the snapshot is the one loaded at start-up.
        s.catalog_snapshot_age_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - deps.started_at)
                .count();
    }
    return s;
}

}  // namespace

void AddMetricsRoute(RouteTable& routes, const Deps& deps) {
    routes.Get("/metrics", [deps](const httplib::Request&, httplib::Response& res) {
        res.set_content(deps.metrics->Render(Snapshot(deps)), kMetricsContentType);
    });
}

void InstrumentRoutes(RouteTable& routes, const Deps& deps) {
    routes.Wrap([deps](const std::string& /*method*/, const std::string& pattern,
                       const RouteTable::Handler& handler) -> RouteTable::Handler {
        std::string route = RouteTable::Template(pattern);
        return [deps, route, handler](const httplib::Request& req, httplib::Response& res) {
            CurrentRequestContext().route = route;
            Metrics::InFlight in_flight(*deps.metrics);
            handler(req, res);
        };
    });
}

void ObserveAnswer(const Deps& deps, const httplib::Request& req, const httplib::Response& res) {
    RequestContext& ctx = CurrentRequestContext();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.started_at).count();
    deps.metrics->ObserveRequest(ctx.route.empty() ? "unmatched" : ctx.route, req.method,
                                 res.status, seconds);
    // A request the library refuses before pre-routing reuses this thread's context.
    ctx.route.clear();
}

}  // namespace gpucost::http
