#include "service/http/codec/plan_cursor.hpp"

#include <doctest/doctest.h>

namespace gpucost::http {

TEST_CASE("a plan cursor reads back where its page starts, for its request and catalog") {
    const std::string text = EncodePlanCursor({40, "9004dab37bbcecb5", "f1"});
    auto cursor = DecodePlanCursor(text, "f1", "9004dab37bbcecb5");
    REQUIRE(cursor.ok());
    CHECK(cursor.value().offset == 40);
    // URL-safe and opaque: neither the catalog version nor the offset reads in it.
    CHECK(text.find_first_not_of(
              "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
          std::string::npos);
    CHECK(text.find("9004dab37bbcecb5") == std::string::npos);
    CHECK(text.find("39303034") == std::string::npos);  // the version in hex
}

TEST_CASE("a cursor of another request is 422, of another catalog 409, on /cursor") {
    const std::string text = EncodePlanCursor({40, "pg-r7", "f1"});
    auto other_request = DecodePlanCursor(text, "f2", "pg-r7");
    REQUIRE_FALSE(other_request.ok());
    CHECK(other_request.error().code == pricing::ErrorCode::kInvalidArgument);
    CHECK(other_request.error().field == "/cursor");
    auto other_catalog = DecodePlanCursor(text, "f1", "pg-r8");
    REQUIRE_FALSE(other_catalog.ok());
    CHECK(other_catalog.error().code == pricing::ErrorCode::kFailedPrecondition);
    CHECK(other_catalog.error().message.find("pg-r7") != std::string::npos);
}

TEST_CASE("text that is no cursor is 422, never a crash") {
    for (const char* text : {"", "z", "zz", "abc", "7063310a", "7063310a780a760a66"}) {
        auto cursor = DecodePlanCursor(text, "f", "v");
        REQUIRE_FALSE(cursor.ok());
        CHECK(cursor.error().field == "/cursor");
    }
}

TEST_CASE("the last page has no next cursor") {
    CHECK(NextPlanCursor(0, 20, 50, "v", "f").has_value());
    CHECK_FALSE(NextPlanCursor(40, 10, 50, "v", "f").has_value());
    CHECK_FALSE(NextPlanCursor(0, 0, 0, "v", "f").has_value());
}

TEST_CASE("a body's cursor and offset do not change its fingerprint; both at once are 422") {
    nlohmann::json body = {{"model", {{"params_b", 7}}}, {"tokens_b", 100}, {"limit", 5}};
    auto first = ReadPlanPaging(body, "v");
    REQUIRE(first.ok());
    CHECK_FALSE(first.value().cursor_offset);
    auto next = first.value().Next(0, 5, 12);
    REQUIRE(next);
    body["cursor"] = *next;
    auto second = ReadPlanPaging(body, "v");
    REQUIRE(second.ok());
    CHECK(second.value().cursor_offset == 5u);
    CHECK(second.value().request_fingerprint == first.value().request_fingerprint);
    body["offset"] = 5;
    CHECK_FALSE(ReadPlanPaging(body, "v").ok());
}

}  // namespace gpucost::http
