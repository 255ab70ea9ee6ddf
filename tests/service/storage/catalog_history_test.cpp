#include <doctest/doctest.h>

#include "pricing/catalog_loader.hpp"
#include "service/storage/catalog_history.hpp"
#include "service/text/timestamp.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost;

namespace {

pricing::PriceObservation Obs(double usd, const std::string& as_of, bool verified) {
    pricing::PriceObservation p;
    p.usd_per_hour = usd;
    p.as_of = as_of;
    p.verified = verified;
    p.source = "S" + as_of;
    return p;
}

ports::TimestampUs Day(const std::string& date) {
    return text::ParseIsoDate(date).value();
}

}  // namespace

TEST_SUITE("catalog_history") {
    TEST_CASE("seed intervals follow the served price through time and leave unserved rows empty") {
        // Old verified, newer verified (current), newest unverified (never served).
        std::vector<pricing::PriceObservation> obs = {Obs(55.04, "2026-11-09", true),
                                                      Obs(98.32, "2025-05-01", true),
                                                      Obs(40.00, "2026-11-20", false)};
        auto intervals = storage::SeedIntervals(obs);
        REQUIRE(intervals.size() == 3);
        CHECK(intervals[1].first == Day("2025-05-01"));
        CHECK(intervals[1].second == Day("2026-11-09"));
        CHECK(intervals[0].first == Day("2026-11-09"));
        CHECK_FALSE(intervals[0].second.has_value());
        CHECK(intervals[2].first == Day("2026-11-20"));
        CHECK(intervals[2].second == Day("2026-11-20"));
    }

    TEST_CASE("a back-dated price is placed between its neighbours, a newer one is current") {
        // Served: 98.32 unverified [2025-05-01, 2026-11-09), 55.04 verified from 2026-11-09.
        ports::OfferingHistory h;
        h.offering.id = "o";
        h.prices.push_back(
            {1, Obs(98.32, "2025-05-01", false), Day("2025-05-01"), Day("2026-11-09"), 0});
        h.prices.push_back({2, Obs(55.04, "2026-11-09", true), Day("2026-11-09"), std::nullopt, 0});
        const ports::TimestampUs now = Day("2026-11-21") + 3600LL * 1000000;

        auto back = storage::PlacePrice(h, Obs(70, "2026-01-01", true), now);
        CHECK_FALSE(back.current);
        CHECK(back.valid_from == Day("2026-01-01"));
        CHECK(back.valid_to == Day("2026-11-09"));
        REQUIRE(back.shortened.size() == 1);
        CHECK(back.shortened[0] ==
              std::pair<std::int64_t, ports::TimestampUs>{1, Day("2026-01-01")});

        // Older than everything and beaten by the first row: fills the time before it.
        auto older = storage::PlacePrice(h, Obs(10, "1999-01-01", false), now);
        CHECK(older.valid_from == Day("1999-01-01"));
        CHECK(older.valid_to == Day("2025-05-01"));
        CHECK(older.shortened.empty());

        // Beaten wherever it would go (unverified under the verified current): never served.
        auto beaten = storage::PlacePrice(h, Obs(30, "2026-11-20", false), now);
        CHECK_FALSE(beaten.current);
        CHECK(beaten.valid_from == Day("2026-11-20"));
        CHECK(beaten.valid_to == Day("2026-11-20"));
        CHECK(beaten.shortened.empty());

        // Newer (or the same day: a correction) and verified: current from now.
        auto newer = storage::PlacePrice(h, Obs(42, "2026-11-09", true), now);
        CHECK(newer.current);
        CHECK(newer.valid_from == now);
        CHECK_FALSE(newer.valid_to.has_value());
        storage::ApplyPlacement(h, newer, Obs(42, "2026-11-09", true), -1, now);
        CHECK(h.prices[1].valid_to_us == now);
        CHECK(h.offering.price.usd_per_hour == doctest::Approx(42));
        CHECK(h.version == 2);
    }

    TEST_CASE("an unverified price is served until the first verified one appears") {
        std::vector<pricing::PriceObservation> obs = {Obs(2.0, "2025-01-01", false),
                                                      Obs(3.0, "2025-06-01", true)};
        auto intervals = storage::SeedIntervals(obs);
        CHECK(intervals[0].first == Day("2025-01-01"));
        CHECK(intervals[0].second == Day("2025-06-01"));
        CHECK_FALSE(intervals[1].second.has_value());
    }

    TEST_CASE("a snapshot at a time prices each offering by the interval containing it") {
        storage::CatalogHistory h;
        h.revision = 7;
        auto sample = pricing::LoadCatalog(testing::SampleCatalogCsv());
        REQUIRE(sample.ok());
        h.accelerators = sample.value()->Accelerators();
        ports::OfferingHistory o;
        o.offering = sample.value()->Offerings().front();
        o.prices = {{1, Obs(10, "2025-01-01", true), Day("2025-01-01"), Day("2025-06-01"), 0},
                    {2, Obs(8, "2025-06-01", true), Day("2025-06-01"), std::nullopt, 0}};
        h.offerings.push_back(std::make_shared<const ports::OfferingHistory>(o));
        ports::OfferingHistory retired = o;
        retired.offering.id = "zz-retired";
        retired.retired_at_us = Day("2025-03-01");
        retired.prices = {{3, Obs(5, "2025-01-01", true), Day("2025-01-01"), Day("2025-03-01"), 0}};
        h.offerings.push_back(std::make_shared<const ports::OfferingHistory>(retired));

        auto current = storage::BuildSnapshot(h, std::nullopt);
        REQUIRE(current.ok());
        CHECK(current.value()->Offerings().size() == 1);
        CHECK(current.value()->Offerings()[0].price.usd_per_hour == 8);
        CHECK(current.value()->Offerings()[0].superseded_prices.size() == 1);
        CHECK(current.value()->Describe().version == "pg-r7");

        auto february = storage::BuildSnapshot(h, Day("2025-02-01"));
        REQUIRE(february.ok());
        REQUIRE(february.value()->Offerings().size() == 2);
        CHECK(february.value()->Offerings()[0].price.usd_per_hour == 10);
        CHECK(february.value()->Offerings()[0].superseded_prices.empty());
        CHECK(february.value()->Offerings()[1].id == "zz-retired");

        auto before = storage::BuildSnapshot(h, Day("2024-12-31"));
        REQUIRE(before.ok());
        CHECK(before.value()->Offerings().empty());

        // The end of an interval is exclusive.
        auto at_change = storage::BuildSnapshot(h, Day("2025-06-01"));
        REQUIRE(at_change.ok());
        CHECK(at_change.value()->Offerings()[0].price.usd_per_hour == 8);
    }

    TEST_CASE("two prices open at once are reported, not served") {
        storage::CatalogHistory h;
        auto sample = pricing::LoadCatalog(testing::SampleCatalogCsv());
        REQUIRE(sample.ok());
        h.accelerators = sample.value()->Accelerators();
        ports::OfferingHistory o;
        o.offering = sample.value()->Offerings().front();
        o.prices = {{1, Obs(10, "2025-01-01", true), Day("2025-01-01"), std::nullopt, 0},
                    {2, Obs(8, "2025-06-01", true), Day("2025-06-01"), std::nullopt, 0}};
        h.offerings.push_back(std::make_shared<const ports::OfferingHistory>(o));
        auto built = storage::BuildSnapshot(h, std::nullopt);
        REQUIRE_FALSE(built.ok());
        CHECK(built.error().code == pricing::ErrorCode::kInternal);
    }

    TEST_CASE(
        "as_of accepts a date (end of day) or an RFC 3339 time, Z or offset, and rejects the "
        "rest") {
        CHECK(text::ParseAsOf("2025-06-01", "as_of").value() == Day("2025-06-02") - 1);
        CHECK(text::ParseAsOf("2025-06-01T12:00:00Z", "as_of").value() ==
              Day("2025-06-01") + 12LL * 3600 * 1000000);
        CHECK(text::ParseAsOf("2025-06-01T00:00:00.5Z", "as_of").value() ==
              Day("2025-06-01") + 500000);
        // RFC 3339 as clients write it: lower-case t and z, and offsets (the same instant).
        const auto noon_utc = Day("2025-06-01") + 12LL * 3600 * 1000000;
        CHECK(text::ParseAsOf("2025-06-01t12:00:00z", "as_of").value() == noon_utc);
        CHECK(text::ParseAsOf("2025-06-01T14:00:00+02:00", "as_of").value() == noon_utc);
        CHECK(text::ParseAsOf("2025-06-01T07:30:00-04:30", "as_of").value() == noon_utc);
        CHECK(text::ParseAsOf("2025-06-01T14:00:00.25+02:00", "as_of").value() ==
              noon_utc + 250000);
        for (const char* bad :
             {"", "2025-13-01", "2025-02-30", "yesterday", "2025-06-01T25:00:00Z",
              "2025-06-01T12:00:00", "2025-06-01T12:00:00.Z", "1969-12-31",
              "2025-06-01T12:00:00.1234567Z", "2025-06-01T12:00:00+2:00",
              "2025-06-01T12:00:00+24:00", "2025-06-01T12:00:00+02:60", "2025-06-01T12:00:00+0200",
              "2025-06-01 12:00:00Z", "2025-06-01T12:00:00Zjunk"}) {
            auto parsed = text::ParseAsOf(bad, "as_of");
            CHECK_MESSAGE(!parsed.ok(), bad);
            if (!parsed.ok()) {
                CHECK(parsed.error().field == "as_of");
            }
        }
        CHECK(text::FormatTimestamp(Day("2026-11-22") + 1) == "2026-11-22T00:00:00.000001Z");
    }

    TEST_CASE("a change's NOTIFY payload names its rows; a bare revision means reload") {
        storage::CatalogChange change;
        change.offering_ids = {"a", "b-1"};
        change.keys = true;
        auto decoded = storage::DecodeChange(storage::EncodeChange(42, change));
        REQUIRE(decoded.has_value());
        CHECK(decoded->first == 42);
        CHECK(decoded->second.offering_ids == change.offering_ids);
        CHECK(decoded->second.keys);
        CHECK_FALSE(decoded->second.everything);
        auto bare = storage::DecodeChange("43");  // what older binaries and bulk changes send
        REQUIRE(bare.has_value());
        CHECK(bare->second.everything);
        CHECK_FALSE(storage::DecodeChange("junk").has_value());
        storage::CatalogChange huge;
        huge.offering_ids.assign(2000, std::string(10, 'x'));
        CHECK(storage::EncodeChange(7, huge) == "7");
        auto none = storage::DecodeChange(storage::EncodeChange(8, storage::CatalogChange{}));
        REQUIRE(none.has_value());
        CHECK_FALSE(none->second.everything);
        CHECK(none->second.offering_ids.empty());
    }

    TEST_CASE("applying a change equals rebuilding the snapshot from the changed history") {
        auto sample = pricing::LoadCatalog(testing::SampleCatalogCsv());
        REQUIRE(sample.ok());
        storage::CatalogHistory base;
        base.revision = 3;
        base.accelerators = sample.value()->Accelerators();
        std::int64_t price_id = 0;
        for (const pricing::Offering& o : sample.value()->Offerings()) {
            ports::OfferingHistory h;
            h.offering = o;
            h.prices = {
                {++price_id, Obs(10, "2025-01-01", true), Day("2025-01-01"), Day("2025-06-01"), 0},
                {++price_id, Obs(8, "2025-06-01", true), Day("2025-06-01"), std::nullopt, 0}};
            base.offerings.push_back(std::make_shared<const ports::OfferingHistory>(h));
        }
        auto base_current = storage::BuildSnapshot(base, std::nullopt);
        REQUIRE(base_current.ok());
        // Reprice the first, retire the second, create one that sorts in the middle.
        ports::OfferingHistory repriced = *base.offerings[0];
        repriced.prices[1].valid_to_us = Day("2026-01-01");
        repriced.prices.push_back(
            {++price_id, Obs(6, "2026-01-01", true), Day("2026-01-01"), std::nullopt, 0});
        ports::OfferingHistory retired = *base.offerings[1];
        retired.retired_at_us = Day("2026-01-01");
        retired.prices[1].valid_to_us = Day("2026-01-01");
        ports::OfferingHistory created = *base.offerings[2];
        created.offering.id = base.offerings[2]->offering.id + "-new";
        storage::CatalogChange change;
        change.offering_ids = {repriced.offering.id, retired.offering.id, created.offering.id};
        storage::CatalogHistory next =
            storage::ApplyChange(base, 4, change, {repriced, retired, created}, {});
        REQUIRE(next.offerings.size() == base.offerings.size() + 1);
        CHECK(next.offerings[2] == base.offerings[2]);  // unchanged rows are shared
        CHECK(next.offerings[4] == base.offerings[3]);
        for (std::size_t i = 1; i < next.offerings.size(); ++i) {
            CHECK(next.offerings[i - 1]->offering.id < next.offerings[i]->offering.id);
        }
        auto patched = storage::PatchSnapshot(*base_current.value(), next, change);
        auto rebuilt = storage::BuildSnapshot(next, std::nullopt);
        REQUIRE(patched.ok());
        REQUIRE(rebuilt.ok());
        CHECK(patched.value()->Describe().version == rebuilt.value()->Describe().version);
        const pricing::CatalogInfo pi = patched.value()->Describe();
        const pricing::CatalogInfo ri = rebuilt.value()->Describe();
        CHECK(pi.origin == ri.origin);
        CHECK(pi.accelerator_count == ri.accelerator_count);
        CHECK(pi.offering_count == ri.offering_count);
        CHECK(pi.unverified_offering_count == ri.unverified_offering_count);
        CHECK(pi.price_observation_count == ri.price_observation_count);
        CHECK(pi.oldest_as_of == ri.oldest_as_of);
        CHECK(pi.newest_as_of == ri.newest_as_of);
        CHECK(patched.value()->Providers().size() == rebuilt.value()->Providers().size());
        REQUIRE(patched.value()->Offerings().size() == rebuilt.value()->Offerings().size());
        for (std::size_t i = 0; i < rebuilt.value()->Offerings().size(); ++i) {
            const auto& p = patched.value()->Offerings()[i];
            const auto& r = rebuilt.value()->Offerings()[i];
            CHECK(p.id == r.id);
            CHECK(p.price.usd_per_hour == r.price.usd_per_hour);
            CHECK(p.superseded_prices.size() == r.superseded_prices.size());
        }
        // The unchanged offerings are the previous snapshot's own, not copies (a
        // copy of every offering was most of a write's cost at 20,000 offerings).
        const auto& was = base_current.value()->Offerings();
        const auto& now = patched.value()->Offerings();
        CHECK(&now[1] == &was[2]);
        for (std::size_t i = 3; i < now.size(); ++i) {
            CHECK(&now[i] == &was[i]);
        }
        CHECK(patched.value()->FindOffering(created.offering.id).ok());
        CHECK_FALSE(patched.value()->FindOffering(retired.offering.id).ok());
        CHECK(storage::ChangePoints(next).size() == 3);  // 2025-01-01, 2025-06-01, 2026-01-01
    }
}
