// estimate_bench: time of one training estimate with the layout search, the planner's
// estimates of one workload over a shape's node counts, one with a fixed layout, one
// inference estimate and one roofline call (Release build, one core).
// Usage: estimate_bench [iterations]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "pricing/estimate/inference.hpp"
#include "pricing/estimate/roofline.hpp"
#include "pricing/estimate/training.hpp"

namespace est = gpucost::pricing::estimate;
using gpucost::pricing::Precision;

namespace {

gpucost::pricing::Accelerator H100() {
    gpucost::pricing::Accelerator a;
    a.id = "h100-sxm";
    a.form_factor = "SXM5";
    a.peak_tflops[static_cast<std::size_t>(Precision::kBf16)] = 989;
    a.memory_gb = 80;
    a.memory_gb_per_s = 3350;
    a.scale_up_gb_per_s = 900;
    return a;
}

template <typename F>
double MicrosPerCall(int iterations, F&& f) {
    volatile double sink = 0;
    for (int i = 0; i < iterations / 10 + 1; ++i) sink = sink + f();  // warm-up
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) sink = sink + f();
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / iterations;
}

}  // namespace

int main(int argc, char** argv) {
    int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
    if (iterations < 1) iterations = 1;
    est::ClusterSpec cluster;
    cluster.accelerator = H100();
    cluster.accelerator_count = 2048;
    est::TrainingRequest req;
    req.model.params_b = 65.2;
    req.model.layers = 80;
    req.model.hidden_size = 8192;
    req.model.attention_heads = 64;
    req.model.ffn_hidden_size = 22016;
    req.model.gated_mlp = true;
    req.tokens_b = 1400;
    int considered = 0;
    double search_us = MicrosPerCall(iterations, [&] {
        auto e = est::EstimateTraining(req, cluster);
        considered = e.ok() ? e.value().layouts_considered : -1;
        return e.ok() ? e.value().step_time_s : 0.0;
    });
    est::ClusterSpec small = cluster;
    small.accelerator_count = 64;
    double search_small_us = MicrosPerCall(iterations, [&] {
        auto e = est::EstimateTraining(req, small);
        return e.ok() ? e.value().step_time_s : 0.0;
    });
    est::TrainingRequest lean = req;
    lean.with_assumptions = false;
    double search_lean_us = MicrosPerCall(iterations, [&] {
        auto e = est::EstimateTraining(lean, cluster);
        return e.ok() ? e.value().step_time_s : 0.0;
    });
    // The planner's way: one TrainingEstimator for the workload over the node counts of one
    // shape (8 to 4096 accelerators), keeping the per-layer costs across them.
    auto lean_model = est::DeriveModel(lean.model);
    if (!lean_model.ok()) return 1;
    constexpr int kLadderSteps = 10;
    double ladder_us =
        MicrosPerCall(iterations,
                      [&] {
                          est::TrainingEstimator estimator(lean, lean_model.value());
                          double sum = 0;
                          est::ClusterSpec step = cluster;
                          for (int count = 8, i = 0; i < kLadderSteps; ++i, count *= 2) {
                              step.accelerator_count = count;
                              auto e = estimator.Estimate(step);
                              sum += e.ok() ? e.value().step_time_s : 0.0;
                          }
                          return sum;
                      }) /
        kLadderSteps;
    est::TrainingRequest fixed = req;
    est::ParallelismRequest p;
    p.tensor = 8;
    p.pipeline = 4;
    p.data = 64;
    p.zero_stage = 1;
    p.recompute = est::Recompute::kSelective;
    p.micro_batch_size = 1;
    fixed.parallelism = p;
    double fixed_us = MicrosPerCall(iterations, [&] {
        auto e = est::EstimateTraining(fixed, cluster);
        return e.ok() ? e.value().step_time_s : 0.0;
    });
    // MoE with the expert-parallel degree searched too (Mixtral 8x22B shape on 256 GPUs).
    est::TrainingRequest moe;
    moe.model.params_b = 141;
    moe.model.active_params_b = 39;
    moe.model.layers = 56;
    moe.model.hidden_size = 6144;
    moe.model.attention_heads = 48;
    moe.model.kv_heads = 8;
    moe.model.ffn_hidden_size = 16384;
    moe.model.gated_mlp = true;
    moe.model.experts = 8;
    moe.model.experts_per_token = 2;
    moe.tokens_b = 1000;
    est::ClusterSpec moe_cluster = cluster;
    moe_cluster.accelerator_count = 256;
    int moe_considered = 0;
    double moe_us = MicrosPerCall(iterations, [&] {
        auto e = est::EstimateTraining(moe, moe_cluster);
        moe_considered = e.ok() ? e.value().layouts_considered : -1;
        return e.ok() ? e.value().step_time_s : 0.0;
    });
    // QLoRA of the 65B model on one 80 GB card, layout searched.
    est::TrainingRequest qlora = req;
    qlora.mode = est::TrainingMode::kQlora;
    qlora.tokens_b = 0.1;
    est::ClusterSpec one = cluster;
    one.accelerator_count = 1;
    double qlora_us = MicrosPerCall(iterations, [&] {
        auto e = est::EstimateTraining(qlora, one);
        return e.ok() ? e.value().step_time_s : 0.0;
    });
    est::InferenceRequest inf;
    inf.model = req.model;
    inf.batch_size = 8;
    inf.input_tokens = 1000;
    inf.output_tokens = 200;
    est::ClusterSpec two = cluster;
    two.accelerator_count = 2;
    double inference_us = MicrosPerCall(iterations, [&] {
        auto e = est::EstimateInference(inf, two);
        return e.ok() ? e.value().inter_token_latency_ms : 0.0;
    });
    std::vector<est::RooflineOp> ops(3);
    ops[0].m = ops[0].n = ops[0].k = 8192;
    ops[1].kind = est::OpKind::kMemory;
    ops[1].bytes_read = 1e9;
    ops[2].kind = est::OpKind::kCustom;
    ops[2].flops = 1e12;
    ops[2].bytes = 1e6;
    double roofline_us = MicrosPerCall(iterations, [&] {
        auto r = est::EstimateRoofline(H100(), Precision::kBf16, ops);
        return r.ok() ? r.value().total.seconds : 0.0;
    });
    std::printf(
        "training estimate, layout search, 65B on 2048 x h100-sxm: %8.1f us/call (%d layouts "
        "evaluated)\n",
        search_us, considered);
    std::printf("training estimate, layout search, 65B on   64 x h100-sxm: %8.1f us/call\n",
                search_small_us);
    std::printf("  the same on 2048 without building assumptions (planner): %6.1f us/call\n",
                search_lean_us);
    std::printf("  one TrainingEstimator over 8..4096 x h100-sxm (planner):  %8.1f us/estimate\n",
                ladder_us);
    std::printf("training estimate, fixed layout:                         %8.1f us/call\n",
                fixed_us);
    std::printf(
        "training estimate, MoE 141B (8 experts) on 256, expert parallel searched: %6.1f us/call "
        "(%d layouts evaluated)\n",
        moe_us, moe_considered);
    std::printf("training estimate, QLoRA 65B on 1 x h100-sxm, searched:  %8.1f us/call\n",
                qlora_us);
    std::printf("inference estimate (TP2, batch 8):                       %8.1f us/call\n",
                inference_us);
    std::printf("roofline call (3 ops):                                   %8.1f us/call\n",
                roofline_us);
    return 0;
}
