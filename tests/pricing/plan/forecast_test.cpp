#include "pricing/plan/forecast.hpp"

#include <doctest/doctest.h>

using namespace gpucost::pricing;
using namespace gpucost::pricing::plan;

TEST_CASE(
    "a training forecast splits the run at month ends and carries list and effective "
    "prices") {
    Offering o;
    o.id = "x-on-demand";
    o.accelerator_count = 8;
    o.price.usd_per_hour = 10;  // effective (a price book's)
    TrainingPlanOption option;
    option.offering = &o;
    option.nodes = 2;
    option.expected_wall_clock_hours = 48;
    option.expected_cost_usd = 960;  // 2 nodes x 10 x 48 h
    option.cost_usd_p10 = 800;
    option.cost_usd_p90 = 1200;
    TrainingPlan plan;
    plan.recommendation = option;
    plan.budget = BudgetView{};
    plan.budget->start_date = "2026-12-31";
    auto rows = ForecastTraining(plan, TrainingPlanRequest{}, 12.0);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].period_start == "2026-12-01");
    CHECK(rows[0].period_end == "2027-01-01");
    CHECK(rows[1].period_end == "2027-02-01");
    for (const auto& r : rows) {
        CHECK(r.pricing_quantity == doctest::Approx(48));  // 24 h x 2 nodes
        CHECK(r.effective_cost_usd == doctest::Approx(480));
        CHECK(r.list_cost_usd == doctest::Approx(576));
        CHECK(r.accelerator_hours == doctest::Approx(384));
        CHECK(*r.cost_usd_p90 == doctest::Approx(600));
    }
    plan.recommendation.reset();
    CHECK(ForecastTraining(plan, TrainingPlanRequest{}, 12.0).empty());
}

TEST_CASE("a serving forecast bills each calendar month's own hours") {
    Offering o;
    o.accelerator_count = 1;
    o.price.usd_per_hour = 2;
    InferencePlanOption option;
    option.offering = &o;
    option.nodes = 3;
    auto rows = ForecastServing(option, "2027-02", 2.5, 2);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].pricing_quantity == doctest::Approx(28 * 24 * 3));
    CHECK(rows[0].effective_cost_usd == doctest::Approx(28 * 24 * 3 * 2));
    CHECK(rows[0].list_cost_usd == doctest::Approx(28 * 24 * 3 * 2.5));
    CHECK(rows[1].period_start == "2027-03-01");
    CHECK(rows[1].pricing_quantity == doctest::Approx(31 * 24 * 3));
    CHECK(ForecastServing(option, "2027-13", 2.5).empty());
}
