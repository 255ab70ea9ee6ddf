#include "pricing/offering_query.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "pricing/catalog_loader.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;

namespace {

std::shared_ptr<const InMemoryCatalog> Sample() {
    auto r = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(r.ok());
    return r.value();
}

std::vector<std::string> Ids(const OfferingPage& page) {
    std::vector<std::string> ids;
    for (const auto& o : page.items) {
        ids.push_back(o->id);
    }
    return ids;
}

}  // namespace

TEST_SUITE("offering_query") {
    TEST_CASE("default order is cheapest per accelerator-hour first") {
        auto catalog = Sample();
        OfferingQuery q;
        auto page = QueryOfferings(catalog->Offerings(), q);
        REQUIRE(page.ok());
        // tpu 1.2/1; p5 spot 20.9934/8 = 2.624; lambda 4.29/1; p5 on-demand 55.04/8 = 6.88
        CHECK(Ids(page.value()) == std::vector<std::string>{"gcp-tpu-v5e-us-central1-on-demand",
                                                            "aws-p5.48xlarge-us-east-1-spot",
                                                            "lambda-gpu_1x_h100-us-on-demand",
                                                            "aws-p5.48xlarge-us-east-1-on-demand"});
        CHECK(page.value().total_count == 4);
        CHECK_FALSE(page.value().next_cursor.has_value());
    }

    TEST_CASE("filters combine with AND and list values with OR") {
        auto catalog = Sample();
        OfferingQuery q;
        q.providers = {"aws", "lambda"};
        q.price_types = {PriceType::kOnDemand};
        auto page = QueryOfferings(catalog->Offerings(), q);
        REQUIRE(page.ok());
        CHECK(page.value().total_count == 2);

        q = {};
        q.min_accelerator_count = 8;
        q.max_usd_per_accelerator_hour = 3.0;
        page = QueryOfferings(catalog->Offerings(), q);
        REQUIRE(page.ok());
        CHECK(Ids(page.value()) == std::vector<std::string>{"aws-p5.48xlarge-us-east-1-spot"});

        q = {};
        q.min_accelerator_memory_gb = 40;
        q.verified = true;  // the spot offering's only price has an estimated date
        page = QueryOfferings(catalog->Offerings(), q);
        REQUIRE(page.ok());
        CHECK(page.value().total_count == 2);
    }

    TEST_CASE("a filter value that matches nothing gives an empty page") {
        auto catalog = Sample();
        OfferingQuery q;
        q.accelerators = {"no-such-chip"};
        auto page = QueryOfferings(catalog->Offerings(), q);
        REQUIRE(page.ok());
        CHECK(page.value().items.empty());
        CHECK(page.value().total_count == 0);
    }

    TEST_CASE("descending sort reverses the key but ties still page by id") {
        auto catalog = Sample();
        OfferingQuery q;
        q.sort = *ParseOfferingSort("-usd_per_hour");
        auto page = QueryOfferings(catalog->Offerings(), q);
        REQUIRE(page.ok());
        CHECK(page.value().items.front()->id == "aws-p5.48xlarge-us-east-1-on-demand");
        CHECK(page.value().items.back()->id == "gcp-tpu-v5e-us-central1-on-demand");
    }

    TEST_CASE("cursor pagination visits every item exactly once in order") {
        auto catalog = Sample();
        for (const char* sort : {"usd_per_accelerator_hour", "-usd_per_hour", "provider", "-id",
                                 "accelerator_count", "as_of"}) {
            OfferingQuery all;
            all.sort = *ParseOfferingSort(sort);
            auto expected = Ids(QueryOfferings(catalog->Offerings(), all).value());
            OfferingQuery q = all;
            q.limit = 1;
            std::vector<std::string> seen;
            for (int guard = 0; guard < 10; ++guard) {
                auto page = QueryOfferings(catalog->Offerings(), q);
                REQUIRE(page.ok());
                for (const auto& id : Ids(page.value())) {
                    seen.push_back(id);
                }
                if (!page.value().next_cursor) {
                    break;
                }
                q.cursor = *page.value().next_cursor;
            }
            CAPTURE(sort);
            CHECK(seen == expected);
        }
    }

    TEST_CASE("a cursor from another sort order or a forged cursor is rejected") {
        auto catalog = Sample();
        OfferingQuery q;
        q.limit = 1;
        auto first = QueryOfferings(catalog->Offerings(), q);
        REQUIRE(first.ok());
        REQUIRE(first.value().next_cursor.has_value());
        q.cursor = *first.value().next_cursor;
        q.sort = *ParseOfferingSort("-usd_per_hour");
        auto r = QueryOfferings(catalog->Offerings(), q);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().field == "cursor");
        CHECK(r.error().code == ErrorCode::kMalformed);
        q.cursor = "!!!";
        r = QueryOfferings(catalog->Offerings(), q);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == ErrorCode::kInvalidArgument);
    }

    TEST_CASE(
        "the query digest covers every filter and the sort, not the limit or the order "
        "of alternatives") {
        OfferingQuery base;
        base.providers = {"aws", "gcp"};
        const std::string digest = OfferingQueryDigest(base);
        CHECK(digest.size() == 16);
        OfferingQuery reordered = base;
        reordered.providers = {"gcp", "aws"};
        reordered.limit = 7;
        reordered.cursor = "anything";
        CHECK(OfferingQueryDigest(reordered) == digest);
        std::vector<OfferingQuery> others(9, base);
        others[0].providers = {"aws"};
        others[1].accelerators = {"h100-sxm"};
        others[2].price_types = {PriceType::kSpot};
        others[3].regions = {"us-east-1"};
        others[4].min_accelerator_count = 8;
        others[5].max_accelerator_count = 8;
        others[6].min_accelerator_memory_gb = 80;
        others[7].max_usd_per_accelerator_hour = 2.5;
        others[8].verified = true;
        std::set<std::string> digests = {digest};
        for (const auto& other : others) {
            digests.insert(OfferingQueryDigest(other));
        }
        CHECK(digests.size() == others.size() + 1);
    }

    TEST_CASE("a cursor from one filter is rejected by another") {
        auto catalog = Sample();
        OfferingQuery q;
        q.limit = 1;
        auto first = QueryOfferings(catalog->Offerings(), q);
        REQUIRE(first.ok());
        REQUIRE(first.value().next_cursor.has_value());
        q.cursor = *first.value().next_cursor;
        q.verified = true;
        auto r = QueryOfferings(catalog->Offerings(), q);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == ErrorCode::kMalformed);
        CHECK(r.error().field == "cursor");
    }

    TEST_CASE("validation reports every bad field at once") {
        OfferingQuery q;
        q.min_accelerator_count = 0;
        q.max_usd_per_accelerator_hour = -1;
        q.limit = 501;
        auto s = q.Validate();
        REQUIRE_FALSE(s.ok());
        std::set<std::string> fields;
        for (const auto& e : s.error().errors) {
            fields.insert(e.field);
        }
        CHECK(fields == std::set<std::string>{"min_accelerator_count",
                                              "max_usd_per_accelerator_hour", "limit"});
    }

    TEST_CASE("min above max is rejected") {
        OfferingQuery q;
        q.min_accelerator_count = 16;
        q.max_accelerator_count = 8;
        CHECK_FALSE(q.Validate().ok());
    }
}

TEST_SUITE("offering_query") {
    TEST_CASE("a NaN or infinite price sorts after every price, never first, and passes no cap") {
        auto base = Sample();
        std::vector<Offering> offerings = base->Offerings().Copy();
        for (Offering& o : offerings) {
            if (o.id == "lambda-gpu_1x_h100-us-on-demand") o.price.usd_per_hour = std::nan("");
            if (o.id == "gcp-tpu-v5e-us-central1-on-demand") o.price.usd_per_hour = -1;
        }
        auto catalog = InMemoryCatalog::Build(base->Accelerators(), offerings, "t", "t", 0);
        REQUIRE(catalog.ok());
        for (const char* sort : {"usd_per_hour", "usd_per_accelerator_hour"}) {
            CAPTURE(sort);
            OfferingQuery q;
            q.sort = *ParseOfferingSort(sort);
            auto page = QueryOfferings(catalog.value()->Offerings(), q);
            REQUIRE(page.ok());
            const auto ids = Ids(page.value());
            REQUIRE(ids.size() == 4);
            CHECK(std::set<std::string>{ids[2], ids[3]} ==
                  std::set<std::string>{"lambda-gpu_1x_h100-us-on-demand",
                                        "gcp-tpu-v5e-us-central1-on-demand"});
        }
        OfferingQuery capped;
        capped.max_usd_per_accelerator_hour = 100;
        auto page = QueryOfferings(catalog.value()->Offerings(), capped);
        REQUIRE(page.ok());
        for (const std::string& id : Ids(page.value())) {
            CHECK(id != "lambda-gpu_1x_h100-us-on-demand");
        }
    }
}
