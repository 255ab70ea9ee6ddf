#include "pricing/owned_ledger.hpp"

#include <doctest/doctest.h>

#include "pricing/calendar.hpp"

using namespace gpucost::pricing;

namespace {

const char kP5[] = "aws-p5.48xlarge-us-east-1-on-demand";

double HourOf(const char* date) {
    return static_cast<double>(*DaysFromIsoDate(date)) * 24.0;
}

// Two p5 instances reserved for a year from 2026-12-01.
std::vector<OwnedCapacity> TwoP5ForAYear() {
    return {{kP5, 2, "2026-12-01", "2027-12-01", 31.46}};
}

}  // namespace

TEST_CASE("a book's reservation is drawn in order: a later plan gets what the earlier left") {
    const auto owned = TwoP5ForAYear();
    // A fine-tune on 2 instances for 166 h from 2026-12-10, then a fleet of 3 serving
    // December around the clock.
    const OwnedHolding fine_tune{"1", kP5, 2, HourOf("2026-12-10"), HourOf("2026-12-10") + 166};
    const OwnedHolding serving{"2", kP5, 3, HourOf("2026-12-01"), HourOf("2027-01-01")};
    const OwnedLedger ledger = DrawInOrder(owned, {fine_tune, serving});
    REQUIRE(ledger.draws.size() == 2);
    CHECK(ledger.draws[0].instance_hours == doctest::Approx(332));
    CHECK(ledger.draws[0].instance_hours_by_month.at("2026-12") == doctest::Approx(332));
    // December owns 2 x 744 = 1,488 instance-hours: serving gets what the fine-tune left.
    CHECK(OwnedHoursByMonth(owned).at("2026-12").at(kP5) == doctest::Approx(1488));
    CHECK(ledger.draws[1].instance_hours == doctest::Approx(1488 - 332));
    CHECK(ledger.draws[1].sunk_usd == doctest::Approx((1488 - 332) * 31.46));
    // What is left after both: nothing in December, all of the rest of the year.
    CHECK(
        CoverRun(ledger.left, kP5, 2, HourOf("2026-12-01"), HourOf("2027-01-01")).instance_hours ==
        doctest::Approx(0));
    CHECK(
        CoverRun(ledger.left, kP5, 2, HourOf("2027-01-01"), HourOf("2027-02-01")).instance_hours ==
        doctest::Approx(2 * 744));
    // The other order: serving first takes all of December, the fine-tune nothing.
    const OwnedLedger reversed = DrawInOrder(owned, {serving, fine_tune});
    CHECK(reversed.draws[0].instance_hours == doctest::Approx(1488));
    CHECK(reversed.draws[1].instance_hours == doctest::Approx(0));
}

TEST_CASE("a ledger's parts are merged again and other offerings are left alone") {
    std::vector<OwnedCapacity> owned = TwoP5ForAYear();
    owned.push_back({"other", 1, "2026-12-01", "2027-01-01", 10});
    const OwnedHolding one{"1", kP5, 1, HourOf("2026-12-01"), HourOf("2027-12-01")};
    const OwnedLedger ledger = DrawInOrder(owned, {one});
    CHECK(ledger.draws[0].instance_hours == doctest::Approx(8760));
    CHECK(ledger.draws[0].instance_hours_by_month.size() == 12);
    // One part of one instance for the whole year (the month cuts merged back), and the other
    // offering's entry as listed.
    REQUIRE(ledger.left.size() == 2);
    CHECK(ledger.left[0].nodes == 1);
    CHECK(*ledger.left[0].from_hour == doctest::Approx(HourOf("2026-12-01")));
    CHECK(*ledger.left[0].until_hour == doctest::Approx(HourOf("2027-12-01")));
    CHECK(ledger.left[1].offering_id == "other");
    CHECK_FALSE(ledger.left[1].from_hour.has_value());
}
