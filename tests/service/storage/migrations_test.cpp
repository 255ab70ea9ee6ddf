#include <doctest/doctest.h>

#include "service/storage/migrations.hpp"
#include "service/storage/pg_store.hpp"
#include "tests/service/storage/pg_test_db.hpp"

using namespace gpucost;
using gpucost::testing::TestDatabase;

TEST_SUITE("migrations") {
    TEST_CASE("migrate applies every migration to an empty database, then nothing") {
        TestDatabase db;
        auto conn = db.Connect();
        auto before = storage::CheckSchema(*conn);
        REQUIRE(before.ok());
        CHECK(before.value().database_version == 0);
        CHECK(before.value().missing.size() == storage::KnownMigrations().size());

        auto first = storage::Migrate(*conn);
        REQUIRE(first.ok());
        CHECK(first.value().size() == storage::KnownMigrations().size());
        CHECK(db.Scalar("SELECT count(*) FROM schema_migrations") ==
              std::to_string(storage::KnownMigrations().size()));
        CHECK(db.Scalar("SELECT revision FROM catalog_state") == "0");

        auto second = storage::Migrate(*conn);
        REQUIRE(second.ok());
        CHECK(second.value().empty());
        auto after = storage::CheckSchema(*conn);
        REQUIRE(after.ok());
        CHECK(after.value().missing.empty());
        CHECK(after.value().database_version == storage::KnownMigrations().back().version);
    }

    TEST_CASE("a database ahead of the binary is refused by migrate and by the server") {
        TestDatabase db;
        auto conn = db.Connect();
        REQUIRE(storage::Migrate(*conn).ok());
        {
            pqxx::work tx(*conn);
            tx.exec(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES (999, 'future', "
                "'x')");
            tx.commit();
        }
        auto check = storage::CheckSchema(*conn);
        REQUIRE_FALSE(check.ok());
        CHECK(check.error().code == pricing::ErrorCode::kFailedPrecondition);
        CHECK(check.error().message.find("ahead") != std::string::npos);
        CHECK_FALSE(storage::Migrate(*conn).ok());

        storage::PgStoreOptions options;
        options.database_url = db.url();
        auto store = storage::PgStore::Open(options);
        REQUIRE_FALSE(store.ok());
        CHECK(store.error().code == pricing::ErrorCode::kFailedPrecondition);
    }

    TEST_CASE("an edited applied migration and a missing migration stop the server") {
        TestDatabase db;
        storage::PgStoreOptions options;
        options.database_url = db.url();
        auto empty = storage::PgStore::Open(options);
        REQUIRE_FALSE(empty.ok());
        CHECK(empty.error().message.find("gpucost migrate") != std::string::npos);

        auto conn = db.Connect();
        REQUIRE(storage::Migrate(*conn).ok());
        {
            pqxx::work tx(*conn);
            tx.exec("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1");
            tx.commit();
        }
        auto check = storage::CheckSchema(*conn);
        REQUIRE_FALSE(check.ok());
        CHECK(check.error().message.find("never be edited") != std::string::npos);
    }

    TEST_CASE("the schema enforces non-negative prices, known accelerators and one current price") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        auto conn = db.Connect();
        auto fails = [&](const std::string& sql) {
            try {
                pqxx::work tx(*conn);
                tx.exec(sql);
                tx.commit();
                return false;
            } catch (const pqxx::integrity_constraint_violation&) {
                return true;
            }
        };
        const std::string id = "lambda-gpu_1x_h100-us-on-demand";
        CHECK(fails(
            "INSERT INTO prices (offering_id, usd_per_hour, as_of, source_id, valid_from, valid_to)"
            " VALUES ('" +
            id + "', -1, '2026-01-01', 1, now(), now())"));
        CHECK(
            fails("INSERT INTO prices (offering_id, usd_per_hour, as_of, source_id, valid_from)"
                  " VALUES ('" +
                  id + "', 1, '2026-01-01', 1, now())"));
        CHECK(
            fails("INSERT INTO offerings (id, provider, instance_type, accelerator_id,"
                  " accelerator_count, region, price_type) VALUES ('x', 'aws', 'x', 'nope', 1,"
                  " 'us', 'on_demand')"));
        CHECK(
            fails("UPDATE prices SET valid_to = valid_from - interval '1 day'"
                  " WHERE offering_id = '" +
                  id + "'"));
        CHECK_FALSE(fails(
            "INSERT INTO prices (offering_id, usd_per_hour, as_of, source_id, valid_from, valid_to)"
            " VALUES ('" +
            id + "', 0, '2026-01-01', 1, now(), now())"));
    }
}
