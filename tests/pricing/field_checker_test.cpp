#include "pricing/field_checker.hpp"

#include <doctest/doctest.h>

#include <limits>

using gpucost::pricing::SignedPercentText;
using gpucost::pricing::UsdText;

// The one format of money in the answers' texts (reasoning, explanations, warnings).
TEST_CASE("UsdText: cents below $100, whole dollars with separators from $100, the sign first") {
    CHECK(UsdText(0) == "$0.00");
    CHECK(UsdText(12.5) == "$12.50");
    CHECK(UsdText(1234.4) == "$1,234");
    CHECK(UsdText(1234567.0) == "$1,234,567");
    CHECK(UsdText(-5) == "-$5.00");
    CHECK(UsdText(-1500) == "-$1,500");
    CHECK(UsdText(0.015, 4) == "$0.0150");
    CHECK(UsdText(2.5, 4) == "$2.5000");
    CHECK(UsdText(std::numeric_limits<double>::infinity()) == "$inf");
}

// A passed-over alternative may cost less than the recommendation (its price is stale): the
// texts once wrote that as "+-87.5%".
TEST_CASE("SignedPercentText: one sign, whichever way the change goes") {
    CHECK(SignedPercentText(0.011) == "+1.1%");
    CHECK(SignedPercentText(-0.875) == "-87.5%");
    CHECK(SignedPercentText(0) == "+0.0%");
    CHECK(SignedPercentText(std::numeric_limits<double>::quiet_NaN()) == "nan%");
}
