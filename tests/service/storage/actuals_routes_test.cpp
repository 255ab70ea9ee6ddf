#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/money.hpp"
#include "service/storage/pg_actuals_store.hpp"
#include "tests/service/storage/pg_fixture.hpp"
#include "tests/support/focus_export.hpp"
#include "tests/support/http_checks.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::Fixture;
using gpucost::testing::kFocusHeader;
using gpucost::testing::P5Row;
namespace ports = gpucost::ports;
namespace pricing = gpucost::pricing;
namespace storage = gpucost::storage;

TEST_SUITE("actuals_routes") {
    TEST_CASE("a large export is stored in batches, its counts exact on every import") {
        Fixture f;
        auto c = f.server->Client();
        c.set_read_timeout(120, 0);  // counts, not speed, are checked (tests/bench/ for that)
        // 25,000 distinct charges (two and a half of the store's batches), 3 identical ones
        // (told apart by their order) and a row that is not kept.
        std::string rows;
        for (int i = 0; i < 25000; ++i) rows += P5Row(std::to_string(i + 1), 1, 1, "big");
        for (int i = 0; i < 3; ++i) rows += P5Row("7", 7, 2, "big");
        rows += "5,5,5,,,Tax,,2026-01-31T00:00:00Z,USD,AWS,us-east-1,,,sales tax,\n";
        json report = Body(c.Post("/v1/actuals", f.Auth(f.admin), kFocusHeader + rows, "text/csv"));
        CHECK(report["rows_read"] == 25004);
        CHECK(report["kept"] == 25003);
        CHECK(report["added"] == 25003);
        CHECK(report["already_imported"] == 0);
        CHECK(f.db.Scalar("SELECT count(*) FROM actual_charges") == "25003");

        // Again, with 5,000 new charges ahead of the old ones: every batch mixes both.
        std::string fresh;
        for (int i = 0; i < 5000; ++i) fresh += P5Row(std::to_string(i + 1), 2, 1, "big");
        report =
            Body(c.Post("/v1/actuals", f.Auth(f.admin), kFocusHeader + fresh + rows, "text/csv"));
        CHECK(report["kept"] == 30003);
        CHECK(report["added"] == 5000);
        CHECK(report["already_imported"] == 25003);
        CHECK(f.db.Scalar("SELECT count(*) FROM actual_charges") == "30003");
        // 25,000 + 3 x 2 instance-hours of 8 accelerators, then 5,000 more.
        CHECK(f.db.Scalar("SELECT sum(accelerator_hours) FROM actual_charges") ==
              std::to_string((25000 + 3 * 2 + 5000) * 8));
        CHECK(f.db.Scalar("SELECT string_agg(added::text, ',' ORDER BY id) FROM actuals_imports") ==
              "25003,5000");
    }

    TEST_CASE("an import the database refuses part way stores nothing, not even its record") {
        Fixture f;
        storage::PgActualsStore store(f.db.url());
        std::vector<pricing::ActualCharge> charges(12000);
        for (std::size_t i = 0; i < charges.size(); ++i) {
            pricing::ActualCharge& c = charges[i];
            c.row_id = "row-" + std::to_string(i);
            c.provider = "aws";
            c.month = "2026-01";
            c.charge_period_start = "2026-01-05T00:00:00Z";
            c.billing_currency = "USD";
            c.sku = "p5.48xlarge";
            c.accelerator = "h100-sxm";
            c.region = "us-east-1";
            c.pricing_category = "Standard";
            c.accelerator_hours = 8;
        }
        charges[11000].month = "January";  // the table's CHECK refuses it, in the second batch
        ports::ActualsImport stored;
        auto keep = [&stored](const ports::ActualsImport& i) {
            stored = i;
            return ports::StoredResponse{};
        };
        auto imported = store.Import(ports::WriteRequest{}, "gpucost-scenario",
                                     pricing::ActualsReport{}, charges, keep);
        REQUIRE_FALSE(imported.ok());
        CHECK(f.db.Scalar("SELECT count(*) FROM actual_charges") == "0");
        CHECK(f.db.Scalar("SELECT count(*) FROM actuals_imports") == "0");
        // The store works on after the refusal.
        charges[11000].month = "2026-01";
        imported = store.Import(ports::WriteRequest{}, "gpucost-scenario", pricing::ActualsReport{},
                                charges, keep);
        REQUIRE(imported.ok());
        CHECK(stored.added == 12000);
    }

    TEST_CASE("an export larger than --max-body-bytes is taken up to its own limit") {
        Fixture f;
        auto c = f.server->Client();
        std::string focus = kFocusHeader;
        int rows = 0;
        while (focus.size() <= 4 * 65536) {  // four times the default --max-body-bytes
            focus += P5Row("1", 1, 1, "s", "2026-01-" + std::to_string(10 + rows % 18));
            ++rows;
        }
        auto imported = c.Post("/v1/actuals", f.Auth(f.admin), focus, "text/csv");
        REQUIRE(imported);
        REQUIRE(imported->status == 201);
        CHECK(Body(imported)["rows_read"] == rows);
        CHECK(Body(imported)["kept"] == rows);
        // Other routes keep --max-body-bytes.
        auto plan = c.Post("/v1/plans/spot", std::string(70000, ' ') + "{}", "application/json");
        REQUIRE(plan);
        CHECK(plan->status == 413);
    }
}
