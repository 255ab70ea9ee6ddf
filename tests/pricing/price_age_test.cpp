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

    TEST_CASE("days between dates know leap years and refuse non-dates") {
        CHECK(DaysBetween("2024-02-28", "2024-03-01") == 2);
        CHECK(DaysBetween("2026-11-20", "2026-11-09") == -11);
        CHECK_FALSE(DaysBetween("2024-02-30", "2024-03-01"));
    }
}
