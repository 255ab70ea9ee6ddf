#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucost::pricing {

// Days since 1970-01-01 of a YYYY-MM-DD date; nullopt when malformed or not a real date.
std::optional<long long> DaysFromIsoDate(std::string_view date);
// YYYY-MM-DD of a day count since 1970-01-01.
std::string IsoDateFromDays(long long days);

// The day `months` calendar months after `day` (months >= 0): the same day of the month, or
// that month's last day when it has fewer days (2027-01-31 + 1 month is 2027-02-28), as
// budget periods and calendar libraries count a month.
long long AddCalendarMonths(long long day, int months);

// One calendar month's share of a spend spread evenly over hours.
struct MonthShare {
    std::string month;  // YYYY-MM
    double hours = 0;   // hours of the interval that fall in this month
};

// The calendar months that [start day 00:00, + hours) touches, with the hours in each.
std::vector<MonthShare> SplitHoursByMonth(long long start_day, double hours);

}  // namespace gpucost::pricing
