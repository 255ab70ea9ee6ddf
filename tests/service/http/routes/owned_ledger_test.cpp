// A stored book's owned capacity as a ledger (docs/billing.md, "The owned-capacity ledger"):
// saved scenarios draw its reserved hours in the order saved, and a live plan sees what they
// hold, over the in-memory stores.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tests/service/http/routes/memory_fixture.hpp"
#include "tests/support/http_checks.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::MemoryFixture;

namespace {

constexpr char kP5[] = "aws-p5.48xlarge-us-east-1-on-demand";
// December 2026: one instance x 744 h.
constexpr double kDecemberReserved = 744;

const json kOnP5 = {
    {"accelerators", {"h100-sxm"}}, {"providers", {"aws"}}, {"price_types", {"on_demand"}}};

// One p5 instance reserved for a year from 2026-12-01 (docs/billing.md works the same case
// with two).
const json kReservedBook = {{"id", "reserved-p5"},
                            {"name", "two p5 for a year"},
                            {"owned_capacity",
                             {{{"offering_id", kP5},
                               {"nodes", 1},
                               {"start_date", "2026-12-01"},
                               {"end_date", "2027-12-01"},
                               {"usd_per_hour", 31.46}}}}};

// A fine-tune on p5s from 2026-12-10, well inside December.
json FineTune() {
    return {{"name", "fine-tune"},
            {"plan", "training"},
            {"request",
             {{"model", {{"params_b", 7}}},
              {"tokens_b", 10},
              {"start_date", "2026-12-10"},
              {"constraints", kOnP5},
              {"price_book", "reserved-p5"}}}};
}

double Hours(const json& v) {
    return v.get<double>();
}

// A book with no owned capacity: what the commitments route plans for is the saved scenarios'
// demand alone.
const json kCommitBook = {{"id", "fleet-book"},
                          {"name", "serving fleet"},
                          {"rules", {{{"provider", "aws"}, {"discount_fraction", 0.1}}}}};

// A serving fleet on AWS H100s in us-east-1 for three years from 2027-01-01.
json ThreeYearFleet() {
    return {{"name", "three-year fleet"},
            {"plan", "inference"},
            {"request",
             {{"model", "llama-2-7b"},
              {"input_tokens", 512},
              {"output_tokens", 256},
              {"traffic", {{"requests_per_second", 20}}},
              {"constraints",
               {{"providers", {"aws"}},
                {"regions", {"us-east-1"}},
                {"accelerators", {"h100-sxm"}},
                {"price_types", {"on_demand"}}}},
              {"start_date", "2027-01-01"},
              {"budget_months", 36},
              {"price_book", "fleet-book"}}}};
}

// A 1- and a 3-year commitment of `on_demand`'s shape at 60 % and 40 % of its list price.
json CommitSiblings(const json& on_demand) {
    json out = json::array();
    for (const auto& [type, share] : {std::pair{"commit_1y", 0.6}, std::pair{"commit_3y", 0.4}}) {
        out.push_back({{"id", "test-fleet-" + std::string(type)},
                       {"provider", on_demand["provider"]},
                       {"instance_type", on_demand["instance_type"]},
                       {"accelerator", on_demand["accelerator"]},
                       {"accelerator_count", on_demand["accelerator_count"]},
                       {"region", on_demand["region"]},
                       {"price_type", type},
                       {"usd_per_hour",
                        std::round(on_demand["usd_per_hour"].get<double>() * share * 1e6) / 1e6},
                       {"as_of", "2026-11-20"},
                       {"source", "test"}});
    }
    return out;
}

}  // namespace

TEST_SUITE("owned_ledger") {
    TEST_CASE("two saved scenarios share one reservation: the second gets what the first left") {
        MemoryFixture f;
        auto c = f.server->Client();
        REQUIRE(c.Post("/v1/price-books", f.Auth(f.admin), kReservedBook.dump(), "application/json")
                    ->status == 201);
        const json fine_tune = f.SaveScenario(FineTune(), f.reader);
        const json ft = fine_tune["saved_result"]["recommendation"];
        REQUIRE(ft["offering"]["id"] == kP5);
        REQUIRE(Hours(ft["expected_wall_clock_hours"]) < 21 * 24);  // ends in December
        const double fine_tune_hours = Hours(ft["owned"]["instance_hours"]);
        CHECK(fine_tune_hours ==
              doctest::Approx(ft["nodes"].get<int>() * Hours(ft["expected_wall_clock_hours"]))
                  .epsilon(1e-6));
        CHECK(fine_tune["saved_result"]["owned_ledger"]["held_by"].empty());

        // A second run over the same days, saved next: the one owned instance is the first
        // run's while it runs, so the second gets none of it (before the ledger it got the
        // same hours again: twice what exists).
        json second_body = FineTune();
        second_body["name"] = "second fine-tune";
        const json second = f.SaveScenario(second_body, f.reader);
        const json sv = second["saved_result"]["recommendation"];
        REQUIRE(sv["offering"]["id"] == kP5);
        CHECK(sv["owned"].is_null());
        const json ledger = second["saved_result"]["owned_ledger"];
        CHECK(ledger["book_id"] == "reserved-p5");
        REQUIRE(ledger["held_by"].size() == 1);
        CHECK(ledger["held_by"][0]["scenario_id"] == fine_tune["id"]);
        CHECK(Hours(ledger["held_by"][0]["instance_hours"]) == doctest::Approx(fine_tune_hours));
        CHECK(Hours(ledger["got_instance_hours"]) == doctest::Approx(0));
        const json december = ledger["months"][0];
        CHECK(december["month"] == "2026-12");
        CHECK(Hours(december["reserved_instance_hours"]) == doctest::Approx(kDecemberReserved));
        CHECK(Hours(december["held_instance_hours"]) == doctest::Approx(fine_tune_hours));
        CHECK(Hours(december["unused_instance_hours"]) ==
              doctest::Approx(kDecemberReserved - fine_tune_hours));
        CHECK(ledger["months"].size() == 12);

        // A live plan sees what the saved scenarios hold.
        auto live = c.Post("/v1/plans/training", f.Auth(f.reader), FineTune()["request"].dump(),
                           "application/json");
        REQUIRE(live);
        REQUIRE(live->status == 200);
        const json plan = Body(live);
        CHECK(plan["recommendation"]["owned"].is_null());
        CHECK(plan["owned_ledger"]["held_by"].size() == 1);
        CHECK(Hours(plan["owned_ledger"]["held_instance_hours"]) ==
              doctest::Approx(fine_tune_hours));

        // Utilisation and coverage per month (the commitments answer's owned_use): December's
        // reserved hours, those the fine-tune holds, and the two runs' demand.
        auto commitments = c.Post("/v1/plans/commitments", f.Auth(f.reader),
                                  json{{"price_book", "reserved-p5"}}.dump(), "application/json");
        REQUIRE(commitments);
        REQUIRE(commitments->status == 200);
        const json use = Body(commitments)["owned_use"];
        REQUIRE(use.size() == 12);
        CHECK(use[0]["month"] == "2026-12");
        CHECK(Hours(use[0]["reserved_instance_hours"]) == doctest::Approx(kDecemberReserved));
        CHECK(Hours(use[0]["held_instance_hours"]) == doctest::Approx(fine_tune_hours));
        CHECK(Hours(use[0]["utilisation"]) ==
              doctest::Approx(fine_tune_hours / kDecemberReserved).epsilon(1e-5));
        const double planned =
            fine_tune_hours + sv["nodes"].get<int>() * Hours(sv["expected_wall_clock_hours"]);
        CHECK(Hours(use[0]["planned_instance_hours"]) == doctest::Approx(planned).epsilon(1e-6));
        CHECK(Hours(use[0]["coverage"]) ==
              doctest::Approx(fine_tune_hours / planned).epsilon(1e-5));
        CHECK(use[0]["actual_utilisation"].is_null());
        CHECK(Hours(use[1]["held_instance_hours"]) == doctest::Approx(0));

        // Evaluated again, the fine-tune still draws first and keeps its hours.
        auto again = c.Post("/v1/scenarios/" + fine_tune["id"].get<std::string>() + "/evaluate",
                            f.Auth(f.reader), "", "application/json");
        REQUIRE(again);
        REQUIRE(again->status == 200);
        CHECK(Hours(Body(again)["result"]["recommendation"]["owned"]["instance_hours"]) ==
              doctest::Approx(fine_tune_hours));
    }

    TEST_CASE("the commitments route buys 3-year terms for a saved 3-year fleet") {
        MemoryFixture f;
        auto c = f.server->Client();
        REQUIRE(c.Post("/v1/price-books", f.Auth(f.admin), kCommitBook.dump(), "application/json")
                    ->status == 201);
        const json fleet = f.SaveScenario(ThreeYearFleet(), f.reader);
        const json rec = fleet["saved_result"]["recommendation"];
        const std::string offering_id = rec["offering"]["id"];
        const int nodes = rec["nodes"];
        auto offering = c.Get("/v1/offerings/" + offering_id);
        REQUIRE(offering);
        auto added = c.Post("/v1/offerings", f.Auth(f.admin), CommitSiblings(Body(offering)).dump(),
                            "application/json");
        REQUIRE(added);
        REQUIRE(added->status == 201);

        auto r = c.Post("/v1/plans/commitments", f.Auth(f.reader),
                        json{{"price_book", "fleet-book"}}.dump(), "application/json");
        REQUIRE(r);
        REQUIRE(r->status == 200);
        const json plan = Body(r);
        CHECK(plan["start_date"] == "2027-01-01");
        REQUIRE(plan["scenarios"].size() == 1);
        CHECK(plan["scenarios"][0]["scenario_id"] == fleet["id"]);
        CHECK(plan["scenarios"][0]["counted"] == true);
        REQUIRE(plan["demand"].size() == 1);
        CHECK(plan["demand"][0]["offering_id"] == offering_id);
        CHECK(plan["demand"][0]["peak_instances"] == nodes);
        // Every instance runs the whole 3-year term (1,095 days of the fleet's 1,096): all on
        // 3-year terms, used in full; a quarter's slip leaves 90 days of each unused.
        REQUIRE(plan["commitments"].size() == 1);
        const json line = plan["commitments"][0];
        CHECK(line["term"] == "3y");
        CHECK(line["offering_id"] == "test-fleet-commit_3y");
        CHECK(line["instances"] == nodes);
        CHECK(line["expected"]["utilisation"] == 1);
        CHECK(Hours(line["slipped"]["unused_instance_hours"]) == doctest::Approx(nodes * 2160.0));
        CHECK(Hours(line["commitment_cost_usd"]) ==
              doctest::Approx(nodes * 26280 * line["commit_usd_per_hour"].get<double>()));
        // The book's 10 % names no price type, so it discounts on-demand only: the 3-year term
        // at 0.4 of the list price breaks even at 0.4 / 0.9 of the discounted on-demand price.
        const double break_even = 0.4 / 0.9;
        CHECK(line["break_even_utilisation"] == doctest::Approx(break_even));
        CHECK(Hours(plan["totals"]["expected_saving_usd"]) ==
              doctest::Approx(nodes * 26280 * (1 - break_even) *
                              line["on_demand_usd_per_hour"].get<double>())
                  .epsilon(1e-6));
        bool echoed = false;
        for (const json& a : plan["assumptions"]) echoed |= a["name"] == "commitment.slip_days";
        CHECK(echoed);

        // The same answer as CSV (one row per commitment) and as FOCUS rows (one per month of
        // the term).
        auto csv = c.Post("/v1/plans/commitments", f.Auth(f.reader, {{"Accept", "text/csv"}}),
                          json{{"price_book", "fleet-book"}}.dump(), "application/json");
        REQUIRE(csv);
        CHECK(csv->status == 200);
        CHECK(std::count(csv->body.begin(), csv->body.end(), '\n') == 2);
        auto focus = c.Post("/v1/plans/commitments?format=focus", f.Auth(f.reader),
                            json{{"price_book", "fleet-book"}}.dump(), "application/json");
        REQUIRE(focus);
        CHECK(focus->status == 200);
        CHECK(focus->body.find("test-fleet-commit_3y") != std::string::npos);

        CheckProblem(c.Post("/v1/plans/commitments", f.Auth(f.reader),
                            json{{"price_book", "fleet-book"}, {"slip_days", -1}}.dump(),
                            "application/json"),
                     422, "invalid_argument", "/slip_days");
        CheckProblem(
            c.Post("/v1/plans/commitments", f.Auth(f.reader),
                   json{{"price_book", "fleet-book"}, {"terms", "1y"}}.dump(), "application/json"),
            422, "invalid_argument", "/terms");
        CheckProblem(c.Post("/v1/plans/commitments", f.Auth(f.reader), json::object().dump(),
                            "application/json"),
                     422, "invalid_argument", "/price_book");
    }
}
