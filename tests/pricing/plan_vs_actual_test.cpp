#include "pricing/plan_vs_actual.hpp"

#include <doctest/doctest.h>

using namespace gpucost::pricing;

TEST_CASE("the gap between plan and actual splits into price and quantity that add up") {
    // Planned 1000 + 500 accelerator-hours at 6 per hour; actual 1280 hours for 5826.95, all
    // in the first month (tests/data/focus/README.md works the same figures by hand).
    std::map<std::string, SpendFigures> planned = {{"2026-12", {1000, 6000, 7317.07}},
                                                   {"2027-01", {500, 3000, 3658.54}}};
    std::map<std::string, SpendFigures> actual = {{"2026-12", {1280, 5826.95, 6818.47}}};
    PlanVsActual r = ComparePlanToActual(planned, actual, "USD");
    CHECK(r.planned.accelerator_hours == doctest::Approx(1500));
    CHECK(r.gap == doctest::Approx(-3173.05));
    CHECK(r.actual.EffectivePerAcceleratorHour() == doctest::Approx(4.55230469));
    CHECK(r.price_effect == doctest::Approx(-2171.54297));
    CHECK(r.quantity_effect == doctest::Approx(-1001.50703));
    CHECK(r.price_effect + r.quantity_effect == doctest::Approx(r.gap));
    REQUIRE(r.months.size() == 2);
    CHECK(r.months[1].month == "2027-01");
    CHECK(r.months[1].actual.accelerator_hours == 0);
    CHECK(r.explanation.find("Mostly price.") != std::string::npos);
    CHECK(r.explanation.find("1280.0 accelerator-hours against 1500.0 planned") !=
          std::string::npos);
}

TEST_CASE("a gap within two percent of the plan is on plan, and no actual hours is all quantity") {
    PlanVsActual near = ComparePlanToActual({{"2026-12", {100, 1000, 1000}}},
                                            {{"2026-12", {101, 1010, 1010}}}, "USD");
    CHECK(near.explanation.find("On plan.") != std::string::npos);
    PlanVsActual none = ComparePlanToActual({{"2026-12", {100, 1000, 1000}}}, {}, "USD");
    CHECK(none.quantity_effect == doctest::Approx(-1000));
    CHECK(none.price_effect == 0);
}
