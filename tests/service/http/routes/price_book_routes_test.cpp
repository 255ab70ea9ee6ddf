#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/service/http/routes/memory_fixture.hpp"
#include "tests/support/http_checks.hpp"
#include "tests/support/route_requests.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::Book;
using gpucost::testing::CheckProblem;
using gpucost::testing::kSpotListUsdPerHour;
using gpucost::testing::kSpotPlan;
using gpucost::testing::MemoryFixture;
using gpucost::testing::SpotPriceOf;
using gpucost::testing::StoreTwoVersions;

TEST_SUITE("price_book_routes") {
    TEST_CASE("a plan names an earlier version of a stored book as {id, version}") {
        MemoryFixture f;
        auto c = f.server->Client();
        StoreTwoVersions(f, c);
        auto plan_with = [&](const json& book) {
            json request = kSpotPlan;
            request["price_book"] = book;
            return c.Post("/v1/plans/spot", f.Auth(f.reader), request.dump(), "application/json");
        };
        json first = Body(plan_with({{"id", "acme-2026"}, {"version", 1}}));
        REQUIRE(first["pricing_basis"] == "price_book");
        CHECK(first["price_book"]["id"] == "acme-2026");
        CHECK(first["price_book"]["version"] == 1);
        CHECK(SpotPriceOf(first) == doctest::Approx(kSpotListUsdPerHour * (1 - 0.18)));
        CHECK_FALSE(first["price_book"].contains("from_key_default"));
        json latest = Body(plan_with({{"id", "acme-2026"}}));
        REQUIRE(latest["pricing_basis"] == "price_book");
        CHECK(latest["price_book"]["version"] == 2);
        CHECK(SpotPriceOf(latest) == doctest::Approx(kSpotListUsdPerHour * (1 - 0.3)));

        // An unknown version is the request's fault as an unknown id is, naming the member.
        CheckProblem(plan_with({{"id", "acme-2026"}, {"version", 9}}), 422, "invalid_argument",
                     "/price_book/version");
        CheckProblem(plan_with({{"id", "acme-2026"}, {"version", 0}}), 422, "invalid_argument",
                     "/price_book/version");
        CheckProblem(plan_with({{"id", "acme-2026"}, {"version", "two"}}), 400, "malformed_request",
                     "/price_book/version");
        CheckProblem(plan_with({{"id", "nope"}, {"version", 1}}), 422, "invalid_argument",
                     "/price_book/id");
        CheckProblem(plan_with({{"id", "acme-2026"}, {"version", 1}, {"at", "x"}}), 400,
                     "malformed_request", "/price_book/at");
        json request = kSpotPlan;
        request["price_book"] = {{"id", "acme-2026"}, {"version", 1}};
        CheckProblem(c.Post("/v1/plans/spot", request.dump(), "application/json"), 401,
                     "unauthenticated");

        // A saved scenario naming version 1 keeps being priced with version 1.
        const json scenario =
            f.SaveScenario(json{{"name", "v1"}, {"plan", "spot"}, {"request", request}}, f.reader);
        CHECK(scenario["saved_result"]["price_book"]["version"] == 1);
        const std::string path = "/v1/scenarios/" + scenario["id"].get<std::string>() + "/evaluate";
        // It carries a book: evaluated for a key of its team only (401 without one).
        CheckProblem(c.Post(path.c_str(), "", "application/json"), 401, "unauthenticated");
        const json evaluated = Body(c.Post(path, f.Auth(f.reader), "", "application/json"));
        CHECK(evaluated["result"]["price_book"]["version"] == 1);
        CHECK(evaluated["changed"] == false);
    }

    TEST_CASE("a stored book keeps its owned capacity, and plans naming it use it first") {
        MemoryFixture f;
        auto c = f.server->Client();
        const json owned = json::array({{{"offering_id", "aws-p5.48xlarge-us-east-1-on-demand"},
                                         {"nodes", 1},
                                         {"start_date", "2026-12-01"},
                                         {"end_date", "2027-01-01"},
                                         {"usd_per_hour", 30}}});
        auto created =
            c.Post("/v1/price-books", f.Auth(f.admin),
                   json{{"id", "owned-p5"}, {"name", "owned p5"}, {"owned_capacity", owned}}.dump(),
                   "application/json");
        REQUIRE(created);
        REQUIRE(created->status == 201);
        CHECK(Body(created)["owned_capacity"] == owned);
        CHECK(Body(created)["rules"] == json::array());
        auto read = Body(c.Get("/v1/price-books/owned-p5", f.Auth(f.reader)));
        CHECK(read["owned_capacity"] == owned);
        // The docs/billing.md example on one instance (the fixture's catalog sells one),
        // naming the stored book: 48 owned instance-hours in December at $30 an hour, sunk.
        const json plan_request = {
            {"model", {{"params_b", 7}}},
            {"tokens_b", 200},
            {"precision", "bf16"},
            {"limit", 2},
            {"constraints",
             {{"providers", {"aws"}}, {"price_types", {"on_demand"}}, {"node_counts", {1}}}},
            {"start_date", "2026-12-30"},
            {"price_book", "owned-p5"}};
        auto plan = Body(c.Post("/v1/plans/training", f.Auth(f.reader), plan_request.dump(),
                                "application/json"));
        INFO(plan.value("reasoning", std::string()));
        REQUIRE(plan["recommendation"].is_object());
        const json& use = plan["recommendation"]["owned"];
        REQUIRE(use.is_object());
        CHECK(use["instance_hours"].get<double>() == doctest::Approx(48.0));
        CHECK(use["sunk_usd"].get<double>() == doctest::Approx(1440.0));
        CHECK(plan["budget"]["owned_usd"].get<double>() == doctest::Approx(1440.0));
        // A book with neither rules nor owned capacity is refused, naming /rules.
        CheckProblem(c.Post("/v1/price-books", f.Auth(f.admin),
                            json{{"id", "empty"}, {"name", "empty"}}.dump(), "application/json"),
                     422, "invalid_argument", "/rules");
    }

    TEST_CASE("a stored book is written by an admin, versioned, read by id and version") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto created =
            c.Post("/v1/price-books", f.Auth(f.admin), Book(0.18).dump(), "application/json");
        REQUIRE(created);
        REQUIRE(created->status == 201);
        CHECK(created->get_header_value("Location") == "/v1/price-books/acme-2026");
        CHECK(created->get_header_value("ETag") == "\"b1\"");
        json book = Body(created);
        CHECK(book["version"] == 1);
        CHECK(book["written_by"] == "ops");
        CHECK(book["rules"][0]["discount_fraction"] == 0.18);

        json next = Book(0.25);
        next.erase("id");
        auto put = c.Put("/v1/price-books/acme-2026", f.Auth(f.admin, {{"If-Match", "\"b1\""}}),
                         next.dump(), "application/json");
        REQUIRE(put);
        REQUIRE(put->status == 200);
        CHECK(Body(put)["version"] == 2);
        CHECK(put->get_header_value("ETag") == "\"b2\"");

        auto latest = Body(c.Get("/v1/price-books/acme-2026", f.Auth(f.reader)));
        CHECK(latest["version"] == 2);
        CHECK(latest["latest_version"] == 2);
        auto first = Body(c.Get("/v1/price-books/acme-2026?version=1", f.Auth(f.reader)));
        CHECK(first["version"] == 1);
        CHECK(first["rules"][0]["discount_fraction"] == 0.18);
        auto listed = Body(c.Get("/v1/price-books", f.Auth(f.reader)));
        REQUIRE(listed["items"].size() == 1);
        CHECK(listed["items"][0]["version"] == 2);

        // A lost update is refused; a delete with the current ETag goes through.
        CheckProblem(c.Put("/v1/price-books/acme-2026", f.Auth(f.admin, {{"If-Match", "\"b1\""}}),
                           next.dump(), "application/json"),
                     412, "precondition_failed");
        auto deleted =
            c.Delete("/v1/price-books/acme-2026", f.Auth(f.admin, {{"If-Match", "\"b2\""}}));
        REQUIRE(deleted);
        CHECK(deleted->status == 204);
        CheckProblem(c.Get("/v1/price-books/acme-2026", f.Auth(f.reader)), 404, "not_found", "id");
        CheckProblem(
            c.Post("/v1/price-books", f.Auth(f.admin), Book(0.1).dump(), "application/json"), 409,
            "failed_precondition", "/id");
    }

    TEST_CASE("a plan names a stored book by id and echoes its id and version") {
        MemoryFixture f;
        auto c = f.server->Client();
        REQUIRE(c.Post("/v1/price-books", f.Auth(f.admin), Book(0.18).dump(), "application/json")
                    ->status == 201);
        json request = kSpotPlan;
        request["price_book"] = "acme-2026";
        auto plan =
            Body(c.Post("/v1/plans/spot", f.Auth(f.reader), request.dump(), "application/json"));
        CHECK(plan["pricing_basis"] == "price_book");
        CHECK(plan["price_book"]["id"] == "acme-2026");
        CHECK(plan["price_book"]["version"] == 1);
        CHECK(SpotPriceOf(plan) == doctest::Approx(kSpotListUsdPerHour * (1 - 0.18)));

        // The same book inline prices the same.
        json inline_request = kSpotPlan;
        inline_request["price_book"] = Book(0.18);
        auto inline_plan =
            Body(c.Post("/v1/plans/spot", inline_request.dump(), "application/json"));
        CHECK(SpotPriceOf(inline_plan) == SpotPriceOf(plan));

        // A new version is what later plans get.
        json next = Book(0.3);
        next.erase("id");
        REQUIRE(c.Put("/v1/price-books/acme-2026", f.Auth(f.admin), next.dump(), "application/json")
                    ->status == 200);
        auto later =
            Body(c.Post("/v1/plans/spot", f.Auth(f.reader), request.dump(), "application/json"));
        CHECK(later["price_book"]["version"] == 2);
        CHECK(SpotPriceOf(later) == doctest::Approx(kSpotListUsdPerHour * (1 - 0.3)));

        // Without a key the stored book's terms are not shown; an unknown id is the request's
        // fault.
        CheckProblem(c.Post("/v1/plans/spot", request.dump(), "application/json"), 401,
                     "unauthenticated");
        request["price_book"] = "nope";
        CheckProblem(c.Post("/v1/plans/spot", f.Auth(f.reader), request.dump(), "application/json"),
                     422, "invalid_argument", "/price_book");
        request["price_book"] = "NOT AN ID!";
        CheckProblem(c.Post("/v1/plans/spot", f.Auth(f.reader), request.dump(), "application/json"),
                     422, "invalid_argument", "/price_book");
    }

    TEST_CASE("a saved scenario prices through its stored book, at the book's latest version") {
        MemoryFixture f;
        auto c = f.server->Client();
        REQUIRE(c.Post("/v1/price-books", f.Auth(f.admin), Book(0.18).dump(), "application/json")
                    ->status == 201);
        json request = kSpotPlan;
        request["price_book"] = "acme-2026";
        json scenario = f.SaveScenario(
            json{{"name", "booked"}, {"plan", "spot"}, {"request", request}}, f.reader);
        CHECK(scenario["saved_result"]["pricing_basis"] == "price_book");
        CHECK(scenario["saved_result"]["price_book"]["version"] == 1);
        CHECK(SpotPriceOf(scenario["saved_result"]) ==
              doctest::Approx(kSpotListUsdPerHour * (1 - 0.18)));
        bool echoed = false;
        for (const json& a : scenario["saved_result"]["assumptions"]) {
            echoed = echoed || a["name"] == "price_book.rules[0].discount_fraction";
        }
        CHECK(echoed);

        json next = Book(0.3);
        next.erase("id");
        REQUIRE(c.Put("/v1/price-books/acme-2026", f.Auth(f.admin), next.dump(), "application/json")
                    ->status == 200);
        const std::string path = "/v1/scenarios/" + scenario["id"].get<std::string>() + "/evaluate";
        // The book's current version is priced for a key of the scenario's team only.
        CheckProblem(c.Post(path.c_str(), "", "application/json"), 401, "unauthenticated");
        auto evaluated = Body(c.Post(path, f.Auth(f.reader), "", "application/json"));
        CHECK(evaluated["changed"] == true);
        CHECK(evaluated["result"]["price_book"]["version"] == 2);
        CHECK(SpotPriceOf(evaluated["result"]) == doctest::Approx(kSpotListUsdPerHour * (1 - 0.3)));

        // A scenario naming no stored book is refused under /request.
        request["price_book"] = "nope";
        CheckProblem(c.Post("/v1/scenarios", f.Auth(f.reader),
                            json{{"name", "x"}, {"plan", "spot"}, {"request", request}}.dump(),
                            "application/json"),
                     422, "invalid_argument", "/request/price_book");
    }

    TEST_CASE("writes need an admin key and a valid book; every fault names its field") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto post = [&](const json& body, const std::string& key) {
            return c.Post("/v1/price-books", f.Auth(key), body.dump(), "application/json");
        };
        CheckProblem(c.Post("/v1/price-books", Book(0.1).dump(), "application/json"), 401,
                     "unauthenticated");
        CheckProblem(post(Book(0.1), f.reader), 403, "forbidden");
        CheckProblem(c.Get("/v1/price-books"), 401, "unauthenticated");

        json no_id = Book(0.1);
        no_id.erase("id");
        CheckProblem(post(no_id, f.admin), 422, "invalid_argument", "/id");
        json bad_id = Book(0.1);
        bad_id["id"] = "Acme 2026";
        CheckProblem(post(bad_id, f.admin), 422, "invalid_argument", "/id");
        CheckProblem(post(Book(1.5), f.admin), 422, "invalid_argument",
                     "/rules/0/discount_fraction");
        json unknown = Book(0.1);
        unknown["version"] = 3;  // the store numbers versions
        CheckProblem(post(unknown, f.admin), 400, "malformed_request", "/version");
        json not_array = Book(0.1);
        not_array["rules"] = "aws";
        CheckProblem(post(not_array, f.admin), 400, "malformed_request", "/rules");
        json no_rules = Book(0.1);
        no_rules["rules"] = json::array();
        CheckProblem(post(no_rules, f.admin), 422, "invalid_argument", "/rules");
        json fixed = Book(0.1);
        fixed["rules"] = {{{"offering_id", "aws-nothing-like-this"}, {"usd_per_hour", 10}}};
        CheckProblem(post(fixed, f.admin), 422, "invalid_argument", "/rules/0/offering_id");
        CheckProblem(c.Post("/v1/price-books", f.Auth(f.admin), "{", "application/json"), 400,
                     "malformed_request");
        CheckProblem(
            c.Post("/v1/price-books?x=1", f.Auth(f.admin), Book(0.1).dump(), "application/json"),
            400, "malformed_request", "x");
        CHECK(f.stores.books->List().value().empty());

        REQUIRE(post(Book(0.1), f.admin)->status == 201);
        CheckProblem(c.Get("/v1/price-books/acme-2026?version=0", f.Auth(f.reader)), 422,
                     "invalid_argument", "version");
        CheckProblem(c.Get("/v1/price-books/acme-2026?version=two", f.Auth(f.reader)), 400,
                     "malformed_request", "version");
        CheckProblem(c.Get("/v1/price-books/acme-2026?version=9", f.Auth(f.reader)), 404,
                     "not_found", "version");
        CheckProblem(c.Put("/v1/price-books/nope", f.Auth(f.admin), R"({"name": "x", "rules": [
                             {"provider": "aws", "discount_fraction": 0.1}]})",
                           "application/json"),
                     404, "not_found", "id");
        CheckProblem(c.Put("/v1/price-books/acme-2026", f.Auth(f.admin), Book(0.1).dump(),
                           "application/json"),
                     400, "malformed_request", "/id");
        CheckProblem(c.Delete("/v1/price-books/acme-2026", f.Auth(f.reader)), 403, "forbidden");
        CHECK(f.stores.books->Get("acme-2026", std::nullopt).value().latest_version == 1);
    }
}

TEST_SUITE("price_book_routes") {
    // The bodies' members come from their request tables: the unknown-member answer lists
    // exactly the members each route reads.
    TEST_CASE(
        "an unknown member of a written book or a book reference is 400 listing the members") {
        MemoryFixture f;
        auto c = f.server->Client();
        StoreTwoVersions(f, c);
        auto detail = [](const httplib::Result& r) { return Body(r).value("detail", ""); };
        auto post = c.Post("/v1/price-books", f.Auth(f.admin), R"({"id": "x", "title": "x"})",
                           "application/json");
        CheckProblem(post, 400, "malformed_request", "/title");
        CHECK(detail(post) ==
              "/title: unknown member; known members: currency, id, name, owned_capacity, rules, "
              "shared_with");
        auto put = c.Put("/v1/price-books/acme-2026", f.Auth(f.admin, {{"If-Match", "\"b2\""}}),
                         R"({"id": "acme-2026"})", "application/json");
        CheckProblem(put, 400, "malformed_request", "/id");
        CHECK(detail(put) ==
              "/id: unknown member; known members: currency, name, owned_capacity, rules, "
              "shared_with");
        json request = kSpotPlan;
        request["price_book"] = {{"id", "acme-2026"}, {"revision", 1}};
        auto plan = c.Post("/v1/plans/spot", f.Auth(f.reader), request.dump(), "application/json");
        CheckProblem(plan, 400, "malformed_request", "/price_book/revision");
        CHECK(detail(plan) == "/price_book/revision: unknown member; known members: id, version");
    }

    TEST_CASE("a stored book keeps its currency and its rules' validity, and plans are told") {
        MemoryFixture f;
        auto c = f.server->Client();
        json eur = {
            {"id", "eu-2026"},
            {"name", "EU contract"},
            {"currency", "EUR"},
            {"rules",
             {{{"provider", "aws"}, {"discount_fraction", 0.2}, {"valid_until", "2026-12-31"}},
              {{"provider", "aws"}, {"discount_fraction", 0.1}, {"valid_from", "2027-01-01"}}}}};
        REQUIRE(
            c.Post("/v1/price-books", f.Auth(f.admin), eur.dump(), "application/json")->status ==
            201);
        json read = Body(c.Get("/v1/price-books/eu-2026", f.Auth(f.reader)));
        CHECK(read["currency"] == "EUR");
        CHECK(read["rules"] == eur["rules"]);  // as written: the currency is the book's
        json request = kSpotPlan;
        request["price_book"] = "eu-2026";
        request["start_date"] = "2027-02-01";
        json plan =
            Body(c.Post("/v1/plans/spot", f.Auth(f.reader), request.dump(), "application/json"));
        CHECK(plan["price_book"]["currency"] == "EUR");
        CHECK(plan["price_book"]["priced_on"] == "2027-02-01");
        CHECK(plan["on_demand_usd_per_hour"].get<double>() == doctest::Approx(55.04 * 0.9));
        CHECK(SpotPriceOf(plan) == doctest::Approx(kSpotListUsdPerHour));  // on-demand only
        std::vector<std::string> warned;
        for (const json& w : plan["price_book"]["warnings"]) warned.push_back(w["field"]);
        CHECK(warned ==
              std::vector<std::string>{"/price_book/rules/0/valid_until", "/price_book/currency"});
        // An amount in a book not in USD would mix currencies: refused, naming it.
        eur["id"] = "eu-fixed";
        eur["rules"] = {
            {{"offering_id", "aws-p5.48xlarge-us-east-1-on-demand"}, {"usd_per_hour", 40}}};
        CheckProblem(c.Post("/v1/price-books", f.Auth(f.admin), eur.dump(), "application/json"),
                     422, "invalid_argument", "/rules/0/usd_per_hour");
    }
}
