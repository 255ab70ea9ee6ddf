// A stored book's owned capacity as a ledger (docs/billing.md, "The owned-capacity ledger"):
// saved scenarios draw its reserved hours in the order saved, and a live plan sees what they
// hold, over the in-memory stores.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/service/http/routes/memory_fixture.hpp"
#include "tests/support/http_checks.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
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

        // Evaluated again, the fine-tune still draws first and keeps its hours.
        auto again = c.Post("/v1/scenarios/" + fine_tune["id"].get<std::string>() + "/evaluate",
                            f.Auth(f.reader), "", "application/json");
        REQUIRE(again);
        REQUIRE(again->status == 200);
        CHECK(Hours(Body(again)["result"]["recommendation"]["owned"]["instance_hours"]) ==
              doctest::Approx(fine_tune_hours));
    }
}
