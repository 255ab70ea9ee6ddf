#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/catalog_loader.hpp"
#include "tests/support/sample_catalog.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

json Llama65Training() {
    return json::parse(R"({
      "model": {"params_b": 65.2, "layers": 80, "hidden_size": 8192, "attention_heads": 64,
                "kv_heads": 64, "ffn_hidden_size": 22016, "vocab_size": 32000, "seq_len": 2048,
                "active_params_b": null, "gated_mlp": true},
      "tokens_b": 1400,
      "hardware": {"accelerator": "h100-sxm", "total_accelerators": 2048},
      "precision": "bf16",
      "global_batch_tokens": 4194304,
      "parallelism": {"tensor": 8, "pipeline": 4, "data": 64, "zero_stage": 1, "recompute": "selective"}
    })");
}

httplib::Result Post(TestServer& s, const std::string& path, const json& body) {
    return s.Client().Post(path.c_str(), body.dump(), "application/json");
}

// The body of an estimate the route must answer (200).
json Answered(TestServer& s, const json& body) {
    auto r = Post(s, "/v1/estimates/inference", body);
    REQUIRE(r);
    REQUIRE_MESSAGE(r->status == 200, r->body);
    return json::parse(r->body);
}

void CheckProblem(const httplib::Result& r, int status, const std::string& field) {
    REQUIRE(r);
    CHECK(r->status == status);
    CHECK(r->get_header_value("Content-Type") == "application/problem+json");
    json body = json::parse(r->body);
    CHECK(body["field"] == field);
}

}  // namespace

TEST_SUITE("estimate_routes") {
    TEST_CASE("POST /v1/estimates/training answers the issue's example with every field") {
        TestServer server(SampleDeps());
        auto r = Post(server, "/v1/estimates/training", Llama65Training());
        REQUIRE(r);
        CHECK(r->status == 200);
        json b = json::parse(r->body);
        for (const char* k :
             {"wall_clock_hours", "accelerator_hours", "ideal_wall_clock_hours",
              "ideal_accelerator_hours", "mfu", "achieved_tflops_per_accelerator",
              "tokens_per_second", "step_time_s", "memory_per_accelerator_gb", "fits_in_memory",
              "parallelism", "breakdown", "bottleneck", "assumptions"}) {
            CHECK_MESSAGE(b.contains(k), k);
        }
        CHECK(b["parallelism"]["tensor"] == 8);
        CHECK(b["parallelism"]["recompute"] == "selective");
        CHECK(b["wall_clock_hours"].get<double>() > b["ideal_wall_clock_hours"].get<double>());
        CHECK(b["breakdown"].contains("bubble_s"));
        CHECK(b["assumptions"].size() > 10);
    }

    // A training estimate answered one number: how far it may be off was said only by the
    // plans (their efficiency_spread_fraction), never beside the estimate itself.
    TEST_CASE("a training estimate states its run-time spread: p10 and p90 of wall_clock_hours") {
        TestServer server(SampleDeps());
        auto spread_of = [](const json& b) {
            for (const json& a : b["assumptions"]) {
                if (a["name"] == "efficiency_spread_fraction") return a["value"].get<double>();
            }
            return -1.0;
        };
        auto r = Post(server, "/v1/estimates/training", Llama65Training());
        REQUIRE(r);
        REQUIRE(r->status == 200);
        json dense = json::parse(r->body);
        const double hours = dense["wall_clock_hours"].get<double>();
        CHECK(spread_of(dense) == doctest::Approx(0.20));
        CHECK(dense["wall_clock_hours_p10"].get<double>() == doctest::Approx(hours / 1.2));
        CHECK(dense["wall_clock_hours_p90"].get<double>() == doctest::Approx(hours * 1.2));
        // A mixture-of-experts model: the estimator's measured error on its MoE rows, 0.40.
        auto m = Post(server, "/v1/estimates/training",
                      json::parse(R"({"model": "qwen3-30b-a3b", "tokens_b": 100,
                                      "precision": "fp8",
                                      "hardware": {"accelerator": "h100-sxm",
                                                   "total_accelerators": 16}})"));
        REQUIRE(m);
        REQUIRE_MESSAGE(m->status == 200, m->body);
        json moe = json::parse(m->body);
        CHECK(spread_of(moe) == doctest::Approx(0.40));
        CHECK(moe["wall_clock_hours_p90"].get<double>() ==
              doctest::Approx(moe["wall_clock_hours"].get<double>() * 1.4));
    }

    TEST_CASE("parallelism.context splits each sequence and is echoed with its ring's time") {
        TestServer server(SampleDeps());
        json req = json::parse(R"({
          "model": {"layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8,
                    "ffn_hidden_size": 14336, "gated_mlp": true, "vocab_size": 128256,
                    "seq_len": 8192},
          "tokens_b": 15,
          "hardware": {"accelerator": "h100-sxm", "total_accelerators": 16},
          "global_batch_tokens": 1048576,
          "parallelism": {"tensor": 1, "context": 2, "pipeline": 1, "micro_batch_size": 1}
        })");
        auto r = Post(server, "/v1/estimates/training", req);
        REQUIRE(r);
        CHECK(r->status == 200);
        json b = json::parse(r->body);
        CHECK(b["parallelism"]["context"] == 2);
        CHECK(b["parallelism"]["data"] == 8);
        CHECK(b["breakdown"]["context_comm_s"].is_number());
        req["parallelism"]["context"] = 3;
        CheckProblem(Post(server, "/v1/estimates/training", req), 422, "/parallelism/context");
    }

    TEST_CASE("the training estimate states the share of a step idle in the pipeline bubble") {
        TestServer server(SampleDeps());
        auto r = Post(server, "/v1/estimates/training", Llama65Training());  // pipeline 4
        REQUIRE(r);
        REQUIRE(r->status == 200);
        json b = json::parse(r->body);
        REQUIRE(b.contains("pipeline_bubble_fraction"));
        double fraction = b["pipeline_bubble_fraction"].get<double>();
        CHECK(fraction > 0);
        CHECK(fraction < 1);
        CHECK(fraction == doctest::Approx(b["breakdown"]["bubble_s"].get<double>() /
                                          b["step_time_s"].get<double>()));
        json flat = Llama65Training();
        flat["parallelism"]["pipeline"] = 1;
        flat["parallelism"]["data"] = 256;
        auto no_pipeline = Post(server, "/v1/estimates/training", flat);
        REQUIRE(no_pipeline);
        REQUIRE(no_pipeline->status == 200);
        CHECK(json::parse(no_pipeline->body)["pipeline_bubble_fraction"] == 0);
    }

    TEST_CASE("a minimal training request searches the layout and reports a runner-up") {
        TestServer server(SampleDeps());
        json req = {{"model", {{"params_b", 7}}},
                    {"tokens_b", 100},
                    {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 64}}}};
        auto r = Post(server, "/v1/estimates/training", req);
        REQUIRE(r);
        CHECK(r->status == 200);
        json b = json::parse(r->body);
        CHECK(b["layout_searched"] == true);
        CHECK(b["runner_up"].is_object());
        CHECK(b["model"]["layers"].get<int>() > 20);
    }

    TEST_CASE("a library model named as itself brings its published training recipe") {
        // DeepSeek-V3 by name came out at 2.2x the published GPU-hours with
        // bf16, a 4M-token batch and an exposed all-to-all.
        TestServer server(SampleDeps());
        json req = {{"model", "deepseek-v3"},
                    {"tokens_b", 14800},
                    {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 2048}}}};
        auto r = Post(server, "/v1/estimates/training", req);
        REQUIRE(r);
        REQUIRE(r->status == 200);
        json b = json::parse(r->body);
        auto find = [](const json& body, const std::string& name) {
            for (const auto& a : body["assumptions"]) {
                if (a["name"] == name) return a;
            }
            return json();
        };
        CHECK(find(b, "recipe_precision_bytes_per_element")["value"] == 1.0);
        CHECK(find(b, "global_batch_tokens")["value"] == 62914560.0);
        CHECK(find(b, "expert_overlap_fraction")["value"] == 0.9);
        CHECK(find(b, "recipe_layout_applied")["value"] == 1.0);
        CHECK(find(b, "global_batch_tokens")["source"].get<std::string>().find(
                  "training recipe of deepseek-v3") != std::string::npos);
        CHECK(b["parallelism"]["pipeline"] == 16);
        CHECK(b["parallelism"]["expert"] == 64);
        CHECK(b["parallelism"]["tensor"] == 1);
        CHECK(b["tokens_per_step"].get<double>() == doctest::Approx(62914560.0));

        CHECK(find(b, "recipe_applied")["value"] == 1.0);

        // A request that differs from the recipe (another precision) is another setup: the
        // recipe fills nothing, and says why.
        req["precision"] = "bf16";
        req["parallelism"] = {{"pipeline", 8}};
        auto own = Post(server, "/v1/estimates/training", req);
        REQUIRE(own);
        REQUIRE(own->status == 200);
        json o = json::parse(own->body);
        CHECK(find(o, "recipe_precision_bytes_per_element").is_null());
        CHECK(find(o, "recipe_layout_applied").is_null());
        CHECK(o["parallelism"]["pipeline"] == 8);
        CHECK(find(o, "global_batch_tokens")["value"] == 4194304.0);
        CHECK(find(o, "recipe_applied")["value"] == 0.0);
        CHECK(find(o, "recipe_applied")["description"].get<std::string>().find("precision bf16") !=
              std::string::npos);
        // Named with "recipe", it fills what the request leaves unset all the same.
        req["recipe"] = "deepseek-v3";
        auto named = Post(server, "/v1/estimates/training", req);
        REQUIRE(named);
        REQUIRE(named->status == 200);
        json n = json::parse(named->body);
        CHECK(find(n, "recipe_applied")["value"] == 1.0);
        CHECK(find(n, "global_batch_tokens")["value"] == 62914560.0);
        CHECK(find(n, "recipe_precision_bytes_per_element").is_null());  // bf16 as asked
        req["recipe"] = "deepseek-v4";
        CheckProblem(Post(server, "/v1/estimates/training", req), 422, "/recipe");

        // Overridden structure is another model: no recipe. So is fine-tuning.
        json changed = {{"model", {{"id", "deepseek-v3"}, {"layers", 31}}},
                        {"tokens_b", 100},
                        {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 2048}}}};
        auto other = Post(server, "/v1/estimates/training", changed);
        REQUIRE(other);
        REQUIRE(other->status == 200);
        CHECK(find(json::parse(other->body), "global_batch_tokens")["source"] !=
              find(b, "global_batch_tokens")["source"]);
    }

    TEST_CASE("DeepSeek-V3 in BF16 at another batch does not take DualPipe's overlap") {
        // The request NVIDIA's Megatron run answers (BF16, 8192 x 4096 tokens, 1,024 H100):
        // DeepSeek's recipe (FP8, DualPipe, 15360 sequences) is another setup.
        TestServer server(SampleDeps());
        json req = json::parse(R"({"model":"deepseek-v3","tokens_b":1000,"precision":"bf16",
            "global_batch_tokens":33554432,
            "hardware":{"accelerator":"h100-sxm","total_accelerators":1024}})");
        auto r = Post(server, "/v1/estimates/training", req);
        REQUIRE(r);
        REQUIRE(r->status == 200);
        json b = json::parse(r->body);
        std::map<std::string, json> by_name;
        for (const auto& a : b["assumptions"]) by_name[a["name"].get<std::string>()] = a;
        CHECK(by_name["expert_overlap_fraction"]["value"] == 0.0);
        CHECK(by_name["recipe_applied"]["value"] == 0.0);
        CHECK(by_name["recipe_layout_applied"].is_null());
        // And NVIDIA's published layout for it is accepted (expert groups over tensor x data).
        req["parallelism"] = {
            {"tensor", 2}, {"pipeline", 16}, {"expert", 64}, {"micro_batch_size", 1}};
        auto layout = Post(server, "/v1/estimates/training", req);
        REQUIRE(layout);
        CHECK(layout->status == 200);
        if (layout->status == 200) {
            json l = json::parse(layout->body);
            CHECK(l["parallelism"]["expert"] == 64);
            CHECK(l["parallelism"]["expert_tensor"] == 1);
            CHECK(l["parallelism"]["data"] == 32);
        }
    }

    TEST_CASE("the MoE layout search stays at the distributed optimizer unless nothing fits") {
        // NVIDIA's Megatron run of this request: 644,781.55 tokens/s (dgxc-benchmarking
        // deepseek_v3, 52.04 s per step). Searched over every ZeRO stage the answer was 1.14 M,
        // won by sharded weights no published MoE run used.
        TestServer server(SampleDeps());
        json req = json::parse(R"({"model":"deepseek-v3","tokens_b":1000,"precision":"bf16",
            "global_batch_tokens":33554432,
            "hardware":{"accelerator":"h100-sxm","total_accelerators":1024}})");
        auto assumptions = [](const json& answer) {
            std::map<std::string, json> by_name;
            for (const auto& a : answer["assumptions"]) by_name[a["name"].get<std::string>()] = a;
            return by_name;
        };
        auto r = Post(server, "/v1/estimates/training", req);
        REQUIRE(r);
        REQUIRE(r->status == 200);
        json b = json::parse(r->body);
        CHECK(b["parallelism"]["zero_stage"].get<int>() <= 1);
        CHECK(assumptions(b)["moe_search_max_zero_stage"]["value"] == 1.0);
        const double published = 644781.55;
        CHECK(b["tokens_per_second"].get<double>() > 0.75 * published);
        CHECK(b["tokens_per_second"].get<double>() < 1.25 * published);
        // On 192 H100 only sharded weights fit: the search widens and says so.
        req["hardware"]["total_accelerators"] = 192;
        auto small = Post(server, "/v1/estimates/training", req);
        REQUIRE(small);
        REQUIRE(small->status == 200);
        json s = json::parse(small->body);
        CHECK(s["parallelism"]["zero_stage"] == 3);
        CHECK(assumptions(s)["moe_search_max_zero_stage"]["value"] == 3.0);
        // A stage the request names is used as given, with no search cap to echo.
        req["hardware"]["total_accelerators"] = 1024;
        req["parallelism"] = {{"zero_stage", 3}};
        auto named = Post(server, "/v1/estimates/training", req);
        REQUIRE(named);
        REQUIRE(named->status == 200);
        json n = json::parse(named->body);
        CHECK(n["parallelism"]["zero_stage"] == 3);
        CHECK(assumptions(n).count("moe_search_max_zero_stage") == 0);
    }

    TEST_CASE("the moe switches are read and echoed; a bad value names its member") {
        // Megatron-Bridge's Qwen3 30B-A3B recipes capture the router in CUDA graphs and
        // overlap the EP all-to-all (moe_a2a_overlap) on H100, laid out as their 16-GPU run.
        TestServer server(SampleDeps());
        json req = json::parse(R"({"model":"qwen3-30b-a3b","tokens_b":1000,"precision":"bf16",
            "global_batch_tokens":2097152,
            "hardware":{"accelerator":"h100-sxm","total_accelerators":16},
            "parallelism":{"tensor":1,"pipeline":2,"virtual_stages":12,"expert":8,
                           "micro_batch_size":1},
            "moe":{"cuda_graphs":"router","a2a_overlap":true}})");
        auto r = Post(server, "/v1/estimates/training", req);
        REQUIRE(r);
        REQUIRE(r->status == 200);
        const json answer = json::parse(r->body);
        std::map<std::string, json> by_name;
        for (const auto& a : answer["assumptions"]) by_name[a["name"].get<std::string>()] = a;
        CHECK(by_name["moe_cuda_graphs"]["value"] == 1.0);
        CHECK(by_name["moe_a2a_overlap"]["value"] == 1.0);
        req["moe"] = {{"cuda_graphs", "eager"}};
        CheckProblem(Post(server, "/v1/estimates/training", req), 422, "/moe/cuda_graphs");
        req["moe"] = {{"overlap", true}};
        CheckProblem(Post(server, "/v1/estimates/training", req), 400, "/moe/overlap");
    }

    TEST_CASE("impossible training requests are 422 or 400 naming the field") {
        TestServer server(SampleDeps());
        json bad = Llama65Training();
        bad["parallelism"]["data"] = 32;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422, "/parallelism");
        bad = Llama65Training();
        bad["hardware"]["accelerator"] = "h100-sxn";
        auto unknown = Post(server, "/v1/estimates/training", bad);
        CheckProblem(unknown, 422, "/hardware/accelerator");
        CHECK(json::parse(unknown->body)["detail"].get<std::string>().find("h100-sxm") !=
              std::string::npos);
        bad = Llama65Training();
        bad["tokens_b"] = 0;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422, "/tokens_b");
        bad = Llama65Training();
        bad.erase("parallelism");
        bad["hardware"]["total_accelerators"] = 1;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422,
                     "/hardware/total_accelerators");
        bad = Llama65Training();
        bad["tokens_b"] = "lots";
        CheckProblem(Post(server, "/v1/estimates/training", bad), 400, "/tokens_b");
        bad = Llama65Training();
        bad["model"]["colour"] = "red";
        CheckProblem(Post(server, "/v1/estimates/training", bad), 400, "/model/colour");
        bad = Llama65Training();
        // A number is the right JSON type for a count (JSON has no integer type; 64.0 is read
        // as 64): one this large is an invalid value, not a malformed request.
        bad["hardware"]["total_accelerators"] = 1e300;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422,
                     "/hardware/total_accelerators");
        bad = Llama65Training();
        bad["hardware"]["total_accelerators"] = 64.5;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 400,
                     "/hardware/total_accelerators");
        bad = Llama65Training();
        bad["hardware"]["total_accelerators"] = 4000000000LL;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422,
                     "/hardware/total_accelerators");
        // The hardware object's old names are unknown fields now: 400 naming each.
        bad = Llama65Training();
        bad["hardware"]["count"] = 2048;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 400, "/hardware/count");
        bad = Llama65Training();
        bad["hardware"]["accelerators_per_node"] = 8;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 400,
                     "/hardware/accelerators_per_node");
        bad = Llama65Training();
        bad["hardware"]["accelerator_count"] = 0;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422,
                     "/hardware/accelerator_count");
        bad = Llama65Training();
        bad["hardware"]["accelerator"] = "tpu-v5e";
        bad["precision"] = "fp8";
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422, "/precision");
        auto r = server.Client().Post("/v1/estimates/training", "{not json", "application/json");
        REQUIRE(r);
        CHECK(r->status == 400);
    }

    TEST_CASE("a QLoRA request echoes its mode and adapters; fine-tuning fields are checked") {
        TestServer server(SampleDeps());
        json req = {{"model",
                     {{"params_b", 6.74},
                      {"layers", 32},
                      {"hidden_size", 4096},
                      {"ffn_hidden_size", 11008},
                      {"gated_mlp", true},
                      {"seq_len", 512}}},
                    {"tokens_b", 0.01},
                    {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 1}}},
                    {"mode", "qlora"},
                    {"lora_rank", 16},
                    {"lora_target_modules", {"q_proj", "v_proj"}}};
        auto r = Post(server, "/v1/estimates/training", req);
        REQUIRE(r);
        CHECK(r->status == 200);
        json b = json::parse(r->body);
        CHECK(b["mode"] == "qlora");
        CHECK(b["fine_tuning"]["lora_rank"] == 16);
        CHECK(b["fine_tuning"]["lora_target_modules"].size() == 2);
        CHECK(b["fine_tuning"]["trainable_params_b"].get<double>() ==
              doctest::Approx(32.0 * 16 * 2 * 8192 / 1e9));
        CHECK(b["fits_in_memory"] == true);
        json bad = req;
        bad["mode"] = "prefix";
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422, "/mode");
        bad = req;
        bad["lora_target_modules"] = {"qkv"};
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422, "/lora_target_modules/0");
        bad = req;
        bad["lora_target_modules"] = "q_proj";
        CheckProblem(Post(server, "/v1/estimates/training", bad), 400, "/lora_target_modules");
        bad = req;
        bad["mode"] = "pretrain";
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422, "/lora_rank");
        bad = req;
        bad["hardware"]["scale_up_domain"] = 0;
        CheckProblem(Post(server, "/v1/estimates/training", bad), 422, "/hardware/scale_up_domain");
    }

    TEST_CASE("POST /v1/estimates/inference answers latency, throughput and memory") {
        TestServer server(SampleDeps());
        json req = {{"model",
                     {{"params_b", 70},
                      {"layers", 80},
                      {"hidden_size", 8192},
                      {"kv_heads", 8},
                      {"gated_mlp", true}}},
                    {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 2}}},
                    {"precision", "fp8"},
                    {"batch_size", 1},
                    {"input_tokens", 1000},
                    {"output_tokens", 200}};
        auto r = Post(server, "/v1/estimates/inference", req);
        REQUIRE(r);
        CHECK(r->status == 200);
        json b = json::parse(r->body);
        for (const char* k :
             {"time_to_first_token_ms", "inter_token_latency_ms", "output_tokens_per_second",
              "memory_per_accelerator_gb", "fits_in_memory", "max_batch_size"}) {
            CHECK_MESSAGE(b.contains(k), k);
        }
        // 70 GB of fp8 weights over 2 x 3.35 TB/s: at least 10.4 ms per token.
        CHECK(b["inter_token_latency_ms"].get<double>() > 10.4);
        CHECK(b["fits_in_memory"] == true);
        req["batch_size"] = 0;
        CheckProblem(Post(server, "/v1/estimates/inference", req), 422, "/batch_size");
    }

    TEST_CASE(
        "POST /v1/estimates/inference with a concurrency adds the continuous-batching curve") {
        TestServer server(SampleDeps());
        json req = {{"model",
                     {{"params_b", 70},
                      {"layers", 80},
                      {"hidden_size", 8192},
                      {"kv_heads", 8},
                      {"gated_mlp", true}}},
                    {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 2}}},
                    {"precision", "fp8"},
                    {"input_tokens", 1000},
                    {"output_tokens", 200},
                    {"concurrency", 16}};
        json b = json::parse(Post(server, "/v1/estimates/inference", req)->body);
        REQUIRE(b["serving"].is_object());
        CHECK(b["serving"]["mode"] == "concurrency");
        CHECK(b["serving"]["point"]["running_sequences"].get<double>() == 16);
        CHECK(b["serving"]["curve"].size() >= 4);
        req.erase("concurrency");
        CHECK(json::parse(Post(server, "/v1/estimates/inference", req)->body)["serving"].is_null());
        req["requests_per_second"] = 2;
        b = json::parse(Post(server, "/v1/estimates/inference", req)->body);
        CHECK(b["serving"]["point"]["requests_per_second"].get<double>() == doctest::Approx(2));
        req["concurrency"] = 4;
        CheckProblem(Post(server, "/v1/estimates/inference", req), 422, "/requests_per_second");
    }

    // Llama 70B bf16 on two H100s has no room for one sequence within the engine's 0.9 of
    // memory: the answer said fits_in_memory true with an all-zero point.
    TEST_CASE(
        "POST /v1/estimates/inference with no room for a sequence gives point null and says why") {
        TestServer server(SampleDeps());
        json req = {{"model", "llama-3.1-70b"},
                    {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 2}}},
                    {"precision", "bf16"},
                    {"input_tokens", 1000},
                    {"output_tokens", 200},
                    {"concurrency", 8}};
        json b = json::parse(Post(server, "/v1/estimates/inference", req)->body);
        CHECK(b["fits_in_memory"] == false);
        REQUIRE(b["serving"].is_object());
        CHECK(b["serving"]["point"].is_null());
        REQUIRE(b["warnings"].size() == 1);
        CHECK(b["warnings"][0]["field"] == "/concurrency");
        req["input_tokens"] = 200000;
        req["hardware"]["total_accelerators"] = 8;
        b = json::parse(Post(server, "/v1/estimates/inference", req)->body);
        bool context = false;
        for (const json& w : b["warnings"]) {
            context =
                context || (w["field"] == "/input_tokens" &&
                            w["detail"].get<std::string>().find("131072") != std::string::npos);
        }
        CHECK(context);
    }

    // The estimator had expert- and pipeline-parallel serving (the inference planner laid
    // replicas out so), but the estimate request refused both members as unknown: an MoE model
    // could not be asked for as TensorRT-LLM's DEP layouts serve it.
    TEST_CASE("weight_precision stores the weights narrow, echoes them and names a bad value") {
        TestServer server(SampleDeps());
        json req = {{"model", "llama-3.1-70b"},
                    {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 1}}},
                    {"precision", "bf16"},
                    {"weight_precision", "fp4"},
                    {"input_tokens", 1000},
                    {"output_tokens", 200}};
        const json b = Answered(server, req);
        CHECK(b["fits_in_memory"] == true);
        CHECK(b["weights_gb_per_accelerator"].get<double>() < 45);
        bool echoed = false;
        for (const auto& a : b["assumptions"]) {
            echoed = echoed || (a["name"] == "weight_bytes_per_element" && a["value"] == 0.5625);
        }
        CHECK(echoed);
        json bad = req;
        bad["weight_precision"] = "bf16";
        CheckProblem(Post(server, "/v1/estimates/inference", bad), 422, "/weight_precision");
        bad["weight_precision"] = "int4";
        CheckProblem(Post(server, "/v1/estimates/inference", bad), 422, "/weight_precision");
    }

    // A quantised checkpoint's hf_config was read for its shape only: an AWQ 70B was counted
    // at 16 bits (141 GB, "does not fit" one H100) and GPT-OSS's MXFP4 release needed four.
    TEST_CASE("a quantised checkpoint is served as stored: hf_config, library and model object") {
        TestServer server(SampleDeps());
        const json awq_config = {
            {"model_type", "llama"},
            {"num_hidden_layers", 80},
            {"hidden_size", 8192},
            {"num_attention_heads", 64},
            {"num_key_value_heads", 8},
            {"intermediate_size", 28672},
            {"vocab_size", 128256},
            {"hidden_act", "silu"},
            {"tie_word_embeddings", false},
            {"quantization_config",
             {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"version", "gemm"}}}};
        json req = {{"model", {{"hf_config", awq_config}}},
                    {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 1}}},
                    {"input_tokens", 1000},
                    {"output_tokens", 200}};
        const json b = Answered(server, req);
        CHECK(b["fits_in_memory"] == true);
        CHECK(b["weights_gb_per_accelerator"].get<double>() < 45);
        CHECK(b["model"]["checkpoint_precision"] == "fp4");
        bool from_checkpoint = false;
        for (const auto& a : b["assumptions"]) {
            from_checkpoint =
                from_checkpoint ||
                (a["name"] == "weight_bytes_per_element" &&
                 a["source"].get<std::string>().find("quant_method awq") != std::string::npos);
        }
        CHECK(from_checkpoint);
        json disagree = req;
        disagree["weight_precision"] = "fp8";
        CheckProblem(Post(server, "/v1/estimates/inference", disagree), 422, "/weight_precision");
        json described = req;
        described["model"] = {{"id", "llama-3.1-70b"}, {"checkpoint_precision", "fp4"}};
        CHECK(Answered(server, described)["weights_gb_per_accelerator"] ==
              b["weights_gb_per_accelerator"]);
        for (const char* outside : {"int4", "fp32"}) {  // the contract's enum, no more
            described["model"]["checkpoint_precision"] = outside;
            CheckProblem(Post(server, "/v1/estimates/inference", described), 422,
                         "/model/checkpoint_precision");
        }
        json oss = req;
        oss["model"] = "gpt-oss-120b";
        CHECK(Answered(server, oss)["fits_in_memory"] == true);
        // A 16-bit build of it (a BF16 conversion) is named so: its weights at 2 bytes.
        oss["model"] = {{"id", "gpt-oss-120b"}, {"checkpoint_precision", "bf16"}};
        CHECK(Answered(server, oss)["weights_gb_per_accelerator"].get<double>() > 200);
    }

    TEST_CASE("POST /v1/estimates/inference takes expert_parallel and pipeline_parallel") {
        TestServer server(SampleDeps());
        json req = {{"model", "qwen3-30b-a3b"},
                    {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 2}}},
                    {"precision", "fp8"},
                    {"input_tokens", 1024},
                    {"output_tokens", 1024},
                    {"expert_parallel", 2},
                    {"concurrency", 1024}};
        json b = Answered(server, req);
        CHECK(b["expert_parallel"] == 2);
        CHECK(b["tensor_parallel"] == 1);
        CHECK(b["pipeline_parallel"] == 1);
        CHECK(b["cluster"]["accelerators_per_replica"] == 2);
        CHECK(b["layout_search"].is_null());
        json bad = req;
        bad["tensor_parallel"] = 2;
        CheckProblem(Post(server, "/v1/estimates/inference", bad), 422, "/expert_parallel");
        bad = req;
        bad["model"] = "llama-3.1-70b";
        CheckProblem(Post(server, "/v1/estimates/inference", bad), 422, "/expert_parallel");
        json piped = {{"model", "llama-3.1-70b"},
                      {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 4}}},
                      {"precision", "fp8"},
                      {"input_tokens", 1000},
                      {"output_tokens", 200},
                      {"pipeline_parallel", 2}};
        b = json::parse(Post(server, "/v1/estimates/inference", piped)->body);
        CHECK(b["pipeline_parallel"] == 2);
        CHECK(b["tensor_parallel"] == 2);
        CHECK(b["expert_parallel"] == 1);
        piped["pipeline_parallel"] = 3;
        CheckProblem(Post(server, "/v1/estimates/inference", piped), 422, "/pipeline_parallel");
    }

    TEST_CASE("POST /v1/estimates/roofline classifies ops and totals them") {
        TestServer server(SampleDeps());
        json req = {{"accelerator", "h100-sxm"},
                    {"precision", "bf16"},
                    {"ops",
                     {{{"kind", "gemm"}, {"m", 8192}, {"n", 8192}, {"k", 8192}},
                      {{"kind", "memory"}, {"bytes_read", 1e9}, {"bytes_written", 1e9}},
                      {{"kind", "custom"}, {"flops", 1e12}, {"bytes", 1e6}}}}};
        auto r = Post(server, "/v1/estimates/roofline", req);
        REQUIRE(r);
        CHECK(r->status == 200);
        json b = json::parse(r->body);
        CHECK(b["ops"][0]["bound"] == "compute");
        CHECK(b["ops"][1]["bound"] == "memory");
        CHECK(b["ops"].size() == 3);
        CHECK(b["total"]["seconds"].get<double>() > 0);
        req["ops"][0]["kind"] = "fft";
        CheckProblem(Post(server, "/v1/estimates/roofline", req), 422, "/ops/0/kind");
        req["ops"][0].erase("kind");  // a missing required field is 422, as `m` below
        CheckProblem(Post(server, "/v1/estimates/roofline", req), 422, "/ops/0/kind");
        req["ops"] = {{{"kind", "gemm"}, {"n", 1}, {"k", 1}}};
        CheckProblem(Post(server, "/v1/estimates/roofline", req), 422, "/ops/0/m");
        req["ops"] = json::array();
        CheckProblem(Post(server, "/v1/estimates/roofline", req), 422, "/ops");
        req["ops"] = {{{"kind", "gemm"}, {"m", -1}, {"n", 1}, {"k", 1}}};
        CheckProblem(Post(server, "/v1/estimates/roofline", req), 422, "/ops/0/m");
        req["accelerator"] = "nope";
        CheckProblem(Post(server, "/v1/estimates/roofline", req), 422, "/accelerator");
    }

    TEST_CASE("estimate routes refuse unknown query parameters, as_of included, like plans") {
        TestServer server(SampleDeps());
        for (const char* path :
             {"/v1/estimates/training", "/v1/estimates/inference", "/v1/estimates/roofline"}) {
            for (const char* query : {"?as_of=2026-01-01", "?gpu=h100"}) {
                auto r = Post(server, std::string(path) + query, Llama65Training());
                REQUIRE(r);
                CHECK_MESSAGE(r->status == 400, path, query);
                CHECK(json::parse(r->body)["code"] == "malformed_request");
                CHECK(json::parse(r->body)["field"] ==
                      std::string(query).substr(1, std::string(query).find('=') - 1));
            }
        }
        auto bad = Post(server, "/v1/estimates/training?assumptions=bad", Llama65Training());
        REQUIRE(bad);
        CHECK(bad->status == 422);
        CHECK(json::parse(bad->body)["errors"] ==
              json::array({{{"field", "assumptions"},
                            {"detail", "assumptions must be full, summary or none"}}}));
        auto ok = Post(server, "/v1/estimates/training?assumptions=none", Llama65Training());
        REQUIRE(ok);
        CHECK(ok->status == 200);
    }

    TEST_CASE("the accelerator id of an estimate compares case-insensitively") {
        TestServer server(SampleDeps());
        json req = Llama65Training();
        req["hardware"]["accelerator"] = "H100-SXM";
        auto r = Post(server, "/v1/estimates/training", req);
        REQUIRE(r);
        CHECK(r->status == 200);
        json roof = {{"accelerator", "H100-Sxm"},
                     {"precision", "bf16"},
                     {"ops", {{{"kind", "gemm"}, {"m", 8}, {"n", 8}, {"k", 8}}}}};
        auto rr = Post(server, "/v1/estimates/roofline", roof);
        REQUIRE(rr);
        CHECK(rr->status == 200);
    }

    TEST_CASE("a denormal input is refused by its lower bound, never answered with null") {
        TestServer server(SampleDeps());
        json roof = {{"accelerator", "h100-sxm"},
                     {"precision", "bf16"},
                     {"ops", {{{"kind", "custom"}, {"flops", 5e-324}}}}};
        CheckProblem(Post(server, "/v1/estimates/roofline", roof), 422, "/ops/0/flops");
        json training = Llama65Training();
        training["hardware"]["scale_up_gb_per_s"] = 5e-324;
        CheckProblem(Post(server, "/v1/estimates/training", training), 422,
                     "/hardware/scale_up_gb_per_s");
    }
}

TEST_SUITE("estimate_routes request bounds and budget") {
    TEST_CASE("a roofline request lists at most 1024 ops, refused before any is read") {
        TestServer server(SampleDeps());
        json op = {{"kind", "custom"}, {"flops", 1e12}, {"bytes", 1e6}};
        json req = {{"accelerator", "h100-sxm"}, {"ops", json(std::vector<json>(1025, op))}};
        CheckProblem(Post(server, "/v1/estimates/roofline", req), 422, "/ops");
    }

    TEST_CASE("an estimate past its budget is 503 request_budget_exceeded with Retry-After") {
        gpucost::http::Deps deps = SampleDeps();
        deps.request_budget = std::chrono::milliseconds(0);  // run out before it starts
        TestServer server(deps);
        json inference = {{"model", {{"params_b", 7}}},
                          {"hardware", {{"accelerator", "h100-sxm"}, {"total_accelerators", 1}}},
                          {"input_tokens", 512},
                          {"output_tokens", 256},
                          {"batch_size", 1}};
        json roofline = {{"accelerator", "h100-sxm"},
                         {"ops", {{{"kind", "custom"}, {"flops", 1e12}, {"bytes", 1e6}}}}};
        for (const auto& [path, body] :
             {std::pair<std::string, json>{"/v1/estimates/training", Llama65Training()},
              {"/v1/estimates/inference", inference},
              {"/v1/estimates/roofline", roofline}}) {
            auto r = Post(server, path, body);
            REQUIRE(r);
            INFO(path << ": " << r->body);
            CHECK(r->status == 503);
            CHECK(r->get_header_value("Retry-After") == "5");
            CHECK(json::parse(r->body)["code"] == "request_budget_exceeded");
        }
    }
}

TEST_SUITE("estimate_routes") {
    // `parallelism` is read by its request table: the unknown-member answer lists exactly the
    // members read, and a bad recompute still names its member.
    TEST_CASE("an unknown parallelism member is 400 listing the members read") {
        TestServer server(SampleDeps());
        json body = Llama65Training();
        body["parallelism"]["experts"] = 8;
        auto r = Post(server, "/v1/estimates/training", body);
        CheckProblem(r, 400, "/parallelism/experts");
        CHECK(json::parse(r->body)["detail"] ==
              "/parallelism/experts: unknown member; known members: context, data, expert, "
              "expert_tensor, "
              "micro_batch_size, pipeline, recompute, recompute_layers, recompute_modules, "
              "sequence_parallel, tensor, virtual_stages, zero_stage");
        body = Llama65Training();
        body["parallelism"]["recompute"] = "some";
        auto bad = Post(server, "/v1/estimates/training", body);
        CheckProblem(bad, 422, "/parallelism/recompute");
        CHECK(json::parse(bad->body)["detail"] ==
              "/parallelism/recompute: recompute must be none, selective or full");
        // Block recompute is full recompute of some layers: with another mode it is refused.
        body = Llama65Training();
        body["parallelism"]["recompute_layers"] = 2;
        auto block = Post(server, "/v1/estimates/training", body);
        CheckProblem(block, 422, "/parallelism/recompute_layers");
    }

    // Megatron-Core's selective recompute modules: decoded, echoed in the layout and in
    // assumptions, and refused where they contradict the recompute mode or name no module.
    TEST_CASE("recompute_modules is selective recompute of Megatron's named modules") {
        TestServer server(SampleDeps());
        json body = Llama65Training();
        body["parallelism"].erase("recompute");
        body["parallelism"]["recompute_modules"] = {"layernorm", "mlp"};
        auto r = Post(server, "/v1/estimates/training", body);
        REQUIRE(r);
        REQUIRE(r->status == 200);
        const json answer = json::parse(r->body);
        CHECK(answer["parallelism"]["recompute"] == "selective");
        CHECK(answer["parallelism"]["recompute_modules"] == json({"layernorm", "mlp"}));
        int echoed = 0;
        for (const auto& a : answer["assumptions"]) {
            const std::string name = a["name"];
            if (name == "recompute_mlp_freed_gb_per_layer" ||
                name == "recompute_layernorm_forward_s_per_layer") {
                CHECK(a["value"].get<double>() > 0);
                ++echoed;
            }
        }
        CHECK(echoed == 2);
        // Plain selective recompute echoes its default module.
        auto plain = Post(server, "/v1/estimates/training", Llama65Training());
        REQUIRE(plain);
        CHECK(json::parse(plain->body)["parallelism"]["recompute_modules"] == json({"core_attn"}));

        body["parallelism"]["recompute_modules"] = {"layernorm", "attention"};
        CheckProblem(Post(server, "/v1/estimates/training", body), 422,
                     "/parallelism/recompute_modules/1");
        body["parallelism"]["recompute_modules"] = json::array();
        CheckProblem(Post(server, "/v1/estimates/training", body), 422,
                     "/parallelism/recompute_modules");
        body["parallelism"]["recompute_modules"] = {"mlp"};
        body["parallelism"]["recompute"] = "full";
        CheckProblem(Post(server, "/v1/estimates/training", body), 422,
                     "/parallelism/recompute_modules");
        body["parallelism"]["recompute"] = "selective";
        body["parallelism"]["recompute_layers"] = 2;
        CheckProblem(Post(server, "/v1/estimates/training", body), 422,
                     "/parallelism/recompute_modules");
    }
}
