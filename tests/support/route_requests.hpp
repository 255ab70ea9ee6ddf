#pragma once
// Requests the route tests send both through the in-memory stores (tests/service/http/routes/)
// and through PostgreSQL (tests/service/storage/): one spot plan on the sample catalog's p5, a
// price book of AWS discounts, a serving scenario whose budget view covers January to March 2026.

#include <string>

#include <doctest/doctest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

namespace gpucost::testing {

inline constexpr char kSpot[] = "aws-p5.48xlarge-us-east-1-spot";
inline constexpr double kSpotListUsdPerHour = 20.9934;  // tests/support/sample_catalog.hpp

inline const nlohmann::json kSpotPlan = {
    {"job_hours", 100},
    {"spot_offering_id", kSpot},
    {"on_demand_offering_id", "aws-p5.48xlarge-us-east-1-on-demand"},
    {"interruptions_per_hour", 0.1},
    {"checkpoint_minutes", 3},
    {"restart_minutes", 6}};

inline const nlohmann::json kServingScenario = {{"name", "llama serving"},
                                                {"plan", "inference"},
                                                {"request",
                                                 {{"model", "llama-2-7b"},
                                                  {"input_tokens", 512},
                                                  {"output_tokens", 256},
                                                  {"traffic", {{"requests_per_second", 1}}},
                                                  {"start_date", "2026-01-01"},
                                                  {"budget_months", 3}}}};

// The book acme-2026: `discount` off every AWS on-demand and spot price (spot opted into, as a
// contract that grants it says).
inline nlohmann::json Book(double discount) {
    return {{"id", "acme-2026"},
            {"name", "acme EDP"},
            {"rules",
             {{{"provider", "aws"},
               {"price_types", {"on_demand", "spot"}},
               {"discount_fraction", discount}}}}};
}

// The spot price a plan through the stored book answers with.
inline double SpotPriceOf(const nlohmann::json& plan) {
    const nlohmann::json prices =
        plan.value("price_book", nlohmann::json::object()).value("prices", nlohmann::json::array());
    for (const nlohmann::json& p : prices) {
        if (p["offering_id"] == kSpot) return p["usd_per_hour"].get<double>();
    }
    FAIL("the answer echoes no price of the spot offering");
    return 0;
}

// Writes version 1 (18 % off AWS) and version 2 (30 % off) of acme-2026 with the fixture's admin
// key (either fixture: in-memory stores or PostgreSQL).
template <typename RouteFixture>
void StoreTwoVersions(RouteFixture& f, httplib::Client& c) {
    REQUIRE(
        c.Post("/v1/price-books", f.Auth(f.admin), Book(0.18).dump(), "application/json")->status ==
        201);
    nlohmann::json next = Book(0.3);
    next.erase("id");
    REQUIRE(c.Put("/v1/price-books/acme-2026", f.Auth(f.admin), next.dump(), "application/json")
                ->status == 200);
}

}  // namespace gpucost::testing
