#include "pricing/usd_sum.hpp"

#include <doctest/doctest.h>

namespace gpucost::pricing {

TEST_CASE("a sum of many amounts is exact to the cent, however many rows") {
    UsdSum cents;
    double doubles = 0;
    for (int i = 0; i < 10000; ++i) {
        cents.Add(0.01);
        doubles += 0.01;
    }
    CHECK(doubles != 100.0);  // what a sum of doubles gives
    CHECK(cents.RoundedToCents() == 100.0);
    UsdSum bill;
    for (double row : {6046.0992, 3172.696365, -3802.8595}) bill.Add(row);
    CHECK(bill.RoundedToCents() == 5415.94);  // 5415.936065 to the cent
    UsdSum half;
    half.Add(0.005);
    CHECK(half.RoundedToCents() == 0.01);  // half a cent away from zero
    UsdSum negative_half;
    negative_half.Add(-0.005);
    CHECK(negative_half.RoundedToCents() == -0.01);
    CHECK(UsdSum().RoundedToCents() == 0.0);
}

}  // namespace gpucost::pricing
