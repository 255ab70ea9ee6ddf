#include "service/http/codec/csv_writer.hpp"

#include <doctest/doctest.h>

using gpucost::http::CsvNumber;
using gpucost::http::CsvTable;
using gpucost::http::ToCsv;
using gpucost::http::WantsCsv;

namespace {

bool Wants(const std::string& accept) {
    httplib::Request req;
    req.headers.emplace("Accept", accept);
    return WantsCsv(req);
}

}  // namespace

TEST_SUITE("csv_writer") {
    TEST_CASE("cells with separators are quoted and quotes doubled, rows end with CRLF") {
        CsvTable table{{"id", "note"}, {{"a", "x,y"}, {"b", "say \"hi\"\nbye"}}};
        CHECK(ToCsv(table) == "id,note\r\na,\"x,y\"\r\nb,\"say \"\"hi\"\"\nbye\"\r\n");
    }

    TEST_CASE("text that a spreadsheet would run as a formula is defused, numbers are not") {
        CsvTable table{{"v"}, {{"=1+2"}, {"-3.5"}, {"@cmd"}, {"+x"}}};
        CHECK(ToCsv(table) == "v\r\n'=1+2\r\n-3.5\r\n'@cmd\r\n'+x\r\n");
        // TAB and CR too (OWASP CSV injection): a spreadsheet may drop them and read the rest.
        CsvTable hidden{{"v"}, {{"\t=cmd"}, {"\r=cmd"}}};
        CHECK(ToCsv(hidden) == "v\r\n'\t=cmd\r\n\"'\r=cmd\"\r\n");
    }

    TEST_CASE("numbers are rounded like the JSON answers and non-finite ones are empty") {
        CHECK(CsvNumber(1.23456789) == "1.234568");
        CHECK(CsvNumber(800000) == "800000");
        CHECK(CsvNumber(1e15) == "1000000000000000");
        CHECK(CsvNumber(0.5) == "0.5");
        CHECK(CsvNumber(-0.0000001) == "0");
        CHECK(CsvNumber(1.0 / 0.0) == "");
    }

    TEST_CASE("Accept negotiation prefers JSON unless CSV ranks higher") {
        CHECK_FALSE(WantsCsv(httplib::Request{}));
        CHECK(Wants("text/csv"));
        CHECK(Wants("text/csv, application/json;q=0.5"));
        CHECK_FALSE(Wants("application/json, text/csv"));
        CHECK_FALSE(Wants("text/csv;q=0.5, application/json"));
        CHECK_FALSE(Wants("*/*"));
        CHECK(Wants("TEXT/CSV;charset=utf-8"));
        CHECK_FALSE(Wants("text/csv;q=0"));
    }
}
