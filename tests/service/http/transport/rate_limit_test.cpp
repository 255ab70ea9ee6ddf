#include "service/http/transport/rate_limit.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using gpucost::http::RateLimiter;
using gpucost::http::RateLimitOptions;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;
using json = nlohmann::json;

namespace {

// A RateLimit field of the "default" policy with `remaining` tokens, full again within
// `full_in_s` seconds (less by the seconds the test took, counted with a wide margin).
void CheckState(const std::string& field, int remaining, int full_in_s) {
    INFO(field);
    const std::string prefix = "\"default\";r=" + std::to_string(remaining) + ";t=";
    REQUIRE(field.rfind(prefix, 0) == 0);
    const int t = std::stoi(field.substr(prefix.size()));
    CHECK(t <= full_in_s);
    CHECK(t > full_in_s - 100);
}

}  // namespace

TEST_SUITE("rate limit") {
    TEST_CASE("a caller gets its burst, then one request per refill interval") {
        RateLimiter limiter(RateLimitOptions{2, 3});  // 2/s, burst 3
        auto t0 = RateLimiter::Clock::time_point{} + std::chrono::hours(1);
        for (int i = 0; i < 3; ++i) {
            CHECK(limiter.Take("addr:10.0.0.1", t0).allowed);
        }
        auto refused = limiter.Take("addr:10.0.0.1", t0);
        CHECK_FALSE(refused.allowed);
        CHECK(refused.retry_after_s == 1);  // half a second, rounded up to whole seconds
        CHECK(limiter.Take("addr:10.0.0.1", t0 + std::chrono::milliseconds(500)).allowed);
        CHECK_FALSE(limiter.Take("addr:10.0.0.1", t0 + std::chrono::milliseconds(600)).allowed);
        CHECK(limiter.rejected() == 2);
    }

    TEST_CASE("callers have separate buckets") {
        RateLimiter limiter(RateLimitOptions{1, 1});
        auto t0 = RateLimiter::Clock::time_point{} + std::chrono::hours(1);
        CHECK(limiter.Take("addr:10.0.0.1", t0).allowed);
        CHECK_FALSE(limiter.Take("addr:10.0.0.1", t0).allowed);
        CHECK(limiter.Take("addr:10.0.0.2", t0).allowed);
        CHECK(limiter.Take("key:7", t0).allowed);
    }

    TEST_CASE("Retry-After covers a slow refill") {
        RateLimiter limiter(RateLimitOptions{0.1, 1});  // one request per 10 s
        auto t0 = RateLimiter::Clock::time_point{} + std::chrono::hours(1);
        CHECK(limiter.Take("a", t0).allowed);
        CHECK(limiter.Take("a", t0).retry_after_s == 10);
    }

    TEST_CASE("a flood of distinct callers keeps the table bounded and the limit working") {
        RateLimiter limiter(RateLimitOptions{1, 1, 1600});
        auto t0 = RateLimiter::Clock::time_point{} + std::chrono::hours(1);
        for (int i = 0; i < 20000; ++i) {
            limiter.Take("addr:" + std::to_string(i), t0);
        }
        CHECK(limiter.Take("addr:victim", t0).allowed);
        CHECK_FALSE(limiter.Take("addr:victim", t0).allowed);
    }

    TEST_CASE("the IETF fields: the burst over its refill time, whole tokens left, time to full") {
        RateLimiter limiter(RateLimitOptions{2, 3});  // 2/s, burst 3: full from empty in 1.5 s
        CHECK(limiter.PolicyField() == "\"default\";q=3;w=2");
        auto t0 = RateLimiter::Clock::time_point{} + std::chrono::hours(1);
        auto first = limiter.Take("a", t0);
        CHECK(first.remaining == 2);
        CHECK(first.full_in_s == 1);  // one token back in half a second
        CHECK(RateLimiter::StateField(first) == "\"default\";r=2;t=1");
        limiter.Take("a", t0);
        auto last = limiter.Take("a", t0);
        CHECK(last.allowed);
        CHECK(RateLimiter::StateField(last) == "\"default\";r=0;t=2");  // 3 tokens: 1.5 s
        auto refused = limiter.Take("a", t0);
        CHECK_FALSE(refused.allowed);
        CHECK(RateLimiter::StateField(refused) == "\"default\";r=0;t=2");
        // A slow refill: one request per 10 s, a burst of 1.
        CHECK(RateLimiter(RateLimitOptions{0.1, 1}).PolicyField() == "\"default\";q=1;w=10");
    }

    TEST_CASE("limiting off lets everything through") {
        RateLimiter limiter(RateLimitOptions{});
        CHECK_FALSE(limiter.enabled());
        for (int i = 0; i < 100; ++i) CHECK(limiter.Take("a").allowed);
    }

    TEST_CASE("over the limit the API answers 429 problem+json with Retry-After; probes pass") {
        gpucost::http::ServerOptions options;
        options.rate_limiter = std::make_shared<RateLimiter>(RateLimitOptions{0.5, 2});
        TestServer server(SampleDeps(), options);
        auto client = server.Client();
        CHECK(client.Get("/v1/accelerators")->status == 200);
        CHECK(client.Get("/v1/accelerators")->status == 200);
        auto r = client.Get("/v1/accelerators");
        REQUIRE(r);
        CHECK(r->status == 429);
        CHECK(r->get_header_value("Content-Type") == "application/problem+json");
        CHECK(r->get_header_value("Retry-After") == "2");
        CHECK(json::parse(r->body)["code"] == "rate_limited");
        // A forged address header does not buy a new bucket.
        auto forged = client.Get("/v1/accelerators",
                                 {{"X-Forwarded-For", "10.9.9.9"}, {"REMOTE_ADDR", "10.9.9.9"}});
        CHECK(forged->status == 429);
        CHECK(client.Get("/healthz")->status == 200);
        CHECK(options.rate_limiter->rejected() == 2);
    }

    TEST_CASE("every answer the limiter judged carries RateLimit-Policy and RateLimit") {
        gpucost::http::ServerOptions options;
        // One request per 1000 s: no token comes back while the test runs, however slowly.
        options.rate_limiter = std::make_shared<RateLimiter>(RateLimitOptions{0.001, 2});
        TestServer server(SampleDeps(), options);
        auto client = server.Client();
        auto first = client.Get("/v1/accelerators");
        REQUIRE(first);
        CHECK(first->status == 200);
        CHECK(first->get_header_value("RateLimit-Policy") == "\"default\";q=2;w=2000");
        CheckState(first->get_header_value("RateLimit"), 1, 1000);
        auto missing = client.Get("/v1/nope");  // an error answer is judged too
        REQUIRE(missing);
        CHECK(missing->status == 404);
        CheckState(missing->get_header_value("RateLimit"), 0, 2000);
        auto refused = client.Get("/v1/accelerators");
        REQUIRE(refused);
        CHECK(refused->status == 429);
        CHECK(refused->get_header_value("RateLimit-Policy") == "\"default\";q=2;w=2000");
        CheckState(refused->get_header_value("RateLimit"), 0, 2000);
        CHECK(std::stoi(refused->get_header_value("Retry-After")) > 900);
        // Probes are not limited, so they carry neither field.
        auto probe = client.Get("/healthz");
        REQUIRE(probe);
        CHECK_FALSE(probe->has_header("RateLimit"));
        CHECK_FALSE(probe->has_header("RateLimit-Policy"));
    }

    TEST_CASE("without rate limiting no answer carries the rate-limit fields") {
        TestServer server(SampleDeps());
        auto r = server.Client().Get("/v1/accelerators");
        REQUIRE(r);
        CHECK(r->status == 200);
        CHECK_FALSE(r->has_header("RateLimit"));
        CHECK_FALSE(r->has_header("RateLimit-Policy"));
    }
}
