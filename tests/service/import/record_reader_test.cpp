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

namespace gpucost::import {
namespace {

// Wherever a value over the limit sits (in a record, in a skipped record, beside the records,
// a string or a run of digits), the read stops there with an error naming the limit.
TEST_CASE("a value longer than kMaxValueBytes is refused as its bytes arrive") {
    const std::string big(RecordReader::kMaxValueBytes + 1, 'x');
    const std::string digits(RecordReader::kMaxValueBytes + 1, '7');
    for (const std::string& doc :
         {R"({"products":{"A":{"description":")" + big + R"("}}})",
          R"({"products":{"skipped":{"description":")" + big + R"("}}})",
          R"({"disclaimer":")" + big + R"(","products":{}})",
          R"({"products":{"A":{"n":)" + digits + "}}}", R"({")" + big + R"(":1})"}) {
        Collected got;
        auto reader = Collector(got, {{"products", "*"}},
                                [](const JsonPath& path) { return path.back() != "skipped"; });
        auto status = reader.ReadBuffer(doc, "big.json");
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().message.find("big.json: byte ") == 0);
        CHECK(status.error().message.find("a value is longer than 1048576 bytes") !=
              std::string::npos);
        CHECK(got.records.empty());
    }
    // A value at the limit, escapes counted as written, is read.
    std::string text(RecordReader::kMaxValueBytes - 2, 'y');
    text += "\\\"";  // an escaped quote: two bytes, and the string goes on
    Collected got;
    auto reader = Collector(got, {{"products", "*"}});
    REQUIRE(reader.ReadBuffer(R"({"products":{"A":{"d":")" + text + R"("}}})", "edge.json").ok());
    REQUIRE(got.records.size() == 1);
    CHECK(got.records[0]["d"].get<std::string>().size() == RecordReader::kMaxValueBytes - 1);
}

TEST_CASE("deep nesting, long records and many top-level values are refused by name") {
    Collected got;
    auto deep = Collector(got, {{"products", "*"}});
    const std::string nested = std::string(RecordReader::kMaxDepth + 1, '[') +
                               std::string(RecordReader::kMaxDepth + 1, ']');
    auto status = deep.ReadBuffer(nested, "deep.json");
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message.find("nests deeper than 64 levels") != std::string::npos);

    std::string values;
    const std::string chunk(1000, 'z');
    for (std::size_t i = 0; i * chunk.size() <= RecordReader::kMaxRecordBytes; ++i) {
        values += std::string(i ? "," : "") + "\"" + chunk + "\"";
    }
    auto wide = Collector(got, {{"products", "*"}});
    status = wide.ReadBuffer(R"({"products":{"A":[)" + values + "]}}", "wide.json");
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message.find("a record is longer than 8388608 bytes") !=
          std::string::npos);

    std::string keys;
    for (std::size_t i = 0; i <= RecordReader::kMaxTopLevelValues; ++i) {
        keys += std::string(i ? "," : "") + "\"k" + std::to_string(i) + "\":1";
    }
    auto many = Collector(got, {{"products", "*"}});
    status = many.ReadBuffer("{" + keys + "}", "many.json");
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message.find("more than 256 values beside its records") !=
          std::string::npos);
    CHECK(got.records.empty());
}

}  // namespace
}  // namespace gpucost::import
