#include "pricing/money.hpp"

#include <cmath>
#include <limits>
#include <numeric>

#include <doctest/doctest.h>

namespace gpucost::pricing {

TEST_CASE("amounts round to the cent half away from zero and print as at most two decimals") {
    CHECK(ToCents(12263.999999999998) == 1226400);
    CHECK(ToCents(0.005) == 1);
    CHECK(ToCents(-0.005) == -1);
    CHECK(RoundToCents(12263.999999999998) == 12264.0);
    CHECK(RoundToCents(77771.45748028676) == 77771.46);
    CHECK(FromCents(1) == 0.01);
    CHECK(std::isnan(RoundToCents(std::numeric_limits<double>::quiet_NaN())));
}

TEST_CASE("rates round to a millionth of a dollar, the precision the catalog keeps") {
    CHECK(RoundToMicroUsd(0.8577777777777778) == 0.857778);
    CHECK(RoundToMicroUsd(10.372800000000002) == 10.3728);
    CHECK(IsWholeMicroUsd(1.234567));
    CHECK(IsWholeMicroUsd(98.32));
    CHECK_FALSE(IsWholeMicroUsd(1.23456789));
    CHECK_FALSE(IsWholeMicroUsd(1e-7));
    CHECK_FALSE(IsWholeMicroUsd(std::numeric_limits<double>::infinity()));
}

TEST_CASE("apportioned cents add up to the total exactly, each within a cent of its share") {
    const std::vector<double> months = {1000.0 / 3, 1000.0 / 3, 1000.0 / 3};
    const auto cents = ApportionCents(months, 100000);
    CHECK(std::accumulate(cents.begin(), cents.end(), 0LL) == 100000);
    CHECK(cents == std::vector<long long>{33334, 33333, 33333});
    // A total rounded up from its parts gives the extra cent to the largest remainder.
    const auto skewed = ApportionCents({0.004, 0.004, 0.004}, 1);
    CHECK(std::accumulate(skewed.begin(), skewed.end(), 0LL) == 1);
    CHECK(ApportionCents({}, 5).empty());
    CHECK(ApportionCents({0.0, 0.0}, 7) == std::vector<long long>{7, 0});
}

}  // namespace gpucost::pricing
