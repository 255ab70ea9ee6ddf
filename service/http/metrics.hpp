#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "pricing/price_age.hpp"

namespace gpucost::http {

// One provider's `gpucost sync` runs as /metrics shows them (Unix seconds).
struct ProviderSyncMetrics {
    std::string provider;
    double last_run_s = 0;                  // when its latest run ended
    std::string last_outcome;               // imported | failed | skipped
    std::optional<double> last_imported_s;  // when its latest imported run ended; none: never
};

// What GET /metrics reports besides the request counters: read when it is scraped.
struct MetricsSnapshot {
    double catalog_snapshot_age_s = 0;  // since the snapshot was loaded or confirmed current
    std::size_t catalog_offering_count = 0;
    std::size_t catalog_accelerator_count = 0;
    std::optional<bool> database_up;  // absent in embedded mode
    std::string version;
    std::uint64_t log_lines_dropped = 0;  // access-log lines the full log buffer dropped
    // Per provider: its staleness bound, its least recently confirmed price's age, and how many
    // of its current prices are stale today (SummarizePriceAges).
    std::vector<pricing::ProviderStaleness> price_staleness;
    // Per provider that has a recorded sync run; empty where no sync log is read (embedded mode
    // without a --catalog-dir).
    std::vector<ProviderSyncMetrics> sync_runs;
};

// Request counters and latency histograms for the Prometheus text exposition format (0.0.4).
// Every member is thread-safe; one instance per server (Deps::metrics), except the rate-limit
// counter, which is process-wide so the transport layer can count without a Deps.
class Metrics {
public:
    // Upper bounds of the latency histogram buckets, in seconds (+Inf is implied): 1 ms to 10 s,
    // about 2.5x apart, around the p50 of a catalog read (~1 ms) and of a full plan (~1 s).
    static constexpr std::array<double, 13> kLatencyBucketsS = {
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0};

    // One answered request. `route` is the route template ("/v1/offerings/{id}"), or
    // "unmatched" for answers no route produced (404, 405, preflights, transport refusals).
    void ObserveRequest(const std::string& route, const std::string& method, int status,
                        double seconds);

    // Requests being handled now (route handlers only); use InFlight.
    class InFlight {
    public:
        explicit InFlight(Metrics& metrics) : metrics_(metrics) {
            metrics_.in_flight_.fetch_add(1, std::memory_order_relaxed);
        }
        ~InFlight() { metrics_.in_flight_.fetch_sub(1, std::memory_order_relaxed); }
        InFlight(const InFlight&) = delete;
        InFlight& operator=(const InFlight&) = delete;

    private:
        Metrics& metrics_;
    };

    // A request refused by the rate limiter (429). Process-wide, lock-free; call it from any
    // thread: `gpucost::http::Metrics::CountRateLimited();`
    static void CountRateLimited() { rate_limited_.fetch_add(1, std::memory_order_relaxed); }
    static std::uint64_t RateLimitedCount() {
        return rate_limited_.load(std::memory_order_relaxed);
    }

    // A plan or estimate that ran past --request-budget-ms (503 request_budget_exceeded);
    // counted where the problem is written, from any thread.
    static void CountBudgetExceeded() { budget_exceeded_.fetch_add(1, std::memory_order_relaxed); }
    static std::uint64_t BudgetExceededCount() {
        return budget_exceeded_.load(std::memory_order_relaxed);
    }

    // The whole exposition, every family with HELP and TYPE, series in a stable order.
    std::string Render(const MetricsSnapshot& snapshot) const;

private:
    struct RouteLatency {
        std::array<std::uint64_t, kLatencyBucketsS.size()> buckets{};  // non-cumulative
        std::uint64_t count = 0;
        double sum_s = 0;
    };
    mutable std::mutex mutex_;
    std::map<std::tuple<std::string, std::string, int>, std::uint64_t> requests_;
    std::map<std::string, RouteLatency> latency_;
    std::atomic<std::int64_t> in_flight_{0};
    static inline std::atomic<std::uint64_t> rate_limited_{0};
    static inline std::atomic<std::uint64_t> budget_exceeded_{0};
};

// The content type of the exposition format.
inline constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace gpucost::http
