#include "service/import/record_reader.hpp"

#include <doctest/doctest.h>

namespace gpucost::import {
namespace {

struct Collected {
    std::vector<JsonPath> paths;
    std::vector<nlohmann::json> records;
};

RecordReader Collector(
    Collected& out, std::vector<JsonPath> patterns,
    RecordReader::WantFn want = [](const JsonPath&) { return true; }) {
    return RecordReader(std::move(patterns), std::move(want),
                        [&out](const JsonPath& path, nlohmann::json&& record) {
                            out.paths.push_back(path);
                            out.records.push_back(std::move(record));
                            return std::optional<std::string>();
                        });
}

TEST_CASE("records at a wildcard path arrive one by one with their keys") {
    Collected got;
    auto reader = Collector(got, {{"products", "*"}});
    std::string doc = R"({"offerCode":"AmazonEC2","products":{"A":{"x":1},"B":{"y":[1,{"z":2}]}},
                          "terms":{"A":{"ignored":true}}})";
    REQUIRE(reader.ReadBuffer(doc, "doc.json").ok());
    REQUIRE(got.records.size() == 2);
    CHECK(got.paths[0] == JsonPath{"products", "A"});
    CHECK(got.records[0] == nlohmann::json{{"x", 1}});
    CHECK(got.records[1]["y"][1]["z"] == 2);
    CHECK(reader.TopLevel().at("offerCode") == "AmazonEC2");
}

TEST_CASE("array elements match the [] pattern element") {
    Collected got;
    auto reader = Collector(got, {{"Items", "[]"}});
    REQUIRE(reader.ReadBuffer(R"({"Items":[{"a":1},{"a":2}],"Count":2})", "page").ok());
    CHECK(got.records.size() == 2);
    CHECK(reader.TopLevel().at("Count") == "2");
}

TEST_CASE("a record the filter does not want is skipped whole, nested containers included") {
    Collected got;
    auto reader = Collector(got, {{"terms", "*"}},
                            [](const JsonPath& path) { return path.back() == "keep"; });
    REQUIRE(reader.ReadBuffer(R"({"terms":{"drop":{"a":[{"b":{}}]},"keep":{"c":3}}})", "t").ok());
    REQUIRE(got.records.size() == 1);
    CHECK(got.records[0] == nlohmann::json{{"c", 3}});
}

TEST_CASE("a truncated document fails naming the file and the byte offset") {
    Collected got;
    auto reader = Collector(got, {{"products", "*"}});
    auto status = reader.ReadBuffer(R"({"products":{"A":{"x":1},"B":{"y")", "cut.json");
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message.find("cut.json: byte ") == 0);
    CHECK(status.error().message.find("unexpected end of input") != std::string::npos);
}

TEST_CASE("trailing text after the document is a syntax error") {
    Collected got;
    auto reader = Collector(got, {{"products", "*"}});
    CHECK_FALSE(reader.ReadBuffer(R"({"products":{}} extra)", "x").ok());
}

TEST_CASE("a refusal from the record callback aborts the read with its message") {
    RecordReader reader(
        {{"a", "*"}}, [](const JsonPath&) { return true; },
        [](const JsonPath&, nlohmann::json&&) {
            return std::optional<std::string>("not this layout");
        });
    auto status = reader.ReadBuffer(R"({"a":{"b":{}}})", "f");
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message.find("not this layout") != std::string::npos);
}

}  // namespace
}  // namespace gpucost::import
