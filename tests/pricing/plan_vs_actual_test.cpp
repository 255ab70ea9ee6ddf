#include "pricing/plan_vs_actual.hpp"

#include <doctest/doctest.h>

#include "pricing/money.hpp"

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

TEST_CASE("each month's gap is split as the totals' is") {
    // December: planned 1000 h at 6, actual 1280 h for 5826.95 (4.5523046875 per hour):
    // price (4.5523046875 - 6) x 1000 = -1447.6953125, quantity 280 x 4.5523046875 =
    // 1274.64531; January: 500 h planned, none billed: the whole -3000 is quantity.
    PlanVsActual r =
        ComparePlanToActual({{"2026-12", {1000, 6000, 6000}}, {"2027-01", {500, 3000, 3000}}},
                            {{"2026-12", {1280, 5826.95, 6818.47}}}, "USD");
    REQUIRE(r.months.size() == 2);
    const GapSplit& dec = r.months[0].split;
    CHECK(dec.gap == doctest::Approx(-173.05));
    CHECK(dec.price_effect == doctest::Approx(-1447.6953125));
    CHECK(dec.quantity_effect == doctest::Approx(1274.6453125));
    const GapSplit& jan = r.months[1].split;
    CHECK(jan.gap == doctest::Approx(-3000));
    CHECK(jan.price_effect == 0);
    CHECK(jan.quantity_effect == doctest::Approx(-3000));
}

TEST_CASE("a plan forecast's compute charges are the planned side; storage is left out") {
    plan::ForecastCharge compute;
    compute.period_start = "2026-12-01";
    compute.accelerator_hours = 800;
    compute.effective_cost_usd = 4000;
    compute.list_cost_usd = 5000;
    plan::ForecastCharge storage = compute;
    storage.kind = plan::ChargeKind::kStorage;
    plan::ForecastCharge january = compute;
    january.period_start = "2027-01-01";
    const auto by_month = PlannedAcceleratorSpend({compute, storage, january, compute});
    REQUIRE(by_month.size() == 2);
    CHECK(by_month.at("2026-12").accelerator_hours == 1600);
    CHECK(by_month.at("2026-12").effective_cost == 8000);
    CHECK(by_month.at("2026-12").list_cost == 10000);
    CHECK(by_month.at("2027-01").effective_cost == 4000);
}

TEST_CASE("the implied speed and its combination over runs") {
    // 2 of 10 B tokens done on a plan of 500 accelerator-hours: 100 estimated; 160 billed.
    auto speed = ImpliedSpeedOf(2, 10, 500, 160);
    REQUIRE(speed);
    CHECK(speed->estimated_accelerator_hours == doctest::Approx(100));
    CHECK(speed->actual_to_estimated_hours_ratio == doctest::Approx(1.6));
    CHECK_FALSE(ImpliedSpeedOf(0, 10, 500, 160));
    CHECK_FALSE(ImpliedSpeedOf(2, 0, 500, 160));
    CHECK_FALSE(ImpliedSpeedOf(2, 10, 0, 160));
    CHECK_FALSE(ImpliedSpeedOf(2, 10, 500, 0));
    // With a run of 300 estimated and 240 billed (0.8): (160 + 240) / (100 + 300) = 1.0, not
    // the plain mean 1.2 of the two ratios.
    auto other = ImpliedSpeedOf(3, 3, 300, 240);
    REQUIRE(other);
    CHECK(CombinedHoursRatio({*speed, *other}) == doctest::Approx(1.0));
    CHECK(CombinedHoursRatio({}) == 1.0);
}

// Money as answers state it (docs/api.md "Money"): a figure is a whole number of cents, a total
// of months is the sum of their cents, and the two effects add up to the gap in cents.
TEST_CASE("costs, totals, gaps and effects are whole cents; the effects add up to the gap") {
    auto whole_cents = [](double usd) { return RoundToCents(usd) == usd; };
    // Sums as a store of doubles hands them over: a few thousandths of a cent off.
    PlanVsActual r = ComparePlanToActual(
        {{"2026-12", {1000, 6000.000000000001, 7317.07}}, {"2027-01", {500, 0.1 + 0.2, 3658.54}}},
        {{"2026-12", {1280, 5415.936000000005, 6818.47}}, {"2027-01", {3, 13364.119999999999, 1}}},
        "USD");
    for (const SpendFigures& f : {r.planned, r.actual}) {
        CHECK(whole_cents(f.effective_cost));
        CHECK(whole_cents(f.list_cost));
    }
    CHECK(r.actual.effective_cost == 18780.06);  // 5415.94 + 13364.12
    CHECK(r.planned.effective_cost == 6000.3);
    for (const auto& m : r.months) {
        CAPTURE(m.month);
        CHECK(whole_cents(m.planned.effective_cost));
        CHECK(whole_cents(m.actual.effective_cost));
        CHECK(whole_cents(m.split.gap));
        CHECK(whole_cents(m.split.price_effect));
        CHECK(whole_cents(m.split.quantity_effect));
        CHECK(ToCents(m.split.price_effect) + ToCents(m.split.quantity_effect) ==
              ToCents(m.split.gap));
    }
    CHECK(r.gap == 12779.76);
    CHECK(whole_cents(r.price_effect));
    CHECK(whole_cents(r.quantity_effect));
    CHECK(ToCents(r.price_effect) + ToCents(r.quantity_effect) == ToCents(r.gap));
}

TEST_CASE("a forecast's charges of fractions of a cent add up exactly before the cent") {
    std::vector<plan::ForecastCharge> charges(3);
    for (plan::ForecastCharge& c : charges) {
        c.period_start = "2026-12-01";
        c.accelerator_hours = 1;
        c.effective_cost_usd = 0.004;  // three of them are 0.012: 0.01, not 3 x 0.00 = 0
        c.list_cost_usd = 0.004;
    }
    const auto by_month = PlannedAcceleratorSpend(charges);
    REQUIRE(by_month.count("2026-12") == 1);
    CHECK(by_month.at("2026-12").effective_cost == 0.01);
}

TEST_CASE("to date, the plan counts only the months billed so far") {
    // Three planned months, charges in the first two: the third is not billed yet, so it is no
    // under-spend; the second month's charges are over its plan.
    PlanVsActual r = ComparePlanToActual(
        {{"2026-12", {0, 1000, 0}}, {"2027-01", {0, 1000, 0}}, {"2027-02", {0, 1000, 0}}},
        {{"2026-12", {0, 900.004, 0}}, {"2027-01", {0, 1200, 0}}}, "USD");
    CHECK(r.gap == doctest::Approx(-900));  // the whole plan reads as under-spend
    auto to_date = CompareToDate(r, "2027-01");
    REQUIRE(to_date.has_value());
    CHECK(to_date->through_month == "2027-01");
    CHECK(to_date->months == 2);
    CHECK(to_date->planned == doctest::Approx(2000));
    CHECK(to_date->actual == doctest::Approx(2100));
    CHECK(to_date->gap == doctest::Approx(100));
    REQUIRE(to_date->gap_fraction.has_value());
    CHECK(*to_date->gap_fraction == doctest::Approx(0.05));
    CHECK_FALSE(CompareToDate(r, "").has_value());  // nothing billed yet
    // Charges in a month the plan does not have: nothing planned to date, no fraction.
    auto early = CompareToDate(
        ComparePlanToActual({{"2027-02", {0, 1000, 0}}}, {{"2026-11", {0, 50, 0}}}, "USD"),
        "2026-11");
    REQUIRE(early.has_value());
    CHECK(early->planned == 0);
    CHECK(early->gap == doctest::Approx(50));
    CHECK_FALSE(early->gap_fraction.has_value());
}

TEST_CASE("the headline is over the months billed and the rest is re-forecast from the run rate") {
    // A two-month serving plan, only December billed: 7000 planned a month, 8000 billed in
    // December. The whole plan reads -42.9 %; December, the only month billed, is +14.3 %.
    const std::map<std::string, SpendFigures> planned = {{"2026-12", {1000, 7000, 7000}},
                                                         {"2027-01", {1000, 7000, 7000}}};
    const std::map<std::string, SpendFigures> actual = {{"2026-12", {1000, 8000, 8000}}};
    const PlanVsActual whole = ComparePlanToActual(planned, actual, "USD");
    CHECK(whole.explanation.find("(-42.9 %)") != std::string::npos);
    const PlanVsActual billed =
        ComparePlanToActual(MonthsThrough(planned, "2026-12"), actual, "USD");
    CHECK(billed.gap == doctest::Approx(1000));
    CHECK(billed.explanation.find("(+14.3 %)") != std::string::npos);
    CHECK(billed.explanation.find("Mostly price.") != std::string::npos);

    const auto reforecast = ReforecastFromRunRate(whole, "2026-12");
    REQUIRE(reforecast);
    CHECK(*reforecast->run_rate == doctest::Approx(8000.0 / 7000.0));
    REQUIRE(reforecast->remaining.size() == 1);
    CHECK(reforecast->remaining[0].month == "2027-01");
    CHECK(reforecast->remaining[0].planned == doctest::Approx(7000));
    CHECK(reforecast->remaining[0].reforecast == doctest::Approx(8000));
    CHECK(reforecast->planned_total == doctest::Approx(14000));
    CHECK(reforecast->reforecast_total == doctest::Approx(16000));
    CHECK_FALSE(ReforecastFromRunRate(whole, "").has_value());
}

TEST_CASE("the price effect splits into rate, commitment coverage and mix that add up to it") {
    // Planned: 1000 accelerator-hours on demand at 6. Billed: 600 under a commitment at 3, 300
    // on demand at 5.5, 100 on spot at 2: 1000 hours for 3650, a price effect of -2350.
    const std::vector<PriceClassSpend> planned = {{false, "od", 1000, 6000}};
    const std::vector<PriceClassSpend> actual = {
        {true, "", 600, 1800}, {false, "od", 300, 1650}, {false, "spot", 100, 200}};
    const PriceEffectSplit split = SplitPriceEffect(planned, actual, -2350);
    // By hand: rate 1000 x 0.3 x (5.5 - 6) = -150; coverage 1000 x 0.6 x (3 - 6) = -1800;
    // mix 1000 x 0.1 x (2 - 6) = -400.
    CHECK(split.rate == doctest::Approx(-150));
    CHECK(split.coverage == doctest::Approx(-1800));
    CHECK(split.mix == doctest::Approx(-400));
    CHECK(split.rate + split.coverage + split.mix == doctest::Approx(-2350));
    // A plan counting on 500 committed hours at 3 that the bill shows on demand at 6: coverage.
    const PriceEffectSplit lost = SplitPriceEffect(
        {{true, "", 500, 1500}, {false, "od", 500, 3000}}, {{false, "od", 1000, 6000}}, 1500);
    CHECK(lost.coverage == doctest::Approx(1500));  // 1000 x (0 - 0.5) x (3 - 4.5)
    CHECK(lost.rate == doctest::Approx(0));
    CHECK(lost.mix == doctest::Approx(0));
    CHECK(SplitPriceEffect({}, actual, 0).rate == 0);
}
