#include "service/http/codec/page_cursor.hpp"

#include <doctest/doctest.h>

namespace gpucost::http {

namespace {

httplib::Request Query(std::initializer_list<std::pair<std::string, std::string>> params) {
    httplib::Request req;
    for (const auto& [name, value] : params) req.params.emplace(name, value);
    return req;
}

}  // namespace

TEST_CASE("a sealed cursor opens to its payload and reads as nothing it holds") {
    const std::string payload =
        "offerings\x1fpg-r7\x1f"
        "aws-p5.48xlarge-us-east-1-on-demand";
    const std::string text = SealCursor(payload);
    CHECK(OpenCursor(text) == payload);
    CHECK(SealCursor(payload) == text);  // the same page, the same cursor (and ETag)
    CHECK(text.find_first_not_of(
              "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
          std::string::npos);
    CHECK(text.find("pg-r7") == std::string::npos);
    CHECK(text.find("aws") == std::string::npos);
}

TEST_CASE("a cursor with any one character changed, cut short or lengthened does not open") {
    const std::string text = SealCursor(
        "scenarios\x1f\x1f"
        "41");
    for (std::size_t i = 0; i < text.size(); ++i) {
        std::string changed = text;
        changed[i] = changed[i] == 'A' ? 'B' : 'A';
        CHECK_FALSE(OpenCursor(changed).has_value());
    }
    CHECK_FALSE(OpenCursor(text.substr(0, text.size() - 1)).has_value());
    CHECK_FALSE(OpenCursor(text + "A").has_value());
    for (const char* junk : {"", "41", "7063310a", "%%%", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}) {
        CHECK_FALSE(OpenCursor(junk).has_value());
    }
    CHECK_FALSE(OpenCursor(std::string(5000, 'A')).has_value());
}

TEST_CASE(
    "a list's limit and cursor: default, bounds and the cursor's binding, each naming its field") {
    auto page = ReadPageRequest(QueryParams(Query({}), {"limit", "cursor"}), "price-books");
    REQUIRE(page.ok());
    CHECK(page.value().limit == kDefaultPageSize);
    CHECK_FALSE(page.value().after);

    for (const char* bad : {"0", "501", "-3"}) {
        auto refused =
            ReadPageRequest(QueryParams(Query({{"limit", bad}}), {"limit", "cursor"}), "x");
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().code == pricing::ErrorCode::kInvalidArgument);  // 422
        CHECK(refused.error().field == "limit");
    }

    const std::string next = NextPageCursor("history:a", "17", "v3");
    auto followed =
        ReadPageRequest(QueryParams(Query({{"limit", "2"}, {"cursor", next}}), {"limit", "cursor"}),
                        "history:a", "v3");
    REQUIRE(followed.ok());
    CHECK(followed.value().limit == 2);
    CHECK(followed.value().after == "17");

    auto other_list = ReadPageRequest(QueryParams(Query({{"cursor", next}}), {"limit", "cursor"}),
                                      "history:b", "v3");
    REQUIRE_FALSE(other_list.ok());
    CHECK(other_list.error().code == pricing::ErrorCode::kInvalidArgument);
    CHECK(other_list.error().field == "cursor");

    auto moved_on = ReadPageRequest(QueryParams(Query({{"cursor", next}}), {"limit", "cursor"}),
                                    "history:a", "v4");
    REQUIRE_FALSE(moved_on.ok());
    CHECK(moved_on.error().code == pricing::ErrorCode::kFailedPrecondition);  // 409
    CHECK(moved_on.error().field == "cursor");

    auto forged = ReadPageRequest(QueryParams(Query({{"cursor", "17"}}), {"limit", "cursor"}),
                                  "history:a", "v3");
    REQUIRE_FALSE(forged.ok());
    CHECK(forged.error().field == "cursor");
}

}  // namespace gpucost::http
