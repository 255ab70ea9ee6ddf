#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/http_checks.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

httplib::Result PostJson(const TestServer& server, const std::string& path, const json& body) {
    return server.Client().Post(path.c_str(), body.dump(), "application/json");
}

json Ok(const httplib::Result& r) {
    REQUIRE(r);
    INFO(r->body);
    REQUIRE(r->status == 200);
    return json::parse(r->body);
}

const char kP5OnDemand[] = "aws-p5.48xlarge-us-east-1-on-demand";
const char kP5Spot[] = "aws-p5.48xlarge-us-east-1-spot";
const char kLambda[] = "lambda-gpu_1x_h100-us-on-demand";

json TrainingBody() {
    return json::parse(R"({"model": {"params_b": 7}, "tokens_b": 20, "precision": "bf16",
                           "constraints": {"max_total_accelerators": 64, "deadline_hours": 1000},
                           "sort": "cost", "limit": 50})");
}

// Every rule kind: provider-wide, narrowed by family/accelerator/region/price type, a fixed
// rate, and one that matches nothing.
json EveryRuleKind() {
    return json::parse(std::string(R"({"name": "acme EDP", "id": "acme-2026", "version": 2,
        "rules": [
          {"provider": "aws", "discount_fraction": 0.18},
          {"provider": "aws", "instance_family": "p5", "accelerator": "h100-sxm",
           "region": "us-east-1", "price_types": ["spot"], "discount_fraction": 0.5},
          {"offering_id": ")") +
                       kLambda + R"(", "usd_per_hour": 2.5},
          {"provider": "azure", "discount_fraction": 0.3}]})");
}

}  // namespace

TEST_SUITE("price_book_codec") {
    // The options CSV of `request` (Accept: text/csv): the header's cells, and the cells of the
    // first row whose offering_id is `offering_id`, by header name.
    std::map<std::string, std::string> CsvRowOf(TestServer & server, const std::string& path,
                                                const json& request,
                                                const std::string& offering_id) {
        auto r = server.Client().Post(path, {{"Accept", "text/csv"}}, request.dump(),
                                      "application/json");
        REQUIRE(r);
        REQUIRE(r->status == 200);
        auto cells = [](const std::string& line) {
            std::vector<std::string> out(1);
            for (char c : line) {
                if (c == ',') {
                    out.emplace_back();
                } else if (c != '\r') {
                    out.back() += c;
                }
            }
            return out;
        };
        std::vector<std::string> lines;
        for (std::size_t at = 0; at < r->body.size();) {
            const std::size_t nl = r->body.find('\n', at);
            lines.push_back(r->body.substr(at, nl - at));
            at = nl == std::string::npos ? r->body.size() : nl + 1;
        }
        const std::vector<std::string> header = cells(lines.at(0));
        std::map<std::string, std::string> row;
        for (std::size_t i = 1; i < lines.size(); ++i) {
            const std::vector<std::string> c = cells(lines[i]);
            if (c.at(0) != offering_id) continue;
            for (std::size_t k = 0; k < header.size() && k < c.size(); ++k) row[header[k]] = c[k];
            break;
        }
        return row;
    }

    // The answer's `warnings` name /price_book/owned_capacity (its entries cover nothing the
    // plan prices), as every plan kind says it.
    bool WarnsOwnedCoversNothing(const json& body) {
        for (const json& w : body["warnings"]) {
            if (w["field"] == "/price_book/owned_capacity" &&
                w["detail"].get<std::string>().find("covers none of") != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    TEST_CASE("a training plan without a book says it priced at list") {
        TestServer server(SampleDeps());
        json body = Ok(PostJson(server, "/v1/plans/training", TrainingBody()));
        CHECK(body["pricing_basis"] == "list");
        CHECK_FALSE(body.contains("price_book"));
    }

    TEST_CASE(
        "a training plan through an inline book ranks by effective prices and shows list "
        "beside them") {
        TestServer server(SampleDeps());
        json request = TrainingBody();
        request["price_book"] = EveryRuleKind();
        json body = Ok(PostJson(server, "/v1/plans/training", request));
        CHECK(body["pricing_basis"] == "price_book");
        const json& book = body["price_book"];
        CHECK(book["name"] == "acme EDP");
        CHECK(book["id"] == "acme-2026");
        CHECK(book["version"] == 2);
        CHECK(book["rules_matched"] == json::array({1, 1, 1, 0}));
        CHECK(book["currency"] == "USD");
        REQUIRE(book["warnings"].size() == 2);
        CHECK(book["warnings"][0]["field"] == "/price_book/rules/1/price_types");  // spot
        CHECK(book["warnings"][1]["field"] == "/price_book/rules/3");
        bool saw_lambda = false;
        for (const json& option : body["options"]) {
            const json& o = option["offering"];
            REQUIRE(o.contains("list_usd_per_hour"));
            double list = o["list_usd_per_hour"].get<double>();
            double paid = o["usd_per_hour"].get<double>();
            if (o["id"] == kLambda) {
                saw_lambda = true;
                CHECK(list == doctest::Approx(4.29));
                CHECK(paid == doctest::Approx(2.5));
                CHECK(option["cluster_usd_per_hour"].get<double>() ==
                      doctest::Approx(2.5 * option["nodes"].get<double>()));
            } else if (o["id"] == kP5OnDemand) {
                CHECK(paid == doctest::Approx(list * 0.82));
            } else if (o["id"] == kP5Spot) {
                CHECK(paid == doctest::Approx(list * 0.5));
            }
        }
        CHECK(saw_lambda);
        // Costs follow the effective price: the options stay sorted by it.
        for (std::size_t i = 1; i < body["options"].size(); ++i) {
            CHECK(body["options"][i - 1]["cost_usd"].get<double>() <=
                  body["options"][i]["cost_usd"].get<double>());
        }
        bool echoed = false;
        for (const json& a : body["assumptions"]) {
            if (a["name"] == "price_book.rules[1].discount_fraction") {
                echoed = a["value"] == 0.5 && a["source"] == "request";
            }
        }
        CHECK(echoed);
    }

    TEST_CASE("spot, rent-vs-buy and inference plans take the book too") {
        TestServer server(SampleDeps());
        json spot = {{"job_hours", 10},
                     {"spot_offering_id", kP5Spot},
                     {"on_demand_offering_id", kP5OnDemand},
                     {"interruptions_per_hour", 0.1}};
        json list_spot = Ok(PostJson(server, "/v1/plans/spot", spot));
        spot["price_book"] = EveryRuleKind();
        json book_spot = Ok(PostJson(server, "/v1/plans/spot", spot));
        CHECK(book_spot["spot_usd_per_hour"].get<double>() ==
              doctest::Approx(list_spot["spot_usd_per_hour"].get<double>() * 0.5));
        CHECK(book_spot["on_demand_usd_per_hour"].get<double>() ==
              doctest::Approx(list_spot["on_demand_usd_per_hour"].get<double>() * 0.82));
        CHECK(book_spot["price_book"]["prices"].size() == 2);

        json rent = json::parse(R"({"buy": {"capex_usd": 800000, "opex_usd_per_month": 5000,
                                            "total_accelerators": 80}})");
        rent["rent"] = {{"offering_id", kLambda}};
        rent["price_book"] = EveryRuleKind();
        json book_rent = Ok(PostJson(server, "/v1/plans/rent-vs-buy", rent));
        CHECK(book_rent["pricing_basis"] == "price_book");
        REQUIRE(book_rent["price_book"]["prices"].size() == 1);
        CHECK(book_rent["price_book"]["prices"][0]["usd_per_hour"] == 2.5);
        CHECK(book_rent["price_book"]["prices"][0]["list_usd_per_hour"] == 4.29);
        CHECK(book_rent["price_book"]["prices"][0]["rule"] == 2);

        json inference = json::parse(R"({"model": {"params_b": 7}, "input_tokens": 100,
            "output_tokens": 10, "traffic": {"requests_per_second": 1}, "limit": 50})");
        inference["price_book"] = EveryRuleKind();
        json book_inference = Ok(PostJson(server, "/v1/plans/inference", inference));
        CHECK(book_inference["pricing_basis"] == "price_book");
        for (const json& option : book_inference["options"]) {
            CHECK(option["offering"].contains("list_usd_per_hour"));
        }
    }

    TEST_CASE(
        "bad books are refused naming the field, with the status of the same fault "
        "elsewhere") {
        TestServer server(SampleDeps());
        json request = TrainingBody();
        request["price_book"] = "acme-2026";
        CheckProblem(PostJson(server, "/v1/plans/training", request), 409, "database_required",
                     "/price_book");
        request["price_book"] = 3;
        CheckProblem(PostJson(server, "/v1/plans/training", request), 400, "malformed_request",
                     "/price_book");
        request["price_book"] = {{"name", "x"},
                                 {"rules", {{{"provider", "aws"}, {"discount_fraction", 1.5}}}}};
        CheckProblem(PostJson(server, "/v1/plans/training", request), 422, "invalid_argument",
                     "/price_book/rules/0/discount_fraction");
        request["price_book"] = {{"name", "x"},
                                 {"rules", {{{"provider", "aws"}, {"discount", 0.1}}}}};
        CheckProblem(PostJson(server, "/v1/plans/training", request), 400, "malformed_request",
                     "/price_book/rules/0/discount");
        request["price_book"] = {{"rules", {{{"provider", "aws"}, {"discount_fraction", 0.1}}}}};
        CheckProblem(PostJson(server, "/v1/plans/training", request), 422, "invalid_argument",
                     "/price_book/name");
        request["price_book"] = {{"name", "x"},
                                 {"rules", {{{"offering_id", "nope"}, {"usd_per_hour", 1}}}}};
        CheckProblem(PostJson(server, "/v1/plans/spot",
                              json{{"job_hours", 1},
                                   {"spot_offering_id", kP5Spot},
                                   {"price_book", request["price_book"]}}),
                     422, "invalid_argument", "/price_book/rules/0/offering_id");
        request["price_book"] = {
            {"name", "x"},
            {"rules",
             {{{"provider", "aws"}, {"price_types", {"reserved"}}, {"discount_fraction", 0.1}}}}};
        CheckProblem(PostJson(server, "/v1/plans/training", request), 422, "invalid_argument",
                     "/price_book/rules/0/price_types/0");
    }

    TEST_CASE(
        "an inline book's rules apply on the plan's day, to on-demand unless they opt in, in "
        "USD") {
        TestServer server(SampleDeps());
        json spot = {{"job_hours", 10},
                     {"spot_offering_id", kP5Spot},
                     {"on_demand_offering_id", kP5OnDemand},
                     {"interruptions_per_hour", 0.1},
                     {"start_date", "2026-12-06"}};
        spot["price_book"] = json::parse(R"({"name": "EU EDP", "currency": "EUR", "rules": [
            {"provider": "aws", "discount_fraction": 0.18, "valid_until": "2026-06-30"},
            {"provider": "aws", "discount_fraction": 0.1, "valid_from": "2026-07-01"}]})");
        json plan = Ok(PostJson(server, "/v1/plans/spot", spot));
        const json& book = plan["price_book"];
        CHECK(book["currency"] == "EUR");
        CHECK(book["priced_on"] == "2026-12-06");
        CHECK(book["rules_matched"] == json::array({0, 1}));
        // The enterprise discount in force is on-demand only: spot keeps its list price.
        CHECK(plan["on_demand_usd_per_hour"].get<double>() == doctest::Approx(55.04 * 0.9));
        CHECK(plan["spot_usd_per_hour"].get<double>() == doctest::Approx(20.9934));
        std::vector<std::string> warned;
        for (const json& w : book["warnings"]) warned.push_back(w["field"]);
        CHECK(warned ==
              std::vector<std::string>{"/price_book/rules/0/valid_until", "/price_book/currency"});
        // Opting spot in discounts it, and is warned.
        spot["price_book"]["rules"][1]["price_types"] = {"on_demand", "spot"};
        json with_spot = Ok(PostJson(server, "/v1/plans/spot", spot));
        CHECK(with_spot["spot_usd_per_hour"].get<double>() == doctest::Approx(20.9934 * 0.9));
        CHECK(with_spot["price_book"]["warnings"][1]["field"] == "/price_book/rules/1/price_types");
        // Faults name the member, 422 as every bad value of a book.
        spot["price_book"]["rules"][1]["valid_from"] = "2026-07";
        CheckProblem(PostJson(server, "/v1/plans/spot", spot), 422, "invalid_argument",
                     "/price_book/rules/1/valid_from");
        spot["price_book"]["rules"][1]["valid_from"] = "2026-07-01";
        spot["price_book"]["currency"] = "euro";
        CheckProblem(PostJson(server, "/v1/plans/spot", spot), 422, "invalid_argument",
                     "/price_book/currency");
    }

    TEST_CASE("owned capacity in a book: training plans use it first") {
        TestServer server(SampleDeps());
        json request = json::parse(R"({"model": {"params_b": 7}, "tokens_b": 100,
            "precision": "bf16", "start_date": "2026-12-01", "limit": 50,
            "constraints": {"providers": ["aws"], "price_types": ["on_demand", "spot"],
                            "node_counts": [2]}})");
        // Two p5 instances owned for a year: the run's hours are sunk, so it ranks first.
        request["price_book"] = {{"name", "owned p5"},
                                 {"owned_capacity",
                                  {{{"offering_id", kP5OnDemand},
                                    {"nodes", 2},
                                    {"start_date", "2026-11-01"},
                                    {"end_date", "2027-11-01"},
                                    {"usd_per_hour", 30}}}}};
        json body = Ok(PostJson(server, "/v1/plans/training", request));
        CHECK(body["pricing_basis"] == "price_book");
        const json& rec = body["recommendation"];
        CHECK(rec["offering"]["id"] == kP5OnDemand);
        CHECK(rec["expected_cost_usd"] == 0);
        const json& owned = rec["owned"];
        const double run = rec["expected_wall_clock_hours"].get<double>();
        CHECK(owned["instance_hours"].get<double>() == doctest::Approx(2 * run));
        CHECK(owned["marginal_cost_usd"] == 0);
        CHECK(owned["sunk_usd"].get<double>() == doctest::Approx(2 * run * 30).epsilon(1e-6));
        CHECK(owned["fully_loaded_cost_usd"] == owned["sunk_usd"]);
        CHECK(owned["without_owned_cost_usd"].get<double>() > 0);
        CHECK(body["budget"]["total_usd"] == 0);
        CHECK(body["budget"]["owned_usd"] == owned["sunk_usd"]);
        CHECK(body["reasoning"].get<std::string>().find("no marginal cost") != std::string::npos);
        bool echoed = false;
        for (const json& a : body["assumptions"]) {
            echoed = echoed || (a["name"] == "price_book.owned_capacity[0].usd_per_hour" &&
                                a["value"] == 30 && a["source"] == "request");
        }
        CHECK(echoed);
        // Options on other offerings are not covered.
        for (const json& option : body["options"]) {
            if (option["offering"]["id"] != kP5OnDemand) CHECK(option["owned"].is_null());
        }
        CHECK(body["price_book"]["warnings"].empty());
        CHECK_FALSE(WarnsOwnedCoversNothing(body));
        // The options CSV says the same: a spreadsheet reader sees the marginal cost as such.
        auto csv = CsvRowOf(server, "/v1/plans/training", request, kP5OnDemand);
        CHECK(std::stod(csv.at("owned_instance_hours")) == doctest::Approx(2 * run));
        CHECK(std::stod(csv.at("owned_sunk_usd")) ==
              doctest::Approx(owned["sunk_usd"].get<double>()));
        CHECK(std::stod(csv.at("without_owned_cost_usd")) ==
              doctest::Approx(owned["without_owned_cost_usd"].get<double>()));
        CHECK(std::stod(csv.at("expected_cost_usd")) == 0);

        // Owned only before the runs start: no option is covered, and the answer says so.
        request["price_book"]["owned_capacity"][0]["end_date"] = "2026-11-02";
        body = Ok(PostJson(server, "/v1/plans/training", request));
        CHECK(body["recommendation"]["owned"].is_null());
        CHECK(WarnsOwnedCoversNothing(body));
    }

    // Two p5 on-demand instances owned for a year at $30 an hour (OwnedP5Book).
    json OwnedP5Book() {
        return {{"name", "owned p5"},
                {"owned_capacity",
                 {{{"offering_id", kP5OnDemand},
                   {"nodes", 2},
                   {"start_date", "2026-11-01"},
                   {"end_date", "2027-11-01"},
                   {"usd_per_hour", 30}}}}};
    }

    TEST_CASE("owned capacity in a spot plan: the on-demand path's owned hours beat spot") {
        TestServer server(SampleDeps());
        // 10 h on two instances from 2026-12-01, both owned: the on-demand path costs nothing
        // at the margin (20 instance-hours sunk at $30: $600; $1,100.80 at $55.04 without).
        json spot = {{"job_hours", 10},
                     {"nodes", 2},
                     {"spot_offering_id", kP5Spot},
                     {"on_demand_offering_id", kP5OnDemand},
                     {"interruptions_per_hour", 0},
                     {"start_date", "2026-12-01"},
                     {"price_book", OwnedP5Book()}};
        json body = Ok(PostJson(server, "/v1/plans/spot", spot));
        CHECK(body["price_book"]["warnings"].empty());
        CHECK(body["start_date"] == "2026-12-01");
        CHECK(body["start_date_source"] == "request");
        const json& owned = body["owned"];
        CHECK(owned["instance_hours"] == 20);
        CHECK(owned["sunk_usd"] == 600);
        CHECK(owned["marginal_cost_usd"] == 0);
        CHECK(owned["fully_loaded_cost_usd"] == 600);
        CHECK(owned["without_owned_cost_usd"].get<double>() == doctest::Approx(1100.80));
        CHECK(body["on_demand_cost_usd"] == 0);
        // Spot: 10 h x 2 x $20.9934 = $419.87, a loss against the marginal $0.
        CHECK(body["expected_spot_cost_usd"].get<double>() == doctest::Approx(419.87));
        CHECK(body["expected_savings_usd"].get<double>() == doctest::Approx(-419.87));
        CHECK(body["expected_savings_fraction"].is_null());
        CHECK(body["recommendation"] == "on_demand");
        CHECK(body["reasoning"].get<std::string>().find("running on owned capacity beats spot") !=
              std::string::npos);

        // A 100 h job from 2026-10-30, two days before the reservation, one instance of two
        // owned: the last 52 h of one instance, 52 of 200 instance-hours; the other 148 paid at
        // $55.04 ($8,145.92); spot ($4,198.68) still saves.
        spot["job_hours"] = 100;
        spot["start_date"] = "2026-10-30";
        spot["price_book"]["owned_capacity"][0]["nodes"] = 1;
        body = Ok(PostJson(server, "/v1/plans/spot", spot));
        CHECK(body["owned"]["instance_hours"] == 52);
        CHECK(body["on_demand_cost_usd"].get<double>() == doctest::Approx(8145.92));
        CHECK(body["expected_savings_usd"].get<double>() == doctest::Approx(8145.92 - 4198.68));
        CHECK(body["reasoning"].get<std::string>().find("the other 148.0 instance-hours") !=
              std::string::npos);
        CHECK(body["recommendation"] == "spot");

        // Before the reservation: nothing covered, said so; the plan is the one without a book.
        spot["start_date"] = "2026-01-01";
        body = Ok(PostJson(server, "/v1/plans/spot", spot));
        CHECK(body["owned"].is_null());
        CHECK(body["on_demand_cost_usd"].get<double>() == doctest::Approx(11008));
        CHECK(body["reasoning"].get<std::string>().find("covers none of the on-demand path") !=
              std::string::npos);
        CHECK(body["price_book"]["warnings"].empty());
        CHECK(WarnsOwnedCoversNothing(body));

        spot["start_date"] = "2026-13-01";
        CheckProblem(PostJson(server, "/v1/plans/spot", spot), 422, "invalid_argument",
                     "/start_date");
    }

    TEST_CASE("owned capacity in a rent-vs-buy plan: the covered rent is sunk") {
        TestServer server(SampleDeps());
        // Two p5 instances' work a month at full use (16 x 730 accelerator-hours, $80,358.40
        // at $55.04 an instance-hour) for a year; one instance owned every hour of it: half of
        // every month's rent is sunk (730 instance-hours at $30, $21,900).
        json book = OwnedP5Book();
        book["owned_capacity"][0]["nodes"] = 1;
        book["owned_capacity"][0]["start_date"] = "2020-01-01";
        book["owned_capacity"][0]["end_date"] = "2040-01-01";
        json request = {
            {"buy",
             {{"capex_usd", 1000000}, {"opex_usd_per_month", 10000}, {"total_accelerators", 16}}},
            {"rent", {{"offering_id", kP5OnDemand}, {"accelerator_hours_per_month", 11680}}},
            {"horizon_months", 12},
            {"discount_rate_annual", 0},
            {"price_book", book}};
        json body = Ok(PostJson(server, "/v1/plans/rent-vs-buy", request));
        CHECK(body["price_book"]["warnings"].empty());
        CHECK(body["monthly_rent_usd"].get<double>() == doctest::Approx(80358.40));
        const json& owned = body["owned"];
        CHECK(owned["instance_hours"].get<double>() == doctest::Approx(12 * 730));
        CHECK(owned["sunk_usd"].get<double>() == doctest::Approx(12 * 21900));
        CHECK(owned["marginal_cost_usd"].get<double>() == doctest::Approx(12 * 40179.20));
        CHECK(owned["without_owned_cost_usd"].get<double>() == doctest::Approx(12 * 80358.40));
        CHECK(owned["first_month"].get<std::string>().size() == 7);
        CHECK(body["total_rent_usd"] == owned["marginal_cost_usd"]);
        CHECK(body["npv_rent_usd"] == owned["marginal_cost_usd"]);
        CHECK(body["cumulative"][1]["rent_usd"].get<double>() == doctest::Approx(40179.20));
        // 1,000,000 / (40,179.20 - 10,000) months against 1,000,000 / 70,358.40 without.
        CHECK(body["break_even_months"].get<double>() ==
              doctest::Approx(1000000 / 30179.20).epsilon(1e-9));
        CHECK(body["break_even_utilization"].is_null());
        CHECK(body["recommendation"] == "buy");
        CHECK(body["reasoning"].get<std::string>().find("covers 8760.0 instance-hours") !=
              std::string::npos);
        for (const json& option : body["rent_options"]) {
            if (option["price_type"] == "on_demand") {
                CHECK(option["owned_instance_hours"].get<double>() == doctest::Approx(8760));
            }
        }

        // A book owning other capacity: nothing covered, said so, no warning.
        book["owned_capacity"][0]["offering_id"] = kLambda;
        request["price_book"] = book;
        body = Ok(PostJson(server, "/v1/plans/rent-vs-buy", request));
        CHECK(body["owned"].is_null());
        CHECK(body["total_rent_usd"].get<double>() == doctest::Approx(12 * 80358.40));
        CHECK(body["reasoning"].get<std::string>().find("covers none of the rent path's hours") !=
              std::string::npos);
        CHECK(body["price_book"]["warnings"].empty());
        CHECK(WarnsOwnedCoversNothing(body));
    }

    TEST_CASE("owned capacity in a book: serving plans use it first, ranked at the margin") {
        TestServer server(SampleDeps());
        json request = json::parse(R"({"model": {"params_b": 7}, "precision": "bf16",
            "input_tokens": 512, "output_tokens": 256, "traffic": {"requests_per_second": 10},
            "start_date": "2027-01-01", "budget_months": 12, "limit": 100, "include_stale": true,
            "constraints": {"price_types": ["on_demand"]}})");
        json listed = Ok(PostJson(server, "/v1/plans/inference", request));
        REQUIRE(listed["recommendation"]["offering"]["id"] != kP5OnDemand);
        CHECK(listed["recommendation"]["owned"].is_null());
        CHECK(listed["budget"]["owned_usd"].is_null());
        // One p5 instance owned for January to March 2027 (90 days, 2160 h) at 30 USD an hour.
        json owned_entry = {{"offering_id", kP5OnDemand},
                            {"nodes", 1},
                            {"start_date", "2026-10-01"},
                            {"end_date", "2027-04-01"},
                            {"usd_per_hour", 30}};
        request["price_book"] = {{"name", "owned p5"}, {"owned_capacity", {owned_entry}}};
        json body = Ok(PostJson(server, "/v1/plans/inference", request));
        CHECK(body["price_book"]["warnings"].empty());
        const json* p5 = nullptr;
        for (const json& option : body["options"]) {
            if (option["offering"]["id"] == kP5OnDemand) {
                p5 = &option;
            } else {
                CHECK(option["owned"].is_null());
            }
        }
        REQUIRE(p5 != nullptr);
        const json& use = (*p5)["owned"];
        const double nodes = (*p5)["nodes"].get<double>();
        const double price = (*p5)["offering"]["usd_per_hour"].get<double>();
        const double window = nodes * 8760;  // 365 days on every node
        CHECK(use["instance_hours"].get<double>() == doctest::Approx(2160));
        CHECK(use["sunk_usd"].get<double>() == doctest::Approx(2160 * 30));
        CHECK(use["without_owned_cost_usd"].get<double>() ==
              doctest::Approx(window * price).epsilon(1e-6));
        CHECK(use["marginal_cost_usd"].get<double>() ==
              doctest::Approx((window - 2160) * price).epsilon(1e-6));
        CHECK(use["fully_loaded_cost_usd"].get<double>() ==
              doctest::Approx((window - 2160) * price + 2160 * 30).epsilon(1e-6));
        CHECK(use["without_owned_monthly_cost_usd"].get<double>() ==
              doctest::Approx(nodes * price * 730).epsilon(1e-6));
        CHECK(use["marginal_monthly_cost_usd"] == (*p5)["monthly_cost_usd"]);
        CHECK((*p5)["monthly_cost_usd"].get<double>() ==
              doctest::Approx(nodes * price * 730 * (window - 2160) / window).epsilon(1e-6));
        CHECK(use["marginal_usd_per_million_tokens"] == (*p5)["usd_per_million_tokens"]);
        CHECK(use["without_owned_usd_per_million_tokens"].get<double>() ==
              doctest::Approx((*p5)["usd_per_million_tokens"].get<double>() * window /
                              (window - 2160))
                  .epsilon(1e-5));
        auto csv = CsvRowOf(server, "/v1/plans/inference", request, kP5OnDemand);
        CHECK(std::stod(csv.at("owned_instance_hours")) == doctest::Approx(2160));
        CHECK(std::stod(csv.at("owned_sunk_usd")) == doctest::Approx(2160 * 30));
        CHECK(std::stod(csv.at("without_owned_monthly_cost_usd")) ==
              doctest::Approx(nodes * price * 730).epsilon(1e-6));

        // The whole fleet owned for the window: the p5 ranks first at no marginal cost.
        owned_entry["nodes"] = 64;
        owned_entry["end_date"] = "2028-01-01";
        request["price_book"]["owned_capacity"] = {owned_entry};
        json all = Ok(PostJson(server, "/v1/plans/inference", request));
        const json& rec = all["recommendation"];
        CHECK(rec["offering"]["id"] == kP5OnDemand);
        CHECK(all["options"][0]["offering"]["id"] == kP5OnDemand);
        CHECK(rec["monthly_cost_usd"] == 0);
        CHECK(rec["owned"]["marginal_cost_usd"] == 0);
        CHECK(all["budget"]["total_usd"] == 0);
        CHECK(all["budget"]["owned_usd"] == rec["owned"]["sunk_usd"]);
        CHECK(all["reasoning"].get<std::string>().find("no marginal cost") != std::string::npos);
        // Its FOCUS forecast: one Committed row a month of the hours used, billed 0 at the
        // commitment's rate, and one of the owned hours the fleet leaves unused.
        auto focus = server.Client().Post("/v1/plans/inference?format=focus", request.dump(),
                                          "application/json");
        REQUIRE(focus);
        CHECK(focus->status == 200);
        auto count = [&](const std::string& cell) {
            std::size_t n = 0;
            for (std::size_t at = focus->body.find(cell); at != std::string::npos;
                 at = focus->body.find(cell, at + 1)) {
                ++n;
            }
            return n;
        };
        CHECK(count(",Used,") == 12);
        CHECK(count(",Unused,") == (rec["nodes"].get<int>() < 64 ? 12U : 0U));

        // Owned capacity of an offering no option uses: warned in the answer, not applied.
        owned_entry["offering_id"] = kP5Spot;
        request["price_book"]["owned_capacity"] = {owned_entry};
        json none = Ok(PostJson(server, "/v1/plans/inference", request));
        CHECK(none["price_book"]["warnings"].empty());
        CHECK(WarnsOwnedCoversNothing(none));
        CHECK(none["recommendation"]["owned"].is_null());
    }

    TEST_CASE("bad owned capacity is refused naming the field") {
        TestServer server(SampleDeps());
        json request = TrainingBody();
        json entry = {{"offering_id", kP5OnDemand},
                      {"nodes", 1},
                      {"start_date", "2026-12-01"},
                      {"end_date", "2027-12-01"},
                      {"usd_per_hour", 30}};
        auto with = [&](const json& e) {
            json r = request;
            r["price_book"] = {{"name", "x"}, {"owned_capacity", json::array({e})}};
            return PostJson(server, "/v1/plans/training", r);
        };
        json e = entry;
        e["nodes"] = 0;
        CheckProblem(with(e), 422, "invalid_argument", "/price_book/owned_capacity/0/nodes");
        e = entry;
        e["end_date"] = "2026-11-30";
        CheckProblem(with(e), 422, "invalid_argument", "/price_book/owned_capacity/0/end_date");
        e = entry;
        e["start_date"] = "December";
        CheckProblem(with(e), 422, "invalid_argument", "/price_book/owned_capacity/0/start_date");
        e = entry;
        e["offering_id"] = "nope";
        CheckProblem(with(e), 422, "invalid_argument", "/price_book/owned_capacity/0/offering_id");
        e = entry;
        e.erase("usd_per_hour");
        CheckProblem(with(e), 422, "invalid_argument", "/price_book/owned_capacity/0/usd_per_hour");
        e = entry;
        e["nodes"] = "two";
        CheckProblem(with(e), 400, "malformed_request", "/price_book/owned_capacity/0/nodes");
        e = entry;
        e["reserved"] = true;
        CheckProblem(with(e), 400, "malformed_request", "/price_book/owned_capacity/0/reserved");
        json r = request;
        r["price_book"] = {{"name", "x"}, {"owned_capacity", "all of it"}};
        CheckProblem(PostJson(server, "/v1/plans/training", r), 400, "malformed_request",
                     "/price_book/owned_capacity");
        r["price_book"] = {{"name", "x"}, {"owned_capacity", json::array()}};
        CheckProblem(PostJson(server, "/v1/plans/training", r), 422, "invalid_argument",
                     "/price_book/rules");
    }

    TEST_CASE("a rent-vs-buy plan answers as FOCUS rows of both paths") {
        TestServer server(SampleDeps());
        json rent = json::parse(R"({"buy": {"capex_usd": 800000, "opex_usd_per_month": 5000,
                                            "total_accelerators": 80}, "horizon_months": 3})");
        rent["rent"] = {{"offering_id", kLambda}};
        auto r = server.Client().Post("/v1/plans/rent-vs-buy?format=focus", rent.dump(),
                                      "application/json");
        REQUIRE(r);
        INFO(r->body);
        CHECK(r->status == 200);
        CHECK(r->get_header_value("Content-Type").rfind("text/csv", 0) == 0);
        // Header, 3 rent months, the purchase, 3 x (amortisation + opex).
        std::size_t lines = 0;
        for (char c : r->body) lines += c == '\n' ? 1 : 0;
        CHECK(lines == 1 + 3 + 1 + 6);
        CHECK(r->body.find("Purchase") != std::string::npos);
        CHECK(r->body.find("gpucost-path") != std::string::npos);
        auto bad = server.Client().Post("/v1/plans/rent-vs-buy?format=xlsx", rent.dump(),
                                        "application/json");
        CheckProblem(bad, 422, "invalid_argument", "format");
    }
}
