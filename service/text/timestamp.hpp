#pragma once

#include <string>
#include <string_view>

#include "pricing/error.hpp"
#include "service/ports/timestamp_us.hpp"

namespace gpucost::text {

using ports::TimestampUs;

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t DaysFromCivil(int year, int month, int day);

// Midnight UTC of a YYYY-MM-DD date; kInvalidArgument otherwise.
[[nodiscard]] pricing::Result<TimestampUs> ParseIsoDate(std::string_view text);

// The instant an `as_of` parameter names: "YYYY-MM-DD" is the end of that UTC day (the last
// microsecond, so prices that took effect during the day count); an RFC 3339 date-time
// "YYYY-MM-DDTHH:MM:SS[.f]" with "Z" or an offset "+HH:MM"/"-HH:MM" (T and Z in either case)
// is that instant. kInvalidArgument naming `field` otherwise.
[[nodiscard]] pricing::Result<TimestampUs> ParseAsOf(std::string_view text,
                                                     const std::string& field);

// RFC 3339 UTC with microseconds, e.g. "2026-11-22T18:05:15.123456Z".
std::string FormatTimestamp(TimestampUs at);

TimestampUs NowUs();

// Today's date in UTC, YYYY-MM-DD (what price ages are counted to).
std::string TodayUtc();

}  // namespace gpucost::text
