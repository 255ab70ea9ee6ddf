#include "pricing/plan/budget.hpp"

#include "pricing/calendar.hpp"
#include "pricing/money.hpp"

namespace gpucost::pricing::plan {

std::optional<BudgetStart> StartOfBudget(const std::optional<std::string>& start_date,
                                         std::string_view today) {
    if (start_date) {
        auto day = DaysFromIsoDate(*start_date);
        if (!day) return std::nullopt;
        return BudgetStart{*day, "request"};
    }
    auto day = DaysFromIsoDate(today);
    if (!day) return std::nullopt;
    return BudgetStart{*day, "today"};
}

std::vector<MonthlySpend> MonthsInCents(const std::map<std::string, double>& monthly_usd,
                                        long long total_cents) {
    std::vector<double> weights;
    weights.reserve(monthly_usd.size());
    for (const auto& [month, usd] : monthly_usd) weights.push_back(usd);
    const std::vector<long long> cents = ApportionCents(weights, total_cents);
    std::vector<MonthlySpend> out;
    out.reserve(monthly_usd.size());
    std::size_t i = 0;
    for (const auto& [month, usd] : monthly_usd) out.push_back({month, FromCents(cents[i++])});
    return out;
}

}  // namespace gpucost::pricing::plan
