#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "pricing/model_library.hpp"

using namespace gpucost::pricing;

namespace {

std::string ReadSeed() {
    std::ifstream in(std::string(GPUCOST_SOURCE_DIR) + "/schema/seed/models.csv", std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

const ModelLibrary& Seed() {
    static const ModelLibrary library = [] {
        auto loaded = LoadModelLibrary(ReadSeed(), "models.csv");
        REQUIRE(loaded.ok());
        return loaded.value();
    }();
    return library;
}

}  // namespace

TEST_SUITE("model_library") {
    TEST_CASE("the seed library holds at least 30 architectures, each with a source") {
        CHECK(Seed().All().size() >= 30);
        for (const LibraryModel& m : Seed().All()) {
            CAPTURE(m.id);
            CHECK(!m.source.empty());
            CHECK(m.published_params_b > 0);
        }
    }

    // max_context was loaded and used nowhere: a 100,000-token prompt on Phi-4 (16K) passed
    // without a word.
    TEST_CASE("a library model carries its context length and source into its spec") {
        const LibraryModel* phi = Seed().Find("phi-4");
        REQUIRE(phi != nullptr);
        CHECK(phi->spec.max_context == phi->max_context);
        CHECK(phi->spec.max_context_source.find("phi-4") != std::string::npos);
        auto resolved = estimate::DeriveModel(phi->spec);
        REQUIRE(resolved.ok());
        CHECK(resolved.value().max_context == 16384);
        auto warning = estimate::ContextWarning(resolved.value(), 20000, "/input_tokens", "input");
        REQUIRE(warning.has_value());
        CHECK(warning->field == "/input_tokens");
        CHECK(warning->detail.find("16384") != std::string::npos);
        CHECK(warning->detail.find("model library phi-4") != std::string::npos);
        CHECK_FALSE(estimate::ContextWarning(resolved.value(), 16384, "/input_tokens", "input"));
    }

    TEST_CASE("every library row counts within 3 % of its published total") {
        for (const LibraryModel& m : Seed().All()) {
            CAPTURE(m.id);
            auto r = estimate::DeriveModel(m.spec);
            REQUIRE(r.ok());
            CHECK(r.value().params / 1e9 == doctest::Approx(m.published_params_b).epsilon(0.03));
            CHECK(r.value().warnings.empty());
        }
    }

    TEST_CASE("DeepSeek-V3 counts about 671 B in total and 37 B per token") {
        const LibraryModel* m = Seed().Find("deepseek-v3");
        REQUIRE(m != nullptr);
        auto r = estimate::DeriveModel(m->spec);
        REQUIRE(r.ok());
        const auto& v = r.value();
        CHECK(v.IsMla());
        CHECK(v.params / 1e9 == doctest::Approx(671).epsilon(0.01));
        CHECK(v.active_params / 1e9 == doctest::Approx(37).epsilon(0.03));
        CHECK(v.experts == 256);
        CHECK(v.shared_experts == 1);
        CHECK(v.dense_layers == 3);
        CHECK(v.ffn_hidden_size == 2048);
        CHECK(v.dense_ffn_hidden_size == 18432);
        CHECK(v.mtp_modules == 1);  // config num_nextn_predict_layers; not in the 671 B
        // MLA attention is far smaller than 4 h^2 of multi-head attention.
        CHECK(v.attention_params_per_layer == doctest::Approx(187.1e6).epsilon(0.01));
        CHECK(v.RoutedExpertParams() / 1e9 == doctest::Approx(58.0 * 256 * 3 * 7168 * 2048 / 1e9));
    }

    TEST_CASE("ids are found case-insensitively and unknown ids get close matches") {
        CHECK(Seed().Find("Llama-3.1-70B") != nullptr);
        CHECK(Seed().Find("llama-9") == nullptr);
        auto close = Seed().Closest("llama-3-70b", 3);
        REQUIRE(close.size() == 3);
        CHECK(close.front() == "llama-2-70b");
        CHECK(std::find(close.begin(), close.end(), "llama-3.1-70b") != close.end());
    }

    TEST_CASE("GPT-OSS's rows quantise only the routed experts; an unknown scope is refused") {
        for (const char* id : {"gpt-oss-20b", "gpt-oss-120b"}) {
            const LibraryModel* m = Seed().Find(id);
            REQUIRE(m != nullptr);
            CHECK(m->spec.low_precision_scope == estimate::LowPrecisionScope::kRoutedExperts);
        }
        const LibraryModel* llama = Seed().Find("llama-3.1-8b");
        REQUIRE(llama != nullptr);
        CHECK_FALSE(llama->spec.low_precision_scope.has_value());
        std::string text = ReadSeed();
        const std::string cell = ",routed_experts,";
        const auto at = text.find(cell);
        REQUIRE(at != std::string::npos);
        text.replace(at, cell.size(), ",experts,");
        auto r = LoadModelLibrary(text, "models.csv");
        REQUIRE(!r.ok());
        CHECK(r.error().message.find("low_precision_scope 'experts'") != std::string::npos);
    }

    TEST_CASE(
        "GPT-OSS's release is stored at 4 bits; a library written before the serving-"
        "quantisation columns still loads") {
        for (const char* id : {"gpt-oss-20b", "gpt-oss-120b"}) {
            const LibraryModel* m = Seed().Find(id);
            REQUIRE(m != nullptr);
            CHECK(m->spec.checkpoint_precision == Precision::kFp4);
            CHECK(m->spec.checkpoint_precision_source.find(id) != std::string::npos);
        }
        CHECK_FALSE(Seed().Find("llama-3.1-70b")->spec.checkpoint_precision.has_value());
        std::string text = ReadSeed();
        const std::string cell = ",routed_experts,fp4,";
        const auto at = text.find(cell);
        REQUIRE(at != std::string::npos);
        std::string bad = text;
        bad.replace(at, cell.size(), ",routed_experts,bf16,");
        auto refused = LoadModelLibrary(bad, "models.csv");
        REQUIRE(!refused.ok());
        CHECK(refused.error().message.find("fp8, int8 or fp4") != std::string::npos);
        // An operator's models.csv from before low_precision_scope and checkpoint_precision.
        const std::string older =
            "id,name,family,published_params_b,published_active_params_b,layers,hidden_size,"
            "attention_heads,kv_heads,head_dim,ffn_hidden_size,expert_ffn_hidden_size,"
            "dense_ffn_hidden_size,vocab_size,seq_len,max_context,gated_mlp,tied_embeddings,"
            "experts,experts_per_token,shared_experts,dense_layers,q_lora_rank,kv_lora_rank,"
            "qk_rope_head_dim,qk_nope_head_dim,v_head_dim,sliding_window,sliding_window_layers,"
            "mtp_modules,source\n"
            "team-7b,Team 7B,llama,6.74,,32,4096,32,32,,11008,,,32000,4096,4096,true,false,1,1,,,,"
            ",,,,,,,our own\n";
        auto loaded = LoadModelLibrary(older, "models.csv");
        REQUIRE(loaded.ok());
        const LibraryModel* team = loaded.value().Find("team-7b");
        REQUIRE(team != nullptr);
        CHECK_FALSE(team->spec.checkpoint_precision.has_value());
        CHECK_FALSE(team->spec.low_precision_scope.has_value());
    }

    TEST_CASE("a malformed file is refused naming the line") {
        std::string text = ReadSeed();
        auto header_end = text.find('\n');
        std::string bad = text.substr(0, header_end + 1) +
                          "Bad Id,x,y,1,,2,64,1,1,,256,,,100,8,8,false,false,1,1,,,,,,,,,,,src\n";
        auto r = LoadModelLibrary(bad, "models.csv");
        REQUIRE(!r.ok());
        CHECK(r.error().message.find("models.csv line 2") != std::string::npos);
        auto missing = LoadModelLibrary("id,name\n", "models.csv");
        REQUIRE(!missing.ok());
        CHECK(missing.error().message.find("missing column") != std::string::npos);
    }
}
