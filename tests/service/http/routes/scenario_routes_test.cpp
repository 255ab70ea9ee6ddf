#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/service/http/routes/memory_fixture.hpp"
#include "tests/support/http_checks.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::MemoryFixture;

namespace {

const std::string kScenario = R"({"name": "p5 training run", "plan": "spot", "request": {
    "job_hours": 100, "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot",
    "on_demand_offering_id": "aws-p5.48xlarge-us-east-1-on-demand",
    "interruptions_per_hour": 0.1, "checkpoint_minutes": 3, "restart_minutes": 6}})";

}  // namespace

TEST_SUITE("scenario_routes") {
    TEST_CASE("a serving-plan scenario carries the model's warnings, as the plan route does") {
        MemoryFixture f;
        auto c = f.server->Client();
        // params_b that no reading of Llama-2-7B's structure gives: the model warns.
        const json request = {{"model",
                               {{"params_b", 20},
                                {"layers", 32},
                                {"hidden_size", 4096},
                                {"attention_heads", 32},
                                {"ffn_hidden_size", 11008},
                                {"gated_mlp", true},
                                {"vocab_size", 32000}}},
                              {"input_tokens", 512},
                              {"output_tokens", 256},
                              {"traffic", {{"requests_per_second", 1}}}};
        const json direct = Body(c.Post("/v1/plans/inference", request.dump(), "application/json"));
        auto saved =
            c.Post("/v1/scenarios", f.Auth(f.reader),
                   json{{"name", "serving"}, {"plan", "inference"}, {"request", request}}.dump(),
                   "application/json");
        REQUIRE(saved);
        REQUIRE(saved->status == 201);
        const std::string id = Body(saved)["id"];
        auto evaluated =
            Body(c.Post(("/v1/scenarios/" + id + "/evaluate").c_str(), "", "application/json"));
        auto model_warnings = [](const json& answer) {
            json out = json::array();
            for (const auto& w : answer.value("warnings", json::array())) {
                if (w["field"].get<std::string>().rfind("/model", 0) == 0) {
                    out.push_back(w);
                }
            }
            return out;
        };
        REQUIRE(model_warnings(direct).size() == 1);
        CHECK(model_warnings(evaluated["result"]) == model_warnings(direct));
        CHECK(model_warnings(evaluated["saved_result"]) == model_warnings(direct));
    }

    TEST_CASE("a saved scenario evaluates as FOCUS forecast rows tagged with its id") {
        MemoryFixture f;
        auto c = f.server->Client();
        const json request = {
            {"model", {{"params_b", 7}}}, {"input_tokens", 512},
            {"output_tokens", 256},       {"traffic", {{"requests_per_second", 1}}},
            {"start_date", "2027-01-01"}, {"budget_months", 2}};
        auto saved =
            c.Post("/v1/scenarios", f.Auth(f.reader),
                   json{{"name", "serving"}, {"plan", "inference"}, {"request", request}}.dump(),
                   "application/json");
        REQUIRE(saved);
        REQUIRE(saved->status == 201);
        const std::string id = Body(saved)["id"];
        // The live plan route's FOCUS rows for the same request, and the evaluation's.
        auto live = c.Post("/v1/plans/inference?format=focus", request.dump(), "application/json");
        auto evaluated = c.Post(("/v1/scenarios/" + id + "/evaluate?format=focus").c_str(), "",
                                "application/json");
        REQUIRE(live);
        REQUIRE(evaluated);
        REQUIRE(evaluated->status == 200);
        CHECK(evaluated->get_header_value("Content-Type").rfind("text/csv", 0) == 0);
        const std::string header = evaluated->body.substr(0, evaluated->body.find("\r\n"));
        CHECK(header == live->body.substr(0, live->body.find("\r\n")));
        // One row per month of the budget view (two), each carrying the scenario's tag.
        std::size_t rows = 0;
        std::size_t tagged = 0;
        for (std::size_t at = evaluated->body.find("\r\n"); at != std::string::npos;
             at = evaluated->body.find("\r\n", at + 2)) {
            const std::string line =
                evaluated->body.substr(at + 2, evaluated->body.find("\r\n", at + 2) - at - 2);
            if (line.empty()) continue;
            ++rows;
            if (line.find("\"\"gpucost-scenario\"\":\"\"" + id + "\"\"") != std::string::npos)
                ++tagged;
        }
        CHECK(rows == 2);
        CHECK(tagged == rows);
        // A spot scenario has no forecast: 422 naming format; another format value is 422 too.
        auto spot = c.Post("/v1/scenarios", f.Auth(f.reader), kScenario, "application/json");
        REQUIRE(spot);
        const std::string spot_id = Body(spot)["id"];
        CheckProblem(c.Post(("/v1/scenarios/" + spot_id + "/evaluate?format=focus").c_str(), "",
                            "application/json"),
                     422, "invalid_argument", "format");
        CheckProblem(c.Post(("/v1/scenarios/" + id + "/evaluate?format=xml").c_str(), "",
                            "application/json"),
                     422, "invalid_argument", "format");
    }

    TEST_CASE("a saved scenario re-evaluates on new prices and shows what changed") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto saved = c.Post("/v1/scenarios", f.Auth(f.reader), kScenario, "application/json");
        REQUIRE(saved);
        REQUIRE(saved->status == 201);
        json scenario = Body(saved);
        const std::string id = scenario["id"];
        CHECK(saved->get_header_value("Location") == "/v1/scenarios/" + id);
        CHECK(scenario["plan"] == "spot");
        CHECK(scenario["created_by"] == "dashboard");
        CHECK(scenario["saved_result"].is_object());

        auto list = Body(c.Get("/v1/scenarios"));
        REQUIRE(list["items"].size() == 1);
        CHECK(list["items"][0]["name"] == "p5 training run");
        CHECK(Body(c.Get(("/v1/scenarios/" + id).c_str()))["request"]["job_hours"] == 100);

        // Nothing changed yet.
        auto same =
            Body(c.Post(("/v1/scenarios/" + id + "/evaluate").c_str(), "", "application/json"));
        CHECK(same["changed"] == false);
        CHECK(same["result"] == same["saved_result"]);
        const std::string before_write = same["evaluated_at"];

        // A negotiated on-demand rate moves the answer.
        auto put = c.Put("/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand/price", f.Auth(f.admin),
                         R"({"usd_per_hour": 45.0, "source": "NEGOTIATED"})", "application/json");
        REQUIRE(put);
        REQUIRE(put->status == 200);
        auto moved =
            Body(c.Post(("/v1/scenarios/" + id + "/evaluate").c_str(), "", "application/json"));
        CHECK(moved["changed"] == true);
        CHECK(moved["change_count"].get<int>() > 0);
        bool found_on_demand = false;
        for (const auto& change : moved["changes"]) {
            if (change["saved"] == 55.04 && change["now"] == 45.0) {
                found_on_demand = true;
                CHECK(change["delta"].get<double>() == doctest::Approx(-10.04));
            }
        }
        CHECK(found_on_demand);

        // Time travel to before the write gives the saved answer back.
        auto then = Body(c.Post(("/v1/scenarios/" + id + "/evaluate?as_of=" + before_write).c_str(),
                                "", "application/json"));
        CHECK(then["changed"] == false);
        CHECK(then["as_of"] == before_write);

        // The plan endpoints take the same as_of.
        auto plan_now =
            Body(c.Post("/v1/plans/spot", scenario["request"].dump(), "application/json"));
        auto plan_then = Body(c.Post(("/v1/plans/spot?as_of=" + before_write).c_str(),
                                     scenario["request"].dump(), "application/json"));
        // The same answer, but for which catalog it names (an as_of catalog by its instant).
        json saved_result = scenario["saved_result"];
        CHECK(plan_then["catalog_version"].get<std::string>().find('@') != std::string::npos);
        plan_then.erase("catalog_version");
        saved_result.erase("catalog_version");
        CHECK(plan_then == saved_result);
        CHECK(plan_now == moved["result"]);
    }

    TEST_CASE("scenario requests are validated like plan requests, under /request") {
        MemoryFixture f;
        auto c = f.server->Client();
        CheckProblem(c.Post("/v1/scenarios", kScenario, "application/json"), 401,
                     "unauthenticated");
        CheckProblem(c.Post("/v1/scenarios", f.Auth(f.reader),
                            R"({"name": "x", "plan": "moon", "request": {}})", "application/json"),
                     422, "invalid_argument", "/plan");
        CheckProblem(c.Post("/v1/scenarios", f.Auth(f.reader),
                            R"({"name": "x", "plan": "spot", "request": {"job_hours": "ten"}})",
                            "application/json"),
                     400, "malformed_request", "/request/job_hours");
        CheckProblem(c.Post("/v1/scenarios", f.Auth(f.reader), R"({"plan": "spot", "request": {}})",
                            "application/json"),
                     422, "invalid_argument", "/name");  // a missing field is 422 everywhere
        CheckProblem(c.Post("/v1/scenarios", f.Auth(f.reader), kScenario, "text/plain"), 415,
                     "unsupported_media_type");
        CheckProblem(c.Post("/v1/scenarios", f.Auth(f.reader),
                            R"({"name": "", "plan": "spot", "request": {}})", "application/json"),
                     422, "invalid_argument", "/name");
        CheckProblem(c.Get("/v1/scenarios/999"), 404, "not_found");
        CheckProblem(c.Get("/v1/scenarios/abc"), 404, "not_found");
        CheckProblem(c.Post("/v1/scenarios/999/evaluate", "", "application/json"), 404,
                     "not_found");
        CheckProblem(c.Get("/v1/scenarios?limit=0"), 422, "invalid_argument", "limit");
        CheckProblem(c.Get("/v1/scenarios?cursor=x"), 422, "invalid_argument", "cursor");
        CHECK(f.ScenarioCount() == 0);
    }

    TEST_CASE("training and inference plans can be saved and re-evaluated too") {
        MemoryFixture f;
        auto c = f.server->Client();
        for (const std::string& body :
             {std::string(R"({"name": "7B pretraining", "plan": "training",
                 "request": {"model": {"params_b": 7}, "tokens_b": 100, "limit": 3}})"),
              std::string(R"({"name": "7B chat", "plan": "inference",
                 "request": {"model": {"params_b": 7}, "input_tokens": 500, "output_tokens": 200,
                             "traffic": {"requests_per_second": 2}}})")}) {
            auto saved = c.Post("/v1/scenarios", f.Auth(f.reader), body, "application/json");
            REQUIRE(saved);
            CHECK_MESSAGE(saved->status == 201, saved->body);
            if (saved->status != 201) {
                continue;
            }
            const std::string id = Body(saved)["id"];
            auto again =
                Body(c.Post(("/v1/scenarios/" + id + "/evaluate").c_str(), "", "application/json"));
            CHECK(again["changed"] == false);
        }
    }

    TEST_CASE(
        "a scenario names its model by library id, and an unknown id is refused under /request") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto saved = c.Post("/v1/scenarios", f.Auth(f.reader),
                            R"({"name": "Llama serving", "plan": "inference",
                                "request": {"model": {"id": "llama-3.1-8b", "seq_len": 8192},
                                            "input_tokens": 500, "output_tokens": 200,
                                            "traffic": {"requests_per_second": 2}}})",
                            "application/json");
        REQUIRE(saved);
        CHECK_MESSAGE(saved->status == 201, saved->body);
        if (saved->status == 201) {
            const std::string id = Body(saved)["id"];
            auto again =
                Body(c.Post(("/v1/scenarios/" + id + "/evaluate").c_str(), "", "application/json"));
            CHECK(again["changed"] == false);
        }
        CheckProblem(c.Post("/v1/scenarios", f.Auth(f.reader),
                            R"({"name": "x", "plan": "training",
                                "request": {"model": "llama-9b", "tokens_b": 1}})",
                            "application/json"),
                     422, "invalid_argument", "/request/model");
    }

    TEST_CASE("scenario lists page with a cursor") {
        MemoryFixture f;
        auto c = f.server->Client();
        for (int i = 0; i < 3; ++i) {
            auto r = c.Post("/v1/scenarios", f.Auth(f.admin), kScenario, "application/json");
            REQUIRE(r);
            REQUIRE(r->status == 201);
        }
        auto first = Body(c.Get("/v1/scenarios?limit=2"));
        CHECK(first["items"].size() == 2);
        REQUIRE(first["next_cursor"].is_string());
        auto second = Body(c.Get(
            ("/v1/scenarios?limit=2&cursor=" + first["next_cursor"].get<std::string>()).c_str()));
        CHECK(second["items"].size() == 1);
        CHECK(second["next_cursor"].is_null());
    }

    TEST_CASE(
        "saving with an Idempotency-Key saves once; the same request written another way replays") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto key = [&](const std::string& k) { return f.Auth(f.admin, {{"Idempotency-Key", k}}); };
        auto first = c.Post("/v1/scenarios", key("save-1"), kScenario, "application/json");
        REQUIRE(first);
        REQUIRE(first->status == 201);
        const auto id = Body(first)["id"];
        auto again = c.Post("/v1/scenarios", key("save-1"), kScenario, "application/json");
        REQUIRE(again);
        CHECK(again->status == 201);
        CHECK(again->get_header_value("Idempotent-Replayed") == "true");
        CHECK(Body(again)["id"] == id);
        json reordered = json::parse(kScenario);  // members in another order, 100 as 100.0
        reordered["request"]["job_hours"] = 100.0;
        auto rewritten =
            c.Post("/v1/scenarios", key("save-1"), reordered.dump(2), "application/json");
        REQUIRE(rewritten);
        CHECK(Body(rewritten)["id"] == id);
        json other = json::parse(kScenario);
        other["name"] = "another run";
        CheckProblem(c.Post("/v1/scenarios", key("save-1"), other.dump(), "application/json"), 422,
                     "invalid_argument", "Idempotency-Key");
        CheckProblem(c.Post("/v1/scenarios", key(""), kScenario, "application/json"), 400,
                     "malformed_request", "Idempotency-Key");
        CHECK(f.ScenarioCount() == 1);
        // A name with a NUL would be stored cut at it.
        json nul = json::parse(kScenario);
        nul["name"] = std::string("run\0x", 5);
        CheckProblem(c.Post("/v1/scenarios", f.Auth(f.admin), nul.dump(), "application/json"), 422,
                     "invalid_argument", "/name");
    }

    TEST_CASE(
        "evaluate takes no body: a POST without Content-Length is served, as curl -X POST sends "
        "it") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto saved = c.Post("/v1/scenarios", f.Auth(f.admin), kScenario, "application/json");
        REQUIRE(saved);
        REQUIRE(saved->status == 201);
        const std::string id = Body(saved)["id"].get<std::string>();
        std::string answer =
            f.server->Raw("POST /v1/scenarios/" + id +
                          "/evaluate HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        CHECK(answer.rfind("HTTP/1.1 200", 0) == 0);
        // A POST that needs a body still says what is missing.
        std::string needs =
            f.server->Raw("POST /v1/scenarios HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        CHECK(needs.rfind("HTTP/1.1 411", 0) == 0);
    }

    TEST_CASE("a catalog read before every price says null for its dates, not an empty string") {
        MemoryFixture f;
        auto c = f.server->Client();
        json catalog = Body(c.Get("/v1/catalog?as_of=2000-01-01"));
        CHECK(catalog["oldest_as_of"].is_null());
        CHECK(catalog["newest_as_of"].is_null());
        json current = Body(c.Get("/v1/catalog"));
        CHECK(current["newest_as_of"].is_string());
    }
}

TEST_SUITE("scenario_routes") {
    // The bodies' members come from their request tables: the unknown-member answer lists
    // exactly the members each route reads.
    TEST_CASE("an unknown member of a scenario body is 400 listing the members read") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto detail = [](const httplib::Result& r) { return Body(r).value("detail", ""); };
        auto draft =
            c.Post("/v1/scenarios", f.Auth(f.reader), R"({"nmae": "x"})", "application/json");
        CheckProblem(draft, 400, "malformed_request", "/nmae");
        CHECK(detail(draft) == "/nmae: unknown member; known members: name, plan, request, tags");
        auto patch =
            c.Patch("/v1/scenarios/999", f.Auth(f.reader), R"({"tag": []})", "application/json");
        CheckProblem(patch, 400, "malformed_request", "/tag");
        CHECK(detail(patch) == "/tag: unknown member; known members: name, tags");
        auto progress = c.Put("/v1/scenarios/999/progress", f.Auth(f.reader),
                              R"({"tokens_done": 1, "as_of": "2026-11-21"})", "application/json");
        CheckProblem(progress, 400, "malformed_request", "/tokens_done");
        CHECK(detail(progress) ==
              "/tokens_done: unknown member; known members: as_of, tokens_done_b");
    }
}
