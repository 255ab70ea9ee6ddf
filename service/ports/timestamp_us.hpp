#pragma once

#include <cstdint>

namespace gpucost::ports {

// Microseconds since 1970-01-01T00:00:00Z: every instant a store keeps or answers.
using TimestampUs = std::int64_t;

}  // namespace gpucost::ports
