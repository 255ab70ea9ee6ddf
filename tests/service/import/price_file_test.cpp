#include "service/import/price_file.hpp"

#include <doctest/doctest.h>

#include "import_test_support.hpp"

namespace gpucost::import {
namespace {

using testing::EmbeddedMappings;
using testing::Fixture;

const pricing::Offering* Find(const FileResult& r, const std::string& id) {
    for (const auto& o : r.offerings) {
        if (o.id == id) {
            return &o;
        }
    }
    return nullptr;
}

FileResult Read(Format format, const std::string& fixture, ParseOptions options) {
    auto read = ReadPriceBuffer(format, Fixture(fixture), fixture, EmbeddedMappings(), options);
    REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.error().message));
    return std::move(read).value();
}

TEST_CASE("every price-file format has its row: a name that parses back and its assumptions") {
    for (int i = 0; i <= static_cast<int>(Format::kCoreweavePricing); ++i) {
        const auto format = static_cast<Format>(i);
        CAPTURE(i);
        CHECK(ParseFormat(FormatName(format)) == format);
        CHECK_FALSE(FormatAssumptions(format).empty());
    }
    CHECK_FALSE(ParseFormat("oracle-price-list").has_value());
}

TEST_CASE("offering ids follow the seed's rule") {
    CHECK(OfferingId("aws", "p5.48xlarge", "us-east-1", pricing::PriceType::kOnDemand) ==
          "aws-p5.48xlarge-us-east-1-on-demand");
    CHECK(OfferingId("azure", "Standard_ND96isr_MI300X_v5", "eastus",
                     pricing::PriceType::kCommit1y) ==
          "azure-standard_nd96isr_mi300x_v5-eastus-commit-1y");
}

TEST_CASE("AWS: Linux shared on-demand rows become offerings at the file's publication date") {
    ParseOptions options;
    options.regions = {"us-east-1"};
    FileResult r = Read(Format::kAwsPriceList, "aws-price-list-us-east-1.json", options);
    CHECK(r.publication_date == "2026-11-20T18:05:31Z");
    CHECK(r.as_of == "2026-11-20");
    const auto* p5 = Find(r, "aws-p5.48xlarge-us-east-1-on-demand");
    REQUIRE(p5 != nullptr);
    CHECK(p5->price.usd_per_hour == doctest::Approx(55.04));
    CHECK(p5->accelerator == "h100-sxm");
    CHECK(p5->accelerator_count == 8);
    CHECK(p5->vcpus == 192);
    CHECK(p5->ram_gib == 2048);
    CHECK(p5->scale_out_gbit_per_s == 3200);
    CHECK(p5->price.verified);
    CHECK_FALSE(p5->price.as_of_estimated);
    CHECK(p5->price.source.find("AmazonEC2 offer file version 20261120180531") !=
          std::string::npos);
    const auto* b200 = Find(r, "aws-p6-b200.48xlarge-us-east-1-on-demand");
    REQUIRE(b200 != nullptr);
    CHECK(b200->accelerator == "b200");
}

TEST_CASE("AWS: every distractor is skipped under its reason") {
    ParseOptions options;
    options.regions = {"us-east-1"};
    FileResult r = Read(Format::kAwsPriceList, "aws-price-list-us-east-1.json", options);
    CHECK(r.skipped.at("not_linux") == 1);
    CHECK(r.skipped.at("not_shared_tenancy") == 1);
    CHECK(r.skipped.at("capacity_reservation_status") == 2);
    CHECK(r.skipped.at("preinstalled_software") == 1);
    CHECK(r.skipped.at("not_an_aws_region") == 1);
    CHECK(r.skipped.at("region_not_selected") == 1);
    CHECK(r.skipped.at("instance_type_not_mapped") == 1);
    CHECK(r.skipped.at("not_a_compute_instance") == 2);
    CHECK(r.skipped.at("reserved_not_standard_class") == 1);
    CHECK(r.offerings.size() == 6);
}

TEST_CASE("AWS: a reservation's upfront fee is spread over the hours of its term") {
    FileResult r = Read(Format::kAwsPriceList, "aws-price-list-us-east-1.json", {});
    const auto* one_year = Find(r, "aws-p5.48xlarge-us-east-1-commit-1y");
    REQUIRE(one_year != nullptr);
    // No Upfront 40.20; Partial 19.15 + 167754 / 8760 = 38.30; All Upfront 328800 / 8760.
    CHECK(one_year->price.usd_per_hour == doctest::Approx(328800.0 / 8760).epsilon(1e-6));
    CHECK(one_year->price.notes.find("All Upfront") != std::string::npos);
    CHECK(one_year->price.notes.find("No Upfront 40.2") != std::string::npos);
    const auto* three_years = Find(r, "aws-p5.48xlarge-us-east-1-commit-3y");
    REQUIRE(three_years != nullptr);
    CHECK(three_years->price.usd_per_hour == doctest::Approx(631800.0 / 26280).epsilon(1e-6));
}

TEST_CASE("AWS: terms before products are not the offer file layout") {
    std::string doc = R"({"offerCode":"AmazonEC2","terms":{"OnDemand":{"X":{}}},"products":{}})";
    auto read = ReadPriceBuffer(Format::kAwsPriceList, doc, "odd.json", EmbeddedMappings(), {});
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().message.find("terms before products") != std::string::npos);
}

TEST_CASE("AWS: a JSON document that is not an EC2 offer file is refused") {
    auto read = ReadPriceBuffer(Format::kAwsPriceList, R"({"Items":[]})", "azure.json",
                                EmbeddedMappings(), {});
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().message.find("not an AWS Price List offer file") != std::string::npos);
}

TEST_CASE("Azure: spot, on-demand and whole-term reservations of ND MI300X v5") {
    ParseOptions options;
    options.as_of = "2026-11-09";
    options.regions = {"eastus"};
    FileResult r = Read(Format::kAzureRetailPrices, "azure-retail-prices-page1.json", options);
    const auto* od = Find(r, "azure-standard_nd96isr_mi300x_v5-eastus-on-demand");
    REQUIRE(od != nullptr);
    CHECK(od->accelerator == "mi300x");
    CHECK(od->accelerator_count == 8);
    CHECK(od->price.usd_per_hour == doctest::Approx(48.0));
    CHECK(od->price.as_of == "2026-11-09");
    const auto* spot = Find(r, "azure-standard_nd96isr_mi300x_v5-eastus-spot");
    REQUIRE(spot != nullptr);
    CHECK(spot->price.usd_per_hour == doctest::Approx(14.4));
    const auto* year = Find(r, "azure-standard_nd96isr_mi300x_v5-eastus-commit-1y");
    REQUIRE(year != nullptr);
    CHECK(year->price.usd_per_hour == doctest::Approx(262800.0 / 8760));
    const auto* three = Find(r, "azure-standard_nd96isr_mi300x_v5-eastus-commit-3y");
    REQUIRE(three != nullptr);
    CHECK(three->price.usd_per_hour == doctest::Approx(578160.0 / 26280));
    CHECK(r.skipped.at("windows") == 1);
    CHECK(r.skipped.at("low_priority") == 1);
    CHECK(r.skipped.at("dev_test") == 1);
    CHECK(r.skipped.at("region_not_selected") == 1);
    CHECK(r.offerings.size() == 4);
}

TEST_CASE("Azure: ND GB200 v6 in the Retail Prices API's own wording is a 4 x GB200 offering") {
    // The item as the API words it (productName, meterName, armSkuName), at the westus3 rate a
    // reader of the API recorded on 2026-09-06.
    const std::string page = R"({"BillingCurrency": "USD", "CustomerEntityId": "Default",
      "CustomerEntityType": "Retail", "NextPageLink": null, "Count": 1, "Items": [{
        "currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": 108.16,
        "unitPrice": 108.16, "armRegionName": "westus3", "location": "US West 3",
        "effectiveStartDate": "2025-06-01T00:00:00Z", "meterId": "m", "meterName": "ND128isr",
        "productId": "p", "skuId": "p/s", "productName": "Virtual Machines NDsr GB200 v6 Series",
        "skuName": "ND128isr", "serviceName": "Virtual Machines", "serviceId": "s",
        "serviceFamily": "Compute", "unitOfMeasure": "1 Hour", "type": "Consumption",
        "isPrimaryMeterRegion": true, "armSkuName": "Standard_ND128isr_NDR_GB200_v6"}]})";
    ParseOptions options;
    options.as_of = "2026-09-06";
    auto read = ReadPriceBuffer(Format::kAzureRetailPrices, page, "gb200.json", EmbeddedMappings(),
                                options);
    REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.error().message));
    const auto* od = Find(read.value(), "azure-standard_nd128isr_ndr_gb200_v6-westus3-on-demand");
    REQUIRE(od != nullptr);
    CHECK(od->accelerator == "gb200");
    CHECK(od->accelerator_count == 4);
    CHECK(od->price.usd_per_hour == doctest::Approx(108.16));
}

TEST_CASE("Azure: a page carries no date, so --as-of is required") {
    auto read =
        ReadPriceBuffer(Format::kAzureRetailPrices, Fixture("azure-retail-prices-page2.json"),
                        "page2.json", EmbeddedMappings(), {});
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().field == "--as-of");
}

TEST_CASE("GCP: machine prices are composed from GPU, vCPU and memory SKUs of the shape") {
    ParseOptions options;
    options.as_of = "2026-07-30";
    FileResult r = Read(Format::kGcpBillingCatalog, "gcp-billing-catalog-skus.json", options);
    const auto* a2 = Find(r, "gcp-a2-highgpu-8g-us-central1-on-demand");
    REQUIRE(a2 != nullptr);
    CHECK(a2->price.usd_per_hour == doctest::Approx(8 * 2.933908 + 96 * 0.031611 + 680 * 0.004237));
    CHECK(a2->price.notes.find("composed from SKUs") != std::string::npos);
    const auto* g2 = Find(r, "gcp-g2-standard-4-us-central1-commit-1y");
    REQUIRE(g2 != nullptr);  // the two-tier RAM SKU has one rate: taken
    CHECK(g2->price.usd_per_hour == doctest::Approx(0.3528 + 4 * 0.015742 + 16 * 0.001845));
    const auto* tpu = Find(r, "gcp-tpu-v5p-chip-us-east5-on-demand");
    REQUIRE(tpu != nullptr);
    CHECK(tpu->accelerator == "tpu-v5p");
    CHECK(tpu->price.usd_per_hour == doctest::Approx(4.2));
    CHECK(Find(r, "gcp-g2-standard-4-europe-west4-on-demand") == nullptr);  // no G2 core/RAM there
    CHECK(r.skipped.at("tiered_rate_varies_with_usage") == 1);
    CHECK(r.skipped.at("sole_tenancy") == 1);
    CHECK(r.skipped.at("sku_not_mapped") == 2);
    CHECK(r.skipped.at("machine_shape_incomplete") ==
          5 + 8);  // spot A100 x 5 shapes, L4 in europe-west4 x 8
}

// One Cloud Billing Catalog SKU in us-central1 at `usd` per `unit`, as the API words it.
std::string GcpSku(const std::string& description, const std::string& usage_type, double usd,
                   const std::string& unit = "h") {
    const auto units = static_cast<long long>(usd);
    const auto nanos = static_cast<long long>((usd - static_cast<double>(units)) * 1e9 + 0.5);
    return R"({"description":")" + description + R"(","category":{"usageType":")" + usage_type +
           R"("},"serviceRegions":["us-central1"],"pricingInfo":[{"pricingExpression":{
        "usageUnit":")" +
           unit + R"(","tieredRates":[{"startUsageAmount":0,"unitPrice":{"currencyCode":"USD",
        "units":")" +
           std::to_string(units) + R"(","nanos":)" + std::to_string(nanos) + "}}]}}]}";
}

FileResult ReadSkus(const std::vector<std::string>& skus) {
    std::string doc = R"({"skus":[)";
    for (std::size_t i = 0; i < skus.size(); ++i) {
        doc += (i ? "," : "") + skus[i];
    }
    doc += "]}";
    ParseOptions options;
    options.as_of = "2026-07-07";
    auto read =
        ReadPriceBuffer(Format::kGcpBillingCatalog, doc, "skus.json", EmbeddedMappings(), options);
    REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.error().message));
    return std::move(read).value();
}

TEST_CASE("GCP: A3 Mega is priced by its own H100 SKU, whatever the order of the file") {
    // Rates of a 2026-07 scrape of the billing catalog (Americas, per GPU-hour); A3 Mega's host
    // is billed by the A3Plus core and memory SKUs.
    const std::string high = GcpSku("Nvidia H100 80GB GPU running in Americas", "OnDemand", 9.7966);
    const std::string mega =
        GcpSku("Nvidia H100 80GB Plus GPU running in Americas", "OnDemand", 10.3443);
    const std::vector<std::string> hosts = {
        GcpSku("A3 Instance Core running in Americas", "OnDemand", 0.0275),
        GcpSku("A3 Instance Ram running in Americas", "OnDemand", 0.0029, "GiBy.h"),
        GcpSku("A3Plus Instance Core running in Americas", "OnDemand", 0.0285),
        GcpSku("A3Plus Instance Ram running in Americas", "OnDemand", 0.0031, "GiBy.h")};
    for (const bool high_first : {true, false}) {
        std::vector<std::string> skus = hosts;
        skus.insert(skus.begin(), high_first ? high : mega);
        skus.push_back(high_first ? mega : high);
        FileResult r = ReadSkus(skus);
        const auto* a3_mega = Find(r, "gcp-a3-megagpu-8g-us-central1-on-demand");
        const auto* a3_high = Find(r, "gcp-a3-highgpu-8g-us-central1-on-demand");
        REQUIRE(a3_mega != nullptr);
        REQUIRE(a3_high != nullptr);
        CHECK(a3_mega->price.usd_per_hour ==
              doctest::Approx(8 * 10.3443 + 208 * 0.0285 + 1872 * 0.0031));
        CHECK(a3_high->price.usd_per_hour ==
              doctest::Approx(8 * 9.7966 + 208 * 0.0275 + 1872 * 0.0029));
        CHECK(r.skipped.count("duplicate_component_sku") == 0);
    }
}

TEST_CASE("GCP: the H200 and B200 SKUs in their real wording price A3 Ultra and A4") {
    FileResult r =
        ReadSkus({GcpSku("H200 141GB GPU running in Americas", "OnDemand", 9.3117),
                  GcpSku("A3 Ultra Instance Core running in Americas", "OnDemand", 0.03),
                  GcpSku("A3 Ultra Instance Ram running in Americas", "OnDemand", 0.004, "GiBy.h"),
                  GcpSku("A4 Nvidia B200 (1 gpu slice) running in Americas", "OnDemand", 16.11),
                  // This spot SKU's category says OnDemand; its wording says spot.
                  GcpSku("Spot Preemptible A4 Nvidia B200 (1 gpu slice) running in Americas",
                         "OnDemand", 4.9542)});
    const auto* ultra = Find(r, "gcp-a3-ultragpu-8g-us-central1-on-demand");
    REQUIRE(ultra != nullptr);
    CHECK(ultra->accelerator == "h200-sxm");
    CHECK(ultra->price.usd_per_hour == doctest::Approx(8 * 9.3117 + 224 * 0.03 + 2952 * 0.004));
    const auto* a4 = Find(r, "gcp-a4-highgpu-8g-us-central1-on-demand");
    REQUIRE(a4 != nullptr);
    CHECK(a4->accelerator == "b200");
    CHECK(a4->accelerator_count == 8);
    CHECK(a4->price.usd_per_hour == doctest::Approx(8 * 16.11));  // the slice includes the host
    const auto* a4_spot = Find(r, "gcp-a4-highgpu-8g-us-central1-spot");
    REQUIRE(a4_spot != nullptr);
    CHECK(a4_spot->price.usd_per_hour == doctest::Approx(8 * 4.9542));
    CHECK(r.skipped.count("sku_not_mapped") == 0);
}

TEST_CASE("GCP: units and nanos make one price") {
    std::string doc = R"({"skus":[{"description":"Tpu-v5p chip-hour","category":{"usageType":
        "OnDemand"},"serviceRegions":["us-east5"],"pricingInfo":[{"pricingExpression":{
        "usageUnit":"h","tieredRates":[{"startUsageAmount":0,"unitPrice":{"currencyCode":"USD",
        "units":"4","nanos":200000000}}]}}]}]})";
    ParseOptions options;
    options.as_of = "2026-07-30";
    auto read =
        ReadPriceBuffer(Format::kGcpBillingCatalog, doc, "tpu.json", EmbeddedMappings(), options);
    REQUIRE(read.ok());
    REQUIRE(read.value().offerings.size() == 1);
    CHECK(read.value().offerings[0].price.usd_per_hour == doctest::Approx(4.2));
}

}  // namespace
}  // namespace gpucost::import

namespace gpucost::import {
namespace {

TEST_CASE("every truncation of every fixture is refused, never half-read") {
    ParseOptions options;
    options.as_of = "2026-11-20";
    for (auto [format, name] :
         {std::pair{Format::kAwsPriceList, "aws-price-list-us-east-1.json"},
          std::pair{Format::kAzureRetailPrices, "azure-retail-prices-page1.json"},
          std::pair{Format::kGcpBillingCatalog, "gcp-billing-catalog-skus.json"}}) {
        std::string text = testing::Fixture(name);
        // The last byte is a newline after the closing brace: cut before the brace.
        std::string body = text.substr(0, text.find_last_of('}'));
        for (std::size_t cut = 0; cut < body.size(); cut += 97) {
            auto read = ReadPriceBuffer(format, std::string_view(body).substr(0, cut), name,
                                        testing::EmbeddedMappings(), options);
            CHECK_MESSAGE(!read.ok(), name << " cut at " << cut);
        }
    }
}

}  // namespace
}  // namespace gpucost::import

namespace gpucost::import {
namespace {

// One on-demand p5.48xlarge term whose hourly USD is `usd` (JSON text), with `upfront` as a
// Reserved term's upfront fee beside a valid hourly rate.
std::string AwsDoc(const std::string& usd, const std::string& upfront = "\"0\"") {
    const std::string product =
        R"({"sku":"SKU1","productFamily":"Compute Instance","attributes":{"instanceType":
        "p5.48xlarge","locationType":"AWS Region","regionCode":"us-east-1","operatingSystem":
        "Linux","tenancy":"Shared","preInstalledSw":"NA","licenseModel":"No License required",
        "capacitystatus":"Used","vcpu":"192","memory":"2048 GiB"}})";
    return R"({"offerCode":"AmazonEC2","version":"v1","publicationDate":"2026-11-20T00:00:00Z",
        "products":{"SKU1":)" +
           product + R"(},"terms":{"OnDemand":{"SKU1":{"SKU1.OD":{"offerTermCode":"OD",
        "priceDimensions":{"SKU1.OD.H":{"unit":"Hrs","beginRange":"0","pricePerUnit":{"USD":)" +
           usd + R"(}}}}}},"Reserved":{"SKU1":{"SKU1.RI":{"offerTermCode":"RI",
        "termAttributes":{"LeaseContractLength":"1yr","PurchaseOption":"Partial Upfront",
        "OfferingClass":"standard"},"priceDimensions":{"SKU1.RI.H":{"unit":"Hrs","beginRange":
        "0","pricePerUnit":{"USD":"20"}},"SKU1.RI.Q":{"unit":"Quantity","pricePerUnit":{"USD":)" +
           upfront + R"(}}}}}}}})";
}

std::string AzureDoc(const std::string& unit_price) {
    return R"({"BillingCurrency":"USD","Count":1,"Items":[{"currencyCode":"USD","unitPrice":)" +
           unit_price +
           R"(,"armRegionName":"eastus","armSkuName":"Standard_ND96isr_MI300X_v5",
        "productName":"Virtual Machines NDmisrMI300Xv5 Series","skuName":"ND96isr MI300X v5",
        "serviceName":"Virtual Machines","type":"Consumption","unitOfMeasure":"1 Hour",
        "meterName":"ND96isr MI300X v5"}]})";
}

std::string GcpDoc(const std::string& units) {
    return R"({"skus":[{"description":"Tpu-v5p chip-hour","category":{"usageType":"OnDemand"},
        "serviceRegions":["us-east5"],"pricingInfo":[{"pricingExpression":{"usageUnit":"h",
        "tieredRates":[{"startUsageAmount":0,"unitPrice":{"currencyCode":"USD","units":)" +
           units + R"(,"nanos":0}}]}}]}]})";
}

FileResult ReadDoc(Format format, const std::string& doc) {
    ParseOptions options;
    options.as_of = "2026-11-20";
    auto read = ReadPriceBuffer(format, doc, "doc.json", EmbeddedMappings(), options);
    REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.error().message));
    return std::move(read).value();
}

// The price is refused under `reason`, named in `refused` by `row_part`, and no offering of
// it is kept.
void CheckRefused(const FileResult& r, const std::string& reason, const std::string& row_part) {
    CHECK_MESSAGE(r.skipped.count(reason) == 1, "no skip counted as " << reason);
    bool named = false;
    for (const RefusedRow& refused : r.refused) {
        named =
            named || (refused.reason == reason && refused.row.find(row_part) != std::string::npos);
    }
    CHECK_MESSAGE(named, reason << " does not name " << row_part);
}

TEST_CASE("AWS: a NaN, infinite, huge or negative price is refused per row, naming it") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"("NaN")", "price_not_finite"},      {R"("nan")", "price_not_finite"},
        {R"("Infinity")", "price_not_finite"}, {R"("-Infinity")", "price_not_finite"},
        {R"("inf")", "price_not_finite"},      {R"("1e308")", "price_too_large"},
        {"1e308", "price_too_large"},          {R"("1e999")", "price_too_large"},
        {R"("-5")", "price_negative"},         {"-5", "price_negative"},
        {R"("2000000")", "price_too_large"},  // a number, but not an hourly price
    };
    for (const auto& [usd, reason] : cases) {
        CAPTURE(usd);
        FileResult r = ReadDoc(Format::kAwsPriceList, AwsDoc(usd));
        CHECK(Find(r, "aws-p5.48xlarge-us-east-1-on-demand") == nullptr);
        CheckRefused(r, reason,
                     usd == R"("2000000")" ? "aws-p5.48xlarge-us-east-1-on-demand"
                                           : "terms.OnDemand.SKU1.OD");
        // The Reserved term beside it is read as ever.
        CHECK(Find(r, "aws-p5.48xlarge-us-east-1-commit-1y") != nullptr);
    }
}

TEST_CASE("AWS: a NaN or negative upfront fee refuses the Reserved term, naming it") {
    for (const auto& [upfront, reason] :
         std::vector<std::pair<std::string, std::string>>{{R"("NaN")", "price_not_finite"},
                                                          {R"("-1e12")", "price_negative"},
                                                          {R"("1e300")", "price_too_large"}}) {
        CAPTURE(upfront);
        FileResult r = ReadDoc(Format::kAwsPriceList, AwsDoc(R"("55.04")", upfront));
        CHECK(Find(r, "aws-p5.48xlarge-us-east-1-commit-1y") == nullptr);
        CHECK(Find(r, "aws-p5.48xlarge-us-east-1-on-demand") != nullptr);
        CheckRefused(r, reason, "terms.Reserved.SKU1.RI");
    }
}

TEST_CASE("Azure: a NaN, infinite, huge or negative unitPrice is refused per Item, naming it") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"("NaN")", "price_not_finite"},  {R"("Infinity")", "price_not_finite"},
        {R"("-inf")", "price_not_finite"}, {"1e308", "price_too_large"},
        {R"("1e308")", "price_too_large"}, {"-48", "price_negative"},
        {"5e6", "price_too_large"},  // finite, but over the catalog's hourly bound
    };
    for (const auto& [price, reason] : cases) {
        CAPTURE(price);
        FileResult r = ReadDoc(Format::kAzureRetailPrices, AzureDoc(price));
        CHECK(r.offerings.empty());
        CheckRefused(r, reason,
                     price == "5e6" ? "azure-standard_nd96isr_mi300x_v5-eastus-on-demand"
                                    : "Items[0] (Standard_ND96isr_MI300X_v5, eastus)");
    }
    CHECK(ReadDoc(Format::kAzureRetailPrices, AzureDoc("48")).offerings.size() == 1);
}

TEST_CASE("GCP: a Money value that is not a finite, bounded, non-negative USD amount is refused") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"("NaN")", "price_not_usd_money"},  // units are an int64: no NaN or infinity
        {R"("Infinity")", "price_not_usd_money"},
        {"1e308", "price_not_usd_money"},
        {R"("-5")", "price_negative"},
        {R"("9223372036854775807")", "price_too_large"},
        {R"("2000000")", "price_too_large"},  // an amount, but not an hourly price
    };
    for (const auto& [units, reason] : cases) {
        CAPTURE(units);
        FileResult r = ReadDoc(Format::kGcpBillingCatalog, GcpDoc(units));
        CHECK(r.offerings.empty());
        CheckRefused(r, reason,
                     units == R"("2000000")" ? "gcp-tpu-v5p-chip-us-east5-on-demand"
                                             : "SKU 'Tpu-v5p chip-hour'");
    }
    CHECK(ReadDoc(Format::kGcpBillingCatalog, GcpDoc(R"("4")")).offerings.size() == 1);
}

TEST_CASE("a file's refused rows are named up to a limit and all counted") {
    std::string items;
    for (std::size_t i = 0; i < kMaxRefusedListed + 20; ++i) {
        items += std::string(i ? "," : "") + R"({"currencyCode":"USD","unitPrice":"NaN",
            "armRegionName":"eastus","armSkuName":"Standard_ND96isr_MI300X_v5",
            "serviceName":"Virtual Machines","type":"Consumption","unitOfMeasure":"1 Hour"})";
    }
    FileResult r = ReadDoc(Format::kAzureRetailPrices,
                           R"({"BillingCurrency":"USD","Count":1,"Items":[)" + items + "]}");
    CHECK(r.skipped.at("price_not_finite") == kMaxRefusedListed + 20);
    CHECK(r.refused.size() == kMaxRefusedListed);
    CHECK(r.refused.back().row.find("Items[99]") == 0);
}

}  // namespace
}  // namespace gpucost::import
