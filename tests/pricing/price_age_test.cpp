#include "pricing/price_age.hpp"

#include <doctest/doctest.h>

using namespace gpucost::pricing;

namespace {
Offering WithPrice(const std::string& as_of, bool estimated, bool verified) {
    Offering o;
    o.price.as_of = as_of;
    o.price.as_of_estimated = estimated;
    o.price.verified = verified;
    return o;
}
}  // namespace

TEST_SUITE("price_age") {
    TEST_CASE("current prices older than 90 and 180 days and estimated dates are counted") {
        std::vector<Offering> offerings = {WithPrice("2026-11-20", false, true),
                                           WithPrice("2026-08-22", false, true),   // 90 days
                                           WithPrice("2026-08-21", false, true),   // 91 days
                                           WithPrice("2025-05-01", true, false)};  // 568 days
        PriceAges ages = SummarizePriceAges(OfferingList::FromVector(offerings), "2026-11-20");
        CHECK(ages.today == "2026-11-20");
        CHECK(ages.current_price_count == 4);
        CHECK(ages.older_than_90_days == 2);
        CHECK(ages.older_than_180_days == 1);
        CHECK(ages.estimated_date_count == 1);
        CHECK(ages.unverified_count == 1);
    }

    TEST_CASE("a price older than its provider's bound is stale; an estimated date never current") {
        CHECK(StaleAfterDays("aws") == 30);
        CHECK(StaleAfterDays("lambda") == 7);
        CHECK(StaleAfterDays("a-provider-not-listed") == kDefaultStaleAfterDays);
        Offering aws = WithPrice("2026-10-21", false, true);
        aws.provider = "aws";
        CHECK(StateOfPrice(aws, 30) == PriceState::kCurrent);
        CHECK(StateOfPrice(aws, 31) == PriceState::kStale);
        aws.price.as_of_estimated = true;
        CHECK(StateOfPrice(aws, 3) == PriceState::kEstimatedDate);
        CHECK(std::string(PriceStateName(PriceState::kEstimatedDate)) == "estimated_date");
        Offering lambda = WithPrice("2026-11-12", false, true);
        lambda.provider = "lambda";
        CHECK(StateOfPrice(lambda, 8) == PriceState::kStale);
    }

    TEST_CASE("stale prices are counted per provider with the oldest confirmation") {
        std::vector<Offering> offerings = {WithPrice("2026-11-19", false, true),   // aws, 1 day
                                           WithPrice("2026-10-20", false, true),   // aws, 31
                                           WithPrice("2026-11-12", false, true)};  // lambda, 8
        offerings[0].provider = offerings[1].provider = "aws";
        offerings[2].provider = "lambda";
        PriceAges ages = SummarizePriceAges(OfferingList::FromVector(offerings), "2026-11-20");
        CHECK(ages.stale_count == 2);
        REQUIRE(ages.by_provider.size() == 2);
        CHECK(ages.by_provider[0].provider == "aws");
        CHECK(ages.by_provider[0].current_price_count == 2);
        CHECK(ages.by_provider[0].stale_count == 1);
        CHECK(ages.by_provider[0].oldest_age_days == 31);
        CHECK(ages.by_provider[0].stale_after_days == 30);
        CHECK(ages.by_provider[1].provider == "lambda");
        CHECK(ages.by_provider[1].stale_count == 1);
    }

    TEST_CASE("days between dates know leap years and refuse non-dates") {
        CHECK(DaysBetween("2024-02-28", "2024-03-01") == 2);
        CHECK(DaysBetween("2026-11-20", "2026-11-09") == -11);
        CHECK_FALSE(DaysBetween("2024-02-30", "2024-03-01"));
    }
}
