#include "service/http/metrics.hpp"

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

using gpucost::http::Metrics;
using gpucost::http::MetricsSnapshot;

namespace {

bool Has(const std::string& text, const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
}

}  // namespace

TEST_SUITE("metrics") {
    TEST_CASE("requests are counted by route, method and status; latency lands in its bucket") {
        Metrics m;
        m.ObserveRequest("/v1/offerings", "GET", 200, 0.003);
        m.ObserveRequest("/v1/offerings", "GET", 200, 20.0);
        m.ObserveRequest("/v1/offerings", "GET", 422, 0.0005);
        std::string text = m.Render({});
        CHECK(Has(
            text,
            R"(gpucost_http_requests_total{route="/v1/offerings",method="GET",status="200"} 2)"));
        CHECK(Has(
            text,
            R"(gpucost_http_requests_total{route="/v1/offerings",method="GET",status="422"} 1)"));
        const std::string b =
            R"(gpucost_http_request_duration_seconds_bucket{route="/v1/offerings",le=)";
        CHECK(Has(text, b + R"("0.001"} 1)"));  // the 0.5 ms one
        CHECK(Has(text, b + R"("0.005"} 2)"));  // plus the 3 ms one
        CHECK(Has(text, b + R"("10"} 2)"));     // 20 s is over the last bound
        CHECK(Has(text, b + R"("+Inf"} 3)"));
        CHECK(Has(text, R"(gpucost_http_request_duration_seconds_count{route="/v1/offerings"} 3)"));
    }

    TEST_CASE("label values are escaped and database_up appears only when a database is set") {
        Metrics m;
        m.ObserveRequest("a\"b\\c\nd", "GET", 200, 0.1);
        MetricsSnapshot s;
        s.version = "0.1.0";
        std::string embedded = m.Render(s);
        CHECK(embedded.find(R"(route="a\"b\\c\nd")") != std::string::npos);
        CHECK(embedded.find("gpucost_database_up") == std::string::npos);
        s.database_up = false;
        CHECK(Has(m.Render(s), "gpucost_database_up 0"));
    }

    TEST_CASE("each provider's oldest price age, bound and stale prices are gauges") {
        Metrics m;
        MetricsSnapshot s;
        gpucost::pricing::ProviderStaleness aws;
        aws.provider = "aws";
        aws.stale_after_days = 30;
        aws.oldest_age_days = 584;
        aws.stale_count = 12;
        s.price_staleness.push_back(aws);
        std::string text = m.Render(s);
        CHECK(Has(text, R"(gpucost_price_oldest_age_seconds{provider="aws"} 50457600)"));
        CHECK(Has(text, R"(gpucost_price_stale_after_seconds{provider="aws"} 2592000)"));
        CHECK(Has(text, R"(gpucost_prices_stale{provider="aws"} 12)"));
    }

    TEST_CASE("each provider's latest sync: its last success, last run and outcome state set") {
        Metrics m;
        MetricsSnapshot s;
        s.sync_runs.push_back({"gcp", 1796536800.5, "skipped", 1796515200});
        s.sync_runs.push_back({"vastai", 1796536801, "failed", std::nullopt});
        std::string text = m.Render(s);
        CHECK(
            Has(text, R"(gpucost_sync_last_success_timestamp_seconds{provider="gcp"} 1796515200)"));
        CHECK(text.find(R"(gpucost_sync_last_success_timestamp_seconds{provider="vastai"})") ==
              std::string::npos);  // never imported: no series to age
        CHECK(Has(text, R"(gpucost_sync_last_run_timestamp_seconds{provider="gcp"} 1796536800.5)"));
        CHECK(Has(text, R"(gpucost_sync_last_run_outcome{provider="gcp",outcome="skipped"} 1)"));
        CHECK(Has(text, R"(gpucost_sync_last_run_outcome{provider="gcp",outcome="imported"} 0)"));
        CHECK(Has(text, R"(gpucost_sync_last_run_outcome{provider="vastai",outcome="failed"} 1)"));
    }

    TEST_CASE("rate-limit rejections count from any thread") {
        const auto before = Metrics::RateLimitedCount();
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([] {
                for (int i = 0; i < 1000; ++i) {
                    Metrics::CountRateLimited();
                }
            });
        }
        for (auto& t : threads) {
            t.join();
        }
        CHECK(Metrics::RateLimitedCount() - before == 4000);
    }

    TEST_CASE("in-flight requests rise and fall with the guard") {
        Metrics m;
        {
            Metrics::InFlight a(m);
            Metrics::InFlight b(m);
            CHECK(Has(m.Render({}), "gpucost_http_requests_in_flight 2"));
        }
        CHECK(Has(m.Render({}), "gpucost_http_requests_in_flight 0"));
    }
}
