// Plan vs actual split into price and quantity, and a training scenario's progress
// (docs/billing.md): the saved plan's accelerator charges against imported FOCUS rows,
// with every expected figure worked out here from the saved answer and the rows sent.
#include <doctest/doctest.h>

#include <cmath>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/service/http/routes/memory_fixture.hpp"
#include "tests/support/focus_export.hpp"
#include "tests/support/http_checks.hpp"
#include "tests/support/route_requests.hpp"
#include "tests/support/sample_deps.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::kFocusHeader;
using gpucost::testing::kTrainingScenario;
using gpucost::testing::MemoryFixture;
using gpucost::testing::P5Row;

namespace {

// The training scenario with one p5 instance owned for its first day at 30 USD an hour.
json ReservedP5Scenario() {
    json body = kTrainingScenario;
    body["request"]["price_book"] = {{"name", "reserved p5"},
                                     {"owned_capacity",
                                      {{{"offering_id", "aws-p5.48xlarge-us-east-1-on-demand"},
                                        {"nodes", 1},
                                        {"start_date", "2025-12-01"},
                                        {"end_date", "2026-01-02"},
                                        {"usd_per_hour", 30}}}}};
    return body;
}

}  // namespace

TEST_SUITE("scenario_progress") {
    TEST_CASE("the gap is split into price and quantity and progress gives the implied speed") {
        MemoryFixture f;
        auto c = f.server->Client();
        const json scenario = f.SaveScenario(kTrainingScenario, f.reader);
        const std::string id = scenario["id"];
        const json rec = scenario["saved_result"]["recommendation"];
        REQUIRE(rec["offering"]["id"] == "aws-p5.48xlarge-us-east-1-on-demand");
        const double wall_hours = rec["expected_wall_clock_hours"].get<double>();
        REQUIRE(wall_hours < 31 * 24);  // the run ends in January
        // Planned, by hand: the expected hours on every accelerator at the plan's cost.
        const double planned_hours = wall_hours * rec["total_accelerators"].get<double>();
        const double planned_usd = rec["expected_cost_usd"].get<double>();
        const double planned_price = planned_usd / planned_hours;

        // Actual: 2 x 10 instance-hours x 8 H100 = 160 accelerator-hours for 200 USD
        // (1.25 USD per accelerator-hour), 100 in January and 100 in February.
        const std::string focus = std::string(kFocusHeader) + P5Row(100, 10, id, "2026-01-03") +
                                  P5Row(100, 10, id, "2026-02-02");
        auto imported = c.Post("/v1/actuals", f.Auth(f.admin), focus, "text/csv");
        REQUIRE(imported);
        REQUIRE(imported->status == 201);

        json r = Body(c.Get("/v1/scenarios/" + id + "/actuals", f.Auth(f.reader)));
        CHECK(r["planned"]["accelerator_hours"].get<double>() == doctest::Approx(planned_hours));
        CHECK(r["planned"]["effective_cost_usd"].get<double>() == doctest::Approx(planned_usd));
        CHECK(r["planned"]["effective_usd_per_accelerator_hour"].get<double>() ==
              doctest::Approx(planned_price));
        CHECK(r["actual"]["accelerator_hours"].get<double>() == doctest::Approx(160));
        CHECK(r["actual"]["effective_usd_per_accelerator_hour"].get<double>() ==
              doctest::Approx(1.25));
        const json split = r["accelerator_split"];
        const double price_effect = (1.25 - planned_price) * planned_hours;
        const double quantity_effect = (160 - planned_hours) * 1.25;
        CHECK(split["gap_usd"].get<double>() == doctest::Approx(200 - planned_usd));
        CHECK(split["price_effect_usd"].get<double>() == doctest::Approx(price_effect));
        // Stated to the cent, the quantity effect as the rest of the gap (docs/api.md "Money").
        CHECK(std::fabs(split["quantity_effect_usd"].get<double>() - quantity_effect) <= 0.01);
        CHECK(split["price_effect_usd"].get<double>() +
                  split["quantity_effect_usd"].get<double>() ==
              doctest::Approx(split["gap_usd"].get<double>()));
        CHECK(split["explanation"].get<std::string>().find("accelerator-hours") !=
              std::string::npos);

        // January: the whole plan against 100 USD on 80 accelerator-hours; February: no plan,
        // so its gap is all quantity.
        REQUIRE(r["months"].size() == 2);
        const json jan = r["months"][0];
        CHECK(jan["month"] == "2026-01");
        CHECK(jan["planned"]["accelerator_hours"].get<double>() == doctest::Approx(planned_hours));
        CHECK(jan["accelerator_split"]["price_effect_usd"].get<double>() ==
              doctest::Approx((1.25 - planned_price) * planned_hours));
        CHECK(std::fabs(jan["accelerator_split"]["quantity_effect_usd"].get<double>() -
                        (80 - planned_hours) * 1.25) <= 0.01);
        const json feb = r["months"][1];
        CHECK(feb["month"] == "2026-02");
        CHECK(feb["planned"]["accelerator_hours"].get<double>() == 0);
        CHECK(feb["accelerator_split"]["price_effect_usd"].get<double>() == 0);
        CHECK(feb["accelerator_split"]["quantity_effect_usd"].get<double>() ==
              doctest::Approx(100));
        CHECK(r["progress"].is_null());

        // Progress: 2 of the 10 billion tokens done. The estimate gives them a fifth of the
        // planned hours; the bill shows 160.
        auto put =
            c.Put("/v1/scenarios/" + id + "/progress", f.Auth(f.reader),
                  R"({"tokens_done_b": 2, "as_of": "2026-02-03T00:00:00Z"})", "application/json");
        REQUIRE(put);
        CHECK(put->status == 200);
        CHECK(Body(put)["as_of"] == "2026-02-03T00:00:00.000000Z");
        r = Body(c.Get("/v1/scenarios/" + id + "/actuals", f.Auth(f.reader)));
        const json progress = r["progress"];
        CHECK(progress["tokens_done_b"] == 2);
        CHECK(progress["tokens_planned_b"] == 10);
        CHECK(progress["actual_accelerator_hours"].get<double>() == doctest::Approx(160));
        CHECK(progress["estimated_accelerator_hours"].get<double>() ==
              doctest::Approx(planned_hours * 0.2));
        CHECK(progress["actual_to_estimated_hours_ratio"].get<double>() ==
              doctest::Approx(160 / (planned_hours * 0.2)));
    }

    TEST_CASE("owned hours the plan used count at the commitment's rate on the planned side") {
        MemoryFixture f;
        auto c = f.server->Client();
        const json scenario = f.SaveScenario(ReservedP5Scenario(), f.reader);
        const std::string id = scenario["id"];
        const json rec = scenario["saved_result"]["recommendation"];
        REQUIRE(rec["offering"]["id"] == "aws-p5.48xlarge-us-east-1-on-demand");
        REQUIRE(rec["owned"].is_object());
        const double nodes = rec["nodes"].get<double>();
        const double run_instance_hours = rec["expected_wall_clock_hours"].get<double>() * nodes;
        const double owned_hours = rec["owned"]["instance_hours"].get<double>();
        const double sunk_usd = rec["owned"]["sunk_usd"].get<double>();
        const double marginal_usd = rec["expected_cost_usd"].get<double>();
        REQUIRE(owned_hours == doctest::Approx(24));  // one instance, 2026-01-01 only
        REQUIRE(sunk_usd == doctest::Approx(720));
        REQUIRE(marginal_usd > 0);
        CHECK(scenario["saved_result"]["budget"]["total_usd"].get<double>() ==
              doctest::Approx(marginal_usd));

        // The bill as planned: the owned day at the commitment's amortised rate (billed 0, as
        // covered usage is), the other hours at the plan's marginal cost, all in January.
        const std::string focus =
            std::string(kFocusHeader) + P5Row("0", sunk_usd, owned_hours, id, "2026-01-01") +
            P5Row(marginal_usd, run_instance_hours - owned_hours, id, "2026-01-02");
        auto imported = c.Post("/v1/actuals", f.Auth(f.admin), focus, "text/csv");
        REQUIRE(imported);
        REQUIRE(imported->status == 201);

        // Planned fully loaded, as the bill's EffectiveCost is: no gap, no price effect.
        json r = Body(c.Get("/v1/scenarios/" + id + "/actuals", f.Auth(f.reader)));
        const double fully_loaded_usd = marginal_usd + sunk_usd;
        CHECK(r["planned_usd"].get<double>() == doctest::Approx(fully_loaded_usd));
        CHECK(r["gap_usd"].get<double>() == doctest::Approx(0).epsilon(0.01).scale(1));
        CHECK(r["planned"]["effective_cost_usd"].get<double>() ==
              doctest::Approx(fully_loaded_usd));
        CHECK(r["planned"]["accelerator_hours"].get<double>() ==
              doctest::Approx(run_instance_hours * 8));
        CHECK(r["accelerator_split"]["price_effect_usd"].get<double>() ==
              doctest::Approx(0).epsilon(0.01).scale(1));
        CHECK(r["accelerator_split"]["quantity_effect_usd"].get<double>() ==
              doctest::Approx(0).epsilon(0.01).scale(1));
    }

    TEST_CASE("owned hours billed on demand are a commitment-coverage price effect") {
        MemoryFixture f;
        auto c = f.server->Client();
        const json scenario = f.SaveScenario(ReservedP5Scenario(), f.reader);
        const std::string id = scenario["id"];
        const json rec = scenario["saved_result"]["recommendation"];
        REQUIRE(rec["owned"]["instance_hours"].get<double>() == doctest::Approx(24));
        const double run_instance_hours =
            rec["expected_wall_clock_hours"].get<double>() * rec["nodes"].get<double>();
        const double usd_per_hour = rec["offering"]["usd_per_hour"].get<double>();
        // The bill: every hour on demand, the reservation not applied (another plan held it).
        const std::string focus =
            std::string(kFocusHeader) +
            P5Row(run_instance_hours * usd_per_hour, run_instance_hours, id, "2026-01-01");
        REQUIRE(c.Post("/v1/actuals", f.Auth(f.admin), focus, "text/csv")->status == 201);
        const json split =
            Body(c.Get("/v1/scenarios/" + id + "/actuals", f.Auth(f.reader)))["accelerator_split"];
        // By hand: the 24 owned hours planned at 30 were billed at the on-demand price, the
        // rest as planned: all of the price effect is coverage, none rate or mix.
        const double price_effect = split["price_effect_usd"].get<double>();
        CHECK(price_effect == doctest::Approx(24 * (usd_per_hour - 30)).epsilon(1e-4));
        const json parts = split["price_effect_split"];
        CHECK(parts["commitment_coverage_usd"].get<double>() ==
              doctest::Approx(price_effect).epsilon(1e-4));
        CHECK(std::fabs(parts["rate_usd"].get<double>()) < 0.05);
        CHECK(std::fabs(parts["mix_usd"].get<double>()) < 0.05);
        CHECK(parts["rate_usd"].get<double>() + parts["commitment_coverage_usd"].get<double>() +
                  parts["mix_usd"].get<double>() ==
              doctest::Approx(price_effect));
    }

    TEST_CASE("the headline is over the months billed, the whole plan beside it, re-forecast") {
        MemoryFixture f;
        auto c = f.server->Client();
        // Serving from January to March 2026; only January is billed.
        const json scenario = f.SaveScenario(gpucost::testing::kServingScenario, f.reader);
        const std::string id = scenario["id"];
        const std::string focus = std::string(kFocusHeader) + P5Row(5000, 100, id, "2026-01-05");
        REQUIRE(c.Post("/v1/actuals", f.Auth(f.admin), focus, "text/csv")->status == 201);
        const json r = Body(c.Get("/v1/scenarios/" + id + "/actuals", f.Auth(f.reader)));
        REQUIRE(r["months"].size() == 3);
        const json january = r["months"][0];
        REQUIRE(january["month"] == "2026-01");
        const double planned_january = january["planned"]["effective_cost_usd"].get<double>();
        const double planned_rest = r["months"][1]["planned"]["effective_cost_usd"].get<double>() +
                                    r["months"][2]["planned"]["effective_cost_usd"].get<double>();
        REQUIRE(planned_january > 0);
        // The headline is January's gap, not the whole plan's against January's bill.
        CHECK(r["accelerator_split"]["gap_usd"].get<double>() ==
              doctest::Approx(5000 - planned_january).epsilon(1e-6));
        CHECK(r["accelerator_split"]["explanation"].get<std::string>().find("through 2026-01") !=
              std::string::npos);
        CHECK(r["accelerator_split_full_plan"]["gap_usd"].get<double>() ==
              doctest::Approx(5000 - planned_january - planned_rest).epsilon(1e-6));
        // The rest re-forecast at the rate billed so far.
        const json reforecast = r["reforecast"];
        CHECK(reforecast["through_month"] == "2026-01");
        CHECK(reforecast["run_rate"].get<double>() == doctest::Approx(5000 / planned_january));
        CHECK(reforecast["months"].size() == 2);
        CHECK(reforecast["reforecast_total_usd"].get<double>() ==
              doctest::Approx(5000 + planned_rest * 5000 / planned_january).epsilon(1e-6));
    }

    TEST_CASE("progress is checked, owned and for training scenarios only") {
        MemoryFixture f;
        auto c = f.server->Client();
        const std::string id = f.SaveScenario(kTrainingScenario, f.reader)["id"];
        const std::string path = "/v1/scenarios/" + id + "/progress";
        CheckProblem(
            c.Put(path, f.Auth(f.reader), R"({"as_of": "2026-02-03"})", "application/json"), 422,
            "invalid_argument", "/tokens_done_b");
        CheckProblem(c.Put(path, f.Auth(f.reader),
                           R"({"tokens_done_b": -1, "as_of": "2026-02-03"})", "application/json"),
                     422, "invalid_argument", "/tokens_done_b");
        CheckProblem(c.Put(path, f.Auth(f.reader), R"({"tokens_done_b": 1, "as_of": "soon"})",
                           "application/json"),
                     422, "invalid_argument", "/as_of");
        CheckProblem(
            c.Put(path, f.Auth(f.reader),
                  R"({"tokens_done_b": 1, "as_of": "2026-02-03", "eta": 1})", "application/json"),
            400, "malformed_request", "/eta");
        auto text = c.Put(path, f.Auth(f.reader), R"({"tokens_done_b": 1, "as_of": "2026-02-03"})",
                          "text/plain");
        REQUIRE(text);
        CHECK(text->status == 415);
        CheckProblem(c.Put("/v1/scenarios/999/progress", f.Auth(f.reader),
                           R"({"tokens_done_b": 1, "as_of": "2026-02-03"})", "application/json"),
                     404, "not_found", "id");
        // A scenario the admin key saved belongs to that key's name: the reader may not change it.
        const std::string admins = f.SaveScenario(kTrainingScenario, f.admin)["id"];
        auto unowned = c.Put("/v1/scenarios/" + admins + "/progress", f.Auth(f.reader),
                             R"({"tokens_done_b": 1, "as_of": "2026-02-03"})", "application/json");
        REQUIRE(unowned);
        CHECK(unowned->status == 403);
        auto by_admin = c.Put(path, f.Auth(f.admin),
                              R"({"tokens_done_b": 1, "as_of": "2026-02-03"})", "application/json");
        REQUIRE(by_admin);
        CHECK(by_admin->status == 200);

        const json serving = {{"name", "serving"},
                              {"plan", "inference"},
                              {"request",
                               {{"model", "llama-2-7b"},
                                {"input_tokens", 512},
                                {"output_tokens", 256},
                                {"traffic", {{"requests_per_second", 1}}}}}};
        const std::string serving_id = Body(
            c.Post("/v1/scenarios", f.Auth(f.reader), serving.dump(), "application/json"))["id"];
        CheckProblem(c.Put("/v1/scenarios/" + serving_id + "/progress", f.Auth(f.reader),
                           R"({"tokens_done_b": 1, "as_of": "2026-02-03"})", "application/json"),
                     422, "invalid_argument", "/tokens_done_b");
    }

    TEST_CASE("calibration applies the measured speed to a later plan's hours") {
        MemoryFixture f;
        auto c = f.server->Client();
        const json scenario = f.SaveScenario(kTrainingScenario, f.reader);
        const std::string id = scenario["id"];
        const json rec = scenario["saved_result"]["recommendation"];
        const double planned_hours = rec["expected_wall_clock_hours"].get<double>() *
                                     rec["total_accelerators"].get<double>();
        REQUIRE(c.Post("/v1/actuals", f.Auth(f.admin),
                       std::string(kFocusHeader) + P5Row(100, 10, id, "2026-01-03") +
                           P5Row(100, 10, id, "2026-02-02"),
                       "text/csv")
                    ->status == 201);
        const json request = kTrainingScenario["request"];
        json calibrated = request;
        calibrated["calibration"] = {{"scenario_ids", {id}}};

        // No progress yet: nothing to learn from, named.
        CheckProblem(
            c.Post("/v1/plans/training", f.Auth(f.reader), calibrated.dump(), "application/json"),
            422, "invalid_argument", "/calibration/scenario_ids/0");

        // Half the tokens done: the estimate gives them half the planned hours; 160 billed.
        REQUIRE(c.Put("/v1/scenarios/" + id + "/progress", f.Auth(f.reader),
                      R"({"tokens_done_b": 5, "as_of": "2026-02-03"})", "application/json")
                    ->status == 200);
        const double ratio = 160 / (planned_hours * 0.5);
        REQUIRE(ratio >= 0.25);
        REQUIRE(ratio <= 4);

        const json plain = Body(
            c.Post("/v1/plans/training", f.Auth(f.reader), request.dump(), "application/json"));
        auto answered =
            c.Post("/v1/plans/training", f.Auth(f.reader), calibrated.dump(), "application/json");
        REQUIRE(answered);
        REQUIRE(answered->status == 200);
        const json after = Body(answered);
        // The same option (offering, nodes) takes `ratio` times the hours.
        const json& before_rec = plain["recommendation"];
        bool compared = false;
        for (const json& o : after["options"]) {
            if (o["offering"]["id"] != before_rec["offering"]["id"] ||
                o["nodes"] != before_rec["nodes"]) {
                continue;
            }
            compared = true;
            CHECK(o["wall_clock_hours"].get<double>() ==
                  doctest::Approx(before_rec["wall_clock_hours"].get<double>() * ratio));
        }
        CHECK(compared);
        bool factor = false;
        bool each = false;
        for (const json& a : after["assumptions"]) {
            if (a["name"] == "calibration_hours_factor") {
                factor = true;
                CHECK(a["value"].get<double>() == doctest::Approx(ratio));
            }
            if (a["name"] == "calibration_ratio_scenario_" + id) {
                each = true;
                CHECK(a["value"].get<double>() == doctest::Approx(ratio));
            }
        }
        CHECK(factor);
        CHECK(each);
        // Not applied unless asked.
        for (const json& a : plain["assumptions"]) {
            CHECK(a["name"].get<std::string>().find("calibration") == std::string::npos);
        }

        // A ratio out of bounds is refused naming the scenario: a hundredth of the tokens done
        // makes the 160 hours billed far more than 4x the estimate for them.
        REQUIRE(c.Put("/v1/scenarios/" + id + "/progress", f.Auth(f.reader),
                      R"({"tokens_done_b": 0.01, "as_of": "2026-02-03"})", "application/json")
                    ->status == 200);
        auto refused =
            c.Post("/v1/plans/training", f.Auth(f.reader), calibrated.dump(), "application/json");
        CheckProblem(refused, 422, "invalid_argument", "/calibration/scenario_ids/0");
        CHECK(Body(refused)["detail"].get<std::string>().find("scenario " + id) !=
              std::string::npos);

        json unknown = request;
        unknown["calibration"] = {{"scenario_ids", {"999"}}};
        CheckProblem(
            c.Post("/v1/plans/training", f.Auth(f.reader), unknown.dump(), "application/json"), 422,
            "invalid_argument", "/calibration/scenario_ids/0");
        unknown["calibration"] = {{"scenario_ids", json::array()}};
        CheckProblem(
            c.Post("/v1/plans/training", f.Auth(f.reader), unknown.dump(), "application/json"), 422,
            "invalid_argument", "/calibration/scenario_ids");
        auto anonymous = c.Post("/v1/plans/training", calibrated.dump(), "application/json");
        REQUIRE(anonymous);
        CHECK(anonymous->status == 401);
    }

    TEST_CASE("calibration reads the charges under the tag key they were imported with") {
        MemoryFixture f;
        auto c = f.server->Client();
        const json scenario = f.SaveScenario(kTrainingScenario, f.reader);
        const std::string id = scenario["id"];
        const json rec = scenario["saved_result"]["recommendation"];
        const double planned_hours = rec["expected_wall_clock_hours"].get<double>() *
                                     rec["total_accelerators"].get<double>();
        // 20 instance-hours of 8 H100 tagged team: <id>, imported under that key.
        REQUIRE(c.Post("/v1/actuals?tag_key=team", f.Auth(f.admin),
                       std::string(kFocusHeader) + P5Row("100", 100, 20, id, "2026-01-03", "team"),
                       "text/csv")
                    ->status == 201);
        REQUIRE(c.Put("/v1/scenarios/" + id + "/progress", f.Auth(f.reader),
                      R"({"tokens_done_b": 5, "as_of": "2026-02-03"})", "application/json")
                    ->status == 200);
        const double ratio = 160 / (planned_hours * 0.5);
        REQUIRE(ratio >= 0.25);
        REQUIRE(ratio <= 4);
        json body = kTrainingScenario["request"];

        // Under the default key the scenario has no charges: nothing to measure.
        body["calibration"] = {{"scenario_ids", {id}}};
        CheckProblem(
            c.Post("/v1/plans/training", f.Auth(f.reader), body.dump(), "application/json"), 422,
            "invalid_argument", "/calibration/scenario_ids/0");

        body["calibration"] = {{"scenario_ids", {id}}, {"tag_key", "team"}};
        auto answered =
            c.Post("/v1/plans/training", f.Auth(f.reader), body.dump(), "application/json");
        REQUIRE(answered);
        REQUIRE(answered->status == 200);
        bool factor = false;
        bool each = false;
        const json answer = Body(answered);
        for (const json& a : answer["assumptions"]) {
            if (a["name"] == "calibration_hours_factor") {
                factor = true;
                CHECK(a["value"].get<double>() == doctest::Approx(ratio));
                CHECK(a["source"] ==
                      "request: calibration.scenario_ids " + id + ", calibration.tag_key team");
            }
            if (a["name"] == "calibration_ratio_scenario_" + id) {
                each = true;
                CHECK(a["value"].get<double>() == doctest::Approx(ratio));
                CHECK(a["source"] ==
                      "GET /v1/scenarios/" + id + "/actuals progress (tag_key team)");
            }
        }
        CHECK(factor);
        CHECK(each);

        for (const json& bad : {json(""), json(5), json(std::string(129, 'k')), json("a\tb")}) {
            body["calibration"] = {{"scenario_ids", {id}}, {"tag_key", bad}};
            CheckProblem(
                c.Post("/v1/plans/training", f.Auth(f.reader), body.dump(), "application/json"),
                422, "invalid_argument", "/calibration/tag_key");
        }
    }

    TEST_CASE("calibration needs the database") {
        gpucost::testing::TestServer server(gpucost::testing::SampleDeps());
        auto c = server.Client();
        json body = kTrainingScenario["request"];
        body["calibration"] = {{"scenario_ids", {"1"}}};
        CheckProblem(c.Post("/v1/plans/training", body.dump(), "application/json"), 409,
                     "database_required", "/calibration");
    }
}
