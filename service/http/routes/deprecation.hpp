#pragma once

#include <string_view>

#include <httplib.h>

namespace gpucost::http {

// A renamed member still served under its old name (docs/api.md, "Versions and deprecation"):
// when it was deprecated, and the date after which the old name may go (at least one minor
// version and 90 days later).
struct Deprecation {
    long long deprecated_at_unix_s = 0;
    std::string_view sunset_http_date;  // IMF-fixdate
};

// /v1/catalog's `version`, renamed `catalog_version` as every priced answer names it (0.2.0).
inline constexpr Deprecation kCatalogVersionRename{1795737600,  // 2026-11-27
                                                   "Mon, 01 Mar 2027 00:00:00 GMT"};

// The training plan's `offset`, replaced by `cursor` (0.2.0): one way to page, as offerings and
// scenarios page, and a cursor that cannot page across a catalog change.
inline constexpr Deprecation kOffsetPaging{1795737600,  // 2026-11-27
                                           "Mon, 01 Mar 2027 00:00:00 GMT"};

// Marks an answer that carries a deprecated member: `Deprecation: @<unix seconds>` (RFC 9745),
// `Sunset` (RFC 8594) and a `Link` with rel="deprecation" to the policy.
void SetDeprecationHeaders(httplib::Response& res, const Deprecation& deprecation);

}  // namespace gpucost::http
