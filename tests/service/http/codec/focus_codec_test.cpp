#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>

#include "pricing/catalog_loader.hpp"
#include "pricing/plan/inference_plan.hpp"
#include "pricing/price_book.hpp"
#include "service/http/codec/focus_codec.hpp"
#include "service/http/codec/price_book_codec.hpp"
#include "tests/support/sample_catalog.hpp"

namespace http = gpucost::http;
namespace pricing = gpucost::pricing;

namespace {

// The cell of `column` in the first row of `table`.
std::string FirstCell(const gpucost::text::CsvTable& table, const std::string& column) {
    REQUIRE(!table.rows.empty());
    for (std::size_t i = 0; i < table.header.size(); ++i) {
        if (table.header[i] == column) return table.rows.front()[i];
    }
    FAIL("no column " << column);
    return "";
}

}  // namespace

TEST_SUITE("focus codec") {
    TEST_CASE("a stored book's rows carry its id and version beside its name") {
        auto loaded = pricing::LoadCatalog(gpucost::testing::SampleCatalogCsv());
        REQUIRE(loaded.ok());
        std::shared_ptr<const pricing::Catalog> catalog = loaded.value();
        pricing::PriceBook book;
        book.name = "acme EDP";
        book.id = "acme-edp";
        book.version = 4;
        pricing::PriceBookRule rule;
        rule.provider = "aws";
        rule.discount_fraction = 0.25;
        book.rules.push_back(rule);
        auto view = http::ViewThroughBook(catalog, book);
        REQUIRE(view.ok());
        auto offering = view.value().catalog->FindOffering("aws-p5.48xlarge-us-east-1-on-demand");
        REQUIRE(offering.ok());
        pricing::plan::InferencePlanOption option;
        option.offering = &offering.value();
        option.nodes = 1;
        pricing::plan::ServingBudgetView budget;
        budget.start_date = "2027-01-01";
        budget.end_date = "2027-02-01";
        budget.months = 1;
        const auto table = http::ServingFocusCsv(option, budget, "v1", view.value());
        CHECK(FirstCell(table, "x_PriceBook") == "acme EDP");
        CHECK(FirstCell(table, "x_PriceBookId") == "acme-edp");
        CHECK(FirstCell(table, "x_PriceBookVersion") == "4");
        // The SKU is the instance whatever its price type; the SKU price is the offering.
        CHECK(FirstCell(table, "SkuId") == "aws-p5.48xlarge-us-east-1");
        CHECK(FirstCell(table, "SkuPriceId") == "aws-p5.48xlarge-us-east-1-on-demand");

        const auto list = http::ServingFocusCsv(option, budget, "v1", {catalog, nullptr});
        CHECK(FirstCell(list, "x_PriceBook").empty());
        CHECK(FirstCell(list, "x_PriceBookId").empty());
        CHECK(FirstCell(list, "x_PriceBookVersion").empty());
    }
}
