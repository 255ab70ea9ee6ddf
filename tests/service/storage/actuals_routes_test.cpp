#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/money.hpp"
#include "service/storage/actuals_store.hpp"
#include "tests/service/storage/focus_export.hpp"
#include "tests/service/storage/pg_fixture.hpp"
#include "tests/support/http_checks.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::Fixture;
using gpucost::testing::kFocusHeader;
using gpucost::testing::P5Row;
namespace http = gpucost::http;
namespace pricing = gpucost::pricing;
namespace storage = gpucost::storage;

namespace {

// A serving plan whose budget view covers January to March 2026.
const json kServingScenario = {{"name", "llama serving"},
                               {"plan", "inference"},
                               {"request",
                                {{"model", "llama-2-7b"},
                                 {"input_tokens", 512},
                                 {"output_tokens", 256},
                                 {"traffic", {{"requests_per_second", 1}}},
                                 {"start_date", "2026-01-01"},
                                 {"budget_months", 3}}}};

}  // namespace

TEST_SUITE("actuals_routes") {
    TEST_CASE("an export is stored once and set against the scenario's planned months") {
        Fixture f;
        auto c = f.server->Client();
        const json scenario = f.SaveScenario(kServingScenario, f.reader);
        const std::string id = scenario["id"];
        const json monthly = scenario["saved_result"]["budget"]["monthly"];
        REQUIRE(monthly.size() == 3);
        CHECK(monthly[0]["month"] == "2026-01");

        const std::string focus =
            std::string(kFocusHeader) + P5Row("100", 80, 10, id) + P5Row("50", 40, 5, id) +
            P5Row("70", 60, 7, "another") +
            "5,5,5,,,Tax,,2026-01-31T00:00:00Z,USD,AWS,us-east-1,,,sales tax,\n"
            "2,2,2,1,Hours,Usage,,2026-01-05T00:00:00Z,USD,AWS,us-east-1,Standard,"
            "USE1-BoxUsage:m5.large,m5 usage,\n";
        auto imported = c.Post("/v1/actuals", f.Auth(f.admin), focus, "text/csv");
        REQUIRE(imported);
        REQUIRE(imported->status == 201);
        json report = Body(imported);
        CHECK(report["rows_read"] == 5);
        CHECK(report["kept"] == 3);
        CHECK(report["added"] == 3);
        CHECK(report["already_imported"] == 0);
        CHECK(report["skipped"]["tax"] == 1);
        CHECK(report["skipped"]["non_accelerator"] == 1);

        // The same export again adds nothing.
        report = Body(c.Post("/v1/actuals", f.Auth(f.admin), focus, "text/csv"));
        CHECK(report["added"] == 0);
        CHECK(report["already_imported"] == 3);

        auto compared = c.Get("/v1/scenarios/" + id + "/actuals", f.Auth(f.reader));
        REQUIRE(compared);
        REQUIRE(compared->status == 200);
        const json r = Body(compared);
        CHECK(r["scenario_id"] == id);
        CHECK(r["has_budget"] == true);
        REQUIRE(r["months"].size() == 3);
        const double planned_jan = monthly[0]["usd"].get<double>();
        CHECK(r["months"][0]["planned_usd"].get<double>() == doctest::Approx(planned_jan));
        CHECK(r["months"][0]["actual"]["rows"] == 2);
        CHECK(r["months"][0]["actual"]["effective_cost_usd"].get<double>() == doctest::Approx(120));
        CHECK(r["months"][0]["actual"]["billed_cost_usd"].get<double>() == doctest::Approx(150));
        CHECK(r["months"][0]["actual"]["accelerator_hours"].get<double>() ==
              doctest::Approx(15 * 8));
        CHECK(r["months"][0]["gap_usd"].get<double>() == doctest::Approx(120 - planned_jan));
        CHECK(r["months_without_actuals"] == json::array({"2026-02", "2026-03"}));
        double planned_total = 0;
        for (const json& m : monthly) planned_total += m["usd"].get<double>();
        CHECK(r["planned_usd"].get<double>() == doctest::Approx(planned_total));
        CHECK(r["gap_usd"].get<double>() == doctest::Approx(120 - planned_total));
        // To date: January alone is billed, so February and March are not under-spend.
        const json& to_date = r["to_date"];
        REQUIRE(to_date.is_object());
        CHECK(to_date["through_month"] == "2026-01");
        CHECK(to_date["months"] == 1);
        CHECK(to_date["planned_usd"].get<double>() == doctest::Approx(planned_jan));
        CHECK(to_date["actual_effective_cost_usd"].get<double>() == doctest::Approx(120));
        CHECK(to_date["gap_usd"].get<double>() == doctest::Approx(120 - planned_jan));
        CHECK(to_date["gap_fraction"].get<double>() ==
              doctest::Approx((120 - planned_jan) / planned_jan));
        // Before any charge there is nothing to date.
        const json other = f.SaveScenario(kServingScenario, f.reader);
        const json none = Body(c.Get("/v1/scenarios/" + other["id"].get<std::string>() + "/actuals",
                                     f.Auth(f.reader)));
        CHECK(none["to_date"].is_null());
    }

    // Money as answers state it (docs/api.md "Money"): the rows are added exactly and the sums
    // stated to the cent, not as a sum of doubles (0.1 + 0.2 + 0.004 = 0.30400000000000005).
    TEST_CASE("actual spend is added exactly and answered to the cent") {
        Fixture f;
        auto c = f.server->Client();
        const json scenario = f.SaveScenario(kServingScenario, f.reader);
        const std::string id = scenario["id"];
        const std::string focus = std::string(kFocusHeader) + P5Row("0.1", 0.1, 1, id) +
                                  P5Row("0.2", 0.2, 1, id) + P5Row("0.004", 0.004, 1, id);
        auto imported = c.Post("/v1/actuals", f.Auth(f.admin), focus, "text/csv");
        REQUIRE(imported);
        REQUIRE(imported->status == 201);
        const json r = Body(c.Get("/v1/scenarios/" + id + "/actuals", f.Auth(f.reader)));
        const json& actual = r["months"][0]["actual"];
        CHECK(actual["rows"] == 3);
        CHECK(actual["effective_cost_usd"].get<double>() == 0.3);
        CHECK(actual["billed_cost_usd"].get<double>() == 0.3);
        CHECK(actual["list_cost_usd"].get<double>() == 0.38);  // 1.25 x 0.304 = 0.38
        CHECK(r["actual"]["effective_cost_usd"].get<double>() == 0.3);
        const double planned = r["months"][0]["planned_usd"].get<double>();
        CHECK(r["months"][0]["gap_usd"].get<double>() ==
              pricing::FromCents(pricing::ToCents(0.3) - pricing::ToCents(planned)));
    }

    TEST_CASE("a row that does not read names its line and column; nothing is stored") {
        Fixture f;
        auto c = f.server->Client();
        const std::string focus =
            std::string(kFocusHeader) + P5Row("100", 80, 10, "1") + P5Row("1O0", 80, 10, "1");
        auto r = c.Post("/v1/actuals", f.Auth(f.admin), focus, "text/csv");
        CheckProblem(r, 422, "invalid_argument", "line 3");
        CHECK(Body(r)["detail"].get<std::string>().find("BilledCost '1O0'") != std::string::npos);
        // The good row of that body was not stored either: it is new on the next import.
        json report =
            Body(c.Post("/v1/actuals", f.Auth(f.admin),
                        std::string(kFocusHeader) + P5Row("100", 80, 10, "1"), "text/csv"));
        CHECK(report["added"] == 1);

        CheckProblem(c.Post("/v1/actuals", f.Auth(f.admin), "BilledCost,Tags\n1,\n", "text/csv"),
                     422, "invalid_argument", "line 1");
        CheckProblem(c.Post("/v1/actuals", f.Auth(f.admin), "", "text/csv"), 422,
                     "invalid_argument", "line 1");
    }

    TEST_CASE("keys, media type and unknown scenarios") {
        Fixture f;
        auto c = f.server->Client();
        const std::string focus = std::string(kFocusHeader) + P5Row("100", 80, 10, "1");
        CheckProblem(c.Post("/v1/actuals", f.Auth(f.reader), focus, "text/csv"), 403, "forbidden");
        CheckProblem(c.Post("/v1/actuals", focus, "text/csv"), 401, "unauthenticated");
        auto json_body = c.Post("/v1/actuals", f.Auth(f.admin), "{}", "application/json");
        REQUIRE(json_body);
        CHECK(json_body->status == 415);
        CheckProblem(c.Get("/v1/scenarios/1/actuals"), 401, "unauthenticated");
        CheckProblem(c.Get("/v1/scenarios/999/actuals", f.Auth(f.reader)), 404, "not_found");
        CheckProblem(c.Get("/v1/scenarios/x/actuals", f.Auth(f.reader)), 404, "not_found", "id");
        CheckProblem(c.Get("/v1/scenarios/1/actuals?month=2026-01", f.Auth(f.reader)), 400,
                     "malformed_request", "month");
    }

    TEST_CASE("another tag key attributes the export's charges; it is validated and echoed") {
        Fixture f;
        auto c = f.server->Client();
        const std::string id = f.SaveScenario(kServingScenario, f.reader)["id"];
        const std::string focus = std::string(kFocusHeader) +
                                  P5Row("100", 80, 10, id, "2026-01-05", "team-scenario") +
                                  P5Row("70", 60, 7, id);  // the default key: not attributed
        auto imported =
            c.Post("/v1/actuals?tag_key=team-scenario", f.Auth(f.admin), focus, "text/csv");
        REQUIRE(imported);
        REQUIRE(imported->status == 201);
        CHECK(Body(imported)["tag_key"] == "team-scenario");
        CHECK(Body(imported)["added"] == 2);
        CHECK(f.db.Scalar("SELECT tag_key FROM actuals_imports") == "team-scenario");

        const std::string path = "/v1/scenarios/" + id + "/actuals";
        const json by_team =
            Body(c.Get((path + "?tag_key=team-scenario").c_str(), f.Auth(f.reader)));
        CHECK(by_team["tag_key"] == "team-scenario");
        CHECK(by_team["actual"]["rows"] == 1);
        CHECK(by_team["actual"]["effective_cost_usd"].get<double>() == doctest::Approx(80));
        // Charges read under another tag key are not this key's.
        const json by_default = Body(c.Get(path.c_str(), f.Auth(f.reader)));
        CHECK(by_default["tag_key"] == "gpucost-scenario");
        CHECK(by_default["actual"]["rows"] == 0);

        for (const std::string& bad :
             std::vector<std::string>{"", std::string(129, 'k'), "a%01b", "%FF", "a%7Fb"}) {
            INFO(bad);
            CheckProblem(
                c.Post(("/v1/actuals?tag_key=" + bad).c_str(), f.Auth(f.admin), focus, "text/csv"),
                422, "invalid_argument", "tag_key");
            CheckProblem(c.Get((path + "?tag_key=" + bad).c_str(), f.Auth(f.reader)), 422,
                         "invalid_argument", "tag_key");
        }
        CheckProblem(c.Post("/v1/actuals?tag_key=a&tag_key=b", f.Auth(f.admin), focus, "text/csv"),
                     400, "malformed_request", "tag_key");
        const json accented = Body(
            c.Post("/v1/actuals?tag_key=%C3%A9quipe%3Aprojet", f.Auth(f.admin), focus, "text/csv"));
        CHECK(accented["tag_key"] == "\u00e9quipe:projet");
    }

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
        http::ActualsImport stored;
        auto keep = [&stored](const http::ActualsImport& i) {
            stored = i;
            return http::StoredResponse{};
        };
        auto imported = store.Import(http::WriteRequest{}, "gpucost-scenario",
                                     pricing::ActualsReport{}, charges, keep);
        REQUIRE_FALSE(imported.ok());
        CHECK(f.db.Scalar("SELECT count(*) FROM actual_charges") == "0");
        CHECK(f.db.Scalar("SELECT count(*) FROM actuals_imports") == "0");
        // The store works on after the refusal.
        charges[11000].month = "2026-01";
        imported = store.Import(http::WriteRequest{}, "gpucost-scenario", pricing::ActualsReport{},
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
