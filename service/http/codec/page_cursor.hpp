#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "pricing/error.hpp"
#include "pricing/offering_query.hpp"
#include "service/http/codec/query_params.hpp"

namespace gpucost::http {

// Every cursor the API hands out (offerings, scenarios, price books, history, plans) is sealed
// here, so a client can neither read what it holds nor change it: the position it names is
// encrypted (AES-256-CTR) and authenticated (HMAC-SHA256, 128 bits) under a key built into
// this release, deterministically (the same page gives the same cursor, so a listing's body
// and its ETag do not change from one read to the next). The key needs no configuration:
// every replica and every restart of one release reads every other's cursors. A cursor grants
// nothing the same request without it would not: each page is read with the caller's own
// authority.

// URL-safe text (base64url, no padding) sealing `payload`.
[[nodiscard]] std::string SealCursor(std::string_view payload);

// The payload `text` sealed; nullopt for text this release did not seal or that was changed.
[[nodiscard]] std::optional<std::string> OpenCursor(std::string_view text);

// Default and maximum page size of every paged list the API serves: the offering listing's.
inline constexpr std::size_t kDefaultPageSize = pricing::kDefaultPageLimit;
inline constexpr std::size_t kMaxPageSize = pricing::kMaxPageLimit;

// A GET list's `limit` and `cursor`. A cursor is bound to its `listing` (which list, with which
// filters) and to the `version` the walk began on (empty: a list paged by key, which a change
// between pages cannot make skip or repeat an item).
struct PageRequest {
    std::size_t limit = kDefaultPageSize;
    std::optional<std::string> after;  // the position the previous page ended at
};

// Reads `limit` (422 on `limit` outside 1..kMaxPageSize; 400 when not an integer) and
// `cursor` (422 on `cursor` when it is not one this listing issued; 409 failed_precondition
// on `cursor` when `version` changed since the walk began).
[[nodiscard]] pricing::Result<PageRequest> ReadPageRequest(const QueryParams& params,
                                                           std::string_view listing,
                                                           std::string_view version = {});

// The cursor of the page after the one that ended at `after`.
[[nodiscard]] std::string NextPageCursor(std::string_view listing, std::string_view after,
                                         std::string_view version = {});

}  // namespace gpucost::http
