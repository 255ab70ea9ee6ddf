#include "pricing/calendar.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace gpucost::pricing {
namespace {

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian).
long long DaysFromCivil(long long y, unsigned m, unsigned d) {
    y -= m <= 2 ? 1 : 0;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}

struct Civil {
    long long year;
    unsigned month;
    unsigned day;
};

Civil CivilFromDays(long long z) {
    z += 719468;
    const long long era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const long long y = static_cast<long long>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    return {m <= 2 ? y + 1 : y, m, d};
}

unsigned DaysInMonth(long long year, unsigned month) {
    static constexpr std::array<unsigned, 12> kDays = {31, 28, 31, 30, 31, 30,
                                                       31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : kDays[month - 1];
}

std::string TwoDigits(unsigned v) {
    return std::string(1, static_cast<char>('0' + v / 10)) + static_cast<char>('0' + v % 10);
}

}  // namespace

std::optional<long long> DaysFromIsoDate(std::string_view date) {
    if (date.size() != 10 || date[4] != '-' || date[7] != '-') {
        return std::nullopt;
    }
    auto digits = [&](std::size_t from, std::size_t count) -> std::optional<unsigned> {
        unsigned v = 0;
        for (std::size_t i = from; i < from + count; ++i) {
            if (date[i] < '0' || date[i] > '9') {
                return std::nullopt;
            }
            v = v * 10 + static_cast<unsigned>(date[i] - '0');
        }
        return v;
    };
    auto y = digits(0, 4);
    auto m = digits(5, 2);
    auto d = digits(8, 2);
    if (!y || !m || !d || *m < 1 || *m > 12 || *d < 1 || *d > DaysInMonth(*y, *m)) {
        return std::nullopt;
    }
    return DaysFromCivil(*y, *m, *d);
}

std::string IsoDateFromDays(long long days) {
    const Civil c = CivilFromDays(days);
    return std::to_string(c.year) + "-" + TwoDigits(c.month) + "-" + TwoDigits(c.day);
}

long long AddCalendarMonths(long long day, int months) {
    const Civil c = CivilFromDays(day);
    const long long month_index = c.year * 12 + (c.month - 1) + months;
    const long long year = month_index / 12;
    const auto month = static_cast<unsigned>(month_index % 12 + 1);
    return DaysFromCivil(year, month, std::min(c.day, DaysInMonth(year, month)));
}

std::vector<MonthShare> SplitHoursByMonth(long long start_day, double hours) {
    std::vector<MonthShare> out;
    if (!(hours > 0) || !std::isfinite(hours)) {
        return out;
    }
    Civil c = CivilFromDays(start_day);
    double remaining = hours;
    // Hours left in the start month, from the start day's midnight.
    double in_month = static_cast<double>(DaysInMonth(c.year, c.month) - c.day + 1) * 24.0;
    while (remaining > 0) {
        const double take = std::min(remaining, in_month);
        out.push_back({std::to_string(c.year) + "-" + TwoDigits(c.month), take});
        remaining -= take;
        c.month = c.month == 12 ? 1 : c.month + 1;
        c.year += c.month == 1 ? 1 : 0;
        in_month = static_cast<double>(DaysInMonth(c.year, c.month)) * 24.0;
    }
    return out;
}

}  // namespace gpucost::pricing
