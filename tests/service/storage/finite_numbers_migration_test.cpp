// schema/migrations/009_finite_numbers.sql: every floating or numeric column refuses NaN and
// the infinities (NaN >= 0 is true in PostgreSQL, so CHECK (x >= 0) let it in), charges keep
// the bounds and months POST /v1/actuals states, and a NaN price or charge an earlier version
// stored is removed when the migration runs.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "service/storage/migrations.hpp"
#include "tests/service/storage/pg_test_db.hpp"

using namespace gpucost;
using gpucost::testing::TestDatabase;

namespace {

// `column` of one row of `table` set to `value` (SQL text); throws when the schema refuses it.
std::string SetOne(const TestDatabase& db, const std::string& table, const std::string& column,
                   const std::string& value) {
    return db.Scalar("UPDATE " + table + " SET " + column + " = " + value +
                     " WHERE ctid = (SELECT ctid FROM " + table + " LIMIT 1) RETURNING 1");
}

// One charge with the figures and month given (SQL text, in the order hours, billed,
// effective, list, month).
std::string InsertCharge(const TestDatabase& db, const std::string& values) {
    return db.Scalar(
        "WITH i AS (INSERT INTO actuals_imports (team, tag_key, rows_read, kept, added) VALUES "
        "('default', 't', 1, 1, 1) RETURNING id) INSERT INTO actual_charges (team, row_id, "
        "import_id, provider, month, charge_period_start, billing_currency, sku, accelerator, "
        "region, pricing_category, accelerator_hours, billed_cost, effective_cost, list_cost) "
        "SELECT 'default', md5(random()::text), i.id, 'aws', v.m, '', 'USD', 'p5', 'h100', 'r', "
        "'Standard', v.h, "
        "v.b, v.e, v.l FROM i, (VALUES (" +
        values + ")) AS v(h, b, e, l, m) RETURNING 1");
}

}  // namespace

TEST_SUITE("migrations") {
    TEST_CASE("every numeric column refuses NaN and the infinities") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        const std::vector<std::pair<std::string, std::string>> columns = {
            {"prices", "usd_per_hour"},
            {"offerings", "accelerator_memory_gb"},
            {"offerings", "vcpus"},
            {"offerings", "ram_gib"},
            {"offerings", "scale_out_gbit_per_s"},
            {"accelerators", "fp32_tflops"},
            {"accelerators", "tf32_tflops"},
            {"accelerators", "fp16_tflops"},
            {"accelerators", "bf16_tflops"},
            {"accelerators", "fp8_tflops"},
            {"accelerators", "int8_tops"},
            {"accelerators", "fp4_tflops"},
            {"accelerators", "memory_gb"},
            {"accelerators", "memory_gb_per_s"},
            {"accelerators", "cache_mb"},
            {"accelerators", "scale_up_gb_per_s"},
            {"accelerators", "tdp_w"},
            {"accelerators", "purchase_price_usd"},
        };
        for (const auto& [table, column] : columns) {
            CAPTURE(table);
            CAPTURE(column);
            CHECK_NOTHROW(SetOne(db, table, column, "1"));  // the row exists; a number is taken
            CHECK_THROWS(SetOne(db, table, column, "'NaN'"));
            if (table != "prices") {  // numeric(18, 6) cannot hold an infinity in any case
                CHECK_THROWS(SetOne(db, table, column, "'Infinity'"));
                CHECK_THROWS(SetOne(db, table, column, "'-Infinity'"));
            }
        }
    }

    TEST_CASE("a charge is finite, within the stated bounds and of a real month") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        CHECK_NOTHROW(InsertCharge(db, "1.0, -1e9, 1e9, 0.0, '2026-01'"));
        // A correction takes hours back as it takes costs back (migration 012).
        CHECK_NOTHROW(InsertCharge(db, "-80.0, -550.4, -550.4, -550.4, '2026-11'"));
        for (const char* values :
             {"'NaN'::float8, 1.0, 1.0, 1.0, '2026-01'",
              "'Infinity'::float8, 1.0, 1.0, 1.0, "
              "'2026-01'",
              "-2e9, 1.0, 1.0, 1.0, '2026-01'", "1.0, 'NaN'::float8, 1.0, 1.0, '2026-01'",
              "1.0, -1e12, 1.0, 1.0, '2026-01'", "1.0, 1.0, 'Infinity'::float8, 1.0, '2026-01'",
              "1.0, 1.0, 1.0, 8e300, '2026-01'", "1.0, 1.0, 1.0, 1.0, '9999-99'",
              "1.0, 1.0, 1.0, 1.0, '0001-01'", "1.0, 1.0, 1.0, 1.0, '2026-13'",
              "1.0, 1.0, 1.0, 1.0, '2026-00'"}) {
            CAPTURE(values);
            CHECK_THROWS(InsertCharge(db, values));
        }
    }

    TEST_CASE("a NaN price or charge stored before 009 is removed and the price it closed served") {
        TestDatabase db;
        auto conn = db.Connect();
        {
            pqxx::work tx(*conn);
            for (const storage::Migration& m : storage::KnownMigrations()) {
                if (m.version < 9) tx.exec(std::string(m.sql));
            }
            tx.exec(
                "INSERT INTO accelerators (id, name, vendor, launch_year, memory_gb, "
                "memory_gb_per_s, spec_source) VALUES ('h100', 'H100', 'nvidia', 2022, 80, 3350, "
                "'spec');"
                "INSERT INTO sources (id, name) VALUES (1, 'file');"
                "INSERT INTO offerings (id, provider, instance_type, accelerator_id, "
                "accelerator_count, region, price_type) VALUES ('o1', 'aws', 'p5', 'h100', 8, "
                "'r', 'on_demand'), ('o2', 'aws', 'p5b', 'h100', 8, 'r', 'on_demand');"
                "INSERT INTO prices (id, offering_id, usd_per_hour, as_of, source_id, valid_from, "
                "valid_to) VALUES "
                "(1, 'o1', 55.04, '2026-01-01', 1, '2026-01-01', '2026-02-01'),"
                "(2, 'o1', 'NaN', '2026-02-01', 1, '2026-02-01', NULL),"
                "(3, 'o2', 40, '2026-01-01', 1, '2026-01-01', NULL),"
                "(4, 'o2', 'NaN', '2025-12-01', 1, '2025-12-01', '2026-01-01');");
            tx.commit();
        }
        CHECK_NOTHROW(InsertCharge(db, "1.0, 1.0, 1.0, 1.0, '2026-01'"));
        CHECK_NOTHROW(InsertCharge(db, "'NaN'::float8, 1.0, 1.0, 1.0, '2026-01'"));
        CHECK_NOTHROW(InsertCharge(db, "1.0, 8e300, 1.0, 1.0, '2026-01'"));
        CHECK_NOTHROW(InsertCharge(db, "1.0, 1.0, 1.0, 1.0, '9999-99'"));
        const std::string revision = db.Scalar("SELECT revision FROM catalog_state");
        {
            pqxx::work tx(*conn);
            for (const storage::Migration& m : storage::KnownMigrations()) {
                if (m.version == 9) tx.exec(std::string(m.sql));
            }
            tx.commit();
        }
        CHECK(db.Scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM prices") == "1,3");
        // o1's NaN was current: the price it closed is served again; o2 keeps its own.
        CHECK(db.Scalar("SELECT valid_to IS NULL FROM prices WHERE id = 1") == "t");
        CHECK(db.Scalar("SELECT valid_to IS NULL FROM prices WHERE id = 3") == "t");
        CHECK(db.Scalar("SELECT string_agg(id || ':' || version, ',' ORDER BY id) FROM "
                        "offerings") == "o1:2,o2:2");
        CHECK(db.Scalar("SELECT revision FROM catalog_state") ==
              std::to_string(std::stoll(revision) + 1));
        CHECK(db.Scalar("SELECT count(*) FROM actual_charges") == "1");
        CHECK(db.Scalar("SELECT count(*) FROM prices WHERE usd_per_hour = 'NaN'") == "0");
    }
}
