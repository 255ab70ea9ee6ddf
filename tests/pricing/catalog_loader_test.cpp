#include "pricing/catalog_loader.hpp"

#include <doctest/doctest.h>

#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;
using gpucost::testing::SampleCatalogCsv;

namespace {

std::string Replace(std::string text, const std::string& from, const std::string& to) {
    auto pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    return text.replace(pos, from.size(), to);
}

std::string LoadError(const CatalogCsv& csv) {
    auto r = LoadCatalog(csv);
    REQUIRE_FALSE(r.ok());
    return r.error().message;
}

}  // namespace

TEST_SUITE("catalog_loader") {
    TEST_CASE("the sample catalog loads with current prices chosen by the rule") {
        auto r = LoadCatalog(SampleCatalogCsv());
        REQUIRE(r.ok());
        const auto& catalog = *r.value();
        CHECK(catalog.Accelerators().size() == 2);
        CHECK(catalog.Offerings().size() == 4);
        auto p5 = catalog.FindOffering("aws-p5.48xlarge-us-east-1-on-demand");
        REQUIRE(p5.ok());
        // The stale 98.32 snapshot and the unverified 40.00 are superseded by the verified 55.04.
        CHECK(p5.value().price.usd_per_hour == 55.04);
        CHECK(p5.value().price.verified);
        REQUIRE(p5.value().superseded_prices.size() == 2);
        CHECK(p5.value().superseded_prices[0].as_of == "2026-11-20");
        auto tpu = catalog.FindOffering("gcp-tpu-v5e-us-central1-on-demand");
        REQUIRE(tpu.ok());
        CHECK_FALSE(tpu.value().price.verified);
        auto spot = catalog.FindOffering("aws-p5.48xlarge-us-east-1-spot");
        REQUIRE(spot.ok());
        REQUIRE(spot.value().spot_interruption.has_value());
        CHECK(spot.value().spot_interruption->label == ">20%");
    }

    TEST_CASE("catalog info counts observations and spans current as-of dates") {
        auto r = LoadCatalog(SampleCatalogCsv());
        REQUIRE(r.ok());
        auto info = r.value()->Describe();
        CHECK(info.price_observation_count == 6);
        // The spot row's date is estimated (so unverified) and the TPU row is recalled.
        CHECK(info.unverified_offering_count == 2);
        CHECK(info.oldest_as_of == "2025-05-01");
        CHECK(info.newest_as_of == "2026-11-09");
        CHECK(info.version.size() == 16);
        CHECK(info.version == LoadCatalog(SampleCatalogCsv()).value()->Describe().version);
    }

    TEST_CASE("provider summaries count offerings per price type") {
        auto r = LoadCatalog(SampleCatalogCsv());
        REQUIRE(r.ok());
        auto providers = r.value()->Providers();
        REQUIRE(providers.size() == 3);
        CHECK(providers[0].provider.id == "aws");  // KnownProviders order
        CHECK(providers[0].offering_count == 2);
        CHECK(providers[0].offerings_by_price_type.size() == 2);
    }

    TEST_CASE("an unknown accelerator id stops loading and names the file and row") {
        auto csv = SampleCatalogCsv();
        csv.offerings_csv = Replace(csv.offerings_csv, "gpu_1x_h100,h100-sxm", "gpu_1x_h100,h100");
        CHECK(LoadError(csv) == "offerings.csv line 4: unknown accelerator id 'h100'");
    }

    TEST_CASE("a negative price stops loading and names the file and row") {
        auto csv = SampleCatalogCsv();
        csv.prices_csv = Replace(csv.prices_csv, "4.29", "-4.29");
        CHECK(LoadError(csv) == "prices.csv line 6: usd_per_hour must not be negative (got -4.29)");
    }

    TEST_CASE("a duplicate accelerator id stops loading") {
        auto csv = SampleCatalogCsv();
        csv.accelerators_csv = Replace(csv.accelerators_csv, "tpu-v5e,TPU", "h100-sxm,TPU");
        CHECK(LoadError(csv) == "accelerators.csv line 3: duplicate id 'h100-sxm'");
    }

    TEST_CASE("an accelerator no family row gives facts for stops loading, naming the table") {
        auto csv = SampleCatalogCsv();
        csv.accelerators_csv = Replace(csv.accelerators_csv, "tpu-v5e,TPU", "zz-9000,TPU");
        CHECK(LoadError(csv).find("accelerators.csv line 3: id 'zz-9000' matches no family in "
                                  "pricing/accelerator_facts.cpp") == 0);
    }

    TEST_CASE("a confidence rating other than high, medium or low stops loading") {
        auto csv = SampleCatalogCsv();
        csv.accelerators_csv = Replace(csv.accelerators_csv, "TEST,high,\n", "TEST,sure,\n");
        CHECK(LoadError(csv) ==
              "accelerators.csv line 2: confidence 'sure' must be high, medium or low");
    }

    TEST_CASE("a duplicate offering id stops loading") {
        auto csv = SampleCatalogCsv();
        csv.offerings_csv = Replace(csv.offerings_csv, "lambda-gpu_1x_h100-us-on-demand,lambda",
                                    "aws-p5.48xlarge-us-east-1-spot,lambda");
        CHECK(LoadError(csv).find("offerings.csv line 4: duplicate id") == 0);
    }

    TEST_CASE("other bad data is reported with file and line") {
        auto csv = SampleCatalogCsv();
        SUBCASE("non-numeric peak") {
            csv.accelerators_csv = Replace(csv.accelerators_csv, "67,494.5", "~67,494.5");
            CHECK(LoadError(csv) == "accelerators.csv line 2: fp32_tflops '~67' is not a number");
        }
        SUBCASE("unknown provider") {
            csv.offerings_csv = Replace(csv.offerings_csv, ",lambda,", ",oracle,");
            CHECK(LoadError(csv) == "offerings.csv line 4: unknown provider 'oracle'");
        }
        SUBCASE("unknown price type") {
            csv.offerings_csv = Replace(csv.offerings_csv, "us-east-1,spot", "us-east-1,bid");
            CHECK(LoadError(csv) == "offerings.csv line 3: unknown price_type 'bid'");
        }
        SUBCASE("spot bucket on an on-demand offering") {
            csv.offerings_csv = Replace(csv.offerings_csv, "us,on_demand,,", "us,on_demand,<5%,");
            CHECK(LoadError(csv) ==
                  "offerings.csv line 4: spot_interruption_bucket is only valid on spot offerings");
        }
        SUBCASE("bad date") {
            csv.prices_csv = Replace(csv.prices_csv, "2026-09-25", "2026-02-30");
            CHECK(LoadError(csv) ==
                  "prices.csv line 6: as_of '2026-02-30' is not a YYYY-MM-DD date");
        }
        SUBCASE("price for an unknown offering") {
            csv.prices_csv += "nope,1,2026-01-01,false,X,true,\n";
            CHECK(LoadError(csv) == "prices.csv line 8: unknown offering_id 'nope'");
        }
        SUBCASE("duplicate observation") {
            csv.prices_csv +=
                "lambda-gpu_1x_h100-us-on-demand,4.5,2026-09-25,false,LAMBDA PAGE,true,\n";
            CHECK(LoadError(csv).find("prices.csv line 8: duplicate price") == 0);
        }
        SUBCASE("offering without a price") {
            csv.prices_csv = Replace(csv.prices_csv,
                                     "lambda-gpu_1x_h100-us-on-demand,4.29,2026-09-25,false,LAMBDA "
                                     "PAGE,true,\n",
                                     "");
            CHECK(LoadError(csv) ==
                  "offering 'lambda-gpu_1x_h100-us-on-demand' has no row in prices.csv");
        }
        SUBCASE("missing column") {
            csv.prices_csv = Replace(csv.prices_csv, ",verified,", ",checked,");
            CHECK(LoadError(csv) == "prices.csv line 1: missing column 'verified'");
        }
        SUBCASE("zero accelerators") {
            csv.offerings_csv = Replace(csv.offerings_csv, "h100-sxm,1,80", "h100-sxm,0,80");
            CHECK(LoadError(csv) == "offerings.csv line 4: accelerator_count must be at least 1");
        }
        SUBCASE("verified with an estimated date") {
            csv.prices_csv = Replace(csv.prices_csv, "true,OLD SNAPSHOT,false,pre-cut",
                                     "true,OLD SNAPSHOT,true,pre-cut");
            CHECK(LoadError(csv) ==
                  "prices.csv line 2: verified is true but as_of_estimated is true: a price "
                  "whose date was estimated cannot be verified");
        }
        SUBCASE("bad boolean") {
            csv.prices_csv = Replace(csv.prices_csv, "LAMBDA PAGE,true", "LAMBDA PAGE,yes");
            CHECK(LoadError(csv) ==
                  "prices.csv line 6: verified must be true or false (got 'yes')");
        }
    }

    TEST_CASE("ISO date validation knows month lengths and leap years") {
        CHECK(IsIsoDate("2024-02-29"));
        CHECK_FALSE(IsIsoDate("2023-02-29"));
        CHECK_FALSE(IsIsoDate("2026-13-01"));
        CHECK_FALSE(IsIsoDate("2026-1-01"));
        CHECK_FALSE(IsIsoDate("snapshot"));
    }
}
