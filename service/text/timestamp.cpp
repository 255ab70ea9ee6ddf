#include "service/text/timestamp.hpp"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>

namespace gpucost::text {
namespace {

constexpr std::int64_t kUsPerSecond = 1'000'000;
constexpr std::int64_t kUsPerDay = 86'400 * kUsPerSecond;

bool Digits(std::string_view text, std::size_t from, std::size_t count, int& out) {
    if (from + count > text.size()) {
        return false;
    }
    for (std::size_t i = from; i < from + count; ++i) {
        if (text[i] < '0' || text[i] > '9') {
            return false;
        }
    }
    auto [end, ec] = std::from_chars(text.data() + from, text.data() + from + count, out);
    return ec == std::errc() && end == text.data() + from + count;
}

bool ValidDate(int year, int month, int day) {
    if (year < 1970 || year > 9999 || month < 1 || month > 12 || day < 1) {
        return false;
    }
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return day <= kDays[month - 1] + ((month == 2 && leap) ? 1 : 0);
}

pricing::Error Invalid(const std::string& field) {
    return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                              "must be a date YYYY-MM-DD or an RFC 3339 time "
                              "YYYY-MM-DDTHH:MM:SS[.ffffff] with Z or an offset (+HH:MM, -HH:MM), "
                              "from 1970 on",
                              field);
}

}  // namespace

std::int64_t DaysFromCivil(int year, int month, int day) {
    const std::int64_t y = static_cast<std::int64_t>(year) - (month <= 2 ? 1 : 0);
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;
    const std::int64_t m = month;
    const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

pricing::Result<TimestampUs> ParseIsoDate(std::string_view text) {
    int year = 0;
    int month = 0;
    int day = 0;
    if (text.size() != 10 || text[4] != '-' || text[7] != '-' || !Digits(text, 0, 4, year) ||
        !Digits(text, 5, 2, month) || !Digits(text, 8, 2, day) || !ValidDate(year, month, day)) {
        return pricing::MakeError(
            pricing::ErrorCode::kInvalidArgument,
            "'" + std::string(text.substr(0, 40)) + "' is not a YYYY-MM-DD date");
    }
    return DaysFromCivil(year, month, day) * kUsPerDay;
}

namespace {

// The zone of an RFC 3339 date-time: "Z" (either case) or "+HH:MM" / "-HH:MM", as the offset
// to subtract to reach UTC; nullopt otherwise.
std::optional<std::int64_t> ZoneOffsetUs(std::string_view zone) {
    if (zone == "Z" || zone == "z") return 0;
    int hours = 0;
    int minutes = 0;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':' ||
        !Digits(zone, 1, 2, hours) || !Digits(zone, 4, 2, minutes) || hours > 23 || minutes > 59) {
        return std::nullopt;
    }
    std::int64_t offset =
        (static_cast<std::int64_t>(hours) * 3600 + std::int64_t{minutes} * 60) * kUsPerSecond;
    return zone[0] == '+' ? offset : -offset;
}

}  // namespace

pricing::Result<TimestampUs> ParseAsOf(std::string_view text, const std::string& field) {
    if (text.size() == 10) {
        auto day = ParseIsoDate(text);
        if (!day.ok()) {
            return Invalid(field);
        }
        return day.value() + kUsPerDay - 1;
    }
    // RFC 3339 date-time: YYYY-MM-DD(T|t)HH:MM:SS[.f{1,6}](Z|z|+HH:MM|-HH:MM)
    if (text.size() < 20 || text.size() > 32 || (text[10] != 'T' && text[10] != 't') ||
        text[13] != ':' || text[16] != ':') {
        return Invalid(field);
    }
    auto day = ParseIsoDate(text.substr(0, 10));
    int hour = 0;
    int minute = 0;
    int second = 0;
    if (!day.ok() || !Digits(text, 11, 2, hour) || !Digits(text, 14, 2, minute) ||
        !Digits(text, 17, 2, second) || hour > 23 || minute > 59 || second > 59) {
        return Invalid(field);
    }
    std::size_t zone_at = 19;
    std::int64_t fraction_us = 0;
    if (text[19] == '.') {
        std::size_t digits = 0;
        while (20 + digits < text.size() && text[20 + digits] >= '0' && text[20 + digits] <= '9') {
            ++digits;
        }
        int fraction = 0;
        if (digits == 0 || digits > 6 || !Digits(text, 20, digits, fraction)) {
            return Invalid(field);
        }
        fraction_us = fraction;
        for (std::size_t i = digits; i < 6; ++i) {
            fraction_us *= 10;
        }
        zone_at = 20 + digits;
    }
    auto offset = ZoneOffsetUs(text.substr(zone_at));
    if (!offset) {
        return Invalid(field);
    }
    return day.value() +
           (static_cast<std::int64_t>(hour) * 3600 + std::int64_t{minute} * 60 + second) *
               kUsPerSecond +
           fraction_us - *offset;
}

std::string FormatTimestamp(TimestampUs at) {
    std::int64_t days = at / kUsPerDay;
    std::int64_t rem = at % kUsPerDay;
    if (rem < 0) {
        rem += kUsPerDay;
        --days;
    }
    // civil_from_days (Howard Hinnant)
    const std::int64_t z = days + 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
    const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
    const std::int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
    const std::int64_t seconds = rem / kUsPerSecond;
    char buf[128];
    std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%06lldZ",
                  static_cast<long long>(y), static_cast<long long>(m), static_cast<long long>(d),
                  static_cast<long long>(seconds / 3600), static_cast<long long>(seconds / 60 % 60),
                  static_cast<long long>(seconds % 60), static_cast<long long>(rem % kUsPerSecond));
    return buf;
}

TimestampUs NowUs() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string TodayUtc() {
    return FormatTimestamp(NowUs()).substr(0, 10);
}

}  // namespace gpucost::text
