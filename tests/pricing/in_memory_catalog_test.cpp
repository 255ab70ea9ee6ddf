#include "pricing/in_memory_catalog.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "pricing/catalog_loader.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;

namespace {

std::shared_ptr<const InMemoryCatalog> Sample() {
    auto r = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(r.ok());
    return r.value();
}

// Everything a reader sees of a catalog except its offerings' addresses.
void CheckSameAnswers(const InMemoryCatalog& a, const InMemoryCatalog& b) {
    const CatalogInfo ai = a.Describe();
    const CatalogInfo bi = b.Describe();
    CHECK(ai.version == bi.version);
    CHECK(ai.accelerator_count == bi.accelerator_count);
    CHECK(ai.offering_count == bi.offering_count);
    CHECK(ai.unverified_offering_count == bi.unverified_offering_count);
    CHECK(ai.price_observation_count == bi.price_observation_count);
    CHECK(ai.oldest_as_of == bi.oldest_as_of);
    CHECK(ai.newest_as_of == bi.newest_as_of);
    REQUIRE(a.Offerings().size() == b.Offerings().size());
    for (std::size_t i = 0; i < a.Offerings().size(); ++i) {
        CHECK(a.Offerings()[i].id == b.Offerings()[i].id);
        CHECK(a.Offerings()[i].price.usd_per_hour == b.Offerings()[i].price.usd_per_hour);
        auto found = a.FindOffering(b.Offerings()[i].id);
        REQUIRE(found.ok());
        CHECK(found.value().price.as_of == b.Offerings()[i].price.as_of);
    }
    const auto ap = a.Providers();
    const auto bp = b.Providers();
    REQUIRE(ap.size() == bp.size());
    for (std::size_t i = 0; i < ap.size(); ++i) {
        CHECK(ap[i].provider.id == bp[i].provider.id);
        CHECK(ap[i].offering_count == bp[i].offering_count);
        CHECK(ap[i].regions == bp[i].regions);
        CHECK(ap[i].accelerators == bp[i].accelerators);
        CHECK(ap[i].oldest_as_of == bp[i].oldest_as_of);
        CHECK(ap[i].newest_as_of == bp[i].newest_as_of);
    }
}

}  // namespace

TEST_SUITE("in_memory_catalog") {
    TEST_CASE("a patched version answers as a catalog built from its offerings, sharing the rest") {
        auto base = Sample();
        std::vector<Offering> offerings = base->Offerings().Copy();
        REQUIRE(offerings.size() == 4);
        // Reprice the first with the oldest date of all, remove the second, add one.
        Offering repriced = offerings[0];
        repriced.price.usd_per_hour = 1.25;
        repriced.price.as_of = "2020-01-01";
        repriced.price.verified = false;
        repriced.superseded_prices.push_back(offerings[0].price);
        Offering added = offerings[3];
        added.id = offerings[3].id + "-copy";
        added.region = "zz-region-1";
        std::vector<OfferingChange> changes = {
            {added.id, added}, {offerings[1].id, std::nullopt}, {repriced.id, repriced}};
        auto patched = InMemoryCatalog::Patch(*base, changes, "v2");
        REQUIRE(patched.ok());

        std::vector<Offering> expected = {repriced, offerings[2], offerings[3], added};
        const std::size_t observations =
            base->Describe().price_observation_count - (1 + offerings[0].superseded_prices.size()) -
            (1 + offerings[1].superseded_prices.size()) + (1 + repriced.superseded_prices.size()) +
            (1 + added.superseded_prices.size());
        auto built = InMemoryCatalog::Build(base->Accelerators(), expected, "v2",
                                            base->Describe().origin, observations);
        REQUIRE(built.ok());
        CheckSameAnswers(*patched.value(), *built.value());
        CHECK(patched.value()->Describe().oldest_as_of == "2020-01-01");
        CHECK(patched.value()->FindOffering(offerings[1].id).error().code == ErrorCode::kNotFound);
        // Ids compare case-insensitively, the added one included.
        CHECK(patched.value()->FindOffering("AWS-P5.48XLARGE-US-EAST-1-ON-DEMAND").ok());
        // The unchanged offerings are the base version's own objects, not copies.
        CHECK(&patched.value()->Offerings()[1] == &base->Offerings()[2]);
        CHECK(&patched.value()->Offerings()[2] == &base->Offerings()[3]);
        CHECK(&patched.value()->Accelerators() == &base->Accelerators());
        // The base version is untouched.
        CheckSameAnswers(*base, *Sample());

        // Removing the oldest-dated price again brings the oldest date back.
        auto undone = InMemoryCatalog::Patch(*patched.value(), {{repriced.id, offerings[0]}}, "v3");
        REQUIRE(undone.ok());
        std::string oldest = added.price.as_of;
        for (const Offering* o : {&offerings[0], &offerings[2], &offerings[3]}) {
            oldest = std::min(oldest, o->price.as_of);
        }
        CHECK(oldest != "2020-01-01");
        CHECK(undone.value()->Describe().oldest_as_of == oldest);
    }

    TEST_CASE("a patch naming an unknown accelerator or one id twice is refused") {
        auto base = Sample();
        Offering o = base->Offerings()[0];
        o.accelerator = "no-such-gpu";
        auto unknown = InMemoryCatalog::Patch(*base, {{o.id, o}}, "v2");
        REQUIRE_FALSE(unknown.ok());
        CHECK(unknown.error().code == ErrorCode::kInvalidArgument);
        const std::string id = base->Offerings()[1].id;
        auto twice = InMemoryCatalog::Patch(*base, {{id, std::nullopt}, {id, std::nullopt}}, "v2");
        REQUIRE_FALSE(twice.ok());
        CHECK(twice.error().code == ErrorCode::kInvalidArgument);
    }
}
