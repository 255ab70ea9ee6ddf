#pragma once

#include <string>
#include <vector>

namespace gpucost::pricing {

// One named modelling constant as it was used in a computation, echoed back to callers under
// `assumptions` so that every number in an answer can be traced. `unit` is a short unit
// string ("fraction", "s", "GB/s", "usd_per_kwh"); `source` says where the value comes from
// (a paper, a data file, "request" when the caller overrode it, or "default").
struct Assumption {
    std::string name;
    double value = 0;
    std::string unit;
    std::string description;
    std::string source;
};

using Assumptions = std::vector<Assumption>;

}  // namespace gpucost::pricing
