#pragma once

#include <string>

namespace gpucost::storage {

// True when an If-Match header (a comma-separated list of entity tags, or "*") holds `etag`
// (RFC 9110 §13.1.1, strong comparison).
bool IfMatchAccepts(const std::string& header, const std::string& etag);

}  // namespace gpucost::storage
