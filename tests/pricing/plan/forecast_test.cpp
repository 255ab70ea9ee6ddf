#include "pricing/plan/forecast.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "pricing/calendar.hpp"
#include "pricing/plan/budget.hpp"

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

TEST_CASE("a serving forecast bills each calendar month's own hours of its budget view") {
    Offering o;
    o.accelerator_count = 1;
    o.price.usd_per_hour = 2;
    InferencePlanOption option;
    option.offering = &o;
    option.nodes = 3;
    ServingBudgetView budget;
    budget.start_date = "2027-02-01";
    budget.end_date = "2027-04-01";
    auto rows = ForecastServing(option, budget, 2.5);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].pricing_quantity == doctest::Approx(28 * 24 * 3));
    CHECK(rows[0].effective_cost_usd == doctest::Approx(28 * 24 * 3 * 2));
    CHECK(rows[0].list_cost_usd == doctest::Approx(28 * 24 * 3 * 2.5));
    CHECK(rows[1].period_start == "2027-03-01");
    CHECK(rows[1].pricing_quantity == doctest::Approx(31 * 24 * 3));
    // The view's start date and months (start_date, budget_months), not the current month: a
    // start on the 20th pays 9 days of February, then March, then 19 days of April.
    budget.start_date = "2027-02-20";
    budget.end_date = "2027-04-20";
    rows = ForecastServing(option, budget, 2.5);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].period_start == "2027-02-01");
    CHECK(rows[0].pricing_quantity == doctest::Approx(9 * 24 * 3));
    CHECK(rows[2].period_start == "2027-04-01");
    CHECK(rows[2].pricing_quantity == doctest::Approx(19 * 24 * 3));
    budget.end_date = "2027-13-01";
    CHECK(ForecastServing(option, budget, 2.5).empty());
}

TEST_CASE("owned capacity in a serving forecast: its hours billed by the commitment") {
    Offering o;
    o.id = "x-on-demand";
    o.accelerator_count = 8;
    o.price.usd_per_hour = 2;
    InferencePlanOption option;
    option.offering = &o;
    option.nodes = 4;
    ServingBudgetView budget;
    budget.start_date = "2027-01-01";
    budget.end_date = "2027-05-01";
    // Two instances owned for January to March at 1.5 USD an hour.
    const std::vector<OwnedCapacity> owned = {{"x-on-demand", 2, "2026-10-01", "2027-04-01", 1.5}};
    auto rows = ForecastServing(option, budget, 2.5, owned);
    // January to March: the owned row, then the 2 uncovered instances; April: all 4.
    REQUIRE(rows.size() == 7);
    CHECK(rows[0].owned);
    CHECK(rows[0].period_start == "2027-01-01");
    CHECK(rows[0].pricing_quantity == doctest::Approx(31 * 24 * 2));
    CHECK(*rows[0].billed_cost_usd == 0);
    CHECK(rows[0].effective_cost_usd == doctest::Approx(31 * 24 * 2 * 1.5));
    CHECK(rows[0].effective_unit_price_usd == doctest::Approx(1.5));
    CHECK(rows[0].list_cost_usd == doctest::Approx(31 * 24 * 2 * 2.5));
    CHECK_FALSE(rows[1].owned);
    CHECK(rows[1].pricing_quantity == doctest::Approx(31 * 24 * 2));
    CHECK(rows[1].effective_cost_usd == doctest::Approx(31 * 24 * 2 * 2.0));
    CHECK(rows[3].pricing_quantity == doctest::Approx(28 * 24 * 2));
    CHECK(rows[6].period_start == "2027-04-01");
    CHECK_FALSE(rows[6].owned);
    CHECK(rows[6].pricing_quantity == doctest::Approx(30 * 24 * 4));
    // Without owned capacity: one row a month, every instance.
    CHECK(ForecastServing(option, budget, 2.5).size() == 4);
}

TEST_CASE("owned capacity in a training forecast: its hours billed by the commitment") {
    Offering o;
    o.id = "x-on-demand";
    o.accelerator_count = 8;
    o.price.usd_per_hour = 10;
    TrainingPlanOption option;
    option.offering = &o;
    option.nodes = 2;
    option.expected_wall_clock_hours = 48;
    // One of the two nodes owned for the whole December: its 24 h of 2026-12-31 are sunk; the
    // other node and all of January are paid: 72 instance-hours x 10 = 720.
    option.expected_cost_usd = 720;
    option.owned = OwnedUse{24, 24 * 4.0, 960};
    TrainingPlan plan;
    plan.recommendation = option;
    plan.budget = BudgetView{};
    plan.budget->start_date = "2026-12-31";
    TrainingPlanRequest request;
    request.owned_capacity = {{"X-ON-DEMAND", 1, "2026-12-01", "2027-01-01", 4.0}};
    auto rows = ForecastTraining(plan, request, 12.0);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].owned);
    CHECK(rows[0].period_start == "2026-12-01");
    CHECK(rows[0].pricing_quantity == doctest::Approx(24));
    CHECK(rows[0].effective_cost_usd == doctest::Approx(96));
    CHECK(*rows[0].billed_cost_usd == 0);
    CHECK(rows[0].list_cost_usd == doctest::Approx(24 * 12));
    CHECK_FALSE(rows[1].owned);
    CHECK(rows[1].pricing_quantity == doctest::Approx(24));
    CHECK(rows[1].effective_cost_usd == doctest::Approx(240));
    CHECK(rows[2].period_start == "2027-01-01");
    CHECK(rows[2].pricing_quantity == doctest::Approx(48));
    CHECK(rows[2].effective_cost_usd == doctest::Approx(480));
}

TEST_CASE("owned hours of a commitment's forecast count only while the run uses them") {
    Offering o;
    o.id = "x-commit-1y";
    o.accelerator_count = 8;
    o.price_type = PriceType::kCommit1y;
    o.price.usd_per_hour = 10;
    TrainingPlanOption option;
    option.offering = &o;
    option.nodes = 1;
    option.expected_wall_clock_hours = 48;
    option.billed_hours = 24 * 59;  // a term of January and February (for the test)
    option.expected_cost_usd = 0;   // the run is owned throughout
    option.owned = OwnedUse{48, 48 * 4.0, 24 * 59 * 10.0};
    TrainingPlan plan;
    plan.recommendation = option;
    plan.budget = BudgetView{};
    plan.budget->start_date = "2027-01-01";
    TrainingPlanRequest request;
    // Owned for all of January and February; the run uses 48 hours of it.
    request.owned_capacity = {{"x-commit-1y", 1, "2027-01-01", "2027-03-01", 4.0}};
    auto rows = ForecastTraining(plan, request, 12.0);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].owned);
    CHECK(rows[0].pricing_quantity == doctest::Approx(48));
    CHECK(rows[0].effective_cost_usd == doctest::Approx(192));
}

TEST_CASE("calendar months are added day for day, kept to a shorter month's last day") {
    auto day = [](const char* date) { return *DaysFromIsoDate(date); };
    CHECK(IsoDateFromDays(AddCalendarMonths(day("2026-11-27"), 12)) == "2027-11-27");
    CHECK(IsoDateFromDays(AddCalendarMonths(day("2027-01-31"), 1)) == "2027-02-28");
    CHECK(IsoDateFromDays(AddCalendarMonths(day("2028-01-31"), 1)) == "2028-02-29");
    CHECK(IsoDateFromDays(AddCalendarMonths(day("2027-12-15"), 1)) == "2028-01-15");
    CHECK(IsoDateFromDays(AddCalendarMonths(day("2027-03-01"), 0)) == "2027-03-01");
}

TEST_CASE("months in cents add up to the total, each within a cent of its share") {
    const std::map<std::string, double> usd = {
        {"2027-01", 100.0 / 3}, {"2027-02", 100.0 / 3}, {"2027-03", 100.0 / 3}};
    auto months = MonthsInCents(usd, 10000);
    REQUIRE(months.size() == 3);
    CHECK(months[0].month == "2027-01");
    long long cents = 0;
    for (const MonthlySpend& m : months) {
        cents += std::llround(m.usd * 100);
        CHECK(std::abs(m.usd - 100.0 / 3) < 0.01);
    }
    CHECK(cents == 10000);
    auto start = StartOfBudget(std::nullopt, "2027-05-06");
    REQUIRE(start.has_value());
    CHECK(std::string(start->source) == "today");
    CHECK(StartOfBudget(std::string("2027-05-07"), "2027-05-06")->day ==
          *DaysFromIsoDate("2027-05-07"));
    CHECK_FALSE(StartOfBudget(std::string("May 7"), "2027-05-06").has_value());
    CHECK_FALSE(StartOfBudget(std::nullopt, "").has_value());
}

TEST_CASE("owned hours no plan uses are an unused charge after the month's last charge") {
    Offering o;
    o.id = "x-on-demand";
    o.accelerator_count = 8;
    o.price.usd_per_hour = 2;
    InferencePlanOption option;
    option.offering = &o;
    option.nodes = 1;
    ServingBudgetView budget;
    budget.start_date = "2027-01-01";
    budget.end_date = "2027-03-01";
    // Two instances owned in January at 1.5 USD an hour; the fleet uses one of them.
    const std::vector<OwnedCapacity> owned = {{"x-on-demand", 2, "2027-01-01", "2027-02-01", 1.5}};
    const auto rows = WithUnusedOwned(ForecastServing(option, budget, 2.5, owned), owned);
    // January: the used owned hours, then the idle ones; February: the paid hours only.
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].owned);
    CHECK_FALSE(rows[0].unused);
    CHECK(rows[1].unused);
    CHECK(rows[1].owned);
    CHECK(rows[1].period_start == "2027-01-01");
    CHECK(rows[1].pricing_quantity == doctest::Approx(31 * 24));
    CHECK(rows[1].effective_cost_usd == doctest::Approx(31 * 24 * 1.5));
    CHECK(*rows[1].billed_cost_usd == 0);
    CHECK(rows[1].list_cost_usd == doctest::Approx(31 * 24 * 2.5));
    CHECK(rows[1].accelerator_hours == 0);
    CHECK_FALSE(rows[2].owned);
    // Nothing owned: the charges as they were.
    CHECK(WithUnusedOwned(ForecastServing(option, budget, 2.5), {}).size() == 2);
}

TEST_CASE("a term's months and a block carry the hours they reserve and the run uses") {
    Offering o;
    o.id = "x-commit-1y";
    o.accelerator_count = 8;
    o.price_type = PriceType::kCommit1y;
    o.price.usd_per_hour = 5;
    TrainingPlanOption option;
    option.offering = &o;
    option.nodes = 1;
    option.expected_wall_clock_hours = 48;  // from 2027-01-31: 24 h in January, 24 in February
    option.billed_hours = 29 * 24;          // the term billed to the end of February
    option.expected_cost_usd = 5 * 29 * 24;
    TrainingPlan plan;
    plan.recommendation = option;
    plan.budget = BudgetView{};
    plan.budget->start_date = "2027-01-31";
    auto rows = ForecastTraining(plan, TrainingPlanRequest{}, 6.0);
    REQUIRE(rows.size() == 2);
    REQUIRE(rows[0].reserved_months.size() == 1);
    CHECK(rows[0].reserved_from == "2027-01-31");
    CHECK(rows[0].reserved_months[0].period_start == "2027-01-01");
    CHECK(rows[0].reserved_months[0].reserved_instance_hours == doctest::Approx(24));
    CHECK(rows[0].reserved_months[0].used_instance_hours == doctest::Approx(24));
    CHECK(rows[1].reserved_months[0].reserved_instance_hours == doctest::Approx(28 * 24));
    CHECK(rows[1].reserved_months[0].used_instance_hours == doctest::Approx(24));

    o.price_type = PriceType::kCapacityBlock;
    option.billed_hours = 72;
    option.expected_cost_usd = 5 * 72;
    plan.recommendation = option;
    rows = ForecastTraining(plan, TrainingPlanRequest{}, 6.0);
    REQUIRE(rows.size() == 1);
    REQUIRE(rows[0].reserved_months.size() == 2);
    CHECK(rows[0].reserved_months[0].reserved_instance_hours == doctest::Approx(24));
    CHECK(rows[0].reserved_months[1].period_start == "2027-02-01");
    CHECK(rows[0].reserved_months[1].reserved_instance_hours == doctest::Approx(48));
    CHECK(rows[0].reserved_months[1].used_instance_hours == doctest::Approx(24));
}
