#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

#include "service/storage/api_keys.hpp"
#include "tests/service/storage/pg_fixture.hpp"
#include "tests/support/http_checks.hpp"
#include "tests/support/route_requests.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::Fixture;
using gpucost::testing::kSpotListUsdPerHour;
using gpucost::testing::kSpotPlan;
using gpucost::testing::SpotPriceOf;
using gpucost::testing::StoreTwoVersions;

namespace {

// The spot plan `request` answered for `key` once the server has re-read the keys (a key's
// default takes effect on the change notification: docs/database.md), i.e. once
// `pricing_basis` is `basis`; the last answer after 10 s otherwise.
json PlanOnceKeysRead(Fixture& f, httplib::Client& c, const std::string& key, const json& request,
                      const std::string& basis) {
    json plan;
    for (int attempt = 0; attempt < 200; ++attempt) {
        plan = Body(c.Post("/v1/plans/spot", f.Auth(key), request.dump(), "application/json"));
        if (plan.value("pricing_basis", "") == basis) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return plan;
}

}  // namespace

TEST_SUITE("price_book_routes") {
    TEST_CASE("a team key's default book prices its plans; null opts out; it is not deleted") {
        Fixture f;
        auto c = f.server->Client();
        StoreTwoVersions(f, c);
        auto conn = f.db.Connect();
        auto team = gpucost::storage::CreateApiKey(*conn, "read", "ml-team", "acme-2026");
        REQUIRE(team.ok());
        const std::string key = team.value().key;

        const json plan = PlanOnceKeysRead(f, c, key, kSpotPlan, "price_book");
        const json echo = plan.value("price_book", json::object());
        CHECK(plan["pricing_basis"] == "price_book");
        CHECK(echo.value("id", "") == "acme-2026");
        CHECK(echo.value("version", 0) == 2);
        CHECK(echo.value("from_key_default", false) == true);
        if (echo.contains("prices")) {
            CHECK(SpotPriceOf(plan) == doctest::Approx(kSpotListUsdPerHour * (1 - 0.3)));
        }

        // "price_book": null declines the default; a book named explicitly is not the default.
        json at_list = kSpotPlan;
        at_list["price_book"] = nullptr;
        json listed =
            Body(c.Post("/v1/plans/spot", f.Auth(key), at_list.dump(), "application/json"));
        CHECK(listed["pricing_basis"] == "list");
        CHECK_FALSE(listed.contains("price_book"));
        json named = kSpotPlan;
        named["price_book"] = {{"id", "acme-2026"}, {"version", 1}};
        json explicit_plan =
            Body(c.Post("/v1/plans/spot", f.Auth(key), named.dump(), "application/json"));
        CHECK(explicit_plan["price_book"]["version"] == 1);
        CHECK_FALSE(explicit_plan["price_book"].contains("from_key_default"));
        // A scenario saved with the key by a request naming no book names the key's book, and is
        // priced with it; with "price_book": null it stays at list prices.
        const json scenario = f.SaveScenario(
            json{{"name", "team spot"}, {"plan", "spot"}, {"request", kSpotPlan}}, key);
        CHECK(scenario["request"]["price_book"] == json{{"id", "acme-2026"}});
        CHECK(scenario["saved_result"]["pricing_basis"] == "price_book");
        CHECK(scenario["saved_result"]["price_book"]["version"] == 2);
        const json saved_at_list = f.SaveScenario(
            json{{"name", "team spot, list"}, {"plan", "spot"}, {"request", at_list}}, key);
        CHECK(saved_at_list["saved_result"]["pricing_basis"] == "list");
        // Other keys and no key plan at list prices.
        CHECK(Body(c.Post("/v1/plans/spot", f.Auth(f.reader), kSpotPlan.dump(),
                          "application/json"))["pricing_basis"] == "list");
        CHECK(Body(c.Post("/v1/plans/spot", kSpotPlan.dump(),
                          "application/json"))["pricing_basis"] == "list");

        // The book cannot be deleted under the key; cleared, it can.
        auto refused = c.Delete("/v1/price-books/acme-2026", f.Auth(f.admin));
        CheckProblem(refused, 409, "failed_precondition", "id");
        CHECK(Body(refused)["detail"].get<std::string>().find("ml-team") != std::string::npos);
        CHECK(gpucost::storage::SetKeyPriceBook(*conn, team.value().prefix, "").ok());
        CHECK(PlanOnceKeysRead(f, c, key, kSpotPlan, "list")["pricing_basis"] == "list");
        auto deleted = c.Delete("/v1/price-books/acme-2026", f.Auth(f.admin));
        REQUIRE(deleted);
        CHECK(deleted->status == 204);

        // Only live books become defaults; an unknown key is not found.
        auto gone = gpucost::storage::SetKeyPriceBook(*conn, team.value().prefix, "acme-2026");
        REQUIRE_FALSE(gone.ok());
        CHECK(gone.error().field == "--price-book");
        CHECK_FALSE(gpucost::storage::CreateApiKey(*conn, "read", "x", "nope").ok());
        auto no_key = gpucost::storage::SetKeyPriceBook(*conn, "000000000000", "");
        REQUIRE_FALSE(no_key.ok());
        CHECK(no_key.error().code == gpucost::pricing::ErrorCode::kNotFound);
    }
}
