#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "pricing/catalog_loader.hpp"
#include "service/storage/history_loader.hpp"
#include "service/storage/pg_store.hpp"
#include "service/text/timestamp.hpp"
#include "tests/service/storage/pg_test_db.hpp"

using namespace gpucost;
using gpucost::testing::TestDatabase;

namespace {

constexpr char kOnDemand[] = "aws-p5.48xlarge-us-east-1-on-demand";

std::unique_ptr<storage::PgStore> OpenStore(const TestDatabase& db) {
    storage::PgStoreOptions options;
    options.database_url = db.url();
    options.refresh_interval = std::chrono::milliseconds(200);
    auto store = storage::PgStore::Open(options);
    if (!store.ok()) {
        FAIL(store.error().message);
    }
    return std::move(store).value();
}

// A store whose periodic check runs every `interval` (after the first, at connect).
std::unique_ptr<storage::PgStore> OpenStoreChecking(const TestDatabase& db,
                                                    std::chrono::milliseconds interval) {
    storage::PgStoreOptions options;
    options.database_url = db.url();
    options.refresh_interval = interval;
    auto store = storage::PgStore::Open(options);
    if (!store.ok()) {
        FAIL(store.error().message);
    }
    return std::move(store).value();
}

ports::TimestampUs Day(const std::string& date) {
    return text::ParseIsoDate(date).value();
}

ports::WriteRequest Admin(const storage::PgStore& store, const std::string& key,
                          const std::string& idempotency_key = "", const std::string& hash = "h") {
    auto principal = store.Authenticate(key);
    REQUIRE(principal.has_value());
    ports::WriteRequest w;
    w.principal = *principal;
    w.idempotency_key = idempotency_key;
    w.request_hash = hash;
    return w;
}

ports::NewPrice Price(double usd) {
    ports::NewPrice p;
    p.usd_per_hour = usd;
    p.as_of = "2026-11-21";
    p.source = "NEGOTIATED RATE";
    return p;
}

// The encoder the handlers would pass: here the body is just the new price.
ports::StoredResponse EncodePrice(const ports::OfferingHistory& h) {
    return {200, std::to_string(h.offering.price.usd_per_hour), ports::OfferingEtag(h.version),
            false};
}

// The catalog contract: what every Catalog implementation must answer for the sample data.
void CheckSampleCatalogContract(const pricing::Catalog& c) {
    REQUIRE(c.Accelerators().size() == 2);
    CHECK(c.Accelerators()[0].id == "h100-sxm");
    CHECK(c.Accelerators()[1].id == "tpu-v5e");
    CHECK(c.Accelerators()[0].PeakTflops(pricing::Precision::kBf16) == doctest::Approx(989));
    CHECK_FALSE(c.Accelerators()[1].PeakTflops(pricing::Precision::kFp32).has_value());
    CHECK(c.Accelerators()[0].purchase_price_usd == doctest::Approx(27500));
    REQUIRE(c.Offerings().size() == 4);
    for (std::size_t i = 1; i < c.Offerings().size(); ++i) {
        CHECK(c.Offerings()[i - 1].id < c.Offerings()[i].id);
    }
    auto p5 = c.FindOffering(kOnDemand);
    REQUIRE(p5.ok());
    CHECK(p5.value().price.usd_per_hour == doctest::Approx(55.04));
    CHECK(p5.value().price.source == "PRICE API");
    CHECK(p5.value().accelerator_count == 8);
    CHECK(p5.value().vcpus == doctest::Approx(192));
    REQUIRE(p5.value().superseded_prices.size() == 2);
    CHECK(p5.value().superseded_prices[0].usd_per_hour == doctest::Approx(40.0));
    CHECK_FALSE(p5.value().superseded_prices[0].verified);
    CHECK(p5.value().superseded_prices[1].as_of == "2025-05-01");
    CHECK(p5.value().superseded_prices[1].as_of_estimated);
    auto spot = c.FindOffering("aws-p5.48xlarge-us-east-1-spot");
    REQUIRE(spot.ok());
    REQUIRE(spot.value().spot_interruption.has_value());
    CHECK(spot.value().spot_interruption->label == ">20%");
    auto tpu = c.FindOffering("gcp-tpu-v5e-us-central1-on-demand");
    REQUIRE(tpu.ok());
    CHECK_FALSE(tpu.value().price.verified);
    CHECK_FALSE(tpu.value().vcpus.has_value());
    auto missing = c.FindOffering("nope");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code == pricing::ErrorCode::kNotFound);
    CHECK_FALSE(c.FindAccelerator("nope").ok());
    auto info = c.Describe();
    CHECK(info.offering_count == 4);
    CHECK(info.accelerator_count == 2);
    CHECK(info.unverified_offering_count == 2);  // spot (estimated date) and TPU (recalled)
    CHECK(info.price_observation_count == 6);
    CHECK(info.newest_as_of == "2026-11-09");
    CHECK(info.oldest_as_of == "2025-05-01");
    auto providers = c.Providers();
    REQUIRE(providers.size() == 3);
    CHECK(providers[0].provider.id == "aws");
    CHECK(providers[0].offering_count == 2);
}

}  // namespace

TEST_SUITE("catalog_contract") {
    TEST_CASE("the in-memory catalog meets the catalog contract") {
        auto loaded = pricing::LoadCatalog(testing::SampleCatalogCsv());
        REQUIRE(loaded.ok());
        CheckSampleCatalogContract(*loaded.value());
    }

    TEST_CASE("the catalog loaded from PostgreSQL meets the same contract") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        auto store = OpenStore(db);
        CheckSampleCatalogContract(*store->Current());
        CHECK(store->Current()->Describe().origin == "postgresql");
    }
}

TEST_SUITE("pg_store") {
    TEST_CASE("the pool's connections are opened by the refresher, before any write needs one") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        storage::PgStoreOptions options;
        options.database_url = db.url();
        options.pool_size = 3;
        options.refresh_interval = std::chrono::milliseconds(100);
        auto store = storage::PgStore::Open(options);
        REQUIRE(store.ok());
        pqxx::connection conn(db.url());
        int backends = 0;
        // A wide margin: the first periodic check comes 100 ms after the start.
        for (int i = 0; i < 200 && backends < 4; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            pqxx::nontransaction tx(conn);
            backends = tx.exec(
                             "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                             "current_database() AND pid <> pg_backend_pid()")[0][0]
                           .as<int>();
        }
        CHECK(backends == 4);  // the refresher's LISTEN connection and the three pooled ones
    }

    TEST_CASE("seeding twice changes nothing the second time") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        auto counts = [&] {
            return db.Scalar(
                "SELECT (SELECT count(*) FROM accelerators) || '/' ||"
                " (SELECT count(*) FROM offerings) || '/' || (SELECT count(*) FROM prices)"
                " || '/' || (SELECT revision FROM catalog_state)");
        };
        std::string before = counts();
        CHECK(before == "2/4/6/1");
        auto sample = pricing::LoadCatalog(testing::SampleCatalogCsv());
        REQUIRE(sample.ok());
        auto conn = db.Connect();
        auto report = storage::Seed(*conn, *sample.value());
        CHECK(report.accelerators_inserted == 0);
        CHECK(report.offerings_inserted == 0);
        CHECK(report.prices_inserted == 0);
        CHECK(report.offerings_skipped == 4);
        CHECK(counts() == before);
    }

    TEST_CASE("a new price closes the previous interval and time travel still sees the old one") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto store = OpenStore(db);
        const ports::TimestampUs before_write = text::NowUs();

        auto put = store->PutPrice(Admin(*store, key), kOnDemand, Price(42.5), EncodePrice);
        REQUIRE(put.ok());
        CHECK(put.value().status == 200);
        CHECK(put.value().etag == "\"v2\"");
        // Read-your-writes on the writing replica.
        CHECK(store->Current()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(42.5));

        auto history = store->History(kOnDemand);
        REQUIRE(history.ok());
        // By valid_from: 98.32 (2025-05-01), 55.04 (2026-11-09), the never-served 40.00
        // (2026-11-20, empty interval), then the new price.
        REQUIRE(history.value().prices.size() == 4);
        const auto& previous = history.value().prices[1];
        const auto& latest = history.value().prices[3];
        CHECK(history.value().prices[2].valid_to_us == history.value().prices[2].valid_from_us);
        CHECK(previous.observation.usd_per_hour == doctest::Approx(55.04));
        REQUIRE(previous.valid_to_us.has_value());
        CHECK(*previous.valid_to_us == latest.valid_from_us);
        CHECK_FALSE(latest.valid_to_us.has_value());
        CHECK(latest.observation.source == "NEGOTIATED RATE");
        CHECK(db.Scalar("SELECT count(*) FROM prices WHERE offering_id = '" +
                        std::string(kOnDemand) + "' AND valid_to IS NULL") == "1");

        auto then = store->At(before_write);
        REQUIRE(then.ok());
        CHECK(then.value()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(55.04));
        auto early = store->At(text::ParseAsOf("2025-12-31", "as_of").value());
        REQUIRE(early.ok());
        CHECK(early.value()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(98.32));
        auto before_seed = store->At(text::ParseAsOf("2024-01-01", "as_of").value());
        REQUIRE(before_seed.ok());
        CHECK(before_seed.value()->Offerings().empty());
    }

    TEST_CASE("a back-dated price enters the history in its place and leaves the current one") {
        // It used to become current because it was written last.
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto store = OpenStore(db);
        ports::NewPrice old = Price(70.0);
        old.as_of = "2026-01-01";  // between 98.32 (2025-05-01, unverified) and 55.04 (2026-11-09)
        auto put = store->PutPrice(Admin(*store, key), kOnDemand, old, EncodePrice);
        REQUIRE(put.ok());
        CHECK(put.value().status == 200);
        CHECK(put.value().etag == "\"v2\"");  // the history changed
        CHECK(store->Current()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(55.04));
        CHECK(db.Scalar("SELECT usd_per_hour FROM prices WHERE offering_id = '" +
                        std::string(kOnDemand) + "' AND valid_to IS NULL") == "55.040000");

        auto history = store->History(kOnDemand);
        REQUIRE(history.ok());
        const ports::PriceInterval* placed = nullptr;
        const ports::PriceInterval* before = nullptr;
        for (const auto& p : history.value().prices) {
            if (p.observation.usd_per_hour == doctest::Approx(70.0)) {
                placed = &p;
            }
            if (p.observation.usd_per_hour == doctest::Approx(98.32)) {
                before = &p;
            }
        }
        REQUIRE(placed != nullptr);
        REQUIRE(before != nullptr);
        CHECK(placed->valid_from_us == Day("2026-01-01"));
        CHECK(placed->valid_to_us == Day("2026-11-09"));
        CHECK(before->valid_to_us == Day("2026-01-01"));  // shortened, still in the history

        auto inside = store->At(text::ParseAsOf("2026-06-30", "as_of").value());
        REQUIRE(inside.ok());
        CHECK(inside.value()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(70.0));
        auto earlier = store->At(text::ParseAsOf("2025-12-31", "as_of").value());
        REQUIRE(earlier.ok());
        CHECK(earlier.value()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(98.32));
        auto now = store->At(text::NowUs());
        REQUIRE(now.ok());
        CHECK(now.value()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(55.04));

        // A newer price still replaces the current one from now.
        REQUIRE(store->PutPrice(Admin(*store, key), kOnDemand, Price(42.0), EncodePrice).ok());
        CHECK(store->Current()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(42.0));
        // An unverified price never displaces a verified one (the rule), even dated today.
        ports::NewPrice unverified = Price(30.0);
        unverified.verified = false;
        REQUIRE(store->PutPrice(Admin(*store, key), kOnDemand, unverified, EncodePrice).ok());
        CHECK(store->Current()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(42.0));
        CHECK(db.Scalar("SELECT count(*) FROM prices WHERE offering_id = '" +
                        std::string(kOnDemand) + "'") == "6");  // nothing lost
    }

    TEST_CASE("a batch of prices is one transaction, one revision and places each by the rule") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto store = OpenStore(db);
        const std::int64_t revision = store->Health().revision;
        const std::string spot = "aws-p5.48xlarge-us-east-1-spot";
        ports::NewPrice back = Price(70.0);
        back.as_of = "2026-01-01";
        std::vector<ports::PriceUpdate> prices = {{kOnDemand, Price(41.0)},
                                                  {spot, Price(20.0)},
                                                  {kOnDemand, Price(40.5)},
                                                  {kOnDemand, back}};
        auto count = [](const std::vector<ports::OfferingHistory>& h) {
            return ports::StoredResponse{200, std::to_string(h.size()), "", false};
        };
        // All or nothing: an unknown id fails the batch and writes none of it.
        auto bad = prices;
        bad.push_back({"nope", Price(1.0)});
        auto refused = store->PutPrices(Admin(*store, key), bad, count);
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().code == pricing::ErrorCode::kNotFound);
        CHECK(db.Scalar("SELECT count(*) FROM prices") == "6");

        auto put = store->PutPrices(Admin(*store, key), prices, count);
        REQUIRE(put.ok());
        CHECK(put.value().body == "2");
        CHECK(store->Health().revision == revision + 1);
        CHECK(db.Scalar("SELECT count(*) FROM prices") == "10");
        auto current = store->Current();
        CHECK(current->FindOffering(kOnDemand).value().price.usd_per_hour == doctest::Approx(40.5));
        CHECK(current->FindOffering(spot).value().price.usd_per_hour == doctest::Approx(20.0));
        CHECK(db.Scalar("SELECT count(*) FROM prices WHERE valid_to IS NULL") == "4");
        auto inside = store->At(text::ParseAsOf("2026-06-30", "as_of").value());
        REQUIRE(inside.ok());
        CHECK(inside.value()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(70.0));
        CHECK(store->History(kOnDemand).value().version == 2);
    }

    TEST_CASE("a retried write with the same Idempotency-Key is applied once") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto store = OpenStore(db);
        auto first = store->PutPrice(Admin(*store, key, "retry-1", "hash-a"), kOnDemand, Price(41),
                                     EncodePrice);
        auto second = store->PutPrice(Admin(*store, key, "retry-1", "hash-a"), kOnDemand, Price(41),
                                      EncodePrice);
        REQUIRE(first.ok());
        REQUIRE(second.ok());
        CHECK_FALSE(first.value().replayed);
        CHECK(second.value().replayed);
        CHECK(second.value().body == first.value().body);
        CHECK(second.value().etag == first.value().etag);
        CHECK(db.Scalar("SELECT count(*) FROM prices WHERE source_id = (SELECT id FROM sources"
                        " WHERE name = 'NEGOTIATED RATE')") == "1");

        auto reused = store->PutPrice(Admin(*store, key, "retry-1", "hash-b"), kOnDemand, Price(43),
                                      EncodePrice);
        REQUIRE_FALSE(reused.ok());
        CHECK(reused.error().code == pricing::ErrorCode::kInvalidArgument);
        CHECK(reused.error().field == "Idempotency-Key");
    }

    TEST_CASE("a stale If-Match is refused and a current one accepted") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto store = OpenStore(db);
        auto w = Admin(*store, key);
        w.if_match = "\"v1\"";
        REQUIRE(store->PutPrice(w, kOnDemand, Price(50), EncodePrice).ok());
        auto stale = store->PutPrice(w, kOnDemand, Price(51), EncodePrice);
        REQUIRE_FALSE(stale.ok());
        CHECK(stale.error().code == pricing::ErrorCode::kFailedPrecondition);
        CHECK(stale.error().field == ports::kIfMatchField);
        w.if_match = "\"v9\", \"v2\"";
        CHECK(store->PutPrice(w, kOnDemand, Price(52), EncodePrice).ok());
    }

    TEST_CASE("retiring keeps the history and removes the offering from current reads") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto store = OpenStore(db);
        auto retired = store->RetireOffering(Admin(*store, key), kOnDemand, EncodePrice);
        REQUIRE(retired.ok());
        CHECK_FALSE(store->Current()->FindOffering(kOnDemand).ok());
        auto history = store->History(kOnDemand);
        REQUIRE(history.ok());
        CHECK(history.value().retired_at_us.has_value());
        CHECK(history.value().prices.size() == 3);
        auto again = store->RetireOffering(Admin(*store, key), kOnDemand, EncodePrice);
        REQUIRE_FALSE(again.ok());
        CHECK(again.error().code == pricing::ErrorCode::kFailedPrecondition);
        auto price = store->PutPrice(Admin(*store, key), kOnDemand, Price(1), EncodePrice);
        REQUIRE_FALSE(price.ok());
        CHECK(price.error().code == pricing::ErrorCode::kFailedPrecondition);
        auto unknown = store->PutPrice(Admin(*store, key), "nope", Price(1), EncodePrice);
        REQUIRE_FALSE(unknown.ok());
        CHECK(unknown.error().code == pricing::ErrorCode::kNotFound);
    }

    TEST_CASE("creating offerings is atomic: a duplicate id fails the whole batch") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto store = OpenStore(db);
        pricing::Offering fresh = store->Current()->FindOffering(kOnDemand).value();
        fresh.id = "aws-p5.48xlarge-eu-west-1-on-demand";
        fresh.region = "eu-west-1";
        fresh.superseded_prices.clear();
        pricing::Offering dup = fresh;
        dup.id = kOnDemand;
        auto encode = [](const std::vector<ports::OfferingHistory>& created) {
            return ports::StoredResponse{201, std::to_string(created.size()), "", false};
        };
        auto batch = store->CreateOfferings(Admin(*store, key), {fresh, dup}, encode);
        REQUIRE_FALSE(batch.ok());
        CHECK(batch.error().code == pricing::ErrorCode::kFailedPrecondition);
        CHECK_FALSE(store->Current()->FindOffering(fresh.id).ok());
        auto single = store->CreateOfferings(Admin(*store, key), {fresh}, encode);
        REQUIRE(single.ok());
        CHECK(single.value().status == 201);
        CHECK(store->Current()->FindOffering(fresh.id).value().price.usd_per_hour ==
              doctest::Approx(55.04));
    }

    TEST_CASE("keys: only a salted hash is stored, wrong and revoked keys do not authenticate") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string admin = db.CreateKey("admin", "ops");
        const std::string reader = db.CreateKey("read", "dash");
        CHECK(db.Scalar(
                  "SELECT count(*) FROM api_keys WHERE position('" + admin.substr(17) +
                  "' in encode(key_hash, 'hex') || encode(salt, 'hex') || name || prefix) > 0") ==
              "0");
        auto store = OpenStore(db);
        auto a = store->Authenticate(admin);
        REQUIRE(a.has_value());
        CHECK(a->scope == ports::KeyScope::kAdmin);
        CHECK(a->name == "ops");
        CHECK(store->Authenticate(reader)->scope == ports::KeyScope::kRead);
        std::string tampered = admin;
        tampered.back() = tampered.back() == '0' ? '1' : '0';
        CHECK_FALSE(store->Authenticate(tampered).has_value());
        CHECK_FALSE(store->Authenticate("").has_value());
        CHECK_FALSE(store->Authenticate("gpc_short").has_value());

        auto conn = db.Connect();
        REQUIRE(storage::RevokeApiKey(*conn, a->prefix).ok());
        CHECK_FALSE(storage::RevokeApiKey(*conn, "000000000000").ok());
        REQUIRE(store->WaitForRevision(std::stoll(db.Scalar("SELECT revision FROM catalog_state")),
                                       std::chrono::milliseconds(3000)));
        CHECK_FALSE(store->Authenticate(admin).has_value());
    }

    TEST_CASE("a write through one replica is served by another within a second") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto writer = OpenStore(db);
        auto reader = OpenStore(db);
        auto put = writer->PutPrice(Admin(*writer, key), kOnDemand, Price(33.3), EncodePrice);
        REQUIRE(put.ok());
        const auto started = std::chrono::steady_clock::now();
        CHECK(reader->WaitForRevision(writer->Revision(), std::chrono::milliseconds(1000)));
        const double waited_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                .count();
        MESSAGE("second replica caught up after " << waited_ms << " ms");
        CHECK(reader->Current()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(33.3));
        CHECK(reader->Health().database_connected);
    }

    TEST_CASE("concurrent writers on two replicas are serialised without losing a write") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto a = OpenStore(db);
        auto b = OpenStore(db);
        constexpr int kPerThread = 10;
        std::atomic<int> ok{0};
        auto work = [&](storage::PgStore& store, int base) {
            for (int i = 0; i < kPerThread; ++i) {
                auto w = Admin(store, key, "k" + std::to_string(base + i),
                               "h" + std::to_string(base + i));
                if (store.PutPrice(w, kOnDemand, Price(base + i), EncodePrice).ok()) {
                    ++ok;
                }
            }
        };
        std::thread t1(work, std::ref(*a), 100);
        std::thread t2(work, std::ref(*b), 200);
        t1.join();
        t2.join();
        CHECK(ok.load() == 2 * kPerThread);
        CHECK(db.Scalar("SELECT count(*) FROM prices WHERE offering_id = '" +
                        std::string(kOnDemand) + "'") == std::to_string(3 + 2 * kPerThread));
        CHECK(db.Scalar(
                  "SELECT count(*) FROM prices p1 JOIN prices p2 ON p1.offering_id = p2.offering_id"
                  " AND p1.id < p2.id AND p1.valid_from < p2.valid_from"
                  " AND p1.valid_to > p2.valid_from WHERE p1.offering_id = '" +
                  std::string(kOnDemand) +
                  "' AND p1.valid_to > p1.valid_from"
                  " AND (p2.valid_to IS NULL OR p2.valid_to > p2.valid_from)") == "0");
    }

    // A write's NOTIFY names its rows and replicas apply exactly those. The other
    // offering is changed behind the stores' back (no new revision): a full reload would
    // pick that up, an incremental apply must not touch it.
    TEST_CASE("a write reaches another replica as a change to its rows, without a full reload") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto writer = OpenStoreChecking(db, std::chrono::minutes(1));
        auto reader = OpenStoreChecking(db, std::chrono::minutes(1));
        // A first write the reader has caught up with: its refresher is then connected and
        // listening, so the next write's notification cannot be missed. (On a loaded machine
        // the refresher may connect after a write; it then catches up with a full reload, as
        // it must, and this test would see the edit below.)
        REQUIRE(writer->PutPrice(Admin(*writer, key), kOnDemand, Price(76.6), EncodePrice).ok());
        REQUIRE(reader->WaitForRevision(writer->Revision(), std::chrono::milliseconds(3000)));
        const std::string other = "lambda-gpu_1x_h100-us-on-demand";
        db.Scalar("UPDATE offerings SET notes = 'edited behind the stores' WHERE id = '" + other +
                  "' RETURNING 1");
        auto put = writer->PutPrice(Admin(*writer, key), kOnDemand, Price(77.7), EncodePrice);
        REQUIRE(put.ok());
        // The write returns once its own replica serves it.
        CHECK(writer->Current()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(77.7));
        REQUIRE(reader->WaitForRevision(writer->Revision(), std::chrono::milliseconds(3000)));
        CHECK(reader->Current()->FindOffering(kOnDemand).value().price.usd_per_hour ==
              doctest::Approx(77.7));
        CHECK(reader->History(kOnDemand).value().prices.size() == 5);
        CHECK(reader->Current()->FindOffering(other).value().notes != "edited behind the stores");
        CHECK(writer->Current()->FindOffering(other).value().notes != "edited behind the stores");
        CHECK(reader->Current()->Describe().version == "pg-r" + std::to_string(writer->Revision()));
        // Creating and retiring travel the same way.
        pricing::Offering fresh = writer->Current()->FindOffering(kOnDemand).value();
        fresh.id = "aws-p5.48xlarge-eu-west-1-on-demand";
        fresh.region = "eu-west-1";
        fresh.superseded_prices.clear();
        auto created = writer->CreateOfferings(Admin(*writer, key), {fresh}, [](const auto&) {
            return ports::StoredResponse{201, "", "", false};
        });
        REQUIRE(created.ok());
        REQUIRE(writer->RetireOffering(Admin(*writer, key), kOnDemand, EncodePrice).ok());
        REQUIRE(reader->WaitForRevision(writer->Revision(), std::chrono::milliseconds(3000)));
        CHECK(reader->Current()->FindOffering(fresh.id).ok());
        CHECK_FALSE(reader->Current()->FindOffering(kOnDemand).ok());
        CHECK(reader->Current()->Offerings().size() == 4);
        CHECK(reader->Current()->Describe().offering_count == 4);
    }

    // 8 writers through one replica whose snapshot is slow to catch up (a full
    // reload would wait on the accelerators table, held here). A write that kept its pooled
    // connection while waiting for its replica starved the others into 503.
    TEST_CASE(
        "concurrent writers all succeed; a write waits for its replica without a connection") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        storage::PgStoreOptions options;
        options.database_url = db.url();
        options.pool_size = 2;
        options.checkout_timeout = std::chrono::milliseconds(300);
        options.refresh_interval = std::chrono::minutes(1);
        auto opened = storage::PgStore::Open(options);
        REQUIRE(opened.ok());
        auto store = std::move(opened).value();
        auto blocker = db.Connect();
        pqxx::work hold(*blocker);
        hold.exec("LOCK TABLE accelerators IN ACCESS EXCLUSIVE MODE");
        const std::vector<std::string> ids = {kOnDemand, "aws-p5.48xlarge-us-east-1-spot",
                                              "lambda-gpu_1x_h100-us-on-demand",
                                              "gcp-tpu-v5e-us-central1-on-demand"};
        std::atomic<int> ok{0};
        std::atomic<int> failed{0};
        std::vector<std::thread> writers;
        for (int t = 0; t < 8; ++t) {
            writers.emplace_back([&, t] {
                for (int i = 0; i < 3; ++i) {
                    auto put =
                        store->PutPrice(Admin(*store, key), ids[static_cast<std::size_t>(t % 4)],
                                        Price(10 + t + i * 0.1), EncodePrice);
                    (put.ok() ? ok : failed)++;
                }
            });
        }
        for (auto& w : writers) {
            w.join();
        }
        hold.abort();
        CHECK(failed.load() == 0);
        CHECK(ok.load() == 24);
        CHECK(db.Scalar("SELECT count(*) FROM prices WHERE source_id = (SELECT id FROM sources"
                        " WHERE name = 'NEGOTIATED RATE')") == "24");
    }

    // As_of reads come from a cache shared by every instant between two change
    // points; each answer must equal a snapshot built for that instant from a fresh load.
    TEST_CASE("as_of answers equal snapshots built from the full history at that instant") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::string key = db.CreateKey("admin");
        auto store = OpenStore(db);
        REQUIRE(store->PutPrice(Admin(*store, key), kOnDemand, Price(12.5), EncodePrice).ok());
        REQUIRE(store
                    ->RetireOffering(Admin(*store, key), "gcp-tpu-v5e-us-central1-on-demand",
                                     EncodePrice)
                    .ok());
        auto conn = db.Connect();
        pqxx::read_transaction tx(*conn);
        const storage::CatalogHistory history = storage::LoadHistory(tx);
        REQUIRE(history.revision == store->Revision());
        std::vector<ports::TimestampUs> instants = {0, Day("2025-03-01"), Day("2026-12-31")};
        for (ports::TimestampUs p : storage::ChangePoints(history)) {
            instants.insert(instants.end(), {p - 1, p, p + 1});
        }
        for (int round = 0; round < 2; ++round) {  // the second round answers from the cache
            for (ports::TimestampUs t : instants) {
                auto got = store->At(t);
                auto want = storage::BuildSnapshot(history, t);
                REQUIRE(got.ok());
                REQUIRE(want.ok());
                CHECK(got.value()->Describe().version == want.value()->Describe().version);
                CHECK(got.value()->Describe().price_observation_count ==
                      want.value()->Describe().price_observation_count);
                REQUIRE(got.value()->Offerings().size() == want.value()->Offerings().size());
                for (std::size_t i = 0; i < want.value()->Offerings().size(); ++i) {
                    const auto& g = got.value()->Offerings()[i];
                    const auto& w = want.value()->Offerings()[i];
                    CHECK(g.id == w.id);
                    CHECK(g.price.usd_per_hour == w.price.usd_per_hour);
                    CHECK(g.price.as_of == w.price.as_of);
                    CHECK(g.superseded_prices.size() == w.superseded_prices.size());
                }
            }
        }
    }
}
