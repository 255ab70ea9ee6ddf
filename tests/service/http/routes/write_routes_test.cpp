#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "pricing/catalog_loader.hpp"
#include "tests/support/sample_catalog.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

// Embedded mode: no store behind the API.
void CheckNeedsDatabase(const httplib::Result& r, const std::string& code = "database_required") {
    REQUIRE(r);
    CHECK(r->status == 409);
    CHECK_FALSE(r->has_header("Retry-After"));  // retrying cannot help
    CHECK(r->get_header_value("Content-Type") == "application/problem+json");
    json body = json::parse(r->body);
    CHECK(body["code"] == code);
    CHECK(body["detail"].get<std::string>().find("DATABASE_URL") != std::string::npos);
}

}  // namespace

TEST_SUITE("write_routes_embedded") {
    TEST_CASE("without a database every write answers 409 saying a database is needed") {
        TestServer server(SampleDeps());
        auto c = server.Client();
        const std::string id = "/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand";
        httplib::Headers auth = {{"Authorization", "Bearer gpc_x"}};
        CheckNeedsDatabase(c.Put((id + "/price").c_str(), auth,
                                 R"({"usd_per_hour": 1, "source": "x"})", "application/json"));
        CheckNeedsDatabase(c.Post("/v1/offerings", auth, "{}", "application/json"));
        CheckNeedsDatabase(c.Delete(id.c_str(), auth));
        CheckNeedsDatabase(c.Get((id + "/history").c_str()));
        CheckNeedsDatabase(c.Post("/v1/scenarios", auth, "{}", "application/json"));
        CheckNeedsDatabase(c.Get("/v1/scenarios"));
        CheckNeedsDatabase(c.Post("/v1/scenarios/1/evaluate", "", "application/json"));
        // Reads keep working and say nothing about a database.
        auto read = c.Get(id.c_str());
        REQUIRE(read);
        CHECK(read->status == 200);
        auto health = json::parse(c.Get("/healthz")->body);
        CHECK(health["status"] == "ok");
        CHECK_FALSE(health.contains("database"));
    }

    TEST_CASE(
        "as_of without a database is 409 database_required with no Retry-After, a "
        "malformed as_of is 422 either way") {
        TestServer server(SampleDeps());
        auto c = server.Client();
        auto r = c.Get("/v1/offerings?as_of=2026-01-01");
        CheckNeedsDatabase(r);
        CHECK(json::parse(r->body)["field"] == "as_of");
        CheckNeedsDatabase(c.Get("/v1/catalog?as_of=2026-01-01"));
        CheckNeedsDatabase(c.Get("/v1/providers?as_of=2026-01-01"));
        CheckNeedsDatabase(
            c.Get("/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand?as_of=2026-01-01"));
        auto bad = c.Get("/v1/offerings?as_of=tomorrow");
        REQUIRE(bad);
        CHECK(bad->status == 422);
        CHECK(json::parse(bad->body)["field"] == "as_of");
        auto plan =
            c.Post("/v1/plans/spot?as_of=2026-01-01",
                   R"({"job_hours": 100, "on_demand_usd_per_hour": 98.32, "spot_usd_per_hour": 30,
                               "interruptions_per_hour": 0.1})",
                   "application/json");
        CheckNeedsDatabase(plan);
    }
}
