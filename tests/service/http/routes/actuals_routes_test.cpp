#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/money.hpp"
#include "tests/service/http/routes/memory_fixture.hpp"
#include "tests/support/focus_export.hpp"
#include "tests/support/http_checks.hpp"
#include "tests/support/route_requests.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::kFocusHeader;
using gpucost::testing::kServingScenario;
using gpucost::testing::MemoryFixture;
using gpucost::testing::P5Row;
namespace http = gpucost::http;
namespace pricing = gpucost::pricing;

TEST_SUITE("actuals_routes") {
    TEST_CASE("an export is stored once and set against the scenario's planned months") {
        MemoryFixture f;
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
        MemoryFixture f;
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
        MemoryFixture f;
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
        MemoryFixture f;
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
        MemoryFixture f;
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
        CHECK(f.stores.actuals->ListImports("", 1, 0).value().first.at(0).tag_key ==
              "team-scenario");

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

    TEST_CASE(
        "group_by answers a showback by any tag key; corrections, unused commitment hours and "
        "marketplace fees are reported") {
        MemoryFixture f;
        auto c = f.server->Client();
        std::ifstream in(
            std::string(GPUCOST_SOURCE_DIR) + "/tests/data/focus/aws-focus-user-tags.csv",
            std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        auto imported =
            c.Post("/v1/actuals?group_by=team", f.Auth(f.admin), text.str(), "text/csv");
        REQUIRE(imported);
        REQUIRE(imported->status == 201);
        const json report = Body(imported);
        CHECK(report["kept"] == 3);
        CHECK(report["corrections"] == 1);
        CHECK(report["skipped"]["marketplace"] == 1);
        REQUIRE(report["unused_commitment"].size() == 1);
        CHECK(report["unused_commitment"][0]["accelerator_hours"].get<double>() ==
              doctest::Approx(160));
        CHECK(report["unused_commitment"][0]["tag_value"].is_null());
        CHECK(report["showback"]["tag_key"] == "team");
        const json groups = report["showback"]["groups"];
        REQUIRE(groups.size() == 2);
        CHECK(groups[0]["value"].is_null());  // the untagged remainder: the correction
        CHECK(groups[0]["accelerator_hours"].get<double>() == doctest::Approx(-80));
        CHECK(groups[1]["value"] == "research");
        CHECK(groups[1]["effective_cost"].get<double>() == doctest::Approx(5504 + 1650));
        CHECK(Body(c.Post("/v1/actuals", f.Auth(f.admin), text.str(), "text/csv"))["showback"]
                  .is_null());
        CheckProblem(c.Post("/v1/actuals?group_by=", f.Auth(f.admin), text.str(), "text/csv"), 422,
                     "invalid_argument", "group_by");
    }
}
