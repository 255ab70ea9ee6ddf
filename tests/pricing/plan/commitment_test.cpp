#include "pricing/plan/commitment.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pricing/calendar.hpp"
#include "pricing/catalog_loader.hpp"
#include "pricing/owned_ledger.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::plan;

namespace {

// docs/billing.md, "The commitment a portfolio should buy", works this case by hand: one
// shape at $100/h on demand, $60/h for a 1-year term and $45/h for a 3-year one.
constexpr double kOnDemandUsd = 100;
constexpr double kCommit1yUsd = 60;
constexpr double kCommit3yUsd = 45;

double HourOf(const char* date) {
    return static_cast<double>(*DaysFromIsoDate(date)) * 24.0;
}

Offering Shape(const Offering& like, const char* id, PriceType type, double usd_per_hour) {
    Offering o = like;
    o.id = id;
    o.instance_type = "x9.test";
    o.price_type = type;
    o.price.usd_per_hour = usd_per_hour;
    return o;
}

std::shared_ptr<const InMemoryCatalog> ShapeCatalog() {
    auto base = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(base.ok());
    std::vector<Offering> offerings = base.value()->Offerings().Copy();
    const Offering p5 = base.value()->FindOffering("aws-p5.48xlarge-us-east-1-on-demand").value();
    offerings.push_back(Shape(p5, "x9-od", PriceType::kOnDemand, kOnDemandUsd));
    offerings.push_back(Shape(p5, "x9-1y", PriceType::kCommit1y, kCommit1yUsd));
    offerings.push_back(Shape(p5, "x9-3y", PriceType::kCommit3y, kCommit3yUsd));
    offerings.push_back(Shape(p5, "x9-spot", PriceType::kSpot, 30));
    auto catalog = InMemoryCatalog::Build(base.value()->Accelerators(), offerings, "t", "t", 0);
    REQUIRE(catalog.ok());
    return catalog.value();
}

// A serving fleet of 2 for three years from 2027-01-01 and a training run of 2 for 7,300 h
// from the same day (its p90, 7,300 x 1.2, is exactly a year).
CommitmentRequest Portfolio(const Offering& od) {
    const double start = HourOf("2027-01-01");
    CommitmentRequest r;
    r.demand.push_back({"1", "inference", &od, 2, start, start + kCommit3yTermHours, std::nullopt});
    r.demand.push_back({"2", "training", &od, 2, start, start + 7300, std::nullopt});
    return r;
}

}  // namespace

TEST_CASE("planned demand buys 3-year terms for the fleet and 1-year terms for the run") {
    auto catalog = ShapeCatalog();
    // FindOffering answers by value: keep the offering the demand points at alive.
    const Offering od = catalog->FindOffering("x9-od").value();
    const CommitmentRequest r = Portfolio(od);
    const CommitmentPlan plan = RecommendCommitments(*catalog, r);
    CHECK(plan.start_hour == HourOf("2027-01-01"));
    REQUIRE(plan.demand.size() == 1);
    CHECK(plan.demand[0].peak_instances == 4);
    CHECK(plan.demand[0].planned_instance_hours == doctest::Approx(2 * 26280 + 2 * 7300));
    REQUIRE(plan.lines.size() == 2);

    // Layers 1-2 (the fleet) run all three years: 26,280 h x (100 - 45) each on a 3-year term,
    // against 8,760 h x (100 - 60) on a 1-year one.
    const CommitmentLine& three = plan.lines[0];
    CHECK(std::string(TermName(three.term_hours)) == "3y");
    CHECK(three.commitment->id == "x9-3y");
    CHECK(three.instances == 2);
    CHECK(three.break_even_utilisation == doctest::Approx(0.45));
    CHECK(three.commitment_cost_usd == doctest::Approx(2 * 26280 * 45.0));
    CHECK(three.expected.utilisation == doctest::Approx(1));
    CHECK(three.expected.saving_usd == doctest::Approx(2 * 26280 * 55.0));
    // Slipped a quarter (2,160 h), the fleet leaves 2 x 2,160 h of the term unused.
    CHECK(three.slipped.unused_instance_hours == doctest::Approx(4320));
    CHECK(three.slipped.unused_cost_usd == doctest::Approx(194400));
    CHECK(three.slipped.saving_usd == doctest::Approx(2458800));

    // Layers 3-4 (the run) use 7,300 of a year's 8,760 h: 0.8333 against a break-even of 0.6.
    const CommitmentLine& one = plan.lines[1];
    CHECK(std::string(TermName(one.term_hours)) == "1y");
    CHECK(one.instances == 2);
    CHECK(one.commitment_cost_usd == doctest::Approx(1051200));
    CHECK(one.expected.utilisation == doctest::Approx(7300.0 / 8760));
    CHECK(one.expected.unused_instance_hours == doctest::Approx(2920));
    CHECK(one.expected.unused_cost_usd == doctest::Approx(175200));
    CHECK(one.expected.saving_usd == doctest::Approx(408800));
    CHECK(one.p10_duration.used_instance_hours == doctest::Approx(2 * 7300 / 1.2));
    CHECK(one.p10_duration.saving_usd == doctest::Approx(2 * 7300 / 1.2 * 100 - 1051200));
    CHECK(one.p90_duration.utilisation == doctest::Approx(1));
    CHECK(one.slipped.used_instance_hours == doctest::Approx(13200));
    CHECK(one.slipped.saving_usd == doctest::Approx(268800));

    CHECK(plan.commitment_cost_usd == doctest::Approx(3416400));
    CHECK(plan.expected_saving_usd == doctest::Approx(3299600));
    CHECK(plan.slipped_saving_usd == doctest::Approx(2727600));
}

TEST_CASE("a training run is spread by its own plan's run-time spread where it has one") {
    auto catalog = ShapeCatalog();
    const Offering od = catalog->FindOffering("x9-od").value();
    CommitmentRequest r = Portfolio(od);
    r.demand[1].duration_spread_fraction = 0.40;  // a mixture-of-experts run's plan
    const CommitmentPlan plan = RecommendCommitments(*catalog, r);
    REQUIRE(plan.lines.size() == 2);
    const CommitmentLine& one = plan.lines[1];
    CHECK(one.p10_duration.used_instance_hours == doctest::Approx(2 * 7300 / 1.40));
    CHECK(one.expected.used_instance_hours == doctest::Approx(2 * 7300));
}

TEST_CASE("owned capacity is used first and spot plans are not counted") {
    auto catalog = ShapeCatalog();
    const Offering od = catalog->FindOffering("x9-od").value();
    const Offering spot = catalog->FindOffering("x9-spot").value();
    CommitmentRequest r = Portfolio(od);
    r.demand.push_back(
        {"3", "training", &spot, 8, HourOf("2027-01-01"), HourOf("2027-06-01"), std::nullopt});
    // One instance already reserved for 2027: layer 3 of that year is covered.
    r.owned.push_back({"x9-1y", 1, "2027-01-01", "2028-01-01", kCommit1yUsd});
    const CommitmentPlan plan = RecommendCommitments(*catalog, r);
    REQUIRE(plan.skipped.size() == 1);
    CHECK(plan.skipped[0].holder == "3");
    CHECK(plan.demand[0].peak_instances == 3);
    CHECK(plan.demand[0].owned_instance_hours == doctest::Approx(8760));
    REQUIRE(plan.lines.size() == 2);
    CHECK(plan.lines[0].instances == 2);  // 3-year, the fleet
    CHECK(plan.lines[1].instances == 1);  // 1-year, the rest of the run
    CHECK(plan.lines[1].expected.used_instance_hours == doctest::Approx(7300));
}

TEST_CASE("a layer used below the break-even utilisation is left on demand") {
    auto catalog = ShapeCatalog();
    const Offering od = catalog->FindOffering("x9-od").value();
    const double start = HourOf("2027-01-01");
    CommitmentRequest r;
    // 5,000 h of a year's 8,760: 0.571, below the 1-year break-even of 0.6.
    r.demand.push_back({"1", "inference", &od, 1, start, start + 5000, std::nullopt});
    const CommitmentPlan plan = RecommendCommitments(*catalog, r);
    CHECK(plan.lines.empty());
    CHECK(plan.demand[0].terms_offered.size() == 2);
}

TEST_CASE("owned capacity per month: held by the saved plans against reserved and planned") {
    auto catalog = ShapeCatalog();
    const Offering od = catalog->FindOffering("x9-od").value();
    const CommitmentRequest r = Portfolio(od);
    // One x9 instance owned for 2027, drawn whole by the fleet saved first (the ledger).
    const std::vector<OwnedCapacity> owned = {{"x9-1y", 1, "2027-01-01", "2028-01-01", 60}};
    const double start = HourOf("2027-01-01");
    const OwnedLedger ledger =
        DrawInOrder(owned, {OwnedHolding{"1", "x9-1y", 2, start, start + kCommit3yTermHours}});
    const std::vector<OwnedMonthUse> uses =
        OwnedUseByMonth(*catalog, owned, ledger.draws, r.demand);
    REQUIRE(uses.size() == 12);
    // January: 744 h reserved, all held; the plans run 2 + 2 instances: 2,976 h, a quarter covered.
    CHECK(uses[0].month == "2027-01");
    CHECK(uses[0].reserved_instance_hours == doctest::Approx(744));
    CHECK(uses[0].held_instance_hours == doctest::Approx(744));
    CHECK(uses[0].utilisation == doctest::Approx(1));
    CHECK(uses[0].planned_instance_hours == doctest::Approx(2976));
    CHECK(*uses[0].coverage == doctest::Approx(0.25));
    // December: the run ended on 2027-11-01 04:00 (7,300 h); the fleet's 2 x 744 h, half covered.
    CHECK(uses[11].month == "2027-12");
    CHECK(uses[11].planned_instance_hours == doctest::Approx(1488));
    CHECK(*uses[11].coverage == doctest::Approx(0.5));
    // Nothing held: utilisation 0, coverage 0 of what is planned.
    const auto idle = OwnedUseByMonth(*catalog, owned, {}, r.demand);
    CHECK(idle[0].utilisation == doctest::Approx(0));
    CHECK(*idle[0].coverage == doctest::Approx(0));
}

TEST_CASE("a line's term by calendar month: reserved hours, and used hours adding up to expected") {
    auto catalog = ShapeCatalog();
    const Offering od = catalog->FindOffering("x9-od").value();
    const CommitmentPlan plan = RecommendCommitments(*catalog, Portfolio(od));
    REQUIRE(plan.lines.size() == 2);
    // The 1-year line (layers 3-4, the run of 7,300 h from 2027-01-01, to 2027-11-01 04:00):
    // January to October used in full, November 4 h of each instance, December none.
    const CommitmentLine& one = plan.lines[1];
    REQUIRE(one.months.size() == 12);
    CHECK(one.months[0].from_hour == HourOf("2027-01-01"));
    CHECK(one.months[0].until_hour == HourOf("2027-02-01"));
    CHECK(one.months[0].reserved_instance_hours == doctest::Approx(2 * 744));
    CHECK(one.months[0].used_instance_hours == doctest::Approx(2 * 744));
    CHECK(one.months[1].reserved_instance_hours == doctest::Approx(2 * 672));
    CHECK(one.months[10].reserved_instance_hours == doctest::Approx(2 * 720));
    CHECK(one.months[10].used_instance_hours == doctest::Approx(2 * 4));
    CHECK(one.months[11].until_hour == HourOf("2028-01-01"));
    CHECK(one.months[11].used_instance_hours == doctest::Approx(0));
    for (const CommitmentLine& line : plan.lines) {
        double reserved = 0;
        double used = 0;
        for (const CommitmentMonth& m : line.months) {
            reserved += m.reserved_instance_hours;
            used += m.used_instance_hours;
        }
        CHECK(reserved == doctest::Approx(line.instances * line.term_hours));
        CHECK(used == doctest::Approx(line.expected.used_instance_hours));
    }
    // The 3-year line's 36 months; a term from mid-month starts and ends mid-month.
    CHECK(plan.lines[0].months.size() == 36);
    CommitmentRequest later = Portfolio(od);
    later.start_hour = HourOf("2027-01-15");
    const CommitmentPlan mid = RecommendCommitments(*catalog, later);
    REQUIRE(!mid.lines.empty());
    const CommitmentLine& l = mid.lines[0];
    REQUIRE(l.months.size() == 37);
    CHECK(l.months[0].reserved_instance_hours == doctest::Approx(l.instances * 17 * 24.0));
    CHECK(l.months.back().from_hour == HourOf("2030-01-01"));
    CHECK(l.months.back().until_hour == doctest::Approx(HourOf("2027-01-15") + kCommit3yTermHours));
}
