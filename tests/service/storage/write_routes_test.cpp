#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/service/storage/pg_fixture.hpp"
#include "tests/support/http_checks.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using namespace gpucost;
using gpucost::testing::Fixture;

namespace {

constexpr char kOffering[] = "/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand";

const std::string kPrice =
    R"({"usd_per_hour": 44.0, "as_of": "2026-11-21", "source": "NEGOTIATED"})";

}  // namespace

TEST_SUITE("write_routes") {
    TEST_CASE("as_of on catalog reads evaluates against the prices valid then") {
        Fixture f;
        auto c = f.server->Client();
        REQUIRE(c.Put((std::string(kOffering) + "/price").c_str(), f.Auth(f.admin), kPrice,
                      "application/json"));
        auto current = c.Get(kOffering);
        REQUIRE(current);
        CHECK(Body(current)["usd_per_hour"] == 44.0);
        CHECK(current->get_header_value("ETag").rfind("\"v2.", 0) == 0);
        CHECK(Body(c.Get((std::string(kOffering) + "?as_of=2026-11-10").c_str()))["usd_per_hour"] ==
              55.04);
        CHECK(Body(c.Get((std::string(kOffering) + "?as_of=2025-06-01T00:00:00Z")
                             .c_str()))["usd_per_hour"] == 98.32);
        // The TPU price is dated 2025-06-01: a date means the end of that day.
        CHECK(Body(c.Get("/v1/offerings?as_of=2025-05-31"))["total_count"] == 2);
        CHECK(Body(c.Get("/v1/offerings?as_of=2025-06-01"))["total_count"] == 3);
        CHECK(Body(c.Get("/v1/catalog?as_of=2024-01-01"))["offering_count"] == 0);
        CHECK(Body(c.Get("/v1/providers?as_of=2026-11-10"))["total_count"] == 3);
        CheckProblem(c.Get("/v1/offerings?as_of=last-week"), 422, "invalid_argument");
        CheckProblem(c.Get((std::string(kOffering) + "?as_of=2024-01-01").c_str()), 404,
                     "not_found");
    }
}
