#include "pricing/region_table.hpp"

#include <doctest/doctest.h>

#include "pricing/catalog_loader.hpp"

using namespace gpucost::pricing;

namespace {

// A region in one country, one listed in two, one with no stated place.
RegionTable Sample() {
    return RegionTable({
        {"aws", "us-east-1", {"US"}, {"north-america"}, "AWS REGIONS", ""},
        {"vastai", "texas-us-hu", {"US", "HU"}, {"north-america", "europe"}, "VAST", ""},
        {"runpod", "global", {}, {}, "RUNPOD", ""},
    });
}

PlanReferenceCsv WithRegions(const std::string& regions_csv) {
    PlanReferenceCsv csv;
    csv.capacity_csv =
        "provider,instance_family,price_type,max_instances,cluster,min_block_hours,"
        "max_block_hours,source,notes\n";
    csv.data_prices_csv =
        "provider,object_storage_usd_per_gb_month,internet_egress_usd_per_gb,as_of,"
        "as_of_estimated,source,verified,notes\n";
    csv.regions_csv = regions_csv;
    return csv;
}

constexpr const char* kRegionsHeader = "provider,region,countries,continents,source,notes\n";

}  // namespace

TEST_SUITE("region_table") {
    TEST_CASE("a region is in a geography when every place it lists is wanted") {
        const RegionTable table = Sample();
        CHECK(table.Within("aws", "us-east-1", {{"US"}, {}}));
        CHECK(table.Within("AWS", "US-EAST-1", {{"us"}, {}}));  // ids and codes in any case
        CHECK(table.Within("aws", "us-east-1", {{}, {"north-america"}}));
        CHECK_FALSE(table.Within("aws", "us-east-1", {{"DE"}, {}}));
        // Listed in the US and Hungary: not "in the US" unless Hungary is wanted too.
        CHECK_FALSE(table.Within("vastai", "texas-us-hu", {{"US"}, {}}));
        CHECK(table.Within("vastai", "texas-us-hu", {{"US", "HU"}, {}}));
        CHECK_FALSE(table.Within("vastai", "texas-us-hu", {{}, {"north-america"}}));
        // No stated place, or no row: in no geography, and in any when none is asked.
        CHECK_FALSE(table.Within("runpod", "global", {{"US"}, {}}));
        CHECK_FALSE(table.Within("gcp", "us-central1", {{"US"}, {}}));
        CHECK(table.Within("gcp", "us-central1", {}));
        CHECK(table.Countries() == std::vector<std::string>{"HU", "US"});
        CHECK(table.Continents() == std::vector<std::string>{"europe", "north-america"});
    }

    TEST_CASE("an accelerator's family is its id up to the first dash") {
        CHECK(AcceleratorFamily("h100-sxm") == "h100");
        CHECK(AcceleratorFamily("H100-NVL") == "h100");
        CHECK(AcceleratorFamily("a10g") == "a10g");
        CHECK(AcceleratorFamily("tpu-v5e") == "tpu");
    }

    TEST_CASE("a country, continent or family nothing is in is refused at its field") {
        const RegionTable table = Sample();
        CHECK(CheckGeography({{"us", "HU"}, {"europe"}}, table, {"country"}, {"continent"}).ok());
        auto bad =
            CheckGeography({{"US", "XX"}, {"atlantis"}}, table, {"/constraints/countries", true},
                           {"/constraints/continents", true});
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().code == ErrorCode::kInvalidArgument);
        REQUIRE(bad.error().errors.size() == 2);
        CHECK(bad.error().errors[0].field == "/constraints/countries/1");
        CHECK(bad.error().errors[0].detail.find("known: HU, US") != std::string::npos);
        CHECK(bad.error().errors[1].field == "/constraints/continents/0");
        auto country = CheckGeography({{"JP"}, {}}, table, {"country"}, {"continent"});
        REQUIRE_FALSE(country.ok());
        CHECK(country.error().field == "country");

        std::vector<Accelerator> accelerators(2);
        accelerators[0].id = "h100-sxm";
        accelerators[1].id = "tpu-v5e";
        CHECK(CheckAcceleratorFamilies({"H100", "tpu"}, accelerators, {"accelerator_family"}).ok());
        auto family = CheckAcceleratorFamilies({"h200"}, accelerators, {"accelerator_family"});
        REQUIRE_FALSE(family.ok());
        CHECK(family.error().field == "accelerator_family");
        CHECK(family.error().message.find("known: h100, tpu") != std::string::npos);
    }

    TEST_CASE("regions.csv is read with its sources, and bad rows are refused by line") {
        auto loaded = LoadPlanReference(WithRegions(
            std::string(kRegionsHeader) +
            "aws,us-east-1,US,north-america,https://example.test/aws,N. Virginia\n"
            "vastai,de-hk-us-wa,DE|HK|US,europe|asia|north-america,https://example.test/v,\n"
            "runpod,global,,,https://example.test/r,no place\n"));
        REQUIRE(loaded.ok());
        const RegionTable& table = loaded.value().regions;
        REQUIRE(table.Rows().size() == 3);
        const RegionPlace* place = table.Find("vastai", "de-hk-us-wa");
        REQUIRE(place != nullptr);
        CHECK(place->countries == std::vector<std::string>{"DE", "HK", "US"});
        CHECK(place->source == "https://example.test/v");

        for (const auto& [row, words] : std::vector<std::pair<std::string, std::string>>{
                 {"aws,us-east-1,usa,north-america,S,", "ISO 3166-1"},
                 {"aws,us-east-1,US,america,S,", "continent"},
                 {"aws,us-east-1,US,,S,", "together"},
                 {"aws,us-east-1,US,north-america,,", "source is required"},
                 {"nosuch,us-east-1,US,north-america,S,", "unknown provider"},
                 {"aws,,US,north-america,S,", "region is required"},
             }) {
            CAPTURE(row);
            auto bad = LoadPlanReference(WithRegions(kRegionsHeader + row + "\n"));
            REQUIRE_FALSE(bad.ok());
            CHECK(bad.error().message.find("regions.csv") != std::string::npos);
            CHECK(bad.error().message.find(words) != std::string::npos);
        }
        auto twice = LoadPlanReference(WithRegions(std::string(kRegionsHeader) +
                                                   "aws,us-east-1,US,north-america,S,\n" +
                                                   "aws,US-EAST-1,US,north-america,S,\n"));
        REQUIRE_FALSE(twice.ok());
        CHECK(twice.error().message.find("duplicate region") != std::string::npos);
    }
}
