// Teams as the boundary of confidential data (docs/database.md, "Teams and who reads what"):
// every route and every path to a price book, a saved scenario and actual spend (direct, through
// scenarios, evaluate and its FOCUS rows, calibration, a key's default book), asked by no key,
// a key of the owning team, another team's, a team the book is shared with, an org key and a
// revoked key; each cell asserted. And the imports of actual spend, listed and deleted.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/storage/api_keys.hpp"
#include "tests/service/storage/pg_fixture.hpp"
#include "tests/support/focus_export.hpp"
#include "tests/support/http_checks.hpp"
#include "tests/support/route_requests.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::Fixture;
using gpucost::testing::kFocusHeader;
using gpucost::testing::kSpotPlan;
using gpucost::testing::P5Row;
namespace storage = gpucost::storage;

namespace {

constexpr char kBook[] = "red-edp";

// A training plan on AWS H100 on demand that ends in January 2026 (as scenario_progress_test).
const json kTrainingPlan = {
    {"model", {{"params_b", 7}}},
    {"tokens_b", 10},
    {"start_date", "2026-01-01"},
    {"constraints",
     {{"accelerators", {"h100-sxm"}}, {"providers", {"aws"}}, {"price_types", {"on_demand"}}}}};

json Scenario(const std::string& name, const std::string& plan, const json& request) {
    return {{"name", name}, {"plan", plan}, {"request", request}};
}

json WithBook(json request, const json& book) {
    request["price_book"] = book;
    return request;
}

// The callers of every row, in this order.
enum Who { kAnonymous, kOwnTeam, kOtherTeam, kSharedTeam, kOrg, kRevoked, kWhoCount };
constexpr std::array<const char*, kWhoCount> kWhoNames = {
    "anonymous", "own team", "other team", "team shared with", "org", "revoked"};
using Row = std::array<int, kWhoCount>;

// Waits (10 s at most) until the server has read the keys created since it started (they take
// effect on the change notification: docs/database.md).
void WaitForKeys(Fixture& f, const std::vector<std::string>& live,
                 const std::vector<std::string>& revoked) {
    for (int attempt = 0; attempt < 200; ++attempt) {
        bool ready = true;
        for (const auto& k : live) ready = ready && f.store->Authenticate(k).has_value();
        for (const auto& k : revoked) ready = ready && !f.store->Authenticate(k).has_value();
        if (ready) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL("the server did not read the keys in 10 s");
}

// Two teams' keys and a third the red book is shared with, an org key and a revoked one; the
// red team's book, scenarios and actual spend.
struct Teams {
    Fixture f;
    httplib::Client c = f.server->Client();
    std::string red_read = f.db.CreateKey("read", "red dashboard", "red");
    std::string red_admin = f.db.CreateKey("admin", "red ops", "red");
    std::string blue_read = f.db.CreateKey("read", "blue dashboard", "blue");
    std::string blue_admin = f.db.CreateKey("admin", "blue ops", "blue");
    std::string green_read = f.db.CreateKey("read", "green dashboard", "green");
    std::string green_admin = f.db.CreateKey("admin", "green ops", "green");
    std::string org = f.db.CreateKey("org", "finance", "red");
    std::string revoked = f.db.CreateKey("read", "red old", "red");
    std::string red_default;    // a red key whose default book is the red book
    std::string green_default;  // a green key whose default book is the red book (shared)
    std::string s_open, s_book, s_inline, s_default, s_train, s_calib, s_green;
    std::string import_id;

    Teams() {
        WaitForKeys(f, {red_read, red_admin, blue_read, green_read, org}, {});
        const json book = {{"id", kBook},
                           {"name", "red EDP"},
                           {"rules", {{{"provider", "aws"}, {"discount_fraction", 0.2}}}},
                           {"shared_with", {"green"}}};
        auto created =
            c.Post("/v1/price-books", f.Auth(red_admin), book.dump(), "application/json");
        REQUIRE(created);
        INFO(created->body);
        REQUIRE(created->status == 201);
        red_default = f.db.CreateKey("read", "red planner", "red", kBook);
        green_default = f.db.CreateKey("read", "green planner", "green", kBook);
        {
            auto conn = f.db.Connect();
            REQUIRE(storage::RevokeApiKey(*conn, revoked.substr(4, 12)).ok());
        }
        WaitForKeys(f, {red_default, green_default}, {revoked});
        s_open = Id(f.SaveScenario(Scenario("open", "spot", kSpotPlan), red_read));
        s_book = Id(f.SaveScenario(Scenario("book", "spot", WithBook(kSpotPlan, kBook)), red_read));
        const json inline_book = {{"name", "inline terms"},
                                  {"rules", {{{"provider", "aws"}, {"discount_fraction", 0.3}}}}};
        s_inline = Id(
            f.SaveScenario(Scenario("inline", "spot", WithBook(kSpotPlan, inline_book)), red_read));
        s_default = Id(f.SaveScenario(Scenario("default", "spot", kSpotPlan), red_default));
        s_train = Id(f.SaveScenario(Scenario("train", "training", kTrainingPlan), red_read));
        s_green = Id(f.SaveScenario(Scenario("green", "spot", kSpotPlan), green_default));
        // 160 accelerator-hours billed for half the tokens (as scenario_progress_test).
        auto imported = c.Post("/v1/actuals", f.Auth(red_admin),
                               std::string(kFocusHeader) + P5Row(100, 10, s_train, "2026-01-03") +
                                   P5Row(100, 10, s_train, "2026-02-02"),
                               "text/csv");
        REQUIRE(imported);
        REQUIRE(imported->status == 201);
        import_id = Body(imported)["import_id"];
        REQUIRE(c.Put("/v1/scenarios/" + s_train + "/progress", f.Auth(red_read),
                      R"({"tokens_done_b": 5, "as_of": "2026-02-03"})", "application/json")
                    ->status == 200);
        json calibrated = kTrainingPlan;
        calibrated["calibration"] = {{"scenario_ids", {s_train}}};
        s_calib = Id(f.SaveScenario(Scenario("calibrated", "training", calibrated), red_read));
    }

    static std::string Id(const json& scenario) { return scenario["id"]; }

    std::array<std::string, kWhoCount> Keys() const {
        return {"", red_read, blue_read, green_read, org, revoked};
    }
    std::array<std::string, kWhoCount> AdminKeys() const {
        return {"", red_admin, blue_admin, green_admin, org, revoked};
    }

    httplib::Result Send(const std::string& method, const std::string& path, const std::string& key,
                         const std::string& body = "") {
        httplib::Headers h;
        if (!key.empty()) h.emplace("Authorization", "Bearer " + key);
        if (method == "GET") return c.Get(path, h);
        if (method == "DELETE") return c.Delete(path, h);
        if (method == "PUT") return c.Put(path, h, body, "application/json");
        if (method == "PATCH") return c.Patch(path, h, body, "application/merge-patch+json");
        return c.Post(path, h, body, "application/json");
    }

    // Every cell of one row: the status each caller gets.
    void Expect(const std::string& method, const std::string& path, const Row& expected,
                const std::string& body = "", bool admins = false) {
        const auto keys = admins ? AdminKeys() : Keys();
        for (int who = 0; who < kWhoCount; ++who) {
            auto r = Send(method, path, keys[static_cast<std::size_t>(who)], body);
            REQUIRE(r);
            INFO(method << " " << path << " by " << kWhoNames[static_cast<std::size_t>(who)] << ": "
                        << r->body.substr(0, 300));
            CHECK(r->status == expected[static_cast<std::size_t>(who)]);
        }
    }

    // The scenario ids GET /v1/scenarios lists to `key`.
    std::set<std::string> Listed(const std::string& key) {
        std::set<std::string> ids;
        auto r = Send("GET", "/v1/scenarios?limit=500", key);
        REQUIRE(r);
        REQUIRE(r->status == 200);
        const json page = json::parse(r->body);
        for (const json& s : page["items"]) ids.insert(s["id"].get<std::string>());
        CHECK(page["total_count"] == ids.size());
        return ids;
    }
};

// 401 without a key or with a revoked one; `own` and `org` to those; `other` to the rest.
Row Confidential(int own, int other, int org) {
    return {401, own, other, other, org, 401};
}

}  // namespace

TEST_SUITE("tenancy") {
    TEST_CASE(
        "a price book is read by its team and org keys, planned with by teams it is shared "
        "with, and written by its team's admins only") {
        Teams t;
        const std::string one = std::string("/v1/price-books/") + kBook;
        t.Expect("GET", one, {401, 200, 404, 403, 200, 401});
        t.Expect("GET", one + "?version=1", {401, 200, 404, 403, 200, 401});
        for (const std::string& key : {t.red_read, t.blue_read, t.green_read, t.org}) {
            const json list = Body(t.Send("GET", "/v1/price-books", key));
            const bool reads = key == t.red_read || key == t.org;
            CHECK(list["items"].size() == (reads ? 1U : 0U));
        }
        t.Expect("GET", "/v1/price-books", {401, 200, 200, 200, 200, 401});

        // Planning with it, by id and by {id, version}: its team, a team it is shared with, org.
        t.Expect("POST", "/v1/plans/spot", {401, 200, 422, 200, 200, 401},
                 WithBook(kSpotPlan, kBook).dump());
        t.Expect("POST", "/v1/plans/spot", {401, 200, 422, 200, 200, 401},
                 WithBook(kSpotPlan, {{"id", kBook}, {"version", 1}}).dump());

        // Writes: another team's admin finds nothing, a team it is shared with is refused, org
        // keys write nothing; the owner's admin writes.
        json next = {{"name", "red EDP"},
                     {"rules", {{{"provider", "aws"}, {"discount_fraction", 0.25}}}}};
        t.Expect("DELETE", one, {401, 409, 404, 403, 403, 401}, "", /*admins=*/true);
        t.Expect("PUT", one, {401, 200, 404, 403, 403, 401}, next.dump(), /*admins=*/true);
        CHECK(t.Send("PUT", one, t.red_read, next.dump())->status == 403);  // read scope
        json another = next;
        another["id"] = "org-book";
        CHECK(t.Send("POST", "/v1/price-books", t.org, another.dump())->status == 403);
        const json latest = Body(t.Send("GET", one, t.red_read));
        CHECK(latest["version"] == 2);
        CHECK(latest["team"] == "red");
        CHECK(latest["shared_with"] == json::array({"green"}));
        // A share names a team that exists.
        json unknown = next;
        unknown["shared_with"] = {"green", "nobody"};
        CheckProblem(t.Send("PUT", one, t.red_admin, unknown.dump()), 422, "invalid_argument",
                     "/shared_with/1");
    }

    TEST_CASE(
        "a scenario that carries a book or calibration is its team's and org's on every "
        "path; one that carries nothing confidential stays open") {
        Teams t;
        for (const std::string& id : {t.s_book, t.s_inline, t.s_default, t.s_calib}) {
            const std::string one = "/v1/scenarios/" + id;
            t.Expect("GET", one, Confidential(200, 404, 200));
            t.Expect("POST", one + "/evaluate", Confidential(200, 404, 200));
        }
        // FOCUS rows of a confidential training scenario.
        t.Expect("POST", "/v1/scenarios/" + t.s_calib + "/evaluate?format=focus",
                 Confidential(200, 404, 200));
        // The scenario a green key saved with its (shared) default book is green's.
        t.Expect("GET", "/v1/scenarios/" + t.s_green, {401, 404, 404, 200, 200, 401});
        // Nothing confidential: open to whoever reads /v1/ (without --require-read-key).
        t.Expect("GET", "/v1/scenarios/" + t.s_open, {200, 200, 200, 200, 200, 401});
        t.Expect("POST", "/v1/scenarios/" + t.s_open + "/evaluate", {200, 200, 200, 200, 200, 401});

        // Lists show what each may read.
        const std::set<std::string> open = {t.s_open, t.s_train};
        const std::set<std::string> red = {t.s_open,    t.s_book,  t.s_inline,
                                           t.s_default, t.s_train, t.s_calib};
        std::set<std::string> green = open;
        green.insert(t.s_green);
        std::set<std::string> all = red;
        all.insert(t.s_green);
        CHECK(t.Listed("") == open);
        CHECK(t.Listed(t.red_read) == red);
        CHECK(t.Listed(t.blue_read) == open);
        CHECK(t.Listed(t.green_read) == green);
        CHECK(t.Listed(t.org) == all);
        t.Expect("GET", "/v1/scenarios", {200, 200, 200, 200, 200, 401});

        // Evaluate prices the book's current version for its team only.
        const json evaluated =
            Body(t.Send("POST", "/v1/scenarios/" + t.s_book + "/evaluate", t.red_read));
        CHECK(evaluated["result"]["price_book"]["id"] == kBook);
    }

    TEST_CASE("scenarios are changed by their team only; org keys change and save nothing") {
        Teams t;
        const std::string rename = R"({"name": "renamed"})";
        t.Expect("PATCH", "/v1/scenarios/" + t.s_open, {401, 200, 403, 403, 403, 401}, rename,
                 /*admins=*/true);
        t.Expect("PATCH", "/v1/scenarios/" + t.s_book, {401, 200, 404, 404, 403, 401}, rename,
                 /*admins=*/true);
        t.Expect("PUT", "/v1/scenarios/" + t.s_calib + "/progress", {401, 200, 404, 404, 403, 401},
                 R"({"tokens_done_b": 1, "as_of": "2026-02-03"})",
                 /*admins=*/true);
        // Deletes: the others first, while the scenario is there.
        const std::string inline_one = "/v1/scenarios/" + t.s_inline;
        CHECK(t.Send("DELETE", inline_one, "")->status == 401);
        CHECK(t.Send("DELETE", inline_one, t.revoked)->status == 401);
        CHECK(t.Send("DELETE", inline_one, t.blue_admin)->status == 404);
        CHECK(t.Send("DELETE", inline_one, t.green_admin)->status == 404);
        CHECK(t.Send("DELETE", inline_one, t.org)->status == 403);
        CHECK(t.Send("DELETE", inline_one, t.red_admin)->status == 204);
        CHECK(t.Send("POST", "/v1/scenarios", t.org, Scenario("x", "spot", kSpotPlan).dump())
                  ->status == 403);
    }

    TEST_CASE(
        "actual spend is read by the scenario's team and org keys, directly and through "
        "calibration") {
        Teams t;
        t.Expect("GET", "/v1/scenarios/" + t.s_train + "/actuals", Confidential(200, 404, 200));
        // Spend is confidential even where the scenario is open.
        t.Expect("GET", "/v1/scenarios/" + t.s_open + "/actuals", Confidential(200, 404, 200));
        const json red = Body(t.Send("GET", "/v1/scenarios/" + t.s_train + "/actuals", t.red_read));
        CHECK(red["actual"]["accelerator_hours"].get<double>() == doctest::Approx(160));

        json calibrated = kTrainingPlan;
        calibrated["calibration"] = {{"scenario_ids", {t.s_train}}};
        t.Expect("POST", "/v1/plans/training", Confidential(200, 422, 200), calibrated.dump());
        auto refused = t.Send("POST", "/v1/plans/training", t.blue_read, calibrated.dump());
        CheckProblem(refused, 422, "invalid_argument", "/calibration/scenario_ids/0");
        CHECK(Body(refused)["detail"].get<std::string>().find("no scenario") != std::string::npos);

        // Another team's export tagged with a red scenario's id does not count for it, and the
        // same export rows stored by another team are still this team's to store.
        auto same = t.c.Post("/v1/actuals", t.f.Auth(t.blue_admin),
                             std::string(kFocusHeader) + P5Row(100, 10, t.s_train, "2026-01-03") +
                                 P5Row(100, 10, t.s_train, "2026-02-02"),
                             "text/csv");
        REQUIRE(same);
        REQUIRE(same->status == 201);
        CHECK(Body(same)["added"] == 2);
        auto blue = t.c.Post("/v1/actuals", t.f.Auth(t.blue_admin),
                             std::string(kFocusHeader) + P5Row(999, 99, t.s_train, "2026-01-04"),
                             "text/csv");
        REQUIRE(blue);
        REQUIRE(blue->status == 201);
        const json after =
            Body(t.Send("GET", "/v1/scenarios/" + t.s_train + "/actuals", t.red_read));
        CHECK(after["actual"] == red["actual"]);
    }

    TEST_CASE("a key's default book is one its team may plan with") {
        Teams t;
        auto conn = t.f.db.Connect();
        auto blue = storage::CreateApiKey(*conn, "read", "blue planner", kBook, "blue");
        REQUIRE_FALSE(blue.ok());
        CHECK(blue.error().field == "--price-book");
        auto org = storage::CreateApiKey(*conn, "org", "finance planner", kBook, "blue");
        CHECK(org.ok());
        // The green key (shared) plans with it by default; its plan says so.
        const json plan = Body(t.Send("POST", "/v1/plans/spot", t.green_default, kSpotPlan.dump()));
        CHECK(plan["price_book"]["id"] == kBook);
        CHECK(plan["pricing_basis"] == "price_book");
    }

    TEST_CASE("imports are listed and deleted by their team's admins; org keys list them") {
        Teams t;
        t.Expect("GET", "/v1/actuals/imports", {401, 200, 200, 200, 200, 401}, "",
                 /*admins=*/true);
        CHECK(t.Send("GET", "/v1/actuals/imports", t.red_read)->status == 403);
        const json red = Body(t.Send("GET", "/v1/actuals/imports", t.red_admin));
        REQUIRE(red["items"].size() == 1);
        CHECK(red["total_count"] == 1);
        const json& item = red["items"][0];
        CHECK(item["import_id"] == t.import_id);
        CHECK(item["team"] == "red");
        CHECK(item["imported_by"] == "red ops");
        CHECK(item["added"] == 2);
        CHECK(item["charges"] == 2);
        CHECK(Body(t.Send("GET", "/v1/actuals/imports", t.blue_admin))["items"].empty());
        CHECK(Body(t.Send("GET", "/v1/actuals/imports", t.org))["items"].size() == 1);
        CheckProblem(t.Send("GET", "/v1/actuals/imports?limit=0", t.red_admin), 422,
                     "invalid_argument", "limit");

        const std::string one = "/v1/actuals/imports/" + t.import_id;
        CHECK(t.Send("DELETE", one, t.red_read)->status == 403);
        CHECK(t.Send("DELETE", one, "")->status == 401);
        CHECK(t.Send("DELETE", one, t.revoked)->status == 401);
        CheckProblem(t.Send("DELETE", one, t.blue_admin), 404, "not_found", "id");
        CheckProblem(t.Send("DELETE", one, t.green_admin), 404, "not_found", "id");
        CheckProblem(t.Send("DELETE", one, t.org), 403, "forbidden");
        CHECK(t.Send("DELETE", one, t.red_admin)->status == 204);
        CheckProblem(t.Send("DELETE", one, t.red_admin), 404, "not_found", "id");
        CheckProblem(t.Send("DELETE", "/v1/actuals/imports/x1", t.red_admin), 404, "not_found",
                     "id");
    }

    TEST_CASE("a deleted import leaves plan vs actual as before it") {
        Teams t;
        const std::string actuals = "/v1/scenarios/" + t.s_train + "/actuals";
        const std::string january =
            std::string(kFocusHeader) + P5Row(300, 30, t.s_train, "2026-01-20");
        // The state with the setup's import only, then with a second export.
        const json before = Body(t.Send("GET", actuals, t.red_read));
        auto second = t.c.Post("/v1/actuals", t.f.Auth(t.red_admin), january, "text/csv");
        REQUIRE(second);
        REQUIRE(second->status == 201);
        const std::string second_id = Body(second)["import_id"];
        const json with_second = Body(t.Send("GET", actuals, t.red_read));
        REQUIRE(with_second["actual"] != before["actual"]);
        CHECK(with_second["actual"]["accelerator_hours"].get<double>() ==
              doctest::Approx(160 + 240));

        REQUIRE(t.Send("DELETE", "/v1/actuals/imports/" + second_id, t.red_admin)->status == 204);
        CHECK(Body(t.Send("GET", actuals, t.red_read)) == before);

        // Deleting the first too leaves no spend; importing its export again stores it again.
        REQUIRE(t.Send("DELETE", "/v1/actuals/imports/" + t.import_id, t.red_admin)->status == 204);
        const json none = Body(t.Send("GET", actuals, t.red_read));
        CHECK(none["actual"]["rows"] == 0);
        auto again = t.c.Post("/v1/actuals", t.f.Auth(t.red_admin),
                              std::string(kFocusHeader) + P5Row(100, 10, t.s_train, "2026-01-03") +
                                  P5Row(100, 10, t.s_train, "2026-02-02"),
                              "text/csv");
        REQUIRE(again);
        REQUIRE(again->status == 201);
        CHECK(Body(again)["added"] == 2);
        CHECK(Body(t.Send("GET", actuals, t.red_read)) == before);
        CHECK(t.f.db.Scalar("SELECT count(*) FROM actuals_imports") == "1");
    }
}
