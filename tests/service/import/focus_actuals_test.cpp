#include "service/import/focus_actuals.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pricing/catalog_loader.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost;

namespace {

std::string Fixture(const std::string& name) {
    return std::string(GPUCOST_SOURCE_DIR) + "/tests/data/focus/" + name;
}

}  // namespace

TEST_CASE("a CSV record keeps quoted commas, doubled quotes and empty cells") {
    auto cells = import::ParseCsvRecord(R"(1,"a,b","{""k"":""v""}",,x)");
    REQUIRE(cells.size() == 5);
    CHECK(cells[1] == "a,b");
    CHECK(cells[2] == R"({"k":"v"})");
    CHECK(cells[3].empty());
}

TEST_CASE(
    "the AWS export keeps accelerator usage mapped to catalog offerings and counts the "
    "rest by reason") {
    auto catalog = pricing::LoadCatalog(testing::SampleCatalogCsv());
    REQUIRE(catalog.ok());
    auto mappings = import::LoadEmbeddedMappings();
    REQUIRE(mappings.ok());
    pricing::ActualsReport report;
    std::vector<pricing::ActualCharge> kept;
    auto status = import::ReadFocusExport(
        Fixture("aws-focus-1.0.csv"), {}, *catalog.value(), mappings.value(), report,
        [&](const pricing::ActualCharge& c) { kept.push_back(c); });
    REQUIRE(status.ok());
    CHECK(report.rows_read == 8);
    REQUIRE(kept.size() == 3);
    CHECK(kept[0].offering_id == "aws-p5.48xlarge-us-east-1-on-demand");
    CHECK(kept[0].accelerator_hours == 800);
    CHECK(kept[0].tag_value == "s-1");
    CHECK(kept[1].offering_id == "aws-p5.48xlarge-us-east-1-spot");
    CHECK(kept[2].tag_value.empty());
    CHECK(kept[2].month == "2027-01");
    CHECK(report.skipped.at("unknown_sku") == 1);
    CHECK(report.skipped.at("non_accelerator") == 1);
    CHECK(report.skipped.at("tax") == 1);
    CHECK(report.skipped.at("credit") == 1);
    CHECK(report.skipped.at("purchase") == 1);
    // The same file read again gives the same row identities.
    pricing::ActualsReport again;
    std::vector<std::string> ids;
    REQUIRE(import::ReadFocusExport(
                Fixture("aws-focus-1.0.csv"), {}, *catalog.value(), mappings.value(), again,
                [&](const pricing::ActualCharge& c) { ids.push_back(c.row_id); })
                .ok());
    CHECK(ids == std::vector<std::string>{kept[0].row_id, kept[1].row_id, kept[2].row_id});
}

TEST_CASE("a file without the FOCUS columns is refused naming the first one missing") {
    const std::string path = "focus_actuals_test_not_focus.csv";
    std::ofstream(path) << "a,b\n1,2\n";
    auto catalog = pricing::LoadCatalog(testing::SampleCatalogCsv());
    auto mappings = import::LoadEmbeddedMappings();
    pricing::ActualsReport report;
    auto status = import::ReadFocusExport(path, {}, *catalog.value(), mappings.value(), report,
                                          [](const pricing::ActualCharge&) {});
    std::remove(path.c_str());
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message.find("ChargeCategory") != std::string::npos);
}

TEST_CASE("an export in memory reads as the file does; a bad number names its line and column") {
    auto catalog = pricing::LoadCatalog(testing::SampleCatalogCsv());
    REQUIRE(catalog.ok());
    auto mappings = import::LoadEmbeddedMappings();
    REQUIRE(mappings.ok());
    std::ifstream in(Fixture("aws-focus-1.0.csv"), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> from_file;
    std::vector<std::string> from_text;
    pricing::ActualsReport file_report;
    pricing::ActualsReport text_report;
    REQUIRE(import::ReadFocusExport(
                Fixture("aws-focus-1.0.csv"), {}, *catalog.value(), mappings.value(), file_report,
                [&](const pricing::ActualCharge& c) { from_file.push_back(c.row_id); })
                .ok());
    REQUIRE(import::ReadFocusText(
                text, {}, *catalog.value(), mappings.value(), text_report,
                [&](const pricing::ActualCharge& c) { from_text.push_back(c.row_id); })
                .ok());
    CHECK(from_text == from_file);
    CHECK(text_report.skipped == file_report.skipped);

    // The second data row (line 3) with EffectiveCost "n/a": the column after ConsumedUnit.
    std::string bad = text;
    const std::size_t line3 = bad.find('\n', bad.find('\n') + 1) + 1;
    const std::size_t effective = bad.find(",Hrs,", line3) + 5;
    bad.replace(effective, bad.find(',', effective) - effective, "n/a");
    pricing::ActualsReport report;
    auto status = import::ReadFocusText(bad, {}, *catalog.value(), mappings.value(), report,
                                        [](const pricing::ActualCharge&) {});
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().field == "line 3");
    CHECK(status.error().message == "the body: line 3: EffectiveCost 'n/a' is not a number");
}

TEST_CASE("row identities are the ones earlier versions stored; identical rows by their order") {
    auto catalog = pricing::LoadCatalog(testing::SampleCatalogCsv());
    REQUIRE(catalog.ok());
    auto mappings = import::LoadEmbeddedMappings();
    REQUIRE(mappings.ok());
    std::ifstream in(Fixture("aws-focus-1.0.csv"), std::ios::binary);
    std::string header, p5, line, tax;
    std::getline(in, header);
    std::getline(in, p5);
    while (std::getline(in, line)) {
        if (line.find(",Tax,") != std::string::npos) tax = line;
    }
    REQUIRE_FALSE(tax.empty());
    // The p5 usage row three times, identical tax rows (skipped) between them. The ids are the
    // ones `gpucost actuals import focus` stored for this text before the reader kept
    // identities for kept rows only (commit e83cc6d): stores written then stay idempotent.
    const std::string text =
        header + "\n" + p5 + "\n" + tax + "\n" + p5 + "\n" + tax + "\n" + p5 + "\n";
    pricing::ActualsReport report;
    std::vector<std::string> ids;
    REQUIRE(import::ReadFocusText(text, {}, *catalog.value(), mappings.value(), report,
                                  [&](const pricing::ActualCharge& c) { ids.push_back(c.row_id); })
                .ok());
    CHECK(report.rows_read == 5);
    CHECK(ids ==
          std::vector<std::string>{"90e330710fa03ed9", "90e32f710fa03d26", "90e32e710fa03b73"});
}
