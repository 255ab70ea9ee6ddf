// POST /v1/actuals refuses every cell it could not store as written (docs/billing.md "What an
// export must hold"): through the real route in database mode, each fault is a 422 naming the
// record and the column, nothing of the export is stored, and never a 500.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/service/http/routes/memory_fixture.hpp"
#include "tests/support/focus_export.hpp"
#include "tests/support/http_checks.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::kFocusHeader;
using gpucost::testing::MemoryFixture;
using gpucost::testing::P5Row;

namespace {

// A training scenario to attribute charges to.
const json kScenario = {{"name", "validation"},
                        {"plan", "training"},
                        {"request",
                         {{"model", "llama-2-7b"},
                          {"tokens_b", 10},
                          {"constraints", {{"providers", json::array({"aws"})}}}}}};

// The p5 row tagged `id` with the cell of `column` (a kFocusHeader column) set to `value`.
std::string RowWith(const std::string& id, const std::string& column, const std::string& value) {
    std::string row = P5Row("100", 80, 10, id);
    row.pop_back();  // the line end
    // The row's cells in kFocusHeader's order; Tags (the last) is quoted and holds commas.
    const std::string header(kFocusHeader, std::string(kFocusHeader).size() - 1);
    std::vector<std::string> names;
    std::vector<std::string> cells;
    for (std::size_t start = 0, end = 0; end != std::string::npos; start = end + 1) {
        end = header.find(',', start);
        names.push_back(header.substr(start, end - start));
    }
    const std::size_t tags_at = row.find(",\"{");
    const std::string tags = row.substr(tags_at + 1);
    row.resize(tags_at);
    for (std::size_t start = 0, end = 0; end != std::string::npos; start = end + 1) {
        end = row.find(',', start);
        cells.push_back(row.substr(start, end - start));
    }
    cells.push_back(tags);
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out += (i ? "," : "") + (names[i] == column ? value : cells[i]);
    }
    return out + "\n";
}

}  // namespace

TEST_SUITE("actuals_validation") {
    TEST_CASE("every bad cell is a 422 naming its line and column; nothing is stored") {
        MemoryFixture f;
        auto c = f.server->Client();
        const std::string id = f.SaveScenario(kScenario, f.reader)["id"];
        const std::string good = P5Row("100", 80, 10, id);
        const std::string nul("us-east\0-1", 10);
        const std::vector<std::pair<std::string, std::string>> faults = {
            {"BilledCost", "NaN"},
            {"BilledCost", "1e308"},
            {"BilledCost", "-1e12"},
            {"BilledCost", "inf"},
            {"EffectiveCost", "-Infinity"},
            {"ListCost", "nan"},
            {"ConsumedQuantity", "-5"},
            {"ConsumedQuantity", "8e300"},
            {"ChargePeriodStart", "9999-99-01T00:00:00Z"},
            {"ChargePeriodStart", "0001-01-01T00:00:00Z"},
            {"ChargePeriodStart", "2026-02-30"},
            {"RegionId", nul},
            {"RegionId", "us-\xff-1"},
            {"BillingCurrency", "US\xc3"},
            {"BillingCurrency", std::string("USD\0", 4)},
            {"Tags", "\"{\"\"gpucost-scenario\"\":\"\"\xff\"\"}\""},
            {"Tags", std::string("\"{\"\"gpucost-scenario\"\":\"\"x") + '\0' + "y\"\"}\""},
            {"Tags", "not-json"},
        };
        for (const auto& [column, value] : faults) {
            CAPTURE(column);
            const std::string body = std::string(kFocusHeader) + good + RowWith(id, column, value);
            auto r = c.Post("/v1/actuals", f.Auth(f.admin), body, "text/csv");
            CheckProblem(r, 422, "invalid_argument", "line 3");
            CHECK(Body(r)["detail"].get<std::string>().find("line 3: " + column) !=
                  std::string::npos);
        }
        // A duplicate column, and a quote left open in the last row.
        CheckProblem(c.Post("/v1/actuals", f.Auth(f.admin),
                            "BilledCost," + std::string(kFocusHeader) + "1," + good, "text/csv"),
                     422, "invalid_argument", "line 1");
        CheckProblem(c.Post("/v1/actuals", f.Auth(f.admin),
                            std::string(kFocusHeader) + good + "\"100,80" + good, "text/csv"),
                     422, "invalid_argument", "line 3");

        // None of those bodies stored its good row: the scenario has no actual spend, and the
        // good row is new to the next import.
        auto none = c.Get("/v1/scenarios/" + id + "/actuals", f.Auth(f.reader));
        REQUIRE(none);
        REQUIRE(none->status == 200);
        CHECK(Body(none)["actual"]["rows"] == 0);
        CHECK(none->body.find("nan") == std::string::npos);
        auto stored =
            c.Post("/v1/actuals", f.Auth(f.admin), std::string(kFocusHeader) + good, "text/csv");
        REQUIRE(stored);
        REQUIRE(stored->status == 201);
        CHECK(Body(stored)["added"] == 1);
        auto compared = c.Get("/v1/scenarios/" + id + "/actuals", f.Auth(f.reader));
        REQUIRE(compared);
        CHECK(Body(compared)["actual"]["rows"] == 1);
        CHECK(Body(compared)["actual"]["billed_cost_usd"].get<double>() == doctest::Approx(100));
    }
}
