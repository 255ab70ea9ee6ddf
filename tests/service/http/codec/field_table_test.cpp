#include "service/http/codec/field_table.hpp"

#include <doctest/doctest.h>

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "service/http/codec/estimate_codec.hpp"
#include "service/http/codec/plan_codec.hpp"
#include "service/http/codec/price_book_codec.hpp"

using json = nlohmann::json;
using gpucost::http::DecodeHardware;
using gpucost::http::DecodePriceBook;
using gpucost::http::DecodeRentVsBuyRequest;
using gpucost::http::DecodeRooflineRequest;
using gpucost::http::Optional;
using gpucost::http::ReadNested;
using gpucost::http::RequestField;
using gpucost::http::Required;

namespace {

struct Shape {
    std::string name;
    std::optional<double> size_gb;
    std::optional<std::string> colour;
};

const auto kShapeFields = std::to_array<RequestField<Shape>>({
    {"name", &Required<&Shape::name>},
    {"size_gb", &Optional<&Shape::size_gb>},
});
// The same shape with one row added: its key is known, nothing else changes.
const auto kShapeFieldsWithColour = std::to_array<RequestField<Shape>>({
    {"name", &Required<&Shape::name>},
    {"size_gb", &Optional<&Shape::size_gb>},
    {"colour", &Optional<&Shape::colour>},
});

// The unknown-member refusal's detail for `body` read at "/shape" by `fields`.
template <std::size_t N>
std::string Refusal(const json& body, const std::array<RequestField<Shape>, N>& fields) {
    Shape shape;
    auto read = ReadNested(&body, "/shape", shape, fields);
    REQUIRE_FALSE(read.ok());
    return read.error().message;
}

}  // namespace

TEST_CASE(
    "a request table's rows are its known members: a row added is accepted, others are refused") {
    const json body = {{"name", "a"}, {"size_gb", 2}, {"colour", "red"}};
    CHECK(Refusal(body, kShapeFields).find("unknown member; known members: name, size_gb") !=
          std::string::npos);

    Shape shape;
    REQUIRE(ReadNested(&body, "/shape", shape, kShapeFieldsWithColour).ok());
    CHECK(shape.name == "a");
    CHECK(shape.size_gb == 2);
    CHECK(shape.colour == "red");

    const json unknown = {{"name", "a"}, {"weight_kg", 1}};
    auto refused = ReadNested(&unknown, "/shape", shape, kShapeFieldsWithColour);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == gpucost::pricing::ErrorCode::kMalformed);
    CHECK(refused.error().field == "/shape/weight_kg");
    CHECK(refused.error().message.find("known members: colour, name, size_gb") !=
          std::string::npos);
}

TEST_CASE("a required row is 422 naming its member when absent, and keeps the default") {
    Shape shape;
    const json body = {{"size_gb", 1}};
    auto read = ReadNested(&body, "/shape", shape, kShapeFields);
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().code == gpucost::pricing::ErrorCode::kInvalidArgument);
    CHECK(read.error().field == "/shape/name");
}

// Each decoder's known members are its table's keys: the refusal lists them, and each one sent
// is read (not refused as unknown).
TEST_CASE(
    "the price book, hardware, rent-vs-buy and roofline decoders know their tables' members") {
    auto known = [](const gpucost::pricing::Error& e) {
        const std::string marker = "known members: ";
        const auto at = e.message.find(marker);
        return at == std::string::npos ? std::string() : e.message.substr(at + marker.size());
    };
    auto rule = DecodePriceBook(
        json::parse(R"({"name": "b", "rules": [{"provider": "aws", "discount": 0.1}]})"), "/book",
        100);
    REQUIRE_FALSE(rule.ok());
    CHECK(rule.error().field == "/book/rules/0/discount");
    CHECK(known(rule.error()) ==
          "accelerator, discount_fraction, instance_family, offering_id, price_types, provider, "
          "region, usd_per_hour, valid_from, valid_until");

    auto owned = DecodePriceBook(
        json::parse(R"({"name": "b", "owned_capacity": [{"offering_id": "x", "count": 1}]})"),
        "/book", 100);
    REQUIRE_FALSE(owned.ok());
    CHECK(owned.error().field == "/book/owned_capacity/0/count");
    CHECK(known(owned.error()) == "end_date, nodes, offering_id, start_date, usd_per_hour");

    auto book = DecodePriceBook(json::parse(R"({"name": "b", "rules": [], "tag": 1})"), "/book", 1);
    REQUIRE_FALSE(book.ok());
    CHECK(known(book.error()) == "currency, id, name, owned_capacity, rules, version");

    auto every_owned =
        DecodePriceBook(json::parse(R"({"name": "b", "id": "b", "version": 2, "owned_capacity": [
            {"offering_id": "x", "nodes": 2, "start_date": "2026-01-01",
             "end_date": "2026-02-01", "usd_per_hour": 30}]})"),
                        "/book", 100);
    REQUIRE(every_owned.ok());
    CHECK(every_owned.value().version == 2);
    REQUIRE(every_owned.value().owned_capacity.size() == 1);
    CHECK(every_owned.value().owned_capacity[0].nodes == 2);
    CHECK(every_owned.value().owned_capacity[0].end_date == "2026-02-01");

    auto hardware = DecodeHardware(json::parse(R"({"accelerator": "H100-SXM",
        "total_accelerators": 16, "accelerator_count": 8, "scale_out_gbit_per_s_per_node": 400,
        "scale_up_gb_per_s": 900, "scale_up_domain": 8, "nodes": 2})"),
                                   "/hardware");
    REQUIRE_FALSE(hardware.ok());
    CHECK(hardware.error().field == "/hardware/nodes");
    CHECK(known(hardware.error()) ==
          "accelerator, accelerator_count, scale_out_gbit_per_s_per_node, scale_up_domain, "
          "scale_up_gb_per_s, total_accelerators");
    auto read = DecodeHardware(json::parse(R"({"accelerator": "H100-SXM",
        "total_accelerators": 16, "accelerator_count": 8, "scale_out_gbit_per_s_per_node": 400,
        "scale_up_gb_per_s": 900, "scale_up_domain": 8})"),
                               "/hardware");
    REQUIRE(read.ok());
    CHECK(read.value().accelerator == "h100-sxm");
    CHECK(read.value().total_accelerators == 16);
    CHECK(read.value().scale_up_domain == 8);

    auto rent_vs_buy = DecodeRentVsBuyRequest(json::parse(R"({"buy": {}, "rent": {},
        "horizon_months": 36, "discount_rate_annual": 0.08, "years": 3})"));
    REQUIRE_FALSE(rent_vs_buy.ok());
    CHECK(rent_vs_buy.error().field == "/years");
    CHECK(known(rent_vs_buy.error()) == "buy, discount_rate_annual, horizon_months, rent");

    auto roofline = DecodeRooflineRequest(json::parse(R"({"accelerator": "h100-sxm",
        "ops": [{"kind": "memory", "name": "x", "bytes_read": 8, "m": 1}]})"));
    REQUIRE_FALSE(roofline.ok());
    CHECK(roofline.error().field == "/ops/0/m");
    CHECK(known(roofline.error()) == "bytes_read, bytes_written, kind, name");
    auto gemm = DecodeRooflineRequest(json::parse(R"({"accelerator": "h100-sxm",
        "precision": "fp8", "ops": [{"kind": "gemm", "m": 2, "n": 3}]})"));
    REQUIRE_FALSE(gemm.ok());
    CHECK(gemm.error().field == "/ops/0/k");
    CHECK(gemm.error().code == gpucost::pricing::ErrorCode::kInvalidArgument);
}
