#include "pricing/money.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpucost::pricing {

namespace {
constexpr double kCentsPerUsd = 100.0;
constexpr double kMicroUsdPerUsd = 1e6;
}  // namespace

long long ToCents(double usd) {
    return std::llround(usd * kCentsPerUsd);
}

double FromCents(long long cents) {
    return static_cast<double>(cents) / kCentsPerUsd;
}

double RoundToCents(double usd) {
    if (!std::isfinite(usd)) return usd;
    return FromCents(ToCents(usd));
}

double RoundToMicroUsd(double usd) {
    if (!std::isfinite(usd)) return usd;
    return static_cast<double>(std::llround(usd * kMicroUsdPerUsd)) / kMicroUsdPerUsd;
}

bool IsWholeMicroUsd(double usd) {
    return std::isfinite(usd) && RoundToMicroUsd(usd) == usd;
}

std::vector<long long> ApportionCents(const std::vector<double>& weights, long long total_cents) {
    std::vector<long long> cents(weights.size(), 0);
    if (weights.empty()) return cents;
    const double weight_sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    if (!(weight_sum > 0)) {
        cents.front() = total_cents;
        return cents;
    }
    // Each part's exact share, floored; the cents left over go to the largest remainders
    // (earlier parts first on ties), so the result does not depend on floating-point luck.
    std::vector<double> remainder(weights.size());
    long long given = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double share = static_cast<double>(total_cents) * weights[i] / weight_sum;
        cents[i] = static_cast<long long>(std::floor(share));
        remainder[i] = share - static_cast<double>(cents[i]);
        given += cents[i];
    }
    std::vector<std::size_t> order(weights.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
    for (std::size_t k = 0; given < total_cents; k = (k + 1) % order.size(), ++given) {
        ++cents[order[k]];
    }
    for (std::size_t k = 0; given > total_cents; k = (k + 1) % order.size(), --given) {
        --cents[order[order.size() - 1 - k]];
    }
    return cents;
}

}  // namespace gpucost::pricing
