#pragma once

#include <cmath>

#include "pricing/money.hpp"

namespace gpucost::pricing {

// A sum of many amounts (the rows of a bill, a forecast's charges), kept exactly in millionths
// of a dollar, the precision the catalog and FOCUS exports state costs in, so that it does not
// drift with the number of parts as a sum of doubles does (0.1 + 0.2 != 0.3); read to the cent
// as answers state money (money.hpp).
class UsdSum {
public:
    // Adds `usd` rounded to 1e-6 USD. Precondition: finite and below 9e12 in magnitude.
    void Add(double usd) { micro_usd_ += std::llround(usd * kMicroUsdPerUsd); }

    // The sum rounded to the cent, half away from zero.
    [[nodiscard]] double RoundedToCents() const {
        long long cents = micro_usd_ / kMicroUsdPerCent;
        const long long rest = micro_usd_ % kMicroUsdPerCent;
        if (rest >= kMicroUsdPerCent / 2) ++cents;
        if (rest <= -kMicroUsdPerCent / 2) --cents;
        return FromCents(cents);
    }

private:
    static constexpr double kMicroUsdPerUsd = 1e6;
    static constexpr long long kMicroUsdPerCent = 10000;
    long long micro_usd_ = 0;
};

}  // namespace gpucost::pricing
