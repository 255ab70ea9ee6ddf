#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "pricing/error.hpp"

namespace gpucost::http {

// Paging through a plan's ranked options (training and inference plans), as GET /v1/offerings
// and GET /v1/scenarios page: the answer's `next_cursor` is sent back as the request's
// `cursor` with the same request. A cursor holds where the next page starts, the catalog the
// walk began on and a fingerprint of the request, so a page is never taken from another
// request's ranking, nor from another catalog's (prices that changed in between would move
// options across the page boundary: listed twice or never).
struct PlanCursor {
    std::size_t offset = 0;
    std::string catalog_version;
    std::string request_fingerprint;
};

// Opaque, URL-safe text (sealed: page_cursor.hpp).
[[nodiscard]] std::string EncodePlanCursor(const PlanCursor& cursor);

// The cursor of `text` when it was issued for this request (`request_fingerprint`) on this
// catalog. Errors, on field `cursor`: 422 for text that is no cursor or one issued for another
// request (its body differs, `cursor` and `offset` aside); 409 (failed_precondition) when the
// catalog changed since the walk began (start again, or send as_of to page one catalog).
[[nodiscard]] pricing::Result<PlanCursor> DecodePlanCursor(std::string_view text,
                                                           std::string_view request_fingerprint,
                                                           std::string_view catalog_version);

// A plan request's paging: the fingerprint its cursors carry (the body without `cursor` and
// `offset`), the catalog it is answered on, and where the page starts when a cursor was sent.
struct PlanPaging {
    std::string request_fingerprint;
    std::string catalog_version;
    std::optional<std::size_t> cursor_offset;
    // The cursor of the page after the one at `offset` with `page_size` options of
    // `total_count`; none at the end.
    [[nodiscard]] std::optional<std::string> Next(std::size_t offset, std::size_t page_size,
                                                  std::size_t total_count) const;
};
// Reads `cursor` from a plan request body (DecodePlanCursor's errors; 422 on /cursor for a
// cursor that is not a string, or sent with `offset`).
[[nodiscard]] pricing::Result<PlanPaging> ReadPlanPaging(const nlohmann::json& body,
                                                         std::string_view catalog_version);

// The next page's cursor, or none when the page reaches the end of `total_count` options.
[[nodiscard]] std::optional<std::string> NextPlanCursor(std::size_t offset, std::size_t page_size,
                                                        std::size_t total_count,
                                                        std::string_view catalog_version,
                                                        std::string_view request_fingerprint);

}  // namespace gpucost::http
