#include "service/http/codec/plan_cursor.hpp"

#include <charconv>

#include "service/http/codec/idempotency.hpp"
#include "service/http/codec/page_cursor.hpp"

namespace gpucost::http {

namespace {

constexpr std::string_view kPrefix = "pc1";  // this format's version
constexpr char kPlanCursorSep = '\n';        // never inside a version or a fingerprint

pricing::Error NotAPlanCursor() {
    return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                              "/cursor: is not a cursor this plan issued; send next_cursor of "
                              "the previous page, or start again without cursor",
                              "/cursor");
}

}  // namespace

std::string EncodePlanCursor(const PlanCursor& cursor) {
    return SealCursor(std::string(kPrefix) + kPlanCursorSep + std::to_string(cursor.offset) +
                      kPlanCursorSep + cursor.catalog_version + kPlanCursorSep +
                      cursor.request_fingerprint);
}

pricing::Result<PlanCursor> DecodePlanCursor(std::string_view text,
                                             std::string_view request_fingerprint,
                                             std::string_view catalog_version) {
    auto raw = OpenCursor(text);
    if (!raw) return NotAPlanCursor();
    std::string_view rest = *raw;
    std::string_view parts[4];
    for (int i = 0; i < 3; ++i) {
        std::size_t sep = rest.find(kPlanCursorSep);
        if (sep == std::string_view::npos) return NotAPlanCursor();
        parts[i] = rest.substr(0, sep);
        rest.remove_prefix(sep + 1);
    }
    parts[3] = rest;
    PlanCursor cursor;
    auto [end, ec] =
        std::from_chars(parts[1].data(), parts[1].data() + parts[1].size(), cursor.offset);
    if (parts[0] != kPrefix || ec != std::errc() || end != parts[1].data() + parts[1].size()) {
        return NotAPlanCursor();
    }
    cursor.catalog_version = parts[2];
    cursor.request_fingerprint = parts[3];
    if (cursor.request_fingerprint != request_fingerprint) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  "/cursor: was issued for another request (its body differs); "
                                  "repeat that request with it, or start again without cursor",
                                  "/cursor");
    }
    if (cursor.catalog_version != catalog_version) {
        return pricing::MakeError(
            pricing::ErrorCode::kFailedPrecondition,
            "/cursor: the catalog changed since this walk began (" + cursor.catalog_version +
                ", now " + std::string(catalog_version) +
                "): its pages would list options twice or never; start again without cursor "
                "(database mode: or page with as_of fixed)",
            "/cursor");
    }
    return cursor;
}

std::optional<std::string> NextPlanCursor(std::size_t offset, std::size_t page_size,
                                          std::size_t total_count, std::string_view catalog_version,
                                          std::string_view request_fingerprint) {
    if (offset + page_size >= total_count) return std::nullopt;
    return EncodePlanCursor(
        {offset + page_size, std::string(catalog_version), std::string(request_fingerprint)});
}

pricing::Result<PlanPaging> ReadPlanPaging(const nlohmann::json& body,
                                           std::string_view catalog_version) {
    PlanPaging paging;
    paging.request_fingerprint = JsonFingerprint(body, {"cursor", "offset"});
    paging.catalog_version = catalog_version;
    auto it = body.find("cursor");
    if (it == body.end() || it->is_null()) return paging;
    if (!it->is_string()) {
        return pricing::MakeError(pricing::ErrorCode::kMalformed, "/cursor: must be a string",
                                  "/cursor");
    }
    if (body.contains("offset")) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  "/cursor: send cursor or offset, not both (a cursor holds "
                                  "where its page starts)",
                                  "/cursor");
    }
    auto cursor = DecodePlanCursor(it->get_ref<const std::string&>(), paging.request_fingerprint,
                                   catalog_version);
    if (!cursor.ok()) return cursor.error();
    paging.cursor_offset = cursor.value().offset;
    return paging;
}

std::optional<std::string> PlanPaging::Next(std::size_t offset, std::size_t page_size,
                                            std::size_t total_count) const {
    return NextPlanCursor(offset, page_size, total_count, catalog_version, request_fingerprint);
}

}  // namespace gpucost::http
