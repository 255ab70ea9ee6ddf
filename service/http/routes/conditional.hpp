#pragma once

#include <string>
#include <string_view>

namespace gpucost::http {

// Conditional reads (conditional.cpp, AddConditionalReads in router.hpp) answer a strong ETag
// that is a digest of the bytes sent, one per content coding; a route's own validator (an
// offering's version, `"v3"`) leads it: `"v3.<digest>"`, `"v3.<digest>-gzip"`.

// An If-Match header with each such tag cut back to the route's own validator it leads with
// (`"v3"`), the version a write checks; other tags as sent.
std::string RouteValidatorsIn(std::string_view if_match);

}  // namespace gpucost::http
