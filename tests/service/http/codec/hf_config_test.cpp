#include <doctest/doctest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/http/codec/hf_config.hpp"

using json = nlohmann::json;
using gpucost::http::ModelSpecFromHfConfig;
namespace est = gpucost::pricing::estimate;

namespace {

json Config(const std::string& name) {
    std::ifstream in(std::string(GPUCOST_SOURCE_DIR) + "/tests/data/hf_configs/" + name + ".json");
    std::ostringstream text;
    text << in.rdbuf();
    return json::parse(text.str());
}

est::ResolvedModel Resolve(const std::string& name) {
    auto spec = ModelSpecFromHfConfig(Config(name), "/model/hf_config");
    REQUIRE(spec.ok());
    auto m = est::DeriveModel(spec.value());
    REQUIRE(m.ok());
    return m.value();
}

}  // namespace

TEST_SUITE("hf_config") {
    TEST_CASE(
        "a quantised checkpoint's quantization_config gives the width its weights are stored at") {
        using gpucost::pricing::Precision;
        // quantization_config blocks as Hugging Face transformers (utils/quantization_config.py)
        // and the quantisers write them into a checkpoint's config.json.
        const std::vector<std::pair<json, std::optional<Precision>>> cases = {
            {{{"quant_method", "awq"},
              {"bits", 4},
              {"group_size", 128},
              {"zero_point", true},
              {"version", "gemm"}},
             Precision::kFp4},
            {{{"quant_method", "gptq"}, {"bits", 8}, {"group_size", 128}, {"desc_act", false}},
             Precision::kInt8},
            {{{"quant_method", "awq"}, {"w_bit", 4}, {"q_group_size", 128}}, Precision::kFp4},
            {{{"quant_method", "fp8"},
              {"fmt", "e4m3"},
              {"activation_scheme", "dynamic"},
              {"weight_block_size", {128, 128}}},
             Precision::kFp8},
            {{{"quant_method", "fbgemm_fp8"}}, Precision::kFp8},
            {{{"quant_method", "bitsandbytes"}, {"load_in_4bit", true}}, Precision::kFp4},
            {{{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}}, Precision::kInt8},
            {{{"quant_method", "compressed-tensors"},
              {"config_groups",
               {{"group_0", {{"weights", {{"num_bits", 8}, {"type", "float"}}}}}}}},
             Precision::kFp8},
            {{{"quant_method", "compressed-tensors"},
              {"config_groups", {{"group_0", {{"weights", {{"num_bits", 4}, {"type", "int"}}}}}}}},
             Precision::kFp4},
            {{{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}}, Precision::kFp4},
            {{{"quant_method", "gptq"}, {"bits", 3}}, std::nullopt},
            {{{"quant_method", "hqq"}, {"nbits", 4}}, std::nullopt},
        };
        for (const auto& [quantisation, width] : cases) {
            CAPTURE(quantisation.dump());
            json config = Config("llama-3.1-70b");
            config["quantization_config"] = quantisation;
            auto spec = ModelSpecFromHfConfig(config, "/model/hf_config");
            REQUIRE(spec.ok());
            CHECK(spec.value().checkpoint_precision == width);
            auto m = est::DeriveModel(spec.value(), "/model");
            REQUIRE(m.ok());
            CHECK(m.value().checkpoint_precision == width);
            CHECK(m.value().low_precision_scope == est::LowPrecisionScope::kLinearLayers);
            // A method read as no width is said, not passed over.
            const bool warned =
                !m.value().warnings.empty() &&
                m.value().warnings.back().field == "/model/hf_config/quantization_config";
            CHECK(warned == !width.has_value());
        }
        CHECK_FALSE(Resolve("llama-3.1-70b").checkpoint_precision.has_value());
    }

    TEST_CASE("Llama 2 7B: SiLU means a gated MLP, untied, 6.74 B") {
        auto m = Resolve("llama-2-7b");
        CHECK(m.gated_mlp);
        CHECK(!m.tied_embeddings);
        CHECK(m.kv_heads == 32);
        CHECK(m.params / 1e9 == doctest::Approx(6.74).epsilon(0.01));
    }

    TEST_CASE("Llama 3.1 70B: GQA with 8 key/value heads and a 128k vocabulary, 70.6 B") {
        auto m = Resolve("llama-3.1-70b");
        CHECK(m.kv_heads == 8);
        CHECK(m.vocab_size == 128256);
        CHECK(m.params / 1e9 == doctest::Approx(70.6).epsilon(0.01));
    }

    TEST_CASE("Mistral 7B: a 4096-token sliding window on every layer") {
        auto m = Resolve("mistral-7b-v0.1");
        CHECK(m.sliding_window == 4096);
        CHECK(m.sliding_window_layers == 32);
        CHECK(m.params / 1e9 == doctest::Approx(7.24).epsilon(0.01));
    }

    TEST_CASE("Mixtral 8x7B: 8 local experts, top-2, 46.7 B total and 12.9 B active") {
        auto m = Resolve("mixtral-8x7b");
        CHECK(m.experts == 8);
        CHECK(m.experts_per_token == 2);
        CHECK(m.sliding_window == 0);
        CHECK(m.params / 1e9 == doctest::Approx(46.7).epsilon(0.01));
        CHECK(m.active_params / 1e9 == doctest::Approx(12.9).epsilon(0.01));
    }

    TEST_CASE("Qwen2.5 7B: the published window is off (use_sliding_window false)") {
        auto m = Resolve("qwen2.5-7b");
        CHECK(m.sliding_window == 0);
        CHECK(m.kv_heads == 4);
        CHECK(m.params / 1e9 == doctest::Approx(7.61).epsilon(0.01));
    }

    TEST_CASE("Qwen3 30B-A3B: 128 experts of width 768, top-8, head_dim 128") {
        auto m = Resolve("qwen3-30b-a3b");
        CHECK(m.experts == 128);
        CHECK(m.experts_per_token == 8);
        CHECK(m.expert_ffn_hidden_size == 768);
        CHECK(m.head_dim == 128);
        CHECK(m.dense_layers == 0);
        CHECK(m.params / 1e9 == doctest::Approx(30.5).epsilon(0.01));
        CHECK(m.active_params / 1e9 == doctest::Approx(3.3).epsilon(0.05));
    }

    TEST_CASE(
        "Qwen2 57B-A14B: a shared expert 8 routed experts wide, 57.4 B total and 14 B active") {
        auto m = Resolve("qwen2-57b-a14b");
        CHECK(m.experts == 64);
        CHECK(m.shared_experts == 8);
        CHECK(m.expert_ffn_hidden_size == 2560);
        CHECK(m.params / 1e9 == doctest::Approx(57.4).epsilon(0.01));
        CHECK(m.active_params / 1e9 == doctest::Approx(14.2).epsilon(0.02));
    }

    TEST_CASE(
        "DeepSeek-V3: MLA ranks, 1 shared + 256 routed experts, 3 dense layers, 671 B / 37 B") {
        auto m = Resolve("deepseek-v3");
        CHECK(m.IsMla());
        CHECK(m.q_lora_rank == 1536);
        CHECK(m.kv_lora_rank == 512);
        CHECK(m.shared_experts == 1);
        CHECK(m.experts == 256);
        CHECK(m.dense_layers == 3);
        CHECK(m.dense_ffn_hidden_size == 18432);
        CHECK(m.ffn_hidden_size == 2048);
        CHECK(m.params / 1e9 == doctest::Approx(671).epsilon(0.01));
        CHECK(m.active_params / 1e9 == doctest::Approx(37).epsilon(0.03));
    }

    TEST_CASE("Gemma 2 9B: GeGLU is gated, embeddings tied, half the layers local") {
        auto m = Resolve("gemma-2-9b");
        CHECK(m.gated_mlp);
        CHECK(m.tied_embeddings);
        CHECK(m.head_dim == 256);
        CHECK(m.sliding_window == 4096);
        CHECK(m.sliding_window_layers == 21);
        CHECK(m.params / 1e9 == doctest::Approx(9.24).epsilon(0.01));
    }

    TEST_CASE("Gemma 3 27B: the text_config of a multimodal config, 5 local layers to 1 global") {
        auto m = Resolve("gemma-3-27b");
        CHECK(m.layers == 62);
        CHECK(m.vocab_size == 262208);
        CHECK(m.sliding_window == 1024);
        CHECK(m.sliding_window_layers == 52);
        CHECK(m.tied_embeddings);
        CHECK(m.params / 1e9 == doctest::Approx(27.0).epsilon(0.02));
    }

    TEST_CASE("Phi-3 mini: fused gate_up projection still counts as a gated MLP") {
        auto m = Resolve("phi-3-mini-4k");
        CHECK(m.gated_mlp);
        CHECK(m.params / 1e9 == doctest::Approx(3.82).epsilon(0.01));
    }

    TEST_CASE(
        "gpt-oss-20b: experts_per_token, head_dim 64, layer_types and its MXFP4 experts-only "
        "checkpoint") {
        auto m = Resolve("gpt-oss-20b");
        CHECK(m.low_precision_scope == est::LowPrecisionScope::kRoutedExperts);
        CHECK(m.checkpoint_precision == gpucost::pricing::Precision::kFp4);
        CHECK(m.experts == 32);
        CHECK(m.experts_per_token == 4);
        CHECK(m.head_dim == 64);
        CHECK(m.sliding_window == 128);
        CHECK(m.sliding_window_layers == 12);
        CHECK(m.params / 1e9 == doctest::Approx(20.9).epsilon(0.01));
    }

    TEST_CASE("Falcon 40B: GELU MLP of 4h, 8 key/value groups, tied embeddings") {
        auto m = Resolve("falcon-40b");
        CHECK(!m.gated_mlp);
        CHECK(m.tied_embeddings);
        CHECK(m.kv_heads == 8);
        CHECK(m.ffn_hidden_size == 4 * 8192);
        CHECK(m.params / 1e9 == doctest::Approx(41.8).epsilon(0.03));
    }

    TEST_CASE("a used key of the wrong type is a 400 naming it; unused keys are ignored") {
        json c = Config("llama-2-7b");
        c["num_hidden_layers"] = "thirty-two";
        auto r = ModelSpecFromHfConfig(c, "/model/hf_config");
        REQUIRE(!r.ok());
        CHECK(r.error().code == gpucost::pricing::ErrorCode::kMalformed);
        CHECK(r.error().field == "/model/hf_config/num_hidden_layers");
        json extra = Config("llama-2-7b");
        extra["some_future_key"] = {{"nested", true}};
        CHECK(ModelSpecFromHfConfig(extra, "/model/hf_config").ok());
        json negative = Config("llama-2-7b");
        negative["hidden_size"] = -4096;  // well-formed but out of range: 422, as in `model`
        auto out_of_range = ModelSpecFromHfConfig(negative, "/model/hf_config");
        REQUIRE(!out_of_range.ok());
        CHECK(out_of_range.error().code == gpucost::pricing::ErrorCode::kInvalidArgument);
        CHECK(out_of_range.error().field == "/model/hf_config/hidden_size");
        auto empty = ModelSpecFromHfConfig(json::object(), "/model/hf_config");
        REQUIRE(!empty.ok());
        CHECK(empty.error().code == gpucost::pricing::ErrorCode::kInvalidArgument);
    }
}
