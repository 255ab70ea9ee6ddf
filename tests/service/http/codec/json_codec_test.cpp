#include "service/http/codec/json_codec.hpp"

#include "service/http/codec/json_text.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

using gpucost::http::ParseJsonBody;
using gpucost::pricing::ErrorCode;

TEST_SUITE("json_codec") {
    TEST_CASE("a JSON object parses") {
        auto r = ParseJsonBody(R"({"a": [1, 2, {"b": "c"}]})");
        REQUIRE(r.ok());
        CHECK(r.value()["a"][2]["b"] == "c");
    }

    // nlohmann::json's Grisu2 is not always shortest: AppendJsonNumber writes the DOM's layout
    // with the shortest digits, so its text is the DOM's, or no longer and reading back the same.
    TEST_CASE("numbers are written in the DOM's layout, never longer, first time and repeated") {
        using gpucost::http::AppendJsonNumber;
        using gpucost::http::Num;
        std::vector<double> values = {0.0,
                                      -0.0,
                                      1.0,
                                      -1.0,
                                      64.0,
                                      0.5,
                                      0.85,
                                      3.6e-06,
                                      1e-7,
                                      1e14,
                                      999999999999999.0,
                                      1e15,
                                      -1e15,
                                      1e16,
                                      123456789.5,
                                      9007199254740992.0,
                                      1e300,
                                      -2.5e-300,
                                      4.9e-324,
                                      std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN()};
        std::mt19937_64 random(42);  // fixed seed: the same values every run
        for (int i = 0; i < 20000; ++i) {
            std::uint64_t bits = random();
            double v = 0;
            std::memcpy(&v, &bits, sizeof v);
            values.push_back(v);  // any bit pattern
            values.push_back(std::ldexp(static_cast<double>(random() % 100000), -(i % 40)));
            values.push_back(static_cast<double>(random() % 2000000000000000ULL) -
                             1e15);  // integral, both sides
        }
        std::size_t mismatches = 0;
        std::size_t shorter = 0;
        std::string first_mismatch;
        for (int round = 0; round < 2; ++round) {  // the second round repeats every value
            for (double v : values) {
                std::string text;
                AppendJsonNumber(text, v);
                const std::string dom = Num(v).dump();
                if (text == dom) continue;
                const bool same_value = std::strtod(text.c_str(), nullptr) == v;
                const bool same_layout =
                    (text.find('e') == std::string::npos) == (dom.find('e') == std::string::npos);
                // Where 17 digits are needed both read back; std::to_chars' are the closest.
                if (text.size() <= dom.size() && same_value && same_layout) {
                    if (text.size() < dom.size()) ++shorter;
                } else if (mismatches++ == 0) {
                    first_mismatch = text + " instead of " + dom;
                }
            }
        }
        CAPTURE(first_mismatch);
        CHECK(mismatches == 0);
        CHECK(shorter > 0);  // Grisu2's longer texts among 60,000 values
    }

    TEST_CASE("doubles print as the shortest text that reads back as them") {
        using gpucost::http::AppendJsonNumber;
        using gpucost::http::json;
        using gpucost::http::ToJsonText;
        // Three rates nlohmann::json 3.11 wrote with 17 digits (1.4456039999999999), then the
        // edges of the layout.
        const std::pair<double, const char*> cases[] = {
            {1.445604, "1.445604"}, {2.619394, "2.619394"}, {0.484042, "0.484042"},
            {3.6e-06, "3.6e-06"},   {0.0001, "0.0001"},     {1e-05, "1e-05"},
            {1e15, "1e+15"},        {123456.0, "123456.0"}, {-0.5, "-0.5"}};
        for (const auto& [value, text] : cases) {
            CAPTURE(text);
            std::string out;
            AppendJsonNumber(out, value);
            CHECK(out == text);
            CHECK(ToJsonText(json(value)) == text);
            CHECK(ToJsonText(json{{"usd", value}}, 2) ==
                  "{\n  \"usd\": " + std::string(text) + "\n}");
        }
    }

    TEST_CASE("ToJsonText writes a DOM as dump does, indented or not") {
        using gpucost::http::json;
        using gpucost::http::ToJsonText;
        const json dom = {{"b", {1, 2.5, "x\"y", nullptr, json::object(), json::array()}},
                          {"a", {{"nested", true}, {"n", -7}, {"u", 7U}}},
                          {"bad", "caf\xc3\xa9 \xff"}};
        for (int indent : {-1, 0, 2, 4}) {
            CAPTURE(indent);
            CHECK(ToJsonText(dom, indent) ==
                  dom.dump(indent, ' ', false, json::error_handler_t::replace));
        }
    }

    TEST_CASE("a duplicate key is named, nested or not, and before a later fault") {
        for (const auto& [body, key] : std::vector<std::pair<std::string, std::string>>{
                 {R"({"a": 1, "b": 2, "a": 3})", "a"},
                 {R"({"model": {"params_b": 7, "layers": 32, "params_b": 8}, "x": 1})", "params_b"},
                 {R"({"list": [{"k": 1}, {"k": 2, "k": 3}]})", "k"},
                 {R"({"a": 1, "a": 2, "b": })", "a"}}) {
            CAPTURE(body);
            auto r = ParseJsonBody(body);
            REQUIRE_FALSE(r.ok());
            CHECK(r.error().code == ErrorCode::kMalformed);
            CHECK(r.error().message == "request body rejected: duplicate key '" + key + "'");
        }
        // Equal keys in different objects are no duplicate.
        auto ok = ParseJsonBody(R"({"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]})");
        REQUIRE(ok.ok());
        CHECK(ok.value()["b"][1]["a"] == 3);
    }

    TEST_CASE("invalid JSON, non-objects, duplicates and excess depth are malformed") {
        for (const char* body :
             {"{", "[1,2]", "42", R"({"a":1,"a":2})", "{\"a\":NaN}", "{\"a\":\"\xff\"}", ""}) {
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
        // Objects in an array count once each, whatever their members (4,097 objects do not fit).
        std::string objects = "{\"a\":[";
        for (int i = 0; i < 4097; ++i) {
            objects += (i ? ",{\"x\":1}" : "{\"x\":1}");
        }
        objects += "]}";
        CHECK_FALSE(ParseJsonBody(objects).ok());
    }

    TEST_CASE("an array counts its own elements, not the members of the objects in it") {
        // The bulk import's 1,000 offerings of nine members: 9,000 values, 1,000 elements.
        std::string items = "{\"items\":[";
        for (int i = 0; i < 1000; ++i) {
            items += std::string(i ? "," : "") +
                     R"({"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":[8, 9],"i":"x"})";
        }
        items += "]}";
        auto parsed = ParseJsonBody(items);
        REQUIRE(parsed.ok());
        CHECK(parsed.value()["items"].size() == 1000);
    }

    TEST_CASE("numbers keep every digit at the boundary and non-finite values become null") {
        CHECK(gpucost::http::Num(3.6e-06).dump() == "3.6e-06");
        CHECK(gpucost::http::Num(6.8800000000001).get<double>() == 6.8800000000001);
        CHECK(gpucost::http::Num(0.1 + 0.2).dump() == "0.30000000000000004");
        CHECK(gpucost::http::Num(-0.0).dump() == "0.0");
        CHECK(gpucost::http::Num(std::numeric_limits<double>::infinity()).is_null());
    }

    // Answers written as text must be the bytes a DOM gives: the writer is held to ToJsonText's
    // output for the same values, the awkward ones included.
    TEST_CASE("JsonWriter writes what ToJsonText writes of a DOM") {
        using gpucost::http::json;
        using gpucost::http::JsonWriter;
        using gpucost::http::Num;
        const double inf = std::numeric_limits<double>::infinity();
        const std::string strings[] = {"plain-id_1.0",
                                       "say \"hi\"",
                                       "back\\slash",
                                       "tab\there",
                                       std::string("nul\0byte", 8),
                                       "\x01\x1f\x7f",
                                       "caf\xc3\xa9",
                                       "bad \xff utf-8",
                                       ""};
        const double numbers[] = {0.0,       -0.0,    3.0,
                                  0.1 + 0.2, 3.6e-06, 1e300,
                                  -2.5e-300, 1e21,    123456789012345678.0,
                                  inf,       -inf,    std::numeric_limits<double>::quiet_NaN()};
        for (const std::string& text : strings) {
            for (double number : numbers) {
                CAPTURE(text);
                CAPTURE(number);
                const std::optional<double> unset;
                json dom = {{"a_number", Num(number)},
                            {"b_int", -42},
                            {"c_text", text},
                            {"d_list", {text, Num(number), nullptr, true}},
                            {"e_unset", nullptr},
                            {"f_set", Num(number)},
                            {"g_keyed", {{text, false}}}};
                std::string out;
                JsonWriter w(out);
                w.BeginObject();
                w.Member("a_number", number);
                w.Member("b_int", -42);
                w.Member("c_text", text);
                w.Key("d_list");
                w.BeginArray();
                w.String(text);
                w.Number(number);
                w.Null();
                w.Bool(true);
                w.EndArray();
                w.Member("e_unset", unset);
                w.Member("f_set", std::optional<double>(number));
                w.Key("g_keyed");
                w.BeginObject();
                w.Member(text, false);
                w.EndObject();
                w.EndObject();
                CHECK(out == gpucost::http::ToJsonText(dom));
            }
        }
    }
}
