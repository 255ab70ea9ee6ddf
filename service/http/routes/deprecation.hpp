#pragma once

#include <string_view>

#include <httplib.h>

namespace gpucost::http {

// A deprecated request member or parameter, still taken (docs/api.md, "Versions and
// deprecation"): when it was deprecated, and the date after which it may go (at least one minor
// version and 90 days later). An answer to a request that used one says so in headers, so the
// client learns what it must change. A deprecated answer member sends no header: the server
// cannot tell whether the client reads it, and RFC 9745 and RFC 8594 speak of the resource,
// which stays; openapi.yaml marks it `deprecated: true` instead.
struct Deprecation {
    long long deprecated_at_unix_s = 0;
    std::string_view sunset_http_date;  // IMF-fixdate
};

// The training plan's `offset`, replaced by `cursor` (0.2.0): one way to page, as offerings and
// scenarios page, and a cursor that cannot page across a catalog change.
inline constexpr Deprecation kOffsetPaging{1795737600,  // 2026-11-27
                                           "Mon, 01 Mar 2027 00:00:00 GMT"};

// Marks the answer to a request that used a deprecated member: `Deprecation: @<unix seconds>`
// (RFC 9745), `Sunset` (RFC 8594) and a `Link` with rel="deprecation" to the policy.
void SetDeprecationHeaders(httplib::Response& res, const Deprecation& deprecation);

}  // namespace gpucost::http
