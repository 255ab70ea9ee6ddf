#pragma once

// A plan's spend by calendar month, as the training and serving budget views state it
// (docs/planning.md "Budget view"): the day the view starts, and the months in whole cents
// adding up to the total, so that a budget tool summing the months gets the total exactly.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucost::pricing::plan {

// Spend in one calendar month.
struct MonthlySpend {
    std::string month;  // YYYY-MM
    double usd = 0;
};

// The budget view's first day: the request's start date when it gives one, else today.
struct BudgetStart {
    long long day = 0;        // days since 1970-01-01
    const char* source = "";  // "request" or "today"
};
// nullopt when the start date given is not a date (YYYY-MM-DD), or none is given and `today`
// (the caller's clock, YYYY-MM-DD) is empty or malformed.
std::optional<BudgetStart> StartOfBudget(const std::optional<std::string>& start_date,
                                         std::string_view today);

// `total_cents` split over the months (YYYY-MM -> unrounded USD, in month order) in proportion
// to their USD by largest remainder (pricing/money.hpp ApportionCents): each month within a
// cent of its share, the months adding up to the total exactly.
std::vector<MonthlySpend> MonthsInCents(const std::map<std::string, double>& monthly_usd,
                                        long long total_cents);

}  // namespace gpucost::pricing::plan
