#include <doctest/doctest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/model_library.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

httplib::Result Post(const TestServer& s, const std::string& path, const json& body) {
    return s.Client().Post(path.c_str(), body.dump(), "application/json");
}

json Body(const httplib::Result& r, int status = 200) {
    REQUIRE(r);
    CHECK(r->status == status);
    return json::parse(r->body);
}

json HfConfig(const std::string& name) {
    std::ifstream in(std::string(GPUCOST_SOURCE_DIR) + "/tests/data/hf_configs/" + name + ".json");
    std::ostringstream text;
    text << in.rdbuf();
    return json::parse(text.str());
}

// Llama-2-7B pre-training as published (Touvron et al. 2023): 2 T tokens at 4k, 4M-token
// batches, on A100s; only the model member varies.
json Llama2Training(json model) {
    return {{"model", std::move(model)},
            {"tokens_b", 2000},
            {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 256}}},
            {"precision", "bf16"},
            {"global_batch_tokens", 4194304}};
}

json Llama2Structure() {
    return {{"params_b", 6.7},          {"layers", 32},
            {"hidden_size", 4096},      {"attention_heads", 32},
            {"ffn_hidden_size", 11008}, {"vocab_size", 32000},
            {"seq_len", 4096}};
}

}  // namespace

TEST_SUITE("model_routes") {
    TEST_CASE("GET /v1/models lists the library with sources, and filters by family") {
        TestServer server(SampleDeps());
        json all = Body(server.Client().Get("/v1/models"));
        CHECK(all["total_count"].get<int>() >= 30);
        CHECK(all["items"].size() == all["total_count"].get<std::size_t>());
        for (const json& m : all["items"]) {
            CHECK(!m["source"].get<std::string>().empty());
            CHECK(m["structure"]["layers"].is_number());
        }
        json qwen = Body(server.Client().Get("/v1/models?family=qwen"));
        CHECK(qwen["total_count"].get<int>() >= 6);
        for (const json& m : qwen["items"]) CHECK(m["family"] == "qwen");
        CHECK(Body(server.Client().Get("/v1/models?bogus=1"), 400)["code"] == "malformed_request");
    }

    TEST_CASE("GET /v1/models/{id} resolves the structure; an unknown id is 404 with close ids") {
        TestServer server(SampleDeps());
        json m = Body(server.Client().Get("/v1/models/deepseek-v3"));
        CHECK(m["id"] == "deepseek-v3");
        CHECK(m["resolved"]["params_b"].get<double>() == doctest::Approx(671).epsilon(0.01));
        CHECK(m["resolved"]["kv_lora_rank"] == 512);
        json missing = Body(server.Client().Get("/v1/models/llama-3.1-7b"), 404);
        CHECK(missing["detail"].get<std::string>().find("llama-3.1-8b") != std::string::npos);
        CHECK(missing["field"] == "id");  // as every other unknown id in a path
    }

    TEST_CASE("a library id, an id with overrides and a Hugging Face config all estimate") {
        TestServer server(SampleDeps());
        json by_id = Body(Post(server, "/v1/estimates/training", Llama2Training("llama-2-7b")));
        CHECK(by_id["model"]["params_b"].get<double>() == doctest::Approx(6.738).epsilon(0.002));
        CHECK(by_id["model"]["seq_len"] == 4096);
        json overridden = Body(Post(server, "/v1/estimates/training",
                                    Llama2Training({{"id", "llama-2-7b"}, {"seq_len", 2048}})));
        CHECK(overridden["model"]["seq_len"] == 2048);
        json hf =
            Body(Post(server, "/v1/estimates/training",
                      Llama2Training({{"hf_config", HfConfig("llama-2-7b")}, {"seq_len", 4096}})));
        CHECK(hf["accelerator_hours"].get<double>() ==
              doctest::Approx(by_id["accelerator_hours"].get<double>()).epsilon(0.001));
    }

    TEST_CASE("Llama-2-7B as params_b plus a structure without gated_mlp is within 2 % of the id") {
        TestServer server(SampleDeps());
        json by_id = Body(Post(server, "/v1/estimates/training", Llama2Training("llama-2-7b")));
        json given =
            Body(Post(server, "/v1/estimates/training", Llama2Training(Llama2Structure())));
        CHECK(given["model"]["gated_mlp"] == true);
        CHECK(given["warnings"].empty());
        CHECK(given["accelerator_hours"].get<double>() ==
              doctest::Approx(by_id["accelerator_hours"].get<double>()).epsilon(0.02));
        CHECK(given["memory_per_accelerator_gb"].get<double>() ==
              doctest::Approx(by_id["memory_per_accelerator_gb"].get<double>()).epsilon(0.02));
        bool recorded = false;
        for (const json& d : given["model"]["derived"]) {
            if (d["field"] == "/model/gated_mlp") recorded = true;
        }
        CHECK(recorded);
    }

    TEST_CASE("params_b that no reading of the structure matches answers with a warning") {
        TestServer server(SampleDeps());
        json model = Llama2Structure();
        model["params_b"] = 20;
        model["gated_mlp"] = true;
        json e = Body(Post(server, "/v1/estimates/training", Llama2Training(model)));
        REQUIRE(e["warnings"].size() == 1);
        CHECK(e["warnings"][0]["field"] == "/model/params_b");
        CHECK(e["model"]["params_b"].get<double>() == doctest::Approx(6.74).epsilon(0.01));
    }

    TEST_CASE("plans carry the model's warnings too") {
        TestServer server(SampleDeps());
        json model = Llama2Structure();
        model["params_b"] = 20;
        model["gated_mlp"] = true;
        json plan = Body(Post(server, "/v1/plans/inference",
                              {{"model", model},
                               {"input_tokens", 512},
                               {"output_tokens", 256},
                               {"traffic", {{"requests_per_second", 1}}}}));
        // Price warnings about offerings (a stale best_by_provider entry) may be there too.
        std::vector<std::string> model_warnings;
        for (const auto& w : plan["warnings"]) {
            const auto field = w["field"].get<std::string>();
            if (field.starts_with("/model")) model_warnings.push_back(field);
        }
        CHECK(model_warnings == std::vector<std::string>{"/model/params_b"});
        json agreeing = Body(Post(server, "/v1/plans/inference",
                                  {{"model", "llama-2-7b"},
                                   {"input_tokens", 512},
                                   {"output_tokens", 256},
                                   {"traffic", {{"requests_per_second", 1}}}}));
        // Price warnings about the recommended offering may be there; none about the model.
        for (const auto& w : agreeing.value("warnings", json::array())) {
            CHECK(w["field"].get<std::string>().rfind("/model", 0) != 0);
        }
    }

    TEST_CASE("inference estimates and plans take the three model forms") {
        TestServer server(SampleDeps());
        for (const json& model :
             {json("llama-3.1-70b"), json{{"id", "llama-3.1-70b"}, {"seq_len", 32768}},
              json{{"hf_config", HfConfig("llama-3.1-70b")}}}) {
            CAPTURE(model.dump().substr(0, 80));
            json e =
                Body(Post(server, "/v1/estimates/inference",
                          {{"model", model},
                           {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 8}}},
                           {"input_tokens", 1024},
                           {"output_tokens", 256},
                           {"tensor_parallel", 8}}));
            CHECK(e["model"]["kv_heads"] == 8);
            json plan = Body(Post(server, "/v1/plans/inference",
                                  {{"model", model},
                                   {"input_tokens", 512},
                                   {"output_tokens", 256},
                                   {"traffic", {{"requests_per_second", 1}}}}));
            CHECK(plan["options"].size() >= 1);
            json training = Body(Post(server, "/v1/plans/training",
                                      {{"model", model},
                                       {"tokens_b", 1},
                                       {"constraints", {{"max_total_accelerators", 64}}},
                                       {"limit", 3}}));
            CHECK(training.contains("options"));
        }
    }

    TEST_CASE("params_b 70 alone serves on tensor parallel 8") {
        TestServer server(SampleDeps());
        json e = Body(Post(server, "/v1/estimates/inference",
                           {{"model", {{"params_b", 70}}},
                            {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 8}}},
                            {"input_tokens", 1024},
                            {"output_tokens", 256},
                            {"tensor_parallel", 8}}));
        CHECK(e["tensor_parallel"] == 8);
        CHECK(e["model"]["attention_heads"].get<int>() % 8 == 0);
        CHECK(e["model"]["kv_heads"] == 8);
    }

    TEST_CASE("bad model members: unknown id 422 with close matches, wrong shapes 400") {
        TestServer server(SampleDeps());
        json unknown =
            Body(Post(server, "/v1/estimates/training", Llama2Training("llama-3-70b")), 422);
        CHECK(unknown["field"] == "/model");
        CHECK(unknown["detail"].get<std::string>().find("llama-3.1-70b") != std::string::npos);
        json unknown_id = Body(
            Post(server, "/v1/estimates/training", Llama2Training({{"id", "mixtral-8x9b"}})), 422);
        CHECK(unknown_id["field"] == "/model/id");
        json both =
            Body(Post(server, "/v1/estimates/training",
                      Llama2Training({{"id", "llama-2-7b"}, {"hf_config", json::object()}})),
                 422);
        CHECK(both["field"] == "/model/hf_config");
        CHECK(Body(Post(server, "/v1/estimates/training", Llama2Training(7)), 400)["field"] ==
              "/model");
        CHECK(Body(Post(server, "/v1/estimates/training", Llama2Training({{"params", 7}})),
                   400)["code"] == "malformed_request");
        json bad_hf = HfConfig("llama-2-7b");
        bad_hf["hidden_size"] = "big";
        CHECK(Body(Post(server, "/v1/estimates/training", Llama2Training({{"hf_config", bad_hf}})),
                   400)["field"] == "/model/hf_config/hidden_size");
    }

    // The library is the server's (Deps::models), not the process's: two servers in one
    // process serve their own, and the estimate decodes an id against its server's library.
    TEST_CASE("each server serves and decodes against the model library its Deps hold") {
        // models.csv's header and its Llama 2 7B row, under another id.
        std::ifstream seed(std::string(GPUCOST_SOURCE_DIR) + "/schema/seed/models.csv");
        std::string header;
        std::string row;
        std::getline(seed, header);
        while (std::getline(seed, row) && row.rfind("llama-2-7b,", 0) != 0) {
        }
        REQUIRE(row.rfind("llama-2-7b,", 0) == 0);
        const std::string csv = header + "\nhouse-test-7b" + row.substr(row.find(',')) + "\n";
        auto own = gpucost::pricing::LoadModelLibrary(csv, "models.csv (test)");
        REQUIRE_MESSAGE(own.ok(), (own.ok() ? "" : own.error().message));
        gpucost::http::Deps deps = SampleDeps();
        deps.models = std::make_shared<const gpucost::pricing::ModelLibrary>(own.value());
        TestServer custom(deps);
        TestServer compiled_in(SampleDeps());

        json listed = Body(custom.Client().Get("/v1/models"));
        CHECK(listed["total_count"] == 1);
        CHECK(listed["items"][0]["id"] == "house-test-7b");
        Body(custom.Client().Get("/v1/models/house-test-7b"));
        Body(custom.Client().Get("/v1/models/llama-2-7b"), 404);
        CHECK(Body(compiled_in.Client().Get("/v1/models"))["total_count"].get<int>() >= 30);
        Body(compiled_in.Client().Get("/v1/models/house-test-7b"), 404);

        json estimate =
            Body(Post(custom, "/v1/estimates/training", Llama2Training("house-test-7b")));
        CHECK(estimate["model"]["params_b"].get<double>() > 6);
        json unknown =
            Body(Post(compiled_in, "/v1/estimates/training", Llama2Training("house-test-7b")), 422);
        CHECK(unknown["field"] == "/model");
        Body(Post(custom, "/v1/plans/training",
                  json::parse(R"({"model": "house-test-7b", "tokens_b": 20, "limit": 1,
                      "constraints": {"max_total_accelerators": 64}})")));
        Body(Post(compiled_in, "/v1/plans/training",
                  json::parse(R"({"model": "house-test-7b", "tokens_b": 20, "limit": 1})")),
             422);
    }
}
