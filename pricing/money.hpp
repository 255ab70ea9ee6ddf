#pragma once

#include <vector>

// Money as answers state it (docs/api.md "Money"): every amount in US dollars rounded to the
// cent, every rate (USD per hour, per GB, per million tokens) to a millionth of a dollar, the
// precision the catalog keeps prices at (numeric(18, 6)). A total listed beside its parts is
// the sum of the rounded parts in whole cents, so a budget tool that adds the parts gets the
// total exactly. Rounding is half away from zero. Non-finite values pass through unchanged
// (answers write them as null).
namespace gpucost::pricing {

// The one currency the catalog and every priced answer use (ISO 4217).
inline constexpr const char* kCurrency = "USD";

// `usd` in whole cents. Precondition: finite and below 9e13 in magnitude.
[[nodiscard]] long long ToCents(double usd);
// The double nearest to `cents` / 100, which prints as at most two decimals.
[[nodiscard]] double FromCents(long long cents);
// An amount rounded to the cent.
[[nodiscard]] double RoundToCents(double usd);
// A rate rounded to 1e-6 USD.
[[nodiscard]] double RoundToMicroUsd(double usd);
// True when `usd` is a whole number of millionths of a dollar, i.e. the catalog can keep it
// exactly (1.234567 is, 1.23456789 and 1e-7 are not).
[[nodiscard]] bool IsWholeMicroUsd(double usd);
// Splits `total_cents` over parts in proportion to `weights` (largest remainder method), so
// the parts add up to the total exactly and each differs from its share by under a cent. An
// empty `weights` gives an empty result; all-zero weights give every cent to the first part.
[[nodiscard]] std::vector<long long> ApportionCents(const std::vector<double>& weights,
                                                    long long total_cents);

}  // namespace gpucost::pricing
