#include "service/http/metrics.hpp"

#include <charconv>
#include <cmath>

#include "service/ports/sync_run_log.hpp"

namespace gpucost::http {
namespace {

// Label values escape backslash, double quote and newline (exposition format 0.0.4).
std::string Label(const std::string& value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

std::string Number(double value) {
    if (std::isinf(value)) {
        return value > 0 ? "+Inf" : "-Inf";
    }
    if (std::isnan(value)) {
        return "NaN";
    }
    std::array<char, 32> buffer{};
    auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    return ec == std::errc() ? std::string(buffer.data(), end) : std::string("NaN");
}

void Family(std::string& out, const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

// Each provider's sync runs: when its prices were last confirmed by a sync, and how its
// latest run ended as a state set (one series per outcome, 1 for the latest), so an alert can
// tell a provider that keeps failing or is skipped from one that was never synced.
void RenderSyncRuns(std::string& out, const std::vector<ProviderSyncMetrics>& runs) {
    Family(out, "gpucost_sync_last_success_timestamp_seconds", "gauge",
           "Unix time the provider's latest imported gpucost sync run ended (absent: none).");
    for (const auto& r : runs) {
        if (r.last_imported_s) {
            out += "gpucost_sync_last_success_timestamp_seconds{provider=\"" + Label(r.provider) +
                   "\"} " + Number(*r.last_imported_s) + "\n";
        }
    }
    Family(out, "gpucost_sync_last_run_timestamp_seconds", "gauge",
           "Unix time the provider's latest gpucost sync run ended, whatever its outcome.");
    for (const auto& r : runs) {
        out += "gpucost_sync_last_run_timestamp_seconds{provider=\"" + Label(r.provider) + "\"} " +
               Number(r.last_run_s) + "\n";
    }
    Family(out, "gpucost_sync_last_run_outcome", "gauge",
           "1 for the outcome of the provider's latest gpucost sync run, 0 for the others.");
    for (const auto& r : runs) {
        for (const char* outcome : ports::kSyncOutcomes) {
            out += "gpucost_sync_last_run_outcome{provider=\"" + Label(r.provider) +
                   "\",outcome=\"" + outcome + "\"} " + (r.last_outcome == outcome ? "1" : "0") +
                   "\n";
        }
    }
}

}  // namespace

void Metrics::ObserveRequest(const std::string& route, const std::string& method, int status,
                             double seconds) {
    std::size_t bucket = 0;
    while (bucket < kLatencyBucketsS.size() && seconds > kLatencyBucketsS[bucket]) {
        ++bucket;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++requests_[{route, method, status}];
    RouteLatency& l = latency_[route];
    if (bucket < kLatencyBucketsS.size()) {
        ++l.buckets[bucket];
    }
    ++l.count;
    l.sum_s += seconds;
}

std::string Metrics::Render(const MetricsSnapshot& snapshot) const {
    std::string out;
    std::lock_guard<std::mutex> lock(mutex_);

    Family(out, "gpucost_http_requests_total", "counter",
           "HTTP requests answered, by route template, method and status.");
    for (const auto& [key, count] : requests_) {
        const auto& [route, method, status] = key;
        out += "gpucost_http_requests_total{route=\"" + Label(route) + "\",method=\"" +
               Label(method) + "\",status=\"" + std::to_string(status) + "\"} " +
               std::to_string(count) + "\n";
    }

    Family(out, "gpucost_http_request_duration_seconds", "histogram",
           "Time from the request's headers to its answer, by route template.");
    for (const auto& [route, l] : latency_) {
        const std::string labels = "route=\"" + Label(route) + "\"";
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < kLatencyBucketsS.size(); ++i) {
            cumulative += l.buckets[i];
            out += "gpucost_http_request_duration_seconds_bucket{" + labels + ",le=\"" +
                   Number(kLatencyBucketsS[i]) + "\"} " + std::to_string(cumulative) + "\n";
        }
        out += "gpucost_http_request_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} " +
               std::to_string(l.count) + "\n";
        out +=
            "gpucost_http_request_duration_seconds_sum{" + labels + "} " + Number(l.sum_s) + "\n";
        out += "gpucost_http_request_duration_seconds_count{" + labels + "} " +
               std::to_string(l.count) + "\n";
    }

    Family(out, "gpucost_http_requests_in_flight", "gauge",
           "Requests whose route handler is running now.");
    out += "gpucost_http_requests_in_flight " +
           std::to_string(in_flight_.load(std::memory_order_relaxed)) + "\n";

    Family(out, "gpucost_rate_limited_requests_total", "counter",
           "Requests refused by the rate limiter (429).");
    out += "gpucost_rate_limited_requests_total " + std::to_string(RateLimitedCount()) + "\n";

    Family(out, "gpucost_request_budget_exceeded_total", "counter",
           "Plans and estimates stopped at --request-budget-ms (503 request_budget_exceeded).");
    out += "gpucost_request_budget_exceeded_total " + std::to_string(BudgetExceededCount()) + "\n";

    Family(
        out, "gpucost_log_lines_dropped_total", "counter",
        "Access-log lines dropped because the log buffer was full (stderr not read fast enough).");
    out += "gpucost_log_lines_dropped_total " + std::to_string(snapshot.log_lines_dropped) + "\n";
    Family(out, "gpucost_catalog_snapshot_age_seconds", "gauge",
           "Seconds since the served catalog snapshot was loaded or last confirmed current.");
    out += "gpucost_catalog_snapshot_age_seconds " + Number(snapshot.catalog_snapshot_age_s) + "\n";
    Family(out, "gpucost_catalog_offerings", "gauge", "Offerings in the served catalog snapshot.");
    out += "gpucost_catalog_offerings " + std::to_string(snapshot.catalog_offering_count) + "\n";
    Family(out, "gpucost_catalog_accelerators", "gauge",
           "Accelerators in the served catalog snapshot.");
    out +=
        "gpucost_catalog_accelerators " + std::to_string(snapshot.catalog_accelerator_count) + "\n";
    if (snapshot.database_up) {
        Family(out, "gpucost_database_up", "gauge",
               "1 when PostgreSQL answered the last check, 0 otherwise (database mode only).");
        out += std::string("gpucost_database_up ") + (*snapshot.database_up ? "1" : "0") + "\n";
    }
    // Seconds, Prometheus's base unit, of whole days (a price's as_of is a date).
    constexpr long kSecondsPerDay = 86400;
    Family(out, "gpucost_price_oldest_age_seconds", "gauge",
           "Time since the least recently confirmed current price of each provider (its as_of).");
    for (const auto& p : snapshot.price_staleness) {
        out += "gpucost_price_oldest_age_seconds{provider=\"" + Label(p.provider) + "\"} " +
               std::to_string(p.oldest_age_days * kSecondsPerDay) + "\n";
    }
    Family(out, "gpucost_price_stale_after_seconds", "gauge",
           "Time after which a provider's price is stale (pricing/price_age.hpp).");
    for (const auto& p : snapshot.price_staleness) {
        out += "gpucost_price_stale_after_seconds{provider=\"" + Label(p.provider) + "\"} " +
               std::to_string(p.stale_after_days * kSecondsPerDay) + "\n";
    }
    Family(out, "gpucost_prices_stale", "gauge",
           "Current prices of each provider older than its staleness bound.");
    for (const auto& p : snapshot.price_staleness) {
        out += "gpucost_prices_stale{provider=\"" + Label(p.provider) + "\"} " +
               std::to_string(p.stale_count) + "\n";
    }
    RenderSyncRuns(out, snapshot.sync_runs);
    Family(out, "gpucost_build_info", "gauge", "Always 1; the version is a label.");
    out += "gpucost_build_info{version=\"" + Label(snapshot.version) + "\"} 1\n";
    return out;
}

}  // namespace gpucost::http
