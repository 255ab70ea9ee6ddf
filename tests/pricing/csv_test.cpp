#include "pricing/csv.hpp"

#include <doctest/doctest.h>

using gpucost::pricing::ParseCsv;

TEST_SUITE("csv") {
    TEST_CASE("quoted fields keep commas, escaped quotes and newlines") {
        auto r = ParseCsv("a,b,c\n1,\"x, \"\"y\"\"\",\"two\nlines\"\n", "t.csv");
        REQUIRE(r.ok());
        const auto& rows = r.value();
        REQUIRE(rows.size() == 2);
        CHECK(rows[1].fields[1] == "x, \"y\"");
        CHECK(rows[1].fields[2] == "two\nlines");
        CHECK(rows[1].line == 2);
    }

    TEST_CASE("CRLF line endings, blank lines and empty trailing fields are handled") {
        auto r = ParseCsv("a,b\r\n\r\n1,\r\n2,3\r\n", "t.csv");
        REQUIRE(r.ok());
        REQUIRE(r.value().size() == 3);
        CHECK(r.value()[1].fields == std::vector<std::string>{"1", ""});
        CHECK(r.value()[2].line == 4);
    }

    TEST_CASE("an unterminated quote is an error naming the file and line") {
        auto r = ParseCsv("a\n\"open\n", "data.csv");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message == "data.csv line 2: unterminated quoted field");
    }

    TEST_CASE("text after a closing quote is an error") {
        auto r = ParseCsv("a,b\n\"x\"y,2\n", "data.csv");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message.find("line 2") != std::string::npos);
    }
}
