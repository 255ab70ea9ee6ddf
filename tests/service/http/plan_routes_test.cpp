#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "pricing/catalog_loader.hpp"
#include "tests/support/sample_catalog.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::testing::TestServer;

namespace {

gpucost::http::Deps SampleDeps() {
    auto loaded = gpucost::pricing::LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(loaded.ok());
    std::shared_ptr<const gpucost::pricing::Catalog> catalog = loaded.value();
    gpucost::http::Deps deps;
    deps.catalog = [catalog] { return catalog; };
    deps.openapi_yaml = "openapi: 3.1.0\n";
    deps.service_version = "test";
    return deps;
}

httplib::Result Post(const TestServer& server, const std::string& path, const std::string& body,
                     const std::string& accept = "") {
    httplib::Headers headers;
    if (!accept.empty()) {
        headers.emplace("Accept", accept);
    }
    return server.Client().Post(path.c_str(), headers, body, "application/json");
}

json Body(const httplib::Result& r) {
    REQUIRE(r);
    return json::parse(r->body);
}

void CheckProblem(const httplib::Result& r, int status, const std::string& code,
                  const std::string& field = "") {
    REQUIRE(r);
    CHECK(r->status == status);
    CHECK(r->get_header_value("Content-Type") == "application/problem+json");
    json body = json::parse(r->body);
    CHECK(body["code"] == code);
    if (!field.empty()) {
        CHECK(body["field"] == field);
    }
}

const char* kIssueSpotExample =
    R"({"job_hours": 100, "on_demand_usd_per_hour": 98.32, "spot_usd_per_hour": 30,
        "interruptions_per_hour": 0.1, "checkpoint_minutes": 3, "restart_minutes": 6})";

const char* kEnterpriseSeed =
    R"({"buy": {"capex_usd": 800000, "opex_usd_per_month": 5000, "accelerator_count": 80},
        "rent": {"usd_per_accelerator_hour": 2, "accelerator_hours_per_month": 10000}})";

}  // namespace

TEST_SUITE("plan_routes") {
    TEST_CASE("POST /v1/plans/spot answers the issue's example with every required field") {
        TestServer server(SampleDeps());
        auto r = Post(server, "/v1/plans/spot", kIssueSpotExample);
        REQUIRE(r);
        CHECK(r->status == 200);
        CHECK(r->get_header_value("Content-Type") == "application/json");
        json body = Body(r);
        CHECK(body["checkpoint_interval_hours"].get<double>() == doctest::Approx(0.966944));
        CHECK(body["expected_overhead_fraction"].get<double>() == doctest::Approx(0.118172));
        CHECK(body["expected_spot_cost_usd"].get<double>() == doctest::Approx(3354.514685));
        CHECK(body["on_demand_cost_usd"].get<double>() == doctest::Approx(9832));
        CHECK(body["expected_savings_usd"].get<double>() == doctest::Approx(6477.485315));
        CHECK(body["expected_savings_fraction"].get<double>() == doctest::Approx(0.658817));
        CHECK(body["recommendation"] == "spot");
        CHECK(body["assumptions"].is_array());
        CHECK(body["assumptions"].size() >= 4);
    }

    TEST_CASE("POST /v1/plans/spot prices a catalog spot offering against its on-demand twin") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/spot",
                              R"({"job_hours": 48, "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot",
                                  "deadline_hours": 60})"));
        CHECK(body["on_demand_offering_id"] == "aws-p5.48xlarge-us-east-1-on-demand");
        CHECK(body["interruption_bucket"] == ">20%");
        CHECK(body["spot_deadline_probability"].get<double>() > 0.9);
    }

    TEST_CASE("POST /v1/plans/spot rejects bad bodies with the right status and field") {
        TestServer server(SampleDeps());
        CheckProblem(Post(server, "/v1/plans/spot", "{"), 400, "malformed_request");
        CheckProblem(Post(server, "/v1/plans/spot", "[1]"), 400, "malformed_request");
        CheckProblem(Post(server, "/v1/plans/spot", R"({"job_hours": "ten"})"), 400,
                     "malformed_request", "/job_hours");
        CheckProblem(Post(server, "/v1/plans/spot", R"({"job_hours": 1, "bogus": 1})"), 400,
                     "malformed_request", "/bogus");
        CheckProblem(Post(server, "/v1/plans/spot",
                          R"({"job_hours": -5, "on_demand_usd_per_hour": 1,
                              "spot_usd_per_hour": 1, "interruptions_per_hour": 0})"),
                     422, "invalid_argument", "/job_hours");
        // A number beyond double range is refused by the parser.
        CheckProblem(Post(server, "/v1/plans/spot",
                          R"({"job_hours": 1e400, "on_demand_usd_per_hour": 1,
                              "spot_usd_per_hour": 1, "interruptions_per_hour": 0})"),
                     400, "malformed_request");
        CheckProblem(Post(server, "/v1/plans/spot",
                          R"({"job_hours": 1e300, "on_demand_usd_per_hour": 1,
                              "spot_usd_per_hour": 1, "interruptions_per_hour": 0})"),
                     422, "invalid_argument", "/job_hours");
        CheckProblem(Post(server, "/v1/plans/spot",
                          R"({"job_hours": 5, "nodes": 1.5, "spot_offering_id": "x"})"),
                     400, "malformed_request", "/nodes");
        CheckProblem(Post(server, "/v1/plans/spot",
                          R"({"job_hours": 5, "nodes": 99999999999, "spot_offering_id": "x"})"),
                     422, "invalid_argument", "/nodes");
        CheckProblem(Post(server, "/v1/plans/spot",
                          R"({"job_hours": 5, "spot_offering_id": "no-such-offering"})"),
                     404, "not_found", "/spot_offering_id");
        auto wrong_type = server.Client().Post("/v1/plans/spot", kIssueSpotExample, "text/plain");
        CheckProblem(wrong_type, 415, "unsupported_media_type");
        CheckProblem(Post(server, "/v1/plans/spot?x=1", kIssueSpotExample), 400,
                     "malformed_request");
    }

    TEST_CASE("GET on a plan route is a 405 naming POST") {
        TestServer server(SampleDeps());
        auto r = server.Client().Get("/v1/plans/spot");
        REQUIRE(r);
        CHECK(r->status == 405);
        CHECK(r->get_header_value("Allow") == "POST");
    }

    TEST_CASE("POST /v1/plans/rent-vs-buy: the enterprise seed breaks even in about 4.4 years") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/rent-vs-buy", kEnterpriseSeed));
        CHECK(body["break_even_months"].get<double>() / 12.0 == doctest::Approx(4.44).epsilon(0.01));
        CHECK(body["monthly_rent_usd"] == 20000);
        CHECK(body["monthly_own_usd"] == 17000);
        CHECK(body["break_even_utilization"].get<double>() == doctest::Approx(0.145548));
        CHECK(body["cumulative"].size() == 61);
        CHECK(body["cumulative"][0]["own_usd"] == 800000);
        CHECK(body.contains("npv_rent_usd"));
        CHECK(body.contains("npv_own_usd"));
        CHECK(body.contains("total_rent_usd"));
        CHECK(body.contains("total_own_usd"));
        CHECK((body["recommendation"] == "rent" || body["recommendation"] == "buy"));
    }

    TEST_CASE("POST /v1/plans/rent-vs-buy: a small team at ~1,000 GPU-hours a month should rent") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/rent-vs-buy",
                              R"({"buy": {"accelerator": "h100-sxm", "accelerator_count": 8},
                                  "rent": {"offering_id": "lambda-gpu_1x_h100-us-on-demand",
                                           "accelerator_hours_per_month": 1000}})"));
        CHECK(body["recommendation"] == "rent");
        CHECK(body["breaks_even_within_horizon"] == false);
    }

    TEST_CASE("rent-vs-buy never breaking even answers null, not a number") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/rent-vs-buy",
                              R"({"buy": {"capex_usd": 1000, "opex_usd_per_month": 500},
                                  "rent": {"usd_per_month": 400}})"));
        CHECK(body["break_even_months"].is_null());
        CHECK(body["recommendation"] == "rent");
    }

    TEST_CASE("Accept: text/csv gives the cumulative series as CSV") {
        TestServer server(SampleDeps());
        auto r = Post(server, "/v1/plans/rent-vs-buy", kEnterpriseSeed, "text/csv");
        REQUIRE(r);
        CHECK(r->status == 200);
        CHECK(r->get_header_value("Content-Type") == "text/csv; charset=utf-8");
        CHECK(r->body.rfind("month,rent_usd,own_usd,own_net_of_resale_usd\r\n0,0,800000,0\r\n", 0) ==
              0);
        auto json_preferred =
            Post(server, "/v1/plans/rent-vs-buy", kEnterpriseSeed, "text/csv;q=0.5, application/json");
        REQUIRE(json_preferred);
        CHECK(json_preferred->get_header_value("Content-Type") == "application/json");
    }

    TEST_CASE("rent-vs-buy problems name the nested field") {
        TestServer server(SampleDeps());
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy", R"({"rent": {"usd_per_month": 1}})"),
                     400, "malformed_request", "/buy");
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy",
                          R"({"buy": {"capex_usd": 1, "opex_usd_per_month": 1, "pue": "high"},
                              "rent": {"usd_per_month": 1}})"),
                     400, "malformed_request", "/buy/pue");
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy",
                          R"({"buy": {"capex_usd": 1, "opex_usd_per_month": 1, "pue": 0.2},
                              "rent": {"usd_per_month": 1}})"),
                     422, "invalid_argument", "/buy/pue");
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy",
                          R"({"buy": {"capex_usd": 1, "opex_usd_per_month": 1},
                              "rent": {"usd_per_month": 1, "offering": "x"}})"),
                     400, "malformed_request", "/rent/offering");
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy",
                          R"({"buy": {"accelerator": "tpu-v5e", "accelerator_count": 4},
                              "rent": {"usd_per_month": 100}})"),
                     409, "failed_precondition");
    }
}
