#include "pricing/estimate/inference.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "pricing/estimate/collectives.hpp"
#include "tests/pricing/estimate/estimate_test_support.hpp"
#include "tests/support/published_models.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::estimate;

namespace {

ClusterSpec Cluster(const Accelerator& accelerator, int count) {
    ClusterSpec c;
    c.accelerator = accelerator;
    c.accelerator_count = count;
    c.accelerators_per_node = count;
    return c;
}

// B200 figures of schema/seed/accelerators.csv (dense peaks).
Accelerator B200() {
    Accelerator a;
    a.id = "b200";
    a.name = "B200";
    a.vendor = "NVIDIA";
    a.form_factor = "SXM";
    a.peak_tflops[static_cast<std::size_t>(Precision::kBf16)] = 2250;
    a.peak_tflops[static_cast<std::size_t>(Precision::kFp16)] = 2250;
    a.peak_tflops[static_cast<std::size_t>(Precision::kFp8)] = 4500;
    a.peak_tflops[static_cast<std::size_t>(Precision::kFp4)] = 9000;
    a.memory_gb = 180;
    a.memory_gb_per_s = 8000;
    a.scale_up_gb_per_s = 1800;
    a.host_pcie_gen = "Gen5";
    return a;
}

// Llama-3.3-70B as published (config.json): 80 x 8192, 64 heads, 8 KV heads, SwiGLU 28672.
ModelSpec Llama70B() {
    ModelSpec m;
    m.params_b = 70.6;
    m.layers = 80;
    m.hidden_size = 8192;
    m.attention_heads = 64;
    m.kv_heads = 8;
    m.ffn_hidden_size = 28672;
    m.gated_mlp = true;
    m.vocab_size = 128256;
    return m;
}

InferenceRequest Chat(const ModelSpec& model, Precision precision) {
    InferenceRequest r;
    r.model = model;
    r.precision = precision;
    r.input_tokens = 1000;
    r.output_tokens = 200;
    return r;
}

}  // namespace

TEST_SUITE("estimate_inference") {
    TEST_CASE("a batch of b tokens touches E (1 - (1 - k/E)^b) of E experts") {
        CHECK(ExpectedTouchedExperts(256, 8, 1) == doctest::Approx(8));
        CHECK(ExpectedTouchedExperts(8, 2, 1) == doctest::Approx(2));
        CHECK(ExpectedTouchedExperts(8, 2, 4) == doctest::Approx(8 * (1 - std::pow(0.75, 4))));
        CHECK(ExpectedTouchedExperts(256, 8, 32) ==
              doctest::Approx(256 * (1 - std::pow(1 - 8.0 / 256, 32))));
        CHECK(ExpectedTouchedExperts(256, 8, 4096) == doctest::Approx(256));
        CHECK(ExpectedTouchedExperts(1, 1, 7) == 1.0);  // dense
        double previous = 0;
        for (double b = 1; b <= 1024; b *= 2) {
            const double touched = ExpectedTouchedExperts(64, 6, b);
            CHECK(touched >= previous);
            CHECK((touched > previous || touched == doctest::Approx(64)));
            CHECK(touched <= 64);
            previous = touched;
        }
    }

    TEST_CASE("an MoE decodes small batches faster than a dense model of the same total size") {
        // Mixtral-8x7B-shaped: 46.7B total, 12.9B active, top-2 of 8.
        ModelSpec moe;
        moe.params_b = 46.7;
        moe.active_params_b = 12.9;
        moe.layers = 32;
        moe.hidden_size = 4096;
        moe.attention_heads = 32;
        moe.kv_heads = 8;
        moe.ffn_hidden_size = 14336;
        moe.gated_mlp = true;
        moe.experts = 8;
        moe.experts_per_token = 2;
        InferenceRequest r = Chat(moe, Precision::kBf16);
        auto one = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        r.batch_size = 64;
        auto many = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(one.ok());
        REQUIRE(many.ok());
        // Batch 1 reads 2 of 8 experts, batch 64 all of them: the step takes well over twice
        // as long although both are bandwidth bound.
        CHECK(many.value().inter_token_latency_ms > 2.0 * one.value().inter_token_latency_ms);
        CHECK(one.value().decode_bound == "memory");
    }

    TEST_CASE("MLA caches the compressed latent on every rank") {
        // DeepSeek-V3: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64, fp8 cache.
        ModelSpec spec;
        spec.params_b = 671;
        spec.active_params_b = 37;
        spec.layers = 61;
        spec.hidden_size = 7168;
        spec.attention_heads = 128;
        spec.experts = 256;
        spec.experts_per_token = 8;
        auto derived = DeriveModel(spec);
        REQUIRE(derived.ok());
        ResolvedModel m = derived.value();
        // Without MLA: K and V of 128 heads of 56 at tensor parallel 1.
        const double mha = KvCacheBytesPerSequence(m, 1, 1, 1000);
        CHECK(mha == doctest::Approx(61.0 * 2 * 128 * 56 * 1000));
        m.kv_lora_rank = 512;
        m.qk_rope_head_dim = 64;
        m.qk_nope_head_dim = 128;
        m.v_head_dim = 128;
        CHECK(KvCacheBytesPerSequence(m, 8, 1, 1000) == doctest::Approx(61.0 * 576 * 1000));
        // Not split by tensor parallel: the latent serves all heads.
        CHECK(KvCacheBytesPerSequence(m, 1, 1, 1000) == KvCacheBytesPerSequence(m, 8, 1, 1000));
        CHECK(KvCacheBytesPerSequence(m, 1, 1, 1000) < mha / 20);

        InferenceRequest r = Chat(spec, Precision::kFp8);
        auto latent = EstimateInference(r, Cluster(B200(), 8), m);
        REQUIRE(latent.ok());
        CHECK(latent.value().kv_cache_gb_per_accelerator ==
              doctest::Approx(61.0 * 576 * 1200 / 1e9));
        CHECK(latent.value().fits_in_memory);
    }

    TEST_CASE("MLA and MoE routing add per-layer launches: DeepSeek-V3 on 8 x H200 at batch 1") {
        // 217 tokens/s at concurrency 1 against SGLang's ~30 and under 100
        // for every published setup without speculative decoding.
        InferenceRequest r = Chat(gpucost::testing::DeepSeekV3Published(), Precision::kFp8);
        r.output_tokens = 1000;
        r.concurrency = 1;
        const ClusterSpec cluster = Cluster(gpucost::testing::H200Sxm(), 8);
        auto e = EstimateInference(r, cluster);
        REQUIRE(e.ok());
        CHECK(e.value().fits_in_memory);
        CHECK(1000.0 / e.value().inter_token_latency_ms < 100.0);
        REQUIRE(e.value().serving.has_value());
        REQUIRE(e.value().serving->point.has_value());
        CHECK(e.value().serving->point->output_tokens_per_second < 100.0);
        // The launches: (MLA 9 + 2 FP8 quantisations) x 61 layers + (routing 6 + shared 4 + 2
        // FP8 quantisations) x 58 MoE layers, each at the 4 us kernel overhead.
        const double kernels = (kMlaExtraKernelsPerLayer + kFp8MlaExtraGemmsPerLayer) * 61 +
                               (kMoeRoutingExtraKernelsPerLayer + kSharedExpertKernelsPerLayer +
                                kFp8SharedExpertGemmsPerLayer) *
                                   58;
        CHECK(gpucost::testing::AssumptionValue(e.value().assumptions,
                                                "layer_fixed_kernels_per_pass") == kernels);
        InferenceRequest free_launches = r;
        free_launches.efficiency.kernel_overhead_s = 0.0;
        auto without = EstimateInference(free_launches, cluster);
        REQUIRE(without.ok());
        CHECK(e.value().inter_token_latency_ms - without.value().inter_token_latency_ms >=
              kernels * 4e-6 * 1e3);
        // In bf16 no quantisation launches.
        r.precision = Precision::kBf16;
        auto bf16 = EstimateInference(r, Cluster(gpucost::testing::H200Sxm(), 16));
        REQUIRE(bf16.ok());
        CHECK(gpucost::testing::AssumptionValue(bf16.value().assumptions,
                                                "layer_fixed_kernels_per_pass") ==
              kMlaExtraKernelsPerLayer * 61 +
                  (kMoeRoutingExtraKernelsPerLayer + kSharedExpertKernelsPerLayer) * 58);
    }

    TEST_CASE("a dense GQA model has no per-layer fixed costs beyond its ops") {
        auto e = EstimateInference(Chat(Llama70B(), Precision::kFp8),
                                   Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(e.ok());
        CHECK(gpucost::testing::AssumptionValue(e.value().assumptions,
                                                "layer_fixed_kernels_per_pass") == -1);
        // NVIDIA NIM publishes 18.2 ms between tokens for Llama-3.3-70B FP8 on 2 x H100.
        CHECK(e.value().inter_token_latency_ms == doctest::Approx(18.2).epsilon(0.02));
    }

    TEST_CASE(
        "sliding-window layers hold at most the window, and KV heads are never split below one") {
        auto derived = DeriveModel(Llama70B());
        REQUIRE(derived.ok());
        ResolvedModel m = derived.value();
        const double per_token_layer = 2.0 * 8 * 128 * 2;  // K and V, 8 heads of 128, bf16
        CHECK(KvCacheBytesPerSequence(m, 1, 2, 32768) ==
              doctest::Approx(80 * per_token_layer * 32768));
        // Tensor parallel 16 over 8 KV heads: each rank still holds one head.
        CHECK(KvCacheBytesPerSequence(m, 16, 2, 100) == doctest::Approx(80 * 2.0 * 128 * 2 * 100));
        m.sliding_window = 4096;
        m.sliding_window_layers = 40;  // Gemma-style alternation: half the layers local
        CHECK(KvCacheBytesPerSequence(m, 1, 2, 32768) ==
              doctest::Approx(per_token_layer * (40.0 * 32768 + 40.0 * 4096)));
        CHECK(KvCacheBytesPerSequence(m, 1, 2, 1000) ==
              doctest::Approx(80 * per_token_layer * 1000));
        // A long context decodes faster when half the layers read only the window.
        InferenceRequest r = Chat(Llama70B(), Precision::kFp8);
        r.input_tokens = 32768;
        r.batch_size = 8;
        auto local = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2), m);
        m.sliding_window = 0;
        auto global = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2), m);
        REQUIRE(local.ok());
        REQUIRE(global.ok());
        CHECK(local.value().inter_token_latency_ms < global.value().inter_token_latency_ms);
        CHECK(local.value().time_to_first_token_ms < global.value().time_to_first_token_ms);
    }

    // Phi-4 has 10 KV heads: tensor parallel 4 was accepted and counted 2.5 heads per rank,
    // a layout vLLM refuses (it shards whole KV heads or replicates one on each rank).
    TEST_CASE("tensor parallelism must divide the KV heads or be a multiple of them") {
        ModelSpec phi4;  // huggingface.co/microsoft/phi-4 config.json
        phi4.layers = 40;
        phi4.hidden_size = 5120;
        phi4.attention_heads = 40;
        phi4.kv_heads = 10;
        phi4.ffn_hidden_size = 17920;
        phi4.gated_mlp = true;
        phi4.vocab_size = 100352;
        InferenceRequest r = Chat(phi4, Precision::kBf16);
        auto four = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 4));
        REQUIRE_FALSE(four.ok());
        CHECK(four.error().field == "/hardware/total_accelerators");
        CHECK(four.error().message.find("kv_heads (10)") != std::string::npos);
        r.tensor_parallel = 4;
        CHECK(EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 8)).error().field ==
              "/tensor_parallel");
        // 2 divides 10; 20 is a multiple of 10 (each rank holds one replicated head).
        r.tensor_parallel = 2;
        auto two = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 8));
        REQUIRE(two.ok());
        CHECK(two.value().replicas == 4);
        r.tensor_parallel = 20;
        auto twenty = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 20));
        REQUIRE(twenty.ok());
        CHECK(twenty.value().kv_cache_gb_per_accelerator ==
              doctest::Approx(KvCacheBytesPerSequence(twenty.value().model, 10, 2, 1200) / 1e9));
    }

    TEST_CASE("a prompt and output past the model's context length draw a warning") {
        ModelSpec spec = Llama70B();
        spec.max_context = 8192;
        spec.max_context_source = "test library";
        InferenceRequest r = Chat(spec, Precision::kFp8);
        r.input_tokens = 8000;
        r.output_tokens = 500;
        auto e = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(e.ok());
        REQUIRE(e.value().warnings.size() == 1);
        CHECK(e.value().warnings[0].field == "/input_tokens");
        CHECK(e.value().warnings[0].detail.find("8500 tokens") != std::string::npos);
        CHECK(e.value().warnings[0].detail.find("8192 tokens (test library)") != std::string::npos);
        r.output_tokens = 192;
        CHECK(
            EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2)).value().warnings.empty());
    }

    // Llama 70B in bf16 on two H100s: fits_in_memory said true (71 GB of weights within 80 GB)
    // while the serving model, within vLLM's 0.9 of memory, had -1.8 GB for the KV cache and
    // wrote an all-zero operating point.
    TEST_CASE("the fit check and the serving model use the same share of memory") {
        InferenceRequest r = Chat(Llama70B(), Precision::kBf16);
        r.concurrency = 8;
        auto e = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(e.ok());
        CHECK_FALSE(e.value().fits_in_memory);
        CHECK(e.value().max_batch_size == 0);
        REQUIRE(e.value().serving.has_value());
        CHECK(e.value().serving->kv_cache_budget_gb_per_accelerator < 0);
        CHECK_FALSE(e.value().serving->point.has_value());
        REQUIRE(e.value().warnings.size() == 1);
        CHECK(e.value().warnings[0].field == "/concurrency");
        CHECK(e.value().warnings[0].detail.find("no room for one sequence") != std::string::npos);
        // Four GPUs hold it: both views agree that it fits and serves.
        auto four = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 4));
        REQUIRE(four.ok());
        CHECK(four.value().fits_in_memory);
        CHECK(four.value().serving->point.has_value());
        CHECK(four.value().warnings.empty());
    }

    // PCIe A100s pair over an NVLink bridge: tensor parallel 8 used the bridge's 600 GB/s as
    // if all eight shared one NVLink fabric.
    TEST_CASE("tensor parallelism beyond an NVLink bridge pair crosses PCIe") {
        Accelerator pcie = gpucost::testing::A100Sxm80();
        pcie.id = "a100-pcie-80gb";
        pcie.form_factor = "PCIe";
        pcie.scale_up_interconnect = "NVLink bridge (2-GPU pairs)";
        pcie.scale_up_gb_per_s = 600;
        Accelerator nvswitch = pcie;
        nvswitch.scale_up_interconnect = "NVLink 3";
        auto dev = MakeDeviceModel(pcie, Precision::kBf16, {});
        REQUIRE(dev.ok());
        const ClusterLinks links = MakeClusterLinks(Cluster(pcie, 8), dev.value());
        CHECK(links.bridge_domain == 2);
        CHECK(links.GroupLink(2).bytes_per_s ==
              doctest::Approx(300e9 * dev.value().scale_up_efficiency));
        CHECK(links.GroupLink(8).bytes_per_s ==
              doctest::Approx(32e9 * dev.value().scale_up_efficiency));  // Gen4 x16
        CHECK(MakeClusterLinks(Cluster(nvswitch, 8), dev.value()).bridge_domain == 0);
        InferenceRequest r = Chat(Llama70B(), Precision::kBf16);
        r.tensor_parallel = 8;
        auto bridged = EstimateInference(r, Cluster(pcie, 8));
        auto switched = EstimateInference(r, Cluster(nvswitch, 8));
        REQUIRE(bridged.ok());
        REQUIRE(switched.ok());
        CHECK(bridged.value().inter_token_latency_ms > switched.value().inter_token_latency_ms);
        r.tensor_parallel = 2;
        CHECK(EstimateInference(r, Cluster(pcie, 2)).value().inter_token_latency_ms ==
              doctest::Approx(
                  EstimateInference(r, Cluster(nvswitch, 2)).value().inter_token_latency_ms));
    }

    TEST_CASE("a served request's FLOPs: the prompt's causal attention, the output's context") {
        auto m = DeriveModel(Llama70B());
        REQUIRE(m.ok());
        const RequestFlops f = ServedRequestFlops(m.value(), 8000, 100);
        const double linear = 2.0 * m.value().ActiveNonEmbeddingParams();
        const double attention = 2.0 * 64 * 256 * 80;  // per token per context token
        CHECK(f.prefill == doctest::Approx(8000 * (linear + attention * 4000)));
        CHECK(f.decode == doctest::Approx(100 * (linear + 2.0 * 128256 * 8192 + attention * 8050)));
    }

    // gpt-oss-120b (128 experts, top-4) on one H200, 8000 in / 500 out: 377.9 output tokens/s
    // at concurrency 1 but 112.8 at 2, because the other sequence's prompt was spread over
    // every step (16 tokens each) and 18 tokens touch 55 of 128 experts: every step read
    // nearly half the experts. Chunk steps and pure decode steps are now timed apart.
    TEST_CASE("an MoE serves more with two running sequences than with one") {
        const ModelSpec moe = gpucost::testing::GptOss120b();
        InferenceRequest r = Chat(moe, Precision::kFp8);
        r.input_tokens = 8000;
        r.output_tokens = 500;
        r.concurrency = 1;
        auto e = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(e.ok());
        const auto& curve = e.value().serving->curve;
        REQUIRE(curve.size() >= 3);
        for (std::size_t i = 1; i < curve.size(); ++i) {
            CHECK(curve[i].output_tokens_per_second > curve[i - 1].output_tokens_per_second);
        }
        // A step without a chunk reads the experts of its two decode tokens only.
        CHECK(curve[1].inter_token_latency_ms < 2 * curve[0].inter_token_latency_ms);
    }

    TEST_CASE(
        "fp4 on Blackwell stores NVFP4 weights (4.5 bits with their block scales) and "
        "keeps an fp8 KV cache") {
        InferenceRequest r = Chat(Llama70B(), Precision::kFp8);
        auto fp8 = EstimateInference(r, Cluster(B200(), 1));
        r.precision = Precision::kFp4;
        auto fp4 = EstimateInference(r, Cluster(B200(), 1));
        REQUIRE(fp8.ok());
        REQUIRE(fp4.ok());
        // The blocks' weights shrink; the embedding table and output head stay 16-bit.
        const double embeddings_gb = fp8.value().model.embedding_params * 2.0 / 1e9;
        CHECK(fp4.value().weights_gb_per_accelerator - embeddings_gb ==
              doctest::Approx((fp8.value().weights_gb_per_accelerator - embeddings_gb) * 4.5 / 8));
        using gpucost::testing::AssumptionValue;
        CHECK(AssumptionValue(fp4.value().assumptions, "fp4_bytes_per_element") == 0.5625);
        CHECK(AssumptionValue(fp8.value().assumptions, "fp4_bytes_per_element") == -1);
        CHECK(fp4.value().kv_cache_gb_per_accelerator ==
              doctest::Approx(fp8.value().kv_cache_gb_per_accelerator));
        CHECK(fp4.value().inter_token_latency_ms < 0.7 * fp8.value().inter_token_latency_ms);
        CHECK(fp4.value().time_to_first_token_ms < fp8.value().time_to_first_token_ms);
        // Hopper has no fp4 peak: refused, naming the field.
        auto hopper = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE_FALSE(hopper.ok());
        CHECK(hopper.error().field == "/precision");
    }

    TEST_CASE(
        "below 16 bits the output head, embeddings, hidden-state traffic and attention math "
        "stay 16-bit") {
        InferenceRequest r = Chat(Llama70B(), Precision::kFp8);
        auto bf16_request = r;
        bf16_request.precision = Precision::kBf16;
        auto fp8 = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        auto bf16 = EstimateInference(bf16_request, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(fp8.ok());
        REQUIRE(bf16.ok());
        const ResolvedModel& m = fp8.value().model;
        const double embeddings = m.embedding_params;
        CHECK(fp8.value().weights_gb_per_accelerator ==
              doctest::Approx(((m.params - embeddings) * 1.0 + embeddings * 2.0) / 2 / 1e9));
        CHECK(bf16.value().weights_gb_per_accelerator == doctest::Approx(m.params * 2.0 / 2 / 1e9));
        using gpucost::testing::AssumptionValue;
        CHECK(AssumptionValue(fp8.value().assumptions, "unquantised_bytes_per_element") == 2.0);
        CHECK(AssumptionValue(bf16.value().assumptions, "unquantised_bytes_per_element") == -1);
        // A long prompt's prefill is attention-heavy: attention at the 16-bit peak keeps fp8's
        // prefill well short of twice bf16's speed.
        r.input_tokens = 32768;
        bf16_request.input_tokens = 32768;
        auto fp8_long = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        auto bf16_long = EstimateInference(bf16_request, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(fp8_long.ok());
        REQUIRE(bf16_long.ok());
        CHECK(fp8_long.value().prefill_tokens_per_second <
              1.6 * bf16_long.value().prefill_tokens_per_second);
    }

    // GPT-OSS was served as if every weight were fp4: its release quantises only the MoE
    // weights (MXFP4, multiplied in 8 bits on Blackwell) and keeps the rest in bf16.
    TEST_CASE(
        "a routed-experts checkpoint keeps every other linear layer 16-bit and multiplies its "
        "fp4 experts at the fp8 peak") {
        ModelSpec experts_only = gpucost::testing::GptOss120b();
        experts_only.low_precision_scope = LowPrecisionScope::kRoutedExperts;
        InferenceRequest r = Chat(experts_only, Precision::kFp4);
        r.concurrency = 512;
        auto scoped = EstimateInference(r, Cluster(B200(), 1));
        r.model = gpucost::testing::GptOss120b();
        auto everything = EstimateInference(r, Cluster(B200(), 1));
        REQUIRE(scoped.ok());
        REQUIRE(everything.ok());
        const ResolvedModel& m = scoped.value().model;
        CHECK(m.low_precision_scope == LowPrecisionScope::kRoutedExperts);
        const double routed = m.RoutedExpertParams();
        CHECK(scoped.value().weights_gb_per_accelerator ==
              doctest::Approx((routed * 0.5625 + (m.params - routed) * 2.0) / 1e9));
        using gpucost::testing::AssumptionValue;
        CHECK(AssumptionValue(scoped.value().assumptions, "routed_expert_gemm_peak_tflops") ==
              4500);
        CHECK(AssumptionValue(everything.value().assumptions, "routed_expert_gemm_peak_tflops") ==
              -1);
        // More bytes and 16-bit attention projections: slower at every point.
        CHECK(scoped.value().inter_token_latency_ms >
              1.1 * everything.value().inter_token_latency_ms);
        CHECK(scoped.value().cluster.output_tokens_per_second <
              everything.value().cluster.output_tokens_per_second / 1.1);
        // At 16 bits and above there is nothing to keep apart.
        r.model = experts_only;
        r.precision = Precision::kBf16;
        auto bf16 = EstimateInference(r, Cluster(B200(), 1));
        r.model = gpucost::testing::GptOss120b();
        auto bf16_everything = EstimateInference(r, Cluster(B200(), 1));
        REQUIRE(bf16.ok());
        REQUIRE(bf16_everything.ok());
        CHECK(bf16.value().inter_token_latency_ms ==
              doctest::Approx(bf16_everything.value().inter_token_latency_ms));
        // A dense model has no routed experts to quantise alone.
        ModelSpec dense = Llama70B();
        dense.low_precision_scope = LowPrecisionScope::kRoutedExperts;
        auto refused = EstimateInference(Chat(dense, Precision::kFp8), Cluster(B200(), 1));
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().field == "/model/low_precision_scope");
    }

    TEST_CASE(
        "weight-only quantisation stores and reads the weights narrow and multiplies at the "
        "request's precision") {
        using gpucost::testing::AssumptionValue;
        InferenceRequest r = Chat(Llama70B(), Precision::kBf16);
        r.batch_size = 1;
        auto bf16 = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 1));
        r.weight_precision = Precision::kFp4;
        auto w4a16 = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 1));
        r.weight_precision.reset();
        r.precision = Precision::kFp8;
        auto fp8 = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 1));
        REQUIRE(bf16.ok());
        REQUIRE(w4a16.ok());
        REQUIRE(fp8.ok());
        const ResolvedModel& m = w4a16.value().model;
        const double linear = m.params - m.embedding_params;
        CHECK(w4a16.value().weights_gb_per_accelerator ==
              doctest::Approx((linear * 0.5625 + m.embedding_params * 2.0) / 1e9));
        CHECK(AssumptionValue(w4a16.value().assumptions, "weight_bytes_per_element") == 0.5625);
        CHECK(AssumptionValue(bf16.value().assumptions, "weight_bytes_per_element") == -1);
        // Decoding one sequence reads the weights: faster than 8-bit weights.
        CHECK(w4a16.value().inter_token_latency_ms < fp8.value().inter_token_latency_ms);
        CHECK(w4a16.value().inter_token_latency_ms < 0.5 * bf16.value().inter_token_latency_ms);
        // A long prompt is compute-bound at the 16-bit peak: as slow as bf16, slower than fp8.
        r.precision = Precision::kBf16;
        r.weight_precision = Precision::kFp4;
        r.input_tokens = 8192;
        auto long_w4a16 = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 1));
        r.weight_precision.reset();
        auto long_bf16 = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 1));
        REQUIRE(long_w4a16.ok());
        REQUIRE(long_bf16.ok());
        CHECK(long_w4a16.value().prefill_tokens_per_second ==
              doctest::Approx(long_bf16.value().prefill_tokens_per_second).epsilon(0.03));
        // fp4 math refused on a part without an fp4 peak names the weight-only request.
        r.precision = Precision::kFp4;
        r.weight_precision.reset();
        auto no_fp4 = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 1));
        REQUIRE_FALSE(no_fp4.ok());
        CHECK(no_fp4.error().field == "/precision");
        CHECK(no_fp4.error().message.find("precision bf16, weight_precision fp4") !=
              std::string::npos);
        // Only weights narrower than the GEMMs' inputs and below 16 bits are weight-only.
        for (auto [precision, weights] : {std::pair{Precision::kFp8, Precision::kFp8},
                                          std::pair{Precision::kBf16, Precision::kFp16},
                                          std::pair{Precision::kFp4, Precision::kFp8}}) {
            r.precision = precision;
            r.weight_precision = weights;
            auto refused = EstimateInference(r, Cluster(B200(), 1));
            REQUIRE_FALSE(refused.ok());
            CHECK(refused.error().field == "/weight_precision");
        }
    }

    TEST_CASE("weight-only quantisation of a routed-experts checkpoint narrows only the experts") {
        ModelSpec experts_only = gpucost::testing::GptOss120b();
        experts_only.low_precision_scope = LowPrecisionScope::kRoutedExperts;
        InferenceRequest r = Chat(experts_only, Precision::kBf16);
        r.weight_precision = Precision::kFp4;
        auto e = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 1));
        REQUIRE(e.ok());
        const ResolvedModel& m = e.value().model;
        const double routed = m.RoutedExpertParams();
        CHECK(e.value().weights_gb_per_accelerator ==
              doctest::Approx((routed * 0.5625 + (m.params - routed) * 2.0) / 1e9));
    }

    TEST_CASE(
        "a checkpoint stored below the request's precision is served as stored, weight-only") {
        using gpucost::testing::AssumptionSource;
        using gpucost::testing::AssumptionValue;
        ModelSpec awq = Llama70B();
        awq.checkpoint_precision = Precision::kFp4;
        awq.checkpoint_precision_source = "hf_config quantization_config, quant_method awq";
        InferenceRequest stored = Chat(awq, Precision::kBf16);
        InferenceRequest named = Chat(Llama70B(), Precision::kBf16);
        named.weight_precision = Precision::kFp4;
        auto as_stored = EstimateInference(stored, Cluster(gpucost::testing::H100Sxm(), 1));
        auto as_named = EstimateInference(named, Cluster(gpucost::testing::H100Sxm(), 1));
        REQUIRE(as_stored.ok());
        REQUIRE(as_named.ok());
        // The same figures as naming the width: 4-bit weights fit one H100 (a 16-bit 70B does
        // not), read at 4 bits per decode step.
        CHECK(as_stored.value().fits_in_memory);
        CHECK(as_stored.value().weights_gb_per_accelerator ==
              as_named.value().weights_gb_per_accelerator);
        CHECK(as_stored.value().inter_token_latency_ms == as_named.value().inter_token_latency_ms);
        CHECK(AssumptionValue(as_stored.value().assumptions, "weight_bytes_per_element") == 0.5625);
        CHECK(AssumptionSource(as_stored.value().assumptions, "weight_bytes_per_element")
                  .find("checkpoint (hf_config quantization_config") != std::string::npos);
        CHECK(as_stored.value().warnings.empty());
        // Naming another width than the checkpoint's is a disagreement, refused.
        stored.weight_precision = Precision::kFp8;
        auto disagree = EstimateInference(stored, Cluster(gpucost::testing::H100Sxm(), 1));
        REQUIRE_FALSE(disagree.ok());
        CHECK(disagree.error().field == "/weight_precision");
        CHECK(disagree.error().message.find("quant_method awq") != std::string::npos);
        // The checkpoint's own width at the GEMMs' precision is the checkpoint as it is.
        ModelSpec fp8_release = Llama70B();
        fp8_release.checkpoint_precision = Precision::kFp8;
        fp8_release.checkpoint_precision_source = "hf_config quantization_config, quant_method fp8";
        InferenceRequest at_fp8 = Chat(fp8_release, Precision::kFp8);
        auto same = EstimateInference(at_fp8, Cluster(B200(), 1));
        REQUIRE(same.ok());
        CHECK(AssumptionValue(same.value().assumptions, "weight_bytes_per_element") == -1);
        CHECK(same.value().warnings.empty());
        // A precision narrower than the checkpoint is a requantised checkpoint: said.
        at_fp8.precision = Precision::kFp4;
        auto requantised = EstimateInference(at_fp8, Cluster(B200(), 1));
        REQUIRE(requantised.ok());
        REQUIRE(requantised.value().warnings.size() == 1);
        CHECK(requantised.value().warnings[0].field == "/precision");
        CHECK(requantised.value().warnings[0].detail.find("requantised to fp4") !=
              std::string::npos);
    }

    TEST_CASE(
        "continuous batching: throughput and step time grow with concurrency up to the KV limit") {
        InferenceRequest r = Chat(Llama70B(), Precision::kFp8);
        r.concurrency = 1;
        auto e = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(e.ok());
        REQUIRE(e.value().serving.has_value());
        const ServingEstimate& s = *e.value().serving;
        CHECK(s.mode == "concurrency");
        CHECK(s.max_num_seqs == kLargeDeviceMaxNumSeqs);
        CHECK(s.max_num_batched_tokens == kLargeDeviceMaxNumBatchedTokens);
        REQUIRE(s.kv_cache_limit_sequences > 8);
        REQUIRE(s.curve.size() >= 4);
        for (std::size_t i = 1; i < s.curve.size(); ++i) {
            CHECK(s.curve[i].output_tokens_per_second > s.curve[i - 1].output_tokens_per_second);
            CHECK(s.curve[i].inter_token_latency_ms >= s.curve[i - 1].inter_token_latency_ms);
            CHECK(s.curve[i].queued_requests == 0);
        }
        const ServingPoint& last = s.curve.back();
        CHECK(last.running_sequences == std::min(s.kv_cache_limit_sequences, s.max_num_seqs));
        // Little's law on the running slots: requests/s x latency = running sequences; output
        // tokens = requests x 200. Close to running / step (a sequence's life is about 200
        // steps when its prompt fits one chunk).
        CHECK(last.requests_per_second * last.request_latency_ms / 1e3 ==
              doctest::Approx(last.running_sequences));
        CHECK(last.requests_per_second == doctest::Approx(last.output_tokens_per_second / 200));
        CHECK(last.output_tokens_per_second ==
              doctest::Approx(last.running_sequences / (last.inter_token_latency_ms / 1e3))
                  .epsilon(0.02));
        // One request alone: its latency is its first token plus 199 steps.
        const ServingPoint& solo = *s.point;
        CHECK(solo.request_latency_ms ==
              doctest::Approx(solo.time_to_first_token_ms + 199 * solo.inter_token_latency_ms));

        // Twice the KV limit: the rest queue, throughput stays, latency doubles (Little).
        r.concurrency = 2 * static_cast<int>(last.running_sequences);
        auto queued = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(queued.ok());
        const ServingPoint& q = *queued.value().serving->point;
        CHECK(q.queued_requests == doctest::Approx(last.running_sequences));
        CHECK(q.requests_per_second == doctest::Approx(last.requests_per_second));
        CHECK(q.request_latency_ms ==
              doctest::Approx(*r.concurrency / q.requests_per_second * 1e3));
        CHECK(q.time_to_first_token_ms > last.time_to_first_token_ms);
    }

    // One client with a 100,000-token prompt: the prompt was counted in its chunk steps and
    // again spread over every decode step, so requests/s x latency came to 1.9 for one
    // sequence (0.084 requests/s from a client that can send one every 22.8 s).
    TEST_CASE("a long prompt is counted once: one client's requests/s x latency is 1") {
        InferenceRequest r = Chat(Llama70B(), Precision::kFp8);
        r.input_tokens = 100000;
        r.concurrency = 1;
        auto e = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(e.ok());
        const ServingPoint& solo = *e.value().serving->point;
        CHECK(solo.prefill_tokens_per_step == 0);  // no other sequence's prompt to carry
        CHECK(solo.requests_per_second * solo.request_latency_ms / 1e3 == doctest::Approx(1.0));
        CHECK(solo.request_latency_ms ==
              doctest::Approx(solo.time_to_first_token_ms + 199 * solo.inter_token_latency_ms));
        // Its decode steps read weights and cache alone: the single-request decode step.
        CHECK(solo.inter_token_latency_ms ==
              doctest::Approx(e.value().inter_token_latency_ms).epsilon(0.05));
    }

    // An NVL72 rack joins 72 GPUs over NVLink though each compute tray holds 4: serving with
    // tensor parallel 8 across two trays sent its all-reduces over the network while the
    // answer echoed a 72-GPU scale-up domain, so 8 GPUs decoded slower than 4.
    TEST_CASE(
        "tensor parallelism within the scale-up domain uses the scale-up link, beyond the node "
        "too") {
        Accelerator gb200 = B200();
        gb200.id = "gb200";
        InferenceRequest r = Chat(Llama70B(), Precision::kFp8);
        ClusterSpec rack;
        rack.accelerator = gb200;
        rack.accelerator_count = 8;
        rack.accelerators_per_node = 4;  // one tray
        r.tensor_parallel = 8;
        auto nvlink = EstimateInference(r, rack);
        REQUIRE(nvlink.ok());
        rack.scale_up_domain = 4;  // the same trays without the rack's NVLink spine
        auto network = EstimateInference(r, rack);
        REQUIRE(network.ok());
        CHECK(nvlink.value().inter_token_latency_ms < network.value().inter_token_latency_ms);
        rack.scale_up_domain.reset();
        r.tensor_parallel = 4;
        auto four = EstimateInference(r, rack);
        REQUIRE(four.ok());
        CHECK(nvlink.value().inter_token_latency_ms < four.value().inter_token_latency_ms);
    }

    TEST_CASE("a request rate is served by the running batch whose throughput matches it") {
        InferenceRequest r = Chat(Llama70B(), Precision::kFp8);
        r.requests_per_second = 2.0;
        auto e = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(e.ok());
        const ServingEstimate& s = *e.value().serving;
        CHECK(s.mode == "request_rate");
        CHECK_FALSE(s.saturated);
        CHECK(s.point->requests_per_second == doctest::Approx(2.0).epsilon(1e-6));
        CHECK(s.point->running_sequences < s.curve.back().running_sequences);
        r.requests_per_second = 1e5;
        auto over = EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2));
        REQUIRE(over.ok());
        CHECK(over.value().serving->saturated);
        r.concurrency = 4;
        CHECK(EstimateInference(r, Cluster(gpucost::testing::H100Sxm(), 2)).error().field ==
              "/requests_per_second");
    }
}

TEST_SUITE("estimate_inference_pipeline") {
    // Llama-3.3-70B in BF16 on two 8-GPU nodes of B200 as 2 pipeline stages of TP 8.
    ClusterSpec TwoNodes() {
        ClusterSpec c = Cluster(B200(), 16);
        c.accelerators_per_node = 8;
        c.scale_out_gbit_per_s_per_node = 3200;
        return c;
    }

    TEST_CASE("pipeline stages split the weights and each sequence's KV cache per accelerator") {
        InferenceRequest r = Chat(Llama70B(), Precision::kBf16);
        r.tensor_parallel = 8;
        r.batch_size = 16;
        auto one = EstimateInference(r, Cluster(B200(), 8));
        r.pipeline_parallel = 2;
        auto two = EstimateInference(r, TwoNodes());
        REQUIRE(one.ok());
        REQUIRE(two.ok());
        CHECK(two.value().pipeline_parallel == 2);
        CHECK(two.value().replicas == 1);
        CHECK(two.value().weights_gb_per_accelerator ==
              doctest::Approx(one.value().weights_gb_per_accelerator / 2));
        CHECK(two.value().kv_cache_gb_per_accelerator ==
              doctest::Approx(one.value().kv_cache_gb_per_accelerator / 2));
        CHECK(two.value().max_batch_size > one.value().max_batch_size);
    }

    TEST_CASE("a decode step is one micro-batch's pass over all layers plus pp - 1 hops") {
        InferenceRequest r = Chat(Llama70B(), Precision::kBf16);
        r.tensor_parallel = 8;
        r.batch_size = 1;  // one sequence: one micro-batch, no pipelining to hide the hops
        auto one = EstimateInference(r, Cluster(B200(), 8));
        r.pipeline_parallel = 2;
        auto two = EstimateInference(r, TwoNodes());
        REQUIRE(one.ok());
        REQUIRE(two.ok());
        // One hop: 2 tensors x 8192 x 2 bytes / 8 ranks over one rank's network share, the
        // network latency and the handoff.
        const double share_bytes_per_s = 3200e9 / 8 / 8;
        const double hop_s =
            2 * 8192 * 2.0 / 8 / share_bytes_per_s + kScaleOutHopLatencyS + kPipelineStageHandoffS;
        const double hop_ms = hop_s * 1e3;
        CHECK(two.value().inter_token_latency_ms - one.value().inter_token_latency_ms ==
              doctest::Approx(hop_ms).epsilon(0.02));
        // 16 sequences in 2 micro-batches of 8: the step is a pass of 8, not of 16.
        r.batch_size = 16;
        auto sixteen = EstimateInference(r, TwoNodes());
        r.pipeline_parallel.reset();
        r.batch_size = 8;
        auto eight_one_node = EstimateInference(r, Cluster(B200(), 8));
        REQUIRE(sixteen.ok());
        REQUIRE(eight_one_node.ok());
        CHECK(sixteen.value().inter_token_latency_ms <
              eight_one_node.value().inter_token_latency_ms + 2 * hop_ms);
        bool echoed = false;
        for (const Assumption& a : two.value().assumptions) {
            echoed = echoed ||
                     (a.name == "pipeline_stage_handoff_s" && a.value == kPipelineStageHandoffS);
        }
        CHECK(echoed);
    }

    TEST_CASE("a pipeline degree that does not divide the accelerators names the field") {
        InferenceRequest r = Chat(Llama70B(), Precision::kBf16);
        r.pipeline_parallel = 3;
        auto e = EstimateInference(r, TwoNodes());
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().field == "/pipeline_parallel");
        r.pipeline_parallel = 0;
        CHECK(EstimateInference(r, TwoNodes()).error().field == "/pipeline_parallel");
    }
}
