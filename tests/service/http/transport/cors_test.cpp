#include "service/http/transport/cors.hpp"

#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>

#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

constexpr char kOrigin[] = "https://app.example.com";

// The names of a comma-separated header list.
std::set<std::string> Names(const std::string& list) {
    std::set<std::string> out;
    std::stringstream in(list);
    std::string name;
    while (std::getline(in, name, ',')) {
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        out.insert(name);
    }
    return out;
}

}  // namespace

TEST_SUITE("cors") {
    TEST_CASE("a page reads every header the API sends beyond the safelisted ones") {
        auto deps = SampleDeps();
        deps.cors_origins = {kOrigin};
        TestServer server(deps);
        auto r = server.Client().Get("/v1/catalog", {{"Origin", kOrigin}});
        REQUIRE(r);
        const auto exposed = Names(r->get_header_value("Access-Control-Expose-Headers"));
        for (const char* h : {"ETag", "Location", "Retry-After", "X-Request-Id", "RateLimit",
                              "RateLimit-Policy", "Catalog-Version", "API-Version", "Deprecation",
                              "Sunset", "Link", "Idempotent-Replayed"}) {
            CAPTURE(h);
            CHECK(exposed.count(h) == 1);
        }
    }

    TEST_CASE("a preflight allows the conditional and retry headers the API reads") {
        auto deps = SampleDeps();
        deps.cors_origins = {kOrigin};
        TestServer server(deps);
        auto preflight = server.Client().Options(
            "/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand",
            {{"Origin", kOrigin}, {"Access-Control-Request-Method", "GET"}});
        REQUIRE(preflight);
        CHECK(preflight->status == 204);
        const auto allowed = Names(preflight->get_header_value("Access-Control-Allow-Headers"));
        for (const char* h : {"Authorization", "Content-Type", "Accept", "If-Match",
                              "If-None-Match", "Idempotency-Key", "X-Request-Id"}) {
            CAPTURE(h);
            CHECK(allowed.count(h) == 1);
        }
    }
}
