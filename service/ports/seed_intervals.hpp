#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "pricing/offering.hpp"
#include "service/ports/timestamp_us.hpp"

namespace gpucost::ports {

// Validity intervals for the seed observations of one offering, index-aligned with
// `observations`: each date on which the served price changes (by SelectCurrentPrice over
// the observations dated up to that day) starts an interval at that day's midnight UTC;
// the last served observation stays open (nullopt end); an observation never served gets
// the empty interval [its day, its day). REQUIRES: !observations.empty(), valid as_of dates.
std::vector<std::pair<TimestampUs, std::optional<TimestampUs>>> SeedIntervals(
    const std::vector<pricing::PriceObservation>& observations);

}  // namespace gpucost::ports
