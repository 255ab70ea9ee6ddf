#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "pricing/catalog_loader.hpp"
#include "service/http/codec/timestamp.hpp"
#include "tests/support/http_checks.hpp"
#include "tests/support/sample_catalog.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

httplib::Result Post(const TestServer& server, const std::string& path, const std::string& body,
                     const std::string& accept = "") {
    httplib::Headers headers;
    if (!accept.empty()) {
        headers.emplace("Accept", accept);
    }
    return server.Client().Post(path.c_str(), headers, body, "application/json");
}

const char* kIssueSpotExample =
    R"({"job_hours": 100, "on_demand_usd_per_hour": 98.32, "spot_usd_per_hour": 30,
        "interruptions_per_hour": 0.1, "checkpoint_minutes": 3, "restart_minutes": 6})";

const char* kEnterpriseSeed =
    R"({"buy": {"capex_usd": 800000, "opex_usd_per_month": 5000, "total_accelerators": 80},
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
        CHECK(body["checkpoints"].get<double>() == 103);
        CHECK(body["expected_overhead_fraction"].get<double>() == doctest::Approx(0.117818));
        CHECK(body["expected_spot_cost_usd"].get<double>() == doctest::Approx(3353.453463));
        CHECK(body["on_demand_cost_usd"].get<double>() == doctest::Approx(9832));
        CHECK(body["expected_savings_usd"].get<double>() == doctest::Approx(6478.546537));
        CHECK(body["expected_savings_fraction"].get<double>() == doctest::Approx(0.658925));
        CHECK(body["recommendation"] == "spot");
        CHECK(body["assumptions"].is_array());
        CHECK(body["assumptions"].size() >= 4);
        // A priced answer names the catalog its prices came from.
        CHECK(body["catalog_version"] == Body(server.Client().Get("/v1/catalog"))["version"]);
    }

    TEST_CASE("POST /v1/plans/spot costs the mixed plan: a 100.5 h deadline is on-demand") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/spot",
                              R"({"job_hours": 100, "on_demand_usd_per_hour": 98.32,
                                  "spot_usd_per_hour": 30, "interruptions_per_hour": 0.1,
                                  "checkpoint_minutes": 3, "restart_minutes": 6,
                                  "deadline_hours": 100.5})"));
        CHECK(body["recommendation"] == "on_demand");
        CHECK(body["mixed_slack_hours"].get<double>() == doctest::Approx(-4.65));
        CHECK(body["expected_mixed_cost_usd"].get<double>() == doctest::Approx(9557.06));
        CHECK(body["expected_mixed_savings_fraction"].get<double>() == doctest::Approx(0.027964));
        // Without a deadline the mixed plan is not weighed: null, not absent.
        body = Body(Post(server, "/v1/plans/spot", kIssueSpotExample));
        CHECK(body["expected_mixed_cost_usd"].is_null());
    }

    TEST_CASE(
        "POST /v1/plans/spot scales given prices and rate by nodes and finishes the high-rate "
        "example") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/spot",
                              R"({"job_hours": 100, "on_demand_usd_per_hour": 10,
                                  "spot_usd_per_hour": 2, "interruptions_per_hour": 1,
                                  "deadline_hours": 201.4})"));
        CHECK(body["spot_deadline_probability"].get<double>() > 0.99);
        CHECK(body["recommendation"] == "spot");
        body = Body(Post(server, "/v1/plans/spot",
                         R"({"job_hours": 100, "on_demand_usd_per_hour": 10, "nodes": 8,
                             "spot_usd_per_hour": 2, "interruptions_per_hour": 0.01})"));
        CHECK(body["nodes"] == 8);
        CHECK(body["spot_usd_per_hour"].get<double>() == doctest::Approx(2));
        CHECK(body["spot_cluster_usd_per_hour"].get<double>() == doctest::Approx(16));
        CHECK(body["cluster_interruptions_per_hour"].get<double>() == doctest::Approx(0.08));
        CHECK(body["on_demand_cost_usd"].get<double>() == doctest::Approx(8000));
    }

    TEST_CASE("POST /v1/plans/spot prices a catalog spot offering against its on-demand twin") {
        TestServer server(SampleDeps());
        json body =
            Body(Post(server, "/v1/plans/spot",
                      R"({"job_hours": 48, "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot",
                                  "deadline_hours": 60})"));
        CHECK(body["on_demand_offering_id"] == "aws-p5.48xlarge-us-east-1-on-demand");
        CHECK(body["spot_interruption"]["bucket"] == ">20%");
        CHECK(body["spot_interruption"]["max_percent_per_month"] == 100);
        CHECK(body["spot_deadline_probability"].get<double>() > 0.9);
    }

    TEST_CASE("POST /v1/plans/spot warns when the spot price predates the on-demand one") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/spot",
                              R"({"job_hours": 100,
                                  "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot"})"));
        REQUIRE(body["warnings"].size() == 1);
        CHECK(body["warnings"][0]["field"] == "/spot_offering_id");
        CHECK(body["warnings"][0]["detail"].get<std::string>().find("557 days before") !=
              std::string::npos);
        CHECK(body["interruption_percent_per_month_range"]["low"] == 22);
        CHECK(body["interruption_percent_per_month_range"]["high"] == 50);
        CHECK(body["expected_spot_cost_usd_range"]["low"].get<double>() <
              body["expected_spot_cost_usd_range"]["high"].get<double>());
        CHECK(body["spot_deadline_probability_range"].is_null());  // no deadline
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
        // An unknown id in the body is 422 with close matches, as in estimates (404 is for
        // ids in the path).
        auto unknown =
            Post(server, "/v1/plans/spot",
                 R"({"job_hours": 5, "spot_offering_id": "aws-p5.48xlarge-us-east-1-spott"})");
        CheckProblem(unknown, 422, "invalid_argument", "/spot_offering_id");
        CHECK(json::parse(unknown->body)["detail"].get<std::string>().find("closest known ids") !=
              std::string::npos);
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy",
                          R"({"buy": {"accelerator": "h100-sxmm", "total_accelerators": 8},
                              "rent": {"usd_per_month": 20000}})"),
                     422, "invalid_argument", "/buy/accelerator");
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy",
                          R"({"buy": {"capex_usd": 1, "opex_usd_per_month": 1},
                              "rent": {"offering_id": "nope"}})"),
                     422, "invalid_argument", "/rent/offering_id");
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
        CHECK(body["break_even_months"].get<double>() / 12.0 ==
              doctest::Approx(4.44).epsilon(0.01));
        CHECK(body["monthly_rent_usd"] == 20000);
        // (800K - 64K resale: 10 % book value less the 20 % used-market haircut) / 60 + 5K.
        CHECK(body["monthly_own_usd"] == 17266.67);
        // In present value, as the recommendation (17.33 %; 17.14 % before the resale haircut,
        // 14.6 % amortised).
        CHECK(body["break_even_utilization"].get<double>() == doctest::Approx(0.173263));
        CHECK(body["residual_value_at_horizon_usd"] == 64000);
        CHECK(body["breaks_even_within_horizon"] == false);  // discounted: 65.5 > 60 months
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
                              R"({"buy": {"accelerator": "h100-sxm", "total_accelerators": 8},
                                  "rent": {"offering_id": "lambda-gpu_1x_h100-us-on-demand",
                                           "accelerator_hours_per_month": 1000}})"));
        CHECK(body["recommendation"] == "rent");
        CHECK(body["breaks_even_within_horizon"] == false);
        CHECK(body["total_accelerators"] == 8);
        // The owned accelerators were `accelerator_count`, which names one instance's elsewhere.
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy",
                          R"({"buy": {"accelerator": "h100-sxm", "accelerator_count": 8},
                              "rent": {"usd_per_month": 20000}})"),
                     400, "malformed_request", "/buy/accelerator_count");
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
        CHECK(r->body.rfind("month,rent_usd,own_usd,own_net_of_resale_usd,currency,catalog_"
                            "version\r\n0,0,800000,160000,USD,",
                            0) == 0);
        auto json_preferred = Post(server, "/v1/plans/rent-vs-buy", kEnterpriseSeed,
                                   "text/csv;q=0.5, application/json");
        REQUIRE(json_preferred);
        CHECK(json_preferred->get_header_value("Content-Type") == "application/json");
    }

    TEST_CASE("rent-vs-buy problems name the nested field") {
        TestServer server(SampleDeps());
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy", R"({"rent": {"usd_per_month": 1}})"),
                     422, "invalid_argument", "/buy");
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
                          R"({"buy": {"accelerator": "tpu-v5e", "total_accelerators": 4},
                              "rent": {"usd_per_month": 100}})"),
                     409, "failed_precondition");
        // Spot is no steady monthly rent: 422 on the field that chose it.
        CheckProblem(Post(server, "/v1/plans/rent-vs-buy",
                          R"({"buy": {"accelerator": "h100-sxm", "total_accelerators": 8},
                              "rent": {"offering_id": "aws-p5.48xlarge-us-east-1-on-demand",
                                       "price_type": "spot"}})"),
                     422, "invalid_argument", "/rent/price_type");
    }

    TEST_CASE("POST /v1/plans/training keeps to the countries and accelerator families asked") {
        TestServer server(SampleDeps());
        auto plan = [&](const std::string& constraints) {
            return Post(server, "/v1/plans/training",
                        R"({"model": {"params_b": 7}, "tokens_b": 20, "precision": "bf16",
                            "limit": 50, "constraints": )" +
                            constraints + "}");
        };
        auto offerings = [](const json& body) {
            std::vector<std::string> ids;
            for (const auto& o : body["options"]) {
                ids.push_back(o["offering"]["region"].get<std::string>() + " " +
                              o["offering"]["accelerator"].get<std::string>());
            }
            return ids;
        };
        json any = Body(plan(R"({"max_total_accelerators": 64})"));
        auto all = offerings(any);
        CHECK(std::any_of(all.begin(), all.end(),
                          [](const std::string& s) { return s == "us-central1 tpu-v5e"; }));
        // The TPU's region has no row in the region table: not "in the US".
        json us = Body(plan(R"({"max_total_accelerators": 64, "countries": ["us"]})"));
        REQUIRE(us["options"].size() >= 1);
        for (const auto& id : offerings(us)) {
            CHECK(id.find("us-central1") == std::string::npos);
        }
        json h100 =
            Body(plan(R"({"max_total_accelerators": 64, "accelerator_families": ["H100"]})"));
        REQUIRE(h100["options"].size() >= 1);
        for (const auto& id : offerings(h100)) {
            CHECK(id.find("h100-sxm") != std::string::npos);
        }
        json europe = Body(plan(R"({"max_total_accelerators": 64, "continents": ["europe"]})"));
        CHECK(europe["options"].empty());  // the one European region has no offering
        auto unknown = plan(R"({"countries": ["US", "XX"], "accelerator_families": ["b300"]})");
        CheckProblem(unknown, 422, "invalid_argument", "/constraints/accelerator_families/0");
        auto country = plan(R"({"countries": ["US", "XX"]})");
        CheckProblem(country, 422, "invalid_argument", "/constraints/countries/1");
        CHECK(Body(country)["detail"].get<std::string>().find("known: DE, US") !=
              std::string::npos);
        CheckProblem(plan(R"({"continents": ["atlantis"]})"), 422, "invalid_argument",
                     "/constraints/continents/0");
    }

    TEST_CASE("POST /v1/plans/training ranks offerings and names cheapest, fastest and the front") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/training",
                              R"({"model": {"params_b": 7}, "tokens_b": 20, "precision": "bf16",
                                  "constraints": {"max_total_accelerators": 64, "deadline_hours": 1000},
                                  "sort": "cost", "limit": 5, "include_stale": true})"));
        REQUIRE(body.contains("options"));
        CHECK(body["options"].size() == 5);
        CHECK(body["total_count"].get<int>() >= 5);
        CHECK(body["total_count"] == body["feasible_count"]);
        const json& first = body["options"][0];
        for (const char* key :
             {"nodes", "total_accelerators", "parallelism", "wall_clock_hours",
              "cluster_usd_per_hour", "billed_hours", "cost_usd", "expected_cost_usd",
              "cost_usd_p10", "cost_usd_p50", "cost_usd_p90", "meets_deadline", "within_budget",
              "violations", "price_age_days", "independent_hosts", "max_instances"}) {
            CHECK(first.contains(key));
        }
        for (const char* key : {"id", "provider", "instance_type", "accelerator",
                                "accelerator_count", "price_type", "region", "usd_per_hour",
                                "as_of", "as_of_estimated", "verified", "spot_interruption"}) {
            CHECK(first["offering"].contains(key));
        }
        for (const auto& o : body["options"]) {
            CHECK(o["expected_wall_clock_hours"].get<double>() <= 1000);
            CHECK(o["violations"].empty());
        }
        CHECK(body["recommendation"] == body["cheapest"]);
        CHECK(body["reasoning"].get<std::string>().rfind("Recommended: ", 0) == 0);
        CHECK(body["best_by_provider"].size() >= 2);
        CHECK(body["catalog_version"].is_string());
        CHECK(body["budget"]["monthly"].size() >= 1);
        CHECK(first["cost_usd"].get<double>() <= body["options"][1]["cost_usd"].get<double>());
        CHECK(body["cheapest"].is_object());
        CHECK(body["fastest"].is_object());
        CHECK(body["pareto_front"].size() >= 1);
        CHECK(body["assumptions"].size() > 5);
        CHECK(body["sort"] == "cost");
    }

    TEST_CASE(
        "POST /v1/plans/training: nothing feasible gives null picks and the binding constraint") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/training",
                              R"({"model": {"params_b": 7}, "tokens_b": 20,
                                  "constraints": {"budget_usd": 1}, "include_infeasible": true,
                                  "limit": 3})"));
        CHECK(body["cheapest"].is_null());
        CHECK(body["fastest"].is_null());
        CHECK(body["recommendation"].is_null());
        CHECK(body["feasible_count"] == 0);
        CHECK(body["options"].size() == 3);
        CHECK(body["options"][0]["violations"][0]["constraint"] == "budget_usd");
        REQUIRE(body["binding_constraints"].size() == 1);
        CHECK(body["binding_constraints"][0]["constraint"] == "budget_usd");
        CHECK(body["binding_constraints"][0]["shortfall"].get<double>() > 0);
    }

    TEST_CASE("POST /v1/plans/training judges deadlines by probability: deadline_confidence") {
        TestServer server(SampleDeps());
        // One p5 spot option, expected to finish just inside the deadline: on the mean only.
        const std::string base =
            R"({"model": {"params_b": 7}, "tokens_b": 400, "include_infeasible": true,
                "constraints": {"accelerators": ["h100-sxm"], "price_types": ["spot"],
                                "max_total_accelerators": 8)";
        json free = Body(Post(server, "/v1/plans/training", base + "}}"));
        REQUIRE(free["options"].size() == 1);
        CHECK(free["options"][0]["deadline_probability"].is_null());
        const double expected = free["options"][0]["expected_wall_clock_hours"].get<double>();
        const std::string deadline = std::to_string(expected * 1.001);
        json strict = Body(
            Post(server, "/v1/plans/training", base + R"(, "deadline_hours": )" + deadline + "}}"));
        const json& option = strict["options"][0];
        const double p = option["deadline_probability"].get<double>();
        CHECK(p < 0.9);
        CHECK(option["meets_deadline"] == false);
        CHECK(option["violations"][0]["constraint"] == "deadline_confidence");
        CHECK(strict["recommendation"].is_null());
        CHECK(strict["binding_constraints"][0]["constraint"] == "deadline_confidence");
        json lenient = Body(Post(
            server, "/v1/plans/training",
            base + R"(, "deadline_hours": )" + deadline + R"(, "deadline_confidence": 0.5}})"));
        CHECK(lenient["options"][0]["meets_deadline"] == true);
        CHECK(lenient["recommendation"]["deadline_probability"].get<double>() == p);
        auto csv = Post(server, "/v1/plans/training",
                        base + R"(, "deadline_hours": )" + deadline + "}}", "text/csv");
        REQUIRE(csv);
        const std::string header = csv->body.substr(0, csv->body.find('\r'));
        CHECK(header.find(",deadline_probability,") != std::string::npos);
        CHECK(header.substr(header.size() - 25) == ",currency,catalog_version");
        CheckProblem(Post(server, "/v1/plans/training",
                          base + R"(, "deadline_hours": 10, "deadline_confidence": 1.5}})"),
                     422, "invalid_argument", "/constraints/deadline_confidence");
    }

    TEST_CASE(
        "POST /v1/plans/training caps runs at max_wall_clock_days and says what is possible") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/training",
                              R"({"model": {"params_b": 7}, "tokens_b": 200000,
                                  "constraints": {"max_total_accelerators": 64}})"));
        CHECK(body["max_wall_clock_days"] == 180);
        CHECK(body["options"].empty());
        CHECK(body["recommendation"].is_null());
        REQUIRE_FALSE(body["beyond_max_wall_clock"].empty());
        CHECK(body["beyond_max_wall_clock"][0]["expected_wall_clock_hours"].get<double>() >
              180 * 24);
        CHECK(body["skipped"]["over_max_wall_clock"].get<int>() > 0);
        CHECK(body["reasoning"].get<std::string>().rfind("No option finishes within 180 days", 0) ==
              0);
        json fast = Body(Post(server, "/v1/plans/training",
                              R"({"model": {"params_b": 7}, "tokens_b": 20,
                                  "constraints": {"deadline_hours": 1000}})"));
        CHECK(fast["max_wall_clock_days"].is_null());
        CHECK(fast["beyond_max_wall_clock"].empty());
        CheckProblem(Post(server, "/v1/plans/training",
                          R"({"model": {"params_b": 7}, "tokens_b": 20,
                              "constraints": {"max_wall_clock_days": 0}})"),
                     422, "invalid_argument", "/constraints/max_wall_clock_days");
    }

    TEST_CASE("POST /v1/plans/training leaves out unverified and old prices when asked") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/training",
                              R"({"model": {"params_b": 7}, "tokens_b": 20, "limit": 500,
                                  "constraints": {"verified_only": true}})"));
        REQUIRE_FALSE(body["options"].empty());
        for (const auto& o : body["options"]) CHECK(o["offering"]["verified"] == true);
        CHECK(body["skipped"]["unverified_price"].get<int>() > 0);
        json fresh = Body(Post(server, "/v1/plans/training",
                               R"({"model": {"params_b": 7}, "tokens_b": 20, "limit": 500,
                                   "constraints": {"max_price_age_days": 30}})"));
        for (const auto& o : fresh["options"]) CHECK(o["price_age_days"].get<int>() <= 30);
        CHECK(fresh["skipped"]["price_too_old"].get<int>() > 0);
        CheckProblem(Post(server, "/v1/plans/training",
                          R"({"model": {"params_b": 7}, "tokens_b": 20,
                              "constraints": {"max_price_age_days": -1}})"),
                     422, "invalid_argument", "/constraints/max_price_age_days");
    }

    TEST_CASE("POST /v1/plans/training: unknown ids are 422 with close matches") {
        TestServer server(SampleDeps());
        auto r = Post(server, "/v1/plans/training",
                      R"({"model": {"params_b": 7}, "tokens_b": 20,
                          "constraints": {"accelerators": ["H100"], "providers": ["AWS"]}})");
        CheckProblem(r, 422, "invalid_argument", "/constraints/accelerators/0");
        CHECK(Body(r)["detail"].get<std::string>().find("h100-sxm") != std::string::npos);
        json ok = Body(Post(server, "/v1/plans/training",
                            R"({"model": {"params_b": 7}, "tokens_b": 20,
                                "constraints": {"accelerators": ["H100-SXM"],
                                                "providers": ["AWS"]}})"));
        CHECK(ok["total_count"].get<int>() > 0);
        CheckProblem(Post(server, "/v1/plans/inference",
                          R"({"model": {"params_b": 7}, "input_tokens": 100, "output_tokens": 10,
                              "traffic": {"requests_per_second": 1},
                              "constraints": {"regions": ["us-east1"]}})"),
                     422, "invalid_argument", "/constraints/regions/0");
    }

    TEST_CASE("POST /v1/plans/inference reads weight_precision and names a bad one") {
        TestServer server(SampleDeps());
        const std::string head =
            R"({"model": {"params_b": 70}, "input_tokens": 100, "output_tokens": 10,
                "traffic": {"requests_per_second": 1}, "limit": 1, "include_stale": true,
                "constraints": {"accelerators": ["h100-sxm"]}, )";
        json narrow =
            Body(Post(server, "/v1/plans/inference", head + R"("weight_precision": "fp4"})"));
        json wide = Body(Post(server, "/v1/plans/inference", head + R"("precision": "bf16"})"));
        REQUIRE(narrow["options"].size() == 1);
        REQUIRE(wide["options"].size() == 1);
        CHECK(narrow["options"][0]["total_accelerators"].get<int>() <
              wide["options"][0]["total_accelerators"].get<int>());
        CheckProblem(Post(server, "/v1/plans/inference",
                          head + R"("precision": "fp8", "weight_precision": "int8"})"),
                     422, "invalid_argument", "/weight_precision");
    }

    TEST_CASE("POST /v1/plans/inference recommends and compares providers") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/inference",
                              R"({"model": {"params_b": 7}, "input_tokens": 100,
                                  "output_tokens": 10, "traffic": {"requests_per_second": 1},
                                  "limit": 1, "include_stale": true})"));
        CHECK(body["options"].size() == 1);
        CHECK(body["recommendation"] == body["options"][0]);
        CHECK(body["reasoning"].get<std::string>().rfind("Recommended: ", 0) == 0);
        CHECK(body["best_by_provider"].size() >= 2);
        CHECK(body["catalog_version"].is_string());
        REQUIRE(body["warnings"].is_array());
        const json& price = body["recommendation"]["offering"];
        bool estimated_warned = false;
        for (const auto& w : body["warnings"]) {
            estimated_warned = estimated_warned || w["detail"].get<std::string>().find(
                                                       "is estimated") != std::string::npos;
        }
        CHECK(estimated_warned == price["as_of_estimated"].get<bool>());
    }

    TEST_CASE("POST /v1/plans/inference passes over a stale cheapest unless include_stale") {
        // The sample's Lambda price (2026-09-25) is past Lambda's 7-day bound whatever today
        // is; the P5's, confirmed today here, is current.
        auto csv = gpucost::testing::SampleCatalogCsv();
        csv.prices_csv += "aws-p5.48xlarge-us-east-1-on-demand,55.04," + gpucost::http::TodayUtc() +
                          ",false,PRICE API,true,confirmed today\n";
        auto loaded = gpucost::pricing::LoadCatalog(csv);
        REQUIRE(loaded.ok());
        std::shared_ptr<const gpucost::pricing::Catalog> catalog = loaded.value();
        auto deps = SampleDeps();
        deps.catalog = [catalog] { return catalog; };
        TestServer server(deps);
        const std::string request = R"({"model": {"params_b": 7}, "input_tokens": 100,
            "output_tokens": 10, "traffic": {"requests_per_second": 1}, "limit": 1)";
        json body = Body(Post(server, "/v1/plans/inference", request + "}"));
        CHECK(body["options"][0]["offering"]["provider"] == "lambda");
        CHECK(body["options"][0]["price_state"] == "stale");
        CHECK(body["recommendation"]["offering"]["id"] == "aws-p5.48xlarge-us-east-1-on-demand");
        CHECK(body["recommendation"]["price_state"] == "current");
        json with_stale =
            Body(Post(server, "/v1/plans/inference", request + R"(, "include_stale": true})"));
        CHECK(with_stale["recommendation"]["offering"]["provider"] == "lambda");
        CheckProblem(Post(server, "/v1/plans/inference", request + R"(, "include_stale": 1})"), 400,
                     "malformed_request", "/include_stale");
    }

    TEST_CASE("POST /v1/plans/inference spans instances when one cannot hold the model") {
        TestServer server(SampleDeps());
        // 405B in BF16 (810 GB) does not fit the 576 GB an 8 x H100 instance's engine may use.
        json body = Body(Post(server, "/v1/plans/inference",
                              R"({"model": {"params_b": 405}, "precision": "bf16",
                                  "input_tokens": 1000, "output_tokens": 250,
                                  "traffic": {"requests_per_second": 1},
                                  "constraints": {"accelerators": ["h100-sxm"]}})"));
        REQUIRE(body["options"].size() >= 1);
        const json& o = body["recommendation"];
        CHECK(o["pipeline_parallel"].get<int>() >= 2);
        CHECK(o["instances_per_replica"] == o["pipeline_parallel"]);
        CHECK(o["nodes"].get<int>() ==
              o["replicas"].get<int>() * o["instances_per_replica"].get<int>());
        CHECK(o["reasoning"].get<std::string>().find("each replica spans") != std::string::npos);
        bool echoed = false;
        for (const json& a : body["assumptions"]) {
            echoed = echoed || a["name"] == "pipeline_stage_handoff_s";
        }
        CHECK(echoed);
    }

    TEST_CASE("POST /v1/plans/inference spreads a MoE model's experts over instances") {
        // DeepSeek-V3 by name in FP8 on H100 at 60 requests/s. Pipeline stages
        // over two instances need 6; experts over the 16 GPUs of two instances need fewer.
        TestServer server(SampleDeps());
        const std::string request = R"({"model": "deepseek-v3", "precision": "fp8",
                                  "input_tokens": 1000, "output_tokens": 250,
                                  "traffic": {"requests_per_second": 60},
                                  "constraints": {"accelerators": ["h100-sxm"]}})";
        json body = Body(Post(server, "/v1/plans/inference", request));
        REQUIRE(body["options"].size() >= 1);
        const json& o = body["recommendation"];
        CHECK(o["expert_parallel"].get<int>() == 8 * o["instances_per_replica"].get<int>());
        CHECK(o["instances_per_replica"].get<int>() >= 2);
        CHECK(o["pipeline_parallel"] == 1);
        CHECK(o["tensor_parallel"] == 1);
        CHECK(o["reasoning"].get<std::string>().find("expert parallel") != std::string::npos);
        CHECK(body["reasoning"].get<std::string>().find("with expert parallel") !=
              std::string::npos);
        bool echoed = false;
        for (const json& a : body["assumptions"]) {
            echoed = echoed || a["name"] == "expert_all_to_all_fixed_s";
        }
        CHECK(echoed);
        auto csv = Post(server, "/v1/plans/inference", request, "text/csv");
        REQUIRE(csv);
        REQUIRE(csv->status == 200);
        CHECK(csv->body.find("pipeline_parallel,expert_parallel,instances_per_replica") !=
              std::string::npos);
    }

    TEST_CASE("POST /v1/plans/inference never rents more instances than one customer can get") {
        TestServer server(SampleDeps());
        // 400 requests/s needs more single-GPU Lambda hosts than the sample's limit of 4.
        json body = Body(Post(server, "/v1/plans/inference",
                              R"({"model": {"params_b": 7}, "input_tokens": 512,
                                  "output_tokens": 256, "traffic": {"requests_per_second": 400},
                                  "limit": 50})"));
        REQUIRE(body["options"].size() >= 1);
        for (const json& o : body["options"]) {
            CHECK(o["nodes"].get<int>() <= o["max_instances"].get<int>());
            CHECK(o["offering"]["provider"] != "lambda");
        }
        CHECK(body["skipped"]["over_capacity"].get<int>() >= 1);
        CHECK(body["skipped_examples"]["over_capacity"].get<std::string>().find(
                  "one customer can get 4 (TEST LAMBDA)") != std::string::npos);
        CHECK(body["reasoning"].get<std::string>().find("skipped.over_capacity") !=
              std::string::npos);
        // Lambda alone cannot serve it: no option, and the reasoning says why.
        json lambda = Body(Post(server, "/v1/plans/inference",
                                R"({"model": {"params_b": 7}, "input_tokens": 512,
                                    "output_tokens": 256, "traffic": {"requests_per_second": 400},
                                    "constraints": {"providers": ["lambda"]}})"));
        CHECK(lambda["options"].empty());
        CHECK(lambda["recommendation"].is_null());
        const std::string why = lambda["reasoning"].get<std::string>();
        CHECK(why.rfind("No offering can serve this traffic", 0) == 0);
        CHECK(why.find("1 option needing more instances than one customer can get of its "
                       "offering was left out (skipped.over_capacity)") != std::string::npos);
    }

    TEST_CASE("POST /v1/plans/training answers CSV rows for spreadsheets") {
        TestServer server(SampleDeps());
        auto r = Post(server, "/v1/plans/training",
                      R"({"model": {"params_b": 7}, "tokens_b": 20, "limit": 3})", "text/csv");
        REQUIRE(r);
        CHECK(r->status == 200);
        CHECK(r->get_header_value("Content-Type") == "text/csv; charset=utf-8");
        CHECK(r->body.rfind("offering_id,provider,instance_type,", 0) == 0);
        CHECK(std::count(r->body.begin(), r->body.end(), '\n') == 4);
    }

    TEST_CASE("the options CSVs carry every scalar member an option's JSON has, as it states it") {
        TestServer server(SampleDeps());
        const std::vector<std::pair<std::string, std::string>> plans = {
            {"/v1/plans/training", R"({"model": {"params_b": 7}, "tokens_b": 20, "limit": 2})"},
            {"/v1/plans/inference", R"({"model": {"params_b": 7}, "input_tokens": 512,
                 "output_tokens": 256, "traffic": {"requests_per_second": 1}, "limit": 2})"}};
        for (const auto& [path, request] : plans) {
            CAPTURE(path);
            const json option = Body(Post(server, path, request))["options"].at(0);
            auto csv = Post(server, path, request, "text/csv");
            REQUIRE(csv);
            REQUIRE(csv->status == 200);
            std::vector<std::vector<std::string>> lines;
            std::istringstream text(csv->body);
            for (std::string line; std::getline(text, line);) {
                std::vector<std::string> cells;
                std::istringstream row(line.substr(0, line.find('\r')));
                for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
                if (!line.empty() && line.substr(0, line.find('\r')).back() == ',') {
                    cells.emplace_back();
                }
                lines.push_back(cells);
            }
            REQUIRE(lines.size() >= 2);
            for (const auto& [key, value] : option.items()) {
                if (value.is_object() || value.is_array() || value.is_string()) continue;
                CAPTURE(key);
                auto at = std::find(lines[0].begin(), lines[0].end(), key);
                if (at == lines[0].end() && value.is_null()) {
                    // An object member with nothing to say (owned): its named parts' columns.
                    CHECK(std::any_of(lines[0].begin(), lines[0].end(), [&](const std::string& h) {
                        return h.rfind(key + "_", 0) == 0;
                    }));
                    continue;
                }
                REQUIRE(at != lines[0].end());
                const std::string& cell =
                    lines[1].at(static_cast<std::size_t>(at - lines[0].begin()));
                if (value.is_null()) {
                    CHECK(cell.empty());
                } else if (value.is_boolean()) {
                    CHECK(cell == (value.get<bool>() ? "true" : "false"));
                } else {
                    CHECK(std::stod(cell) == doctest::Approx(value.get<double>()).epsilon(1e-6));
                }
            }
        }
    }

    TEST_CASE(
        "an unknown accelerator in plan constraints is 422 with the closest ids, as in "
        "estimates") {
        TestServer server(SampleDeps());
        auto training = Post(server, "/v1/plans/training",
                             R"({"model": {"params_b": 7}, "tokens_b": 20,
                                 "constraints": {"accelerators": ["h100-sxm", "h100-sxmm"]}})");
        CheckProblem(training, 422, "invalid_argument", "/constraints/accelerators/1");
        CHECK(training->body.find("close matches: h100-sxm") != std::string::npos);
        auto estimate = Post(server, "/v1/estimates/training",
                             R"({"model": {"params_b": 7}, "tokens_b": 20,
                                 "hardware": {"accelerator": "h100-sxmm", "total_accelerators": 8}})");
        CheckProblem(estimate, 422, "invalid_argument", "/hardware/accelerator");
        // The name users type for a part with several ids lists those ids first, not the id
        // one letter away (h800).
        auto abbreviated = Post(server, "/v1/estimates/training",
                                R"({"model": {"params_b": 7}, "tokens_b": 20,
                                    "hardware": {"accelerator": "h100", "total_accelerators": 8}})");
        CheckProblem(abbreviated, 422, "invalid_argument", "/hardware/accelerator");
        CHECK(json::parse(abbreviated->body)["detail"].get<std::string>().find(
                  "closest known ids: h100-") != std::string::npos);
        auto inference = Post(server, "/v1/plans/inference",
                              R"({"model": {"params_b": 7}, "input_tokens": 5, "output_tokens": 5,
                                  "traffic": {"requests_per_second": 1},
                                  "constraints": {"accelerators": ["nope"]}})");
        CheckProblem(inference, 422, "invalid_argument", "/constraints/accelerators/0");
    }

    TEST_CASE("every JSON-body endpoint answers a text/plain body with 415") {
        TestServer server(SampleDeps());
        for (const char* path : {"/v1/estimates/training", "/v1/estimates/inference",
                                 "/v1/estimates/roofline", "/v1/plans/spot", "/v1/plans/training",
                                 "/v1/plans/rent-vs-buy", "/v1/plans/inference"}) {
            CAPTURE(path);
            auto r = server.Client().Post(path, R"({"job_hours": 1})", "text/plain");
            CheckProblem(r, 415, "unsupported_media_type");
        }
    }

    TEST_CASE("training plan problems name the field") {
        TestServer server(SampleDeps());
        CheckProblem(Post(server, "/v1/plans/training", R"({"tokens_b": 20})"), 422,
                     "invalid_argument", "/model");  // a missing field is 422 everywhere
        CheckProblem(Post(server, "/v1/plans/training",
                          R"({"model": {"params_b": 7}, "tokens_b": 20,
                              "hardware": {"accelerator": "h100-sxm", "total_accelerators": 8}})"),
                     400, "malformed_request", "/hardware");
        CheckProblem(Post(server, "/v1/plans/training",
                          R"({"model": {"params_b": 7}, "tokens_b": 20, "sort": "cheap"})"),
                     422, "invalid_argument", "/sort");
        CheckProblem(Post(server, "/v1/plans/training",
                          R"({"model": {"params_b": 7}, "tokens_b": 20,
                              "constraints": {"price_types": ["reserved"]}})"),
                     422, "invalid_argument", "/constraints/price_types/0");
        CheckProblem(Post(server, "/v1/plans/training",
                          R"({"model": {"params_b": 7}, "tokens_b": 20,
                              "constraints": {"node_counts": [1, "two"]}})"),
                     400, "malformed_request", "/constraints/node_counts/1");
        // A well-formed integer out of range is 422 naming the element, as for any integer.
        CheckProblem(Post(server, "/v1/plans/training",
                          R"({"model": {"params_b": 7}, "tokens_b": 20,
                              "constraints": {"node_counts": [99999999999]}})"),
                     422, "invalid_argument", "/constraints/node_counts/0");
        CheckProblem(
            Post(server, "/v1/plans/training", R"({"model": {"params_b": 7}, "tokens_b": -1})"),
            422, "invalid_argument", "/tokens_b");
        CheckProblem(Post(server, "/v1/plans/training",
                          R"({"model": {"params_b": 7}, "tokens_b": 1,
                              "constraints": {"max_total_accelerators": 99999999}})"),
                     422, "invalid_argument", "/constraints/max_total_accelerators");
    }

    TEST_CASE("POST /v1/plans/spot takes a training workload on a spot offering") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/spot",
                              R"({"workload": {"model": {"params_b": 7}, "tokens_b": 20},
                                  "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot",
                                  "nodes": 2})"));
        REQUIRE(body.contains("job_hours"));
        CHECK(body["job_hours"].get<double>() > 0);
        CheckProblem(Post(server, "/v1/plans/spot",
                          R"({"workload": {"model": {"params_b": "x"}, "tokens_b": 20},
                              "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot"})"),
                     400, "malformed_request", "/workload/model/params_b");
        CheckProblem(Post(server, "/v1/plans/spot",
                          R"({"workload": {"model": {"params_b": 7}, "tokens_b": 20},
                              "job_hours": 5,
                              "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot"})"),
                     422, "invalid_argument", "/job_hours");
    }

    TEST_CASE(
        "POST /v1/plans/spot with a workload says what the estimate's error costs a deadline") {
        TestServer server(SampleDeps());
        const std::string workload =
            R"({"workload": {"model": {"params_b": 7}, "tokens_b": 20},
                "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot", "nodes": 2)";
        json open = Body(Post(server, "/v1/plans/spot", workload + "}"));
        REQUIRE(open.contains("job_hours"));
        const double job_hours = open["job_hours"].get<double>();
        CHECK(open["reasoning"].get<std::string>().find("past the deadline") == std::string::npos);
        auto spread_echo = [](const json& plan) {
            for (const auto& a : plan["assumptions"]) {
                if (a["name"] == "efficiency_spread_fraction") return a;
            }
            return json();
        };
        REQUIRE(spread_echo(open).is_object());
        CHECK(spread_echo(open)["value"].get<double>() == doctest::Approx(0.2));
        // The deadline at the run time's 90th percentile (1.2 x the median at a 0.20 spread):
        // one on-demand run in ten misses it, and both probabilities count that (the estimate
        // was taken as exact: on-demand was certain, spot judged by interruptions alone).
        json tight =
            Body(Post(server, "/v1/plans/spot",
                      workload + ", \"deadline_hours\": " + std::to_string(1.2 * job_hours) + "}"));
        CHECK(tight["on_demand_deadline_probability"].get<double>() ==
              doctest::Approx(0.9).epsilon(1e-4));
        CHECK(tight["spot_deadline_probability"].get<double>() < 0.9);
        CHECK(tight["reasoning"].get<std::string>().find(
                  "that spread alone puts about 10.0% of on-demand runs past the deadline, which "
                  "both deadline probabilities count") != std::string::npos);
        // job_hours given: the caller's hours, taken as exact.
        json given =
            Body(Post(server, "/v1/plans/spot",
                      R"({"job_hours": 100, "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot",
                                   "deadline_hours": 110})"));
        CHECK(given["on_demand_deadline_probability"].get<double>() == 1.0);
    }

    TEST_CASE("POST /v1/plans/inference: each option's traffic_met_probability, with the spread") {
        TestServer server(SampleDeps());
        const std::string request =
            R"({"model": {"params_b": 7}, "input_tokens": 512, "output_tokens": 256,
                "traffic": {"requests_per_second": 10})";
        auto spread_echo = [](const json& body, const std::string& name) {
            for (const json& a : body["assumptions"]) {
                if (a["name"] == name) return a;
            }
            return json();
        };
        json defaults = Body(Post(server, "/v1/plans/inference", request + "}"));
        REQUIRE(defaults["options"].size() >= 1);
        CHECK(defaults["options"][0]["traffic_met_probability"].get<double>() > 0.99);
        // Only the spread of the model's class is echoed: the one used.
        CHECK(spread_echo(defaults, "serving_throughput_spread_fraction")["value"] == 0.21);
        CHECK(spread_echo(defaults, "moe_serving_throughput_spread_fraction").is_null());
        json moe = Body(Post(server, "/v1/plans/inference",
                             R"({"model": "mixtral-8x7b", "input_tokens": 512, "output_tokens": 256,
                                 "traffic": {"requests_per_second": 10}})"));
        CHECK(spread_echo(moe, "moe_serving_throughput_spread_fraction")["value"] == 0.51);
        CHECK(spread_echo(moe, "serving_throughput_spread_fraction").is_null());
        // A quantised release served weight-only (gpt-oss at bf16 reads its MXFP4 experts at 4
        // bits) takes the weight-only spread, not its model class's.
        json weight_only = Body(Post(server, "/v1/plans/inference",
                                     R"({"model": "gpt-oss-120b", "input_tokens": 512,
                                         "output_tokens": 256, "traffic": {"requests_per_second": 10}})"));
        CHECK(spread_echo(weight_only, "weight_only_serving_throughput_spread_fraction")["value"] ==
              0.86);
        CHECK(spread_echo(weight_only, "moe_serving_throughput_spread_fraction").is_null());
        // A team's own measured spread replaces both; 0 takes the estimate as exact.
        json exact = Body(Post(server, "/v1/plans/inference",
                               request + R"(, "uncertainty": {"throughput_spread_fraction": 0}})"));
        REQUIRE(exact["options"].size() >= 1);
        CHECK(exact["options"][0]["traffic_met_probability"] == 1.0);
        const json echo = spread_echo(exact, "throughput_spread_fraction");
        CHECK(echo["source"] == "request");
        CHECK(spread_echo(exact, "serving_throughput_spread_fraction").is_null());
        CheckProblem(Post(server, "/v1/plans/inference",
                          request + R"(, "uncertainty": {"throughput_spread_fraction": -1}})"),
                     422, "invalid_argument", "/uncertainty/throughput_spread_fraction");
        CheckProblem(
            Post(server, "/v1/plans/inference", request + R"(, "uncertainty": {"spread": 0.1}})"),
            400, "malformed_request", "/uncertainty/spread");
        // traffic_confidence sizes each option to that probability at least (with a wide
        // spread, so that utilisation alone would not meet it).
        json sized = Body(Post(
            server, "/v1/plans/inference",
            request +
                R"(, "uncertainty": {"throughput_spread_fraction": 1, "traffic_confidence": 0.99}})"));
        REQUIRE(sized["options"].size() >= 1);
        for (const json& o : sized["options"]) {
            CHECK(o["traffic_met_probability"].get<double>() >= 0.99);
        }
        CHECK(spread_echo(sized, "traffic_confidence")["value"] == 0.99);
        CHECK(sized["options"][0]["reasoning"].get<std::string>().find("(traffic_confidence)") !=
              std::string::npos);
        CheckProblem(Post(server, "/v1/plans/inference",
                          request + R"(, "uncertainty": {"traffic_confidence": 1}})"),
                     422, "invalid_argument", "/uncertainty/traffic_confidence");
        CheckProblem(Post(server, "/v1/plans/inference",
                          request + R"(, "uncertainty": {"traffic_confidence": "high"}})"),
                     400, "malformed_request", "/uncertainty/traffic_confidence");
    }

    TEST_CASE("POST /v1/plans/inference sizes each offering for the traffic") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/inference",
                              R"({"model": {"params_b": 7}, "precision": "bf16",
                                  "input_tokens": 512, "output_tokens": 256,
                                  "traffic": {"requests_per_second": 10},
                                  "latency": {"max_inter_token_latency_ms": 50},
                                  "api_price": {"usd_per_million_input_tokens": 0.5,
                                                "usd_per_million_output_tokens": 1.5}})"));
        REQUIRE(body["options"].size() >= 1);
        const json& o = body["options"][0];
        for (const char* key :
             {"total_accelerators", "monthly_cost_usd", "usd_per_million_input_tokens",
              "usd_per_million_output_tokens", "usd_per_million_tokens", "savings_vs_api_fraction",
              "tensor_parallel", "batch_size", "nodes", "max_instances", "cluster_usd_per_hour"}) {
            CHECK(o.contains(key));
        }
        for (const char* old_key : {"accelerators", "instances"}) {
            CHECK_FALSE(o.contains(old_key));
        }
        CHECK(body.contains("total_count"));
        CHECK_FALSE(body.contains("total_options"));
        // One instance's price is the offering's usd_per_hour; the option's rate is the cluster's.
        CHECK(o["total_accelerators"] ==
              o["nodes"].get<int>() * o["offering"]["accelerator_count"].get<int>());
        CHECK(o["cluster_usd_per_hour"].get<double>() ==
              doctest::Approx(o["nodes"].get<int>() * o["offering"]["usd_per_hour"].get<double>()));
        CHECK(o["monthly_cost_usd"].get<double>() ==
              doctest::Approx(o["cluster_usd_per_hour"].get<double>() * 730));
        CHECK(o["inter_token_latency_ms"].get<double>() <= 50);
        CheckProblem(Post(server, "/v1/plans/inference",
                          R"({"model": {"params_b": 7}, "input_tokens": 5, "output_tokens": 5})"),
                     422, "invalid_argument", "/traffic");
        CheckProblem(Post(server, "/v1/plans/inference",
                          R"({"model": {"params_b": 7}, "input_tokens": 5, "output_tokens": 5,
                              "batch_size": 4, "traffic": {"requests_per_second": 1}})"),
                     400, "malformed_request", "/batch_size");
        auto csv = Post(server, "/v1/plans/inference",
                        R"({"model": {"params_b": 7}, "input_tokens": 5, "output_tokens": 5,
                            "traffic": {"tokens_per_day": 1e6}})",
                        "text/csv");
        REQUIRE(csv);
        CHECK(csv->get_header_value("Content-Type") == "text/csv; charset=utf-8");
        CHECK(csv->body.find("usd_per_million_output_tokens,usd_per_million_tokens,") !=
              std::string::npos);
        // The blended price: the monthly cost over every input and output token.
        CHECK(o["usd_per_million_tokens"].get<double>() * 768 / 1e6 * 10 * 730 * 3600 ==
              doctest::Approx(o["monthly_cost_usd"].get<double>()));
    }

    TEST_CASE("POST /v1/plans/inference warns when a request runs past the model's context") {
        TestServer server(SampleDeps());
        json body = Body(Post(server, "/v1/plans/inference",
                              R"({"model": "phi-4", "input_tokens": 16000, "output_tokens": 1000,
                                  "traffic": {"requests_per_second": 1}})"));
        REQUIRE(body["warnings"].is_array());
        bool named = false;
        for (const json& w : body["warnings"]) {
            named = named || (w["field"] == "/input_tokens" &&
                              w["detail"].get<std::string>().find("16384") != std::string::npos);
        }
        CHECK(named);
    }

    TEST_CASE("ids in plan bodies compare case-insensitively") {
        TestServer server(SampleDeps());
        auto spot =
            Post(server, "/v1/plans/spot",
                 R"({"job_hours": 48, "spot_offering_id": "AWS-P5.48XLARGE-US-EAST-1-SPOT"})");
        REQUIRE(spot);
        CHECK(spot->status == 200);
        CHECK(Body(spot)["on_demand_offering_id"] == "aws-p5.48xlarge-us-east-1-on-demand");
        auto rvb = Post(server, "/v1/plans/rent-vs-buy",
                        R"({"buy": {"accelerator": "H100-SXM", "total_accelerators": 8},
                            "rent": {"offering_id": "LAMBDA-GPU_1X_H100-US-ON-DEMAND",
                                     "accelerator_hours_per_month": 1000}})");
        REQUIRE(rvb);
        CHECK(rvb->status == 200);
    }
}

namespace {

// A JSON array of `n` copies of `value`.
json Repeated(const json& value, std::size_t n) {
    return json(std::vector<json>(n, value));
}

// A small training plan with `member` of `constraints` set to `value`.
std::string TrainingWith(const std::string& member, const json& value) {
    json body = {{"model", {{"params_b", 7}}}, {"tokens_b", 20}, {"limit", 1}};
    body["constraints"][member] = value;
    return body.dump();
}

// A small serving plan with `member` of `constraints` set to `value`.
std::string ServingWith(const std::string& member, const json& value) {
    json body = {{"model", {{"params_b", 7}}},
                 {"input_tokens", 100},
                 {"output_tokens", 10},
                 {"traffic", {{"requests_per_second", 1}}},
                 {"limit", 1}};
    body["constraints"][member] = value;
    return body.dump();
}

}  // namespace

TEST_SUITE("plan_routes request bounds") {
    // Each list a plan multiplies over is bounded (docs/api.md "Request bounds"): one past the
    // bound is 422 naming the list, whatever its entries.
    TEST_CASE("a training plan lists at most 32 node counts, 64 values per filter, 5 price types") {
        TestServer server(SampleDeps());
        CheckProblem(
            Post(server, "/v1/plans/training", TrainingWith("node_counts", Repeated(1, 33))), 422,
            "invalid_argument", "/constraints/node_counts");
        CheckProblem(
            Post(server, "/v1/plans/training", TrainingWith("providers", Repeated("aws", 65))), 422,
            "invalid_argument", "/constraints/providers");
        CheckProblem(
            Post(server, "/v1/plans/training", TrainingWith("regions", Repeated("us-east-1", 65))),
            422, "invalid_argument", "/constraints/regions");
        CheckProblem(Post(server, "/v1/plans/training",
                          TrainingWith("accelerators", Repeated("h100-sxm", 65))),
                     422, "invalid_argument", "/constraints/accelerators");
        CheckProblem(
            Post(server, "/v1/plans/training", TrainingWith("price_types", Repeated("spot", 6))),
            422, "invalid_argument", "/constraints/price_types");
        // At the bounds the plan is made.
        for (const auto& [member, value] :
             {std::pair<std::string, json>{"providers", Repeated("aws", 64)},
              {"price_types", Repeated("on_demand", 5)}}) {
            auto r = Post(server, "/v1/plans/training", TrainingWith(member, value));
            REQUIRE(r);
            CHECK_MESSAGE(r->status == 200, member);
        }
    }

    TEST_CASE("a serving plan lists at most 64 values per filter and 5 price types") {
        TestServer server(SampleDeps());
        CheckProblem(
            Post(server, "/v1/plans/inference", ServingWith("providers", Repeated("aws", 65))), 422,
            "invalid_argument", "/constraints/providers");
        CheckProblem(
            Post(server, "/v1/plans/inference", ServingWith("regions", Repeated("us-east-1", 65))),
            422, "invalid_argument", "/constraints/regions");
        CheckProblem(Post(server, "/v1/plans/inference",
                          ServingWith("accelerators", Repeated("h100-sxm", 65))),
                     422, "invalid_argument", "/constraints/accelerators");
        CheckProblem(
            Post(server, "/v1/plans/inference", ServingWith("price_types", Repeated("spot", 6))),
            422, "invalid_argument", "/constraints/price_types");
        auto r =
            Post(server, "/v1/plans/inference", ServingWith("regions", Repeated("us-east-1", 64)));
        REQUIRE(r);
        CHECK(r->status == 200);
    }

    TEST_CASE(
        "a price book given inline lists at most 200 rules; a plan names a larger one by id") {
        TestServer server(SampleDeps());
        const json rule = {{"provider", "aws"}, {"discount_fraction", 0.1}};
        json body = json::parse(TrainingWith("providers", json::array({"aws"})));
        body["price_book"] = {{"name", "large"}, {"rules", Repeated(rule, 201)}};
        auto r = Post(server, "/v1/plans/training", body.dump());
        CheckProblem(r, 422, "invalid_argument", "/price_book/rules");
        CHECK(Body(r)["detail"].get<std::string>().find("/v1/price-books") != std::string::npos);
        body["price_book"]["rules"] = Repeated(rule, 200);
        auto at_bound = Post(server, "/v1/plans/training", body.dump());
        REQUIRE(at_bound);
        CHECK(at_bound->status == 200);
        // The same bound on every plan kind that takes a book.
        json serving = json::parse(ServingWith("providers", json::array({"aws"})));
        serving["price_book"] = {{"name", "large"}, {"rules", Repeated(rule, 201)}};
        CheckProblem(Post(server, "/v1/plans/inference", serving.dump()), 422, "invalid_argument",
                     "/price_book/rules");
    }
}

TEST_SUITE("plan_routes request budget") {
    // A budget of 0 has run out before the plan starts: no test depends on the machine's speed.
    gpucost::http::Deps SpentBudget() {
        gpucost::http::Deps deps = SampleDeps();
        deps.request_budget = std::chrono::milliseconds(0);
        return deps;
    }

    TEST_CASE("a plan past its budget is 503 request_budget_exceeded with Retry-After, counted") {
        TestServer server(SpentBudget());
        const auto before = gpucost::http::Metrics::BudgetExceededCount();
        for (const auto& [path, body] :
             {std::pair<std::string, std::string>{"/v1/plans/training",
                                                  TrainingWith("providers", json::array({"aws"}))},
              {"/v1/plans/inference", ServingWith("providers", json::array({"aws"}))},
              {"/v1/plans/spot",
               R"({"workload": {"model": {"params_b": 7}, "tokens_b": 20},
                   "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot", "nodes": 2})"}}) {
            auto r = Post(server, path, body);
            CheckProblem(r, 503, "request_budget_exceeded");
            CHECK_MESSAGE(r->get_header_value("Retry-After") == "5", path);
            CHECK_MESSAGE(r->body.find("--request-budget-ms") != std::string::npos, path);
            // Never a partial answer: the problem carries no plan member.
            CHECK_FALSE(Body(r).contains("options"));
        }
        CHECK(gpucost::http::Metrics::BudgetExceededCount() - before == 3);
        auto metrics = server.Client().Get("/metrics");
        REQUIRE(metrics);
        CHECK(metrics->body.find("gpucost_request_budget_exceeded_total ") != std::string::npos);
    }

    TEST_CASE("with time left the same plans are answered") {
        TestServer server(SampleDeps());
        auto r =
            Post(server, "/v1/plans/training", TrainingWith("providers", json::array({"aws"})));
        REQUIRE(r);
        CHECK(r->status == 200);
    }
}
