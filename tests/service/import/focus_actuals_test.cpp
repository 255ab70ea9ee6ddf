#include "service/import/focus_actuals.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "pricing/catalog_loader.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost;

namespace {

std::string Fixture(const std::string& name) {
    return std::string(GPUCOST_SOURCE_DIR) + "/tests/data/focus/" + name;
}

// The AWS fixture's text, read through rdbuf(): GCC 12 at -O3 reports a potential null
// dereference inside istreambuf_iterator's reads, which -Werror turns into a failed release
// build.
std::string AwsExport() {
    std::ifstream in(Fixture("aws-focus-1.0.csv"), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
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
    const std::string text = AwsExport();
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

namespace {

std::string CsvJoin(const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::string& c = cells[i];
        std::string cell = c;
        if (c.find_first_of(",\"\n") != std::string::npos) {
            cell = "\"";
            for (char ch : c) cell += ch == '"' ? std::string("\"\"") : std::string(1, ch);
            cell += "\"";
        }
        out += (i ? "," : "") + cell;
    }
    return out;
}

// `text` with the cell of `column` on record `line` (the header being 1) set to `value`.
std::string WithCell(const std::string& text, std::size_t line, const std::string& column,
                     const std::string& value) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, end - start));
        start = end == std::string::npos ? text.size() : end + 1;
    }
    const auto header = import::ParseCsvRecord(lines[0]);
    auto cells = import::ParseCsvRecord(lines[line - 1]);
    for (std::size_t i = 0; i < header.size(); ++i) {
        if (header[i] == column) cells[i] = value;
    }
    lines[line - 1] = CsvJoin(cells);
    std::string out;
    for (const std::string& l : lines) out += l + "\n";
    return out;
}

struct TextRead {
    pricing::Status status = pricing::Ok{};
    std::vector<pricing::ActualCharge> kept;
    pricing::ActualsReport report;
};

TextRead ReadText(const std::string& text) {
    static const auto catalog = pricing::LoadCatalog(testing::SampleCatalogCsv()).value();
    static const auto mappings = import::LoadEmbeddedMappings().value();
    TextRead r;
    r.status = import::ReadFocusText(text, {}, *catalog, mappings, r.report,
                                     [&r](const pricing::ActualCharge& c) { r.kept.push_back(c); });
    return r;
}

// The export is refused (the route's 422) naming `line` in the field and `column` in the text.
void CheckRefusedCell(const std::string& text, std::size_t line, const std::string& column) {
    TextRead r = ReadText(text);
    REQUIRE_FALSE(r.status.ok());
    CHECK(r.status.error().code == pricing::ErrorCode::kInvalidArgument);
    CHECK(r.status.error().field == "line " + std::to_string(line));
    CHECK_MESSAGE(r.status.error().message.find("line " + std::to_string(line) + ": " + column) !=
                      std::string::npos,
                  r.status.error().message);
}

}  // namespace

TEST_CASE("a kept row's figures must be finite numbers within the stated bounds") {
    const std::string text = AwsExport();
    REQUIRE(ReadText(text).status.ok());
    for (const char* column : {"BilledCost", "EffectiveCost", "ListCost"}) {
        for (const char* value : {"NaN", "nan", "-nan", "inf", "-inf", "Infinity", "1e308", "-1e12",
                                  "8e300", "1000000001", "1e999"}) {
            CAPTURE(column);
            CAPTURE(value);
            CheckRefusedCell(WithCell(text, 2, column, value), 2, column);
        }
    }
    for (const char* value : {"NaN", "inf", "-1", "-5", "8e300", "1e308", "1000000001"}) {
        CAPTURE(value);
        CheckRefusedCell(WithCell(text, 2, "ConsumedQuantity", value), 2, "ConsumedQuantity");
    }
    // The bounds themselves, and a negative cost (a usage row's correction), are kept.
    for (const auto& [column, value] :
         std::vector<std::pair<std::string, std::string>>{{"BilledCost", "-1e9"},
                                                          {"EffectiveCost", "1e9"},
                                                          {"ListCost", "-12.5"},
                                                          {"ConsumedQuantity", "0"},
                                                          {"ConsumedQuantity", "1e9"}}) {
        CAPTURE(column);
        TextRead r = ReadText(WithCell(text, 2, column, value));
        CHECK(r.status.ok());
        CHECK(r.kept.size() == 3);
    }
}

TEST_CASE("a kept row's ChargePeriodStart is an ISO 8601 date or date-time in 2000-2099") {
    const std::string text = AwsExport();
    for (const char* value :
         {"9999-99-01T00:00:00Z", "0001-01-01T00:00:00Z", "1999-12-31T23:59:59Z",
          "2100-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-13-01", "2026-12-01T25:00:00Z",
          "2026-12-01T00:61", "2026-12-01T", "2026-12-01X00:00:00Z", "2026-12-01T00:00:00+5",
          "12/01/2026", "yesterday", ""}) {
        CAPTURE(value);
        CheckRefusedCell(WithCell(text, 2, "ChargePeriodStart", value), 2, "ChargePeriodStart");
    }
    for (const char* value : {"2026-12-01", "2026-12-01 00:00:00", "2026-12-01T00:00:00.123Z",
                              "2026-12-01T00:00:00+01:00", "2026-12-01T00:00-0500", "2000-01-01",
                              "2099-12-31T23:59:60Z"}) {
        CAPTURE(value);
        TextRead r = ReadText(WithCell(text, 2, "ChargePeriodStart", value));
        REQUIRE(r.status.ok());
        CHECK(r.kept[0].month == std::string(value).substr(0, 7));
    }
}

TEST_CASE("a cell with invalid UTF-8 or a NUL byte is refused in any row, kept or skipped") {
    const std::string text = AwsExport();
    const std::string nul("us-east\0-1", 10);
    for (const std::string& value :
         {nul, std::string("us-\xff-1"), std::string("\xc3\x28"), std::string("\xed\xa0\x80"),
          std::string("\xc0\xaf"), std::string("\xf4\x90\x80\x80"), std::string("x\xe2\x82")}) {
        CheckRefusedCell(WithCell(text, 2, "RegionId", value), 2, "RegionId");
        CheckRefusedCell(WithCell(text, 2, "BillingCurrency", value), 2, "BillingCurrency");
        CheckRefusedCell(WithCell(text, 2, "Tags", "{\"gpucost-scenario\":\"" + value + "\"}"), 2,
                         "Tags");
        // Line 7 is a credit row: skipped, yet its text may be echoed as an example.
        CheckRefusedCell(WithCell(text, 7, "ChargeDescription", value), 7, "ChargeDescription");
    }
    TextRead header = ReadText(std::string("Billed\xff") + text);
    REQUIRE_FALSE(header.status.ok());
    CHECK(header.status.error().field == "line 1");
    // UTF-8 itself is kept as written.
    TextRead r = ReadText(WithCell(text, 2, "RegionId", "us-east-1 \xc3\xa9\xe2\x82\xac"));
    REQUIRE(r.status.ok());
    CHECK(r.kept[0].region == "us-east-1 \xc3\xa9\xe2\x82\xac");
}

TEST_CASE(
    "a kept row's currency is an ISO 4217 code and its tags a JSON object or an array of "
    "{key, value}") {
    const std::string text = AwsExport();
    for (const char* value : {"usd", "US", "USDX", "", "U$D"}) {
        CAPTURE(value);
        CheckRefusedCell(WithCell(text, 2, "BillingCurrency", value), 2, "BillingCurrency");
    }
    for (const char* value :
         {"gpucost-scenario=s-1", "[\"s-1\"]", "{\"gpucost-scenario\":", "\"s-1\""}) {
        CAPTURE(value);
        CheckRefusedCell(WithCell(text, 2, "Tags", value), 2, "Tags");
    }
    TextRead r = ReadText(WithCell(text, 2, "Tags", "{}"));
    REQUIRE(r.status.ok());
    CHECK(r.kept[0].tag_value.empty());
}

TEST_CASE("a duplicate column and an unterminated quote refuse the export") {
    const std::string text = AwsExport();
    TextRead twice = ReadText("BilledCost," + text);
    REQUIRE_FALSE(twice.status.ok());
    CHECK(twice.status.error().field == "line 1");
    CHECK(twice.status.error().message == "the body: column 'BilledCost' appears twice");

    // A quote opened in line 3's description and never closed: every later row would be one
    // field of line 3, read as nothing.
    const std::string open = WithCell(text, 3, "ChargeDescription", "QUOTE");
    const std::size_t at = open.find("QUOTE");
    TextRead unterminated = ReadText(open.substr(0, at) + "\"Linux p5 spot" + open.substr(at + 5));
    REQUIRE_FALSE(unterminated.status.ok());
    CHECK(unterminated.status.error().field == "line 3");
    CHECK(unterminated.status.error().message.find(
              "line 3: a quoted field is not closed before the end of the export") !=
          std::string::npos);
}

namespace {

// The sample catalog with GCP's A3 High (H100) on demand and spot in us-central1, so that a
// GCP GPU row finds its offering.
std::shared_ptr<const pricing::Catalog> CatalogWithGcpH100() {
    pricing::CatalogCsv csv = testing::SampleCatalogCsv();
    csv.offerings_csv +=
        "gcp-a3-highgpu-8g-us-central1-on-demand,gcp,a3-highgpu-8g,h100-sxm,8,80,208,1872,,800,"
        "us-central1,on_demand,,\n"
        "gcp-a3-highgpu-8g-us-central1-spot,gcp,a3-highgpu-8g,h100-sxm,8,80,208,1872,,800,"
        "us-central1,spot,,\n";
    csv.prices_csv +=
        "gcp-a3-highgpu-8g-us-central1-on-demand,88.49,2026-11-01,false,TEST,true,\n"
        "gcp-a3-highgpu-8g-us-central1-spot,20.14,2026-11-01,false,TEST,true,\n";
    auto catalog = pricing::LoadCatalog(csv);
    REQUIRE(catalog.ok());
    return catalog.value();
}

struct FixtureRead {
    pricing::Status status = pricing::Ok{};
    pricing::ActualsReport report;
    std::vector<pricing::ActualCharge> kept;
};

FixtureRead ReadFixture(const std::string& name, const import::FocusReadOptions& options = {}) {
    static const auto catalog = CatalogWithGcpH100();
    static const auto mappings = import::LoadEmbeddedMappings();
    REQUIRE(mappings.ok());
    FixtureRead r;
    r.status =
        import::ReadFocusExport(Fixture(name), options, *catalog, mappings.value(), r.report,
                                [&](const pricing::ActualCharge& c) { r.kept.push_back(c); });
    return r;
}

}  // namespace

// Google's FOCUS view (tests/data/focus/gcp-focus-view.csv, summed in its README).
TEST_CASE(
    "Google's FOCUS view: array Tags, lower-case categories, the CUD fee apart, spot and TPU "
    "rows") {
    FixtureRead r = ReadFixture("gcp-focus-view.csv");
    REQUIRE(r.status.ok());
    CHECK(r.report.rows_read == 8);
    REQUIRE(r.kept.size() == 5);
    // Array tags attribute the usage; the CUD fee is the commitment's price, not 100 more hours.
    CHECK(r.kept[0].tag_value == "s-3");
    CHECK(r.kept[0].accelerator_hours == doctest::Approx(100));
    CHECK(r.kept[0].pricing_category == "Committed");
    CHECK(r.report.skipped.at("purchase") == 1);
    CHECK(r.report.skipped_examples.at("purchase").rfind("Commitment v1:", 0) == 0);
    // "Spot Preemptible ..." is the spot offering's usage.
    CHECK(r.kept[1].offering_id == "gcp-a3-highgpu-8g-us-central1-spot");
    CHECK(r.kept[0].offering_id == "gcp-a3-highgpu-8g-us-central1-on-demand");
    // "TPU v5p pod core" is TPU v5p, per chip-hour.
    CHECK(r.kept[2].accelerator == "tpu-v5p");
    CHECK(r.kept[2].accelerator_hours == doctest::Approx(8));
    CHECK(r.kept[2].tag_value == "s-4");
    // Lower-case categories: the rounding adjustment and the tax are not GPU usage.
    CHECK(r.report.skipped.at("adjustment") == 1);
    CHECK(r.report.skipped.at("tax") == 1);
    CHECK(r.report.skipped.count("unknown_sku") == 0);
    CHECK(r.report.by_currency_tag.at({"USD", "s-3"}).accelerator_hours == doctest::Approx(130));
}

TEST_CASE("a correction is kept in the period it corrects, for every cloud's spelling") {
    // Google: ChargeCategory `adjustment`, ChargeClass `correction`, November's usage
    // corrected on December's bill.
    FixtureRead gcp = ReadFixture("gcp-focus-view.csv");
    REQUIRE(gcp.status.ok());
    REQUIRE(gcp.kept.size() == 5);
    CHECK(gcp.kept[3].correction);
    CHECK(gcp.kept[3].month == "2026-11");
    CHECK(gcp.kept[3].effective_cost == doctest::Approx(-30));
    CHECK(gcp.report.corrections == 1);
    // AWS: `Usage` / `Correction` taking back 10 instance-hours of November.
    FixtureRead aws = ReadFixture("aws-focus-user-tags.csv");
    REQUIRE(aws.status.ok());
    CHECK(aws.report.skipped.count("correction") == 0);
    CHECK(aws.report.corrections == 1);
    const auto& november = aws.report.by_currency_month.at({"USD", "2026-11"});
    CHECK(november.accelerator_hours == doctest::Approx(-80));
    CHECK(november.effective_cost == doctest::Approx(-550.40));
}

TEST_CASE(
    "AWS: user: tag keys attribute a row; a Marketplace fee naming the instance is not hours") {
    FixtureRead r = ReadFixture("aws-focus-user-tags.csv");
    REQUIRE(r.status.ok());
    CHECK(r.report.rows_read == 6);
    CHECK(r.report.skipped.at("marketplace") == 1);
    CHECK(r.report.skipped_examples.at("marketplace") == "NVIDIA AI Enterprise (AWS Marketplace)");
    const auto& s5 = r.report.by_currency_tag.at({"USD", "s-5"});
    CHECK(s5.rows == 3);
    CHECK(s5.accelerator_hours == doctest::Approx(800 - 80 + 400));
    CHECK(s5.effective_cost == doctest::Approx(5504 - 550.40 + 1650));
    CHECK(r.report.by_currency_tag.count({"USD", ""}) == 0);
    // Azure's marketplace row (x_PublisherCategory Vendor) likewise.
    FixtureRead azure = ReadFixture("azure-focus-reservations-eur.csv");
    REQUIRE(azure.status.ok());
    CHECK(azure.report.skipped.at("marketplace") == 1);
    CHECK(azure.report.by_currency_tag.at({"USD", "s-6"}).accelerator_hours ==
          doctest::Approx(80 + 160));
}

TEST_CASE("unused reservation hours are commitment waste, attributed, never untagged usage") {
    FixtureRead aws = ReadFixture("aws-focus-user-tags.csv");
    REQUIRE(aws.status.ok());
    CHECK(aws.report.skipped.at("unused_commitment") == 1);
    REQUIRE(aws.report.unused_commitment.size() == 1);
    const auto& [key, waste] = *aws.report.unused_commitment.begin();
    CHECK(key.currency == "USD");
    CHECK(key.commitment_id ==
          "arn:aws:ec2:us-east-1:111122223333:reserved-instances/4a1f6c2e-ri-p5");
    CHECK(waste.accelerator_hours == doctest::Approx(20 * 8));
    CHECK(waste.effective_cost == doctest::Approx(660));
    CHECK(aws.report.kept == 3);
}

TEST_CASE("costs in another currency are converted with the rate the export gives, and said so") {
    // Azure's x_*CostInUsd columns.
    FixtureRead azure = ReadFixture("azure-focus-reservations-eur.csv");
    REQUIRE(azure.status.ok());
    CHECK(azure.report.by_currency.count("EUR") == 0);
    const auto& usd = azure.report.by_currency.at("USD");
    CHECK(usd.effective_cost == doctest::Approx(918 + 1296));
    CHECK(usd.list_cost == doctest::Approx(1080 + 2160));
    CHECK(azure.report.converted_to_usd.at({"EUR", "x_EffectiveCostInUsd"}) == 3);
    REQUIRE(azure.report.unused_commitment.size() == 1);
    CHECK(azure.report.unused_commitment.begin()->second.effective_cost == doctest::Approx(259.20));
    CHECK(azure.report.unused_commitment.begin()->second.accelerator_hours ==
          doctest::Approx(4 * 8));
    // Google's x_CurrencyConversionRate (EUR per USD): 36.80 EUR at 0.92 is 40 USD.
    FixtureRead gcp = ReadFixture("gcp-focus-view.csv");
    REQUIRE(gcp.status.ok());
    CHECK(gcp.report.converted_to_usd.at({"EUR", "x_CurrencyConversionRate"}) == 1);
    CHECK(gcp.kept[4].billing_currency == "USD");
    CHECK(gcp.kept[4].effective_cost == doctest::Approx(40));
    CHECK(gcp.report.by_currency_tag.at({"USD", "s-3"}).effective_cost ==
          doctest::Approx(180 + 42 - 30 + 40));
}

TEST_CASE("showback: the kept rows by any tag key, with the untagged remainder") {
    import::FocusReadOptions options;
    options.group_by = "team";
    FixtureRead gcp = ReadFixture("gcp-focus-view.csv", options);
    REQUIRE(gcp.status.ok());
    const auto& groups = gcp.report.by_currency_group;
    CHECK(groups.at({"USD", "research"}).effective_cost == doctest::Approx(180 + 42));
    CHECK(groups.at({"USD", "infra"}).effective_cost == doctest::Approx(33.60));
    CHECK(groups.at({"USD", ""}).effective_cost == doctest::Approx(-30 + 40));
    CHECK(groups.at({"USD", ""}).rows == 2);
    // AWS's user:team.
    FixtureRead aws = ReadFixture("aws-focus-user-tags.csv", options);
    REQUIRE(aws.status.ok());
    CHECK(aws.report.by_currency_group.at({"USD", "research"}).accelerator_hours ==
          doctest::Approx(800 + 400));
    CHECK(aws.report.by_currency_group.at({"USD", ""}).accelerator_hours == doctest::Approx(-80));
}
