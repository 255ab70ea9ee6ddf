#pragma once

#include "service/text/timestamp.hpp"

namespace gpucost::http {

// Dates and instants as the answers and parameters write them (service/text/timestamp.hpp,
// shared with the storage adapter).
using text::DaysFromCivil;
using text::FormatTimestamp;
using text::NowUs;
using text::ParseAsOf;
using text::ParseIsoDate;
using text::TodayUtc;

}  // namespace gpucost::http
