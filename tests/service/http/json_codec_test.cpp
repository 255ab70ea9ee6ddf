#include "service/http/json_codec.hpp"

#include <doctest/doctest.h>

using gpucost::http::ParseJsonBody;
using gpucost::pricing::ErrorCode;

TEST_SUITE("json_codec") {
    TEST_CASE("a JSON object parses") {
        auto r = ParseJsonBody(R"({"a": [1, 2, {"b": "c"}]})");
        REQUIRE(r.ok());
        CHECK(r.value()["a"][2]["b"] == "c");
    }

    TEST_CASE("invalid JSON, non-objects, duplicates and excess depth are malformed") {
        for (const char* body : {"{", "[1,2]", "42", R"({"a":1,"a":2})", "{\"a\":NaN}",
                                 "{\"a\":\"\xff\"}", ""}) {
            CAPTURE(body);
            auto r = ParseJsonBody(body);
            REQUIRE_FALSE(r.ok());
            CHECK(r.error().code == ErrorCode::kMalformed);
        }
        std::string deep = std::string(100000, '[') + std::string(100000, ']');
        auto r = ParseJsonBody("{\"a\":" + deep + "}");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message.find("nesting") != std::string::npos);
    }

    TEST_CASE("the same key in different objects is fine") {
        auto r = ParseJsonBody(R"({"a": {"x": 1}, "b": {"x": 2}})");
        CHECK(r.ok());
    }

    TEST_CASE("over-long strings and arrays are rejected") {
        std::string long_string = "{\"a\":\"" + std::string(5000, 'x') + "\"}";
        CHECK_FALSE(ParseJsonBody(long_string).ok());
        std::string long_array = "{\"a\":[";
        for (int i = 0; i < 5000; ++i) {
            long_array += (i ? ",1" : "1");
        }
        long_array += "]}";
        CHECK_FALSE(ParseJsonBody(long_array).ok());
    }

    TEST_CASE("numbers keep every digit at the boundary and non-finite values become null") {
        CHECK(gpucost::http::Num(3.6e-06).dump() == "3.6e-06");
        CHECK(gpucost::http::Num(6.8800000000001).get<double>() == 6.8800000000001);
        CHECK(gpucost::http::Num(0.1 + 0.2).dump() == "0.30000000000000004");
        CHECK(gpucost::http::Num(-0.0).dump() == "0.0");
        CHECK(gpucost::http::Num(std::numeric_limits<double>::infinity()).is_null());
    }
}
