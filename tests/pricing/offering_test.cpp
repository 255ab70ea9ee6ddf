#include "pricing/offering.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "pricing/accelerator.hpp"

using namespace gpucost::pricing;

namespace {
PriceObservation Obs(double usd, const char* as_of, bool verified, bool estimated = false) {
    PriceObservation p;
    p.usd_per_hour = usd;
    p.as_of = as_of;
    p.verified = verified;
    p.as_of_estimated = estimated;
    p.source = "test";
    return p;
}
}  // namespace

TEST_SUITE("offering") {
    TEST_CASE("the most recent verified price is current, even when an unverified one is newer") {
        std::vector<PriceObservation> obs = {Obs(98.32, "2025-05-01", true),
                                             Obs(55.04, "2026-11-09", true),
                                             Obs(40.00, "2026-11-20", false)};
        CHECK(SelectCurrentPrice(obs) == 1);
    }

    TEST_CASE("without any verified price the newest unverified one is current") {
        std::vector<PriceObservation> obs = {Obs(3.0, "2025-01-01", false),
                                             Obs(3.2, "2026-01-01", false)};
        CHECK(SelectCurrentPrice(obs) == 1);
    }

    TEST_CASE("on the same date a dated observation beats an estimated one") {
        std::vector<PriceObservation> obs = {Obs(1.0, "2026-01-01", true, true),
                                             Obs(2.0, "2026-01-01", true, false)};
        CHECK(SelectCurrentPrice(obs) == 1);
    }

    TEST_CASE("price types and precisions round-trip through their API names") {
        for (auto t : {PriceType::kOnDemand, PriceType::kSpot, PriceType::kCommit1y,
                       PriceType::kCommit3y, PriceType::kCapacityBlock}) {
            CHECK(ParsePriceType(PriceTypeName(t)) == t);
        }
        for (auto p : kAllPrecisions) {
            CHECK(ParsePrecision(PrecisionName(p)) == p);
        }
        CHECK_FALSE(ParsePriceType("reserved").has_value());
        CHECK_FALSE(ParsePrecision("BF16").has_value());
    }

    TEST_CASE("spot advisor buckets carry spotinfo's numeric bounds") {
        auto b = ParseSpotInterruptionBucket("10-15%");
        REQUIRE(b.has_value());
        CHECK(b->min_percent_per_month == 11);
        CHECK(b->max_percent_per_month == 16);
        CHECK_FALSE(ParseSpotInterruptionBucket("high").has_value());
    }

    TEST_CASE("price per accelerator-hour divides the instance price by the accelerator count") {
        Offering o;
        o.accelerator_count = 8;
        o.price.usd_per_hour = 55.04;
        // 55.04 / 8 = 6.88
        CHECK(o.UsdPerAcceleratorHour() == doctest::Approx(6.88).epsilon(1e-12));
    }

    TEST_CASE("bytes per element follow the precision") {
        CHECK(BytesPerElement(Precision::kBf16) == 2.0);
        CHECK(BytesPerElement(Precision::kFp8) == 1.0);
        // NVFP4: 4-bit values and one 8-bit scale per 16 of them.
        CHECK(BytesPerElement(Precision::kFp4) == 0.5625);
        CHECK(BytesPerElement(Precision::kTf32) == 4.0);
    }
}

namespace {
std::string SourceFile(const std::string& path) {
    std::ifstream in(std::string(GPUCOST_SOURCE_DIR) + "/" + path, std::ios::binary);
    std::ostringstream text;  // not istreambuf_iterator: GCC 12 -O3 -Werror=null-dereference
    text << in.rdbuf();
    return text.str();
}
}  // namespace

TEST_CASE("the providers are schema/seed/providers.csv's rows, and openapi.yaml names the same") {
    std::string expected = "id,name,kind\n";
    std::string ids;
    for (const Provider& p : KnownProviders()) {
        expected += p.id + "," + p.name + "," + p.kind + "\n";
        ids += (ids.empty() ? "" : ", ") + p.id;
    }
    CHECK(SourceFile("schema/seed/providers.csv") == expected);
    CHECK(KnownProviders().size() >= 7);
    // The contract repeats the ids for readers of the document: the filter's description and
    // the Offering schema's enum.
    const std::string openapi = SourceFile("openapi.yaml");
    CHECK(openapi.find("Provider ids: " + ids + " (repeated") != std::string::npos);
    CHECK(openapi.find("provider: {type: string, enum: [" + ids + "]}") != std::string::npos);
}
