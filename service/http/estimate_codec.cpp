#include "service/http/estimate_codec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "service/http/json_codec.hpp"
#include "service/http/json_reader.hpp"
#include "service/http/model_codec.hpp"

namespace gpucost::http {
namespace {

namespace est = pricing::estimate;
using pricing::ErrorCode;
using pricing::MakeError;
using pricing::Result;


std::optional<pricing::Precision> PrecisionField(JsonReader& r, const std::string& key) {
    auto s = r.String(key);
    if (!s) return std::nullopt;
    auto p = pricing::ParsePrecision(*s);
    if (!p) {
        r.Fail(ErrorCode::kInvalidArgument, key,
               "unknown precision '" + s->substr(0, 16) +
                   "'; use fp32, tf32, fp16, bf16, fp8, int8 or fp4");
    }
    return p;
}

Result<est::EfficiencyOverrides> DecodeEfficiency(const json& j, const std::string& ptr) {
    JsonReader r(j, ptr);
    r.OnlyKnown({"gemm_max_efficiency", "memory_bandwidth_efficiency", "attention_efficiency",
                 "scale_up_efficiency", "scale_out_efficiency", "kernel_overhead_s"});
    est::EfficiencyOverrides o;
    o.gemm_max_efficiency = r.Number("gemm_max_efficiency");
    o.memory_bandwidth_efficiency = r.Number("memory_bandwidth_efficiency");
    o.attention_efficiency = r.Number("attention_efficiency");
    o.scale_up_efficiency = r.Number("scale_up_efficiency");
    o.scale_out_efficiency = r.Number("scale_out_efficiency");
    o.kernel_overhead_s = r.Number("kernel_overhead_s");
    if (!r.ok()) return r.error();
    return o;
}

json FineTuningJson(const est::FineTuning& f) {
    if (!est::IsAdapterMode(f.mode)) return nullptr;
    return {{"lora_rank", f.lora_rank},
            {"lora_target_modules", f.lora_target_modules},
            {"trainable_params_b", Num(f.trainable_params / 1e9)},
            {"frozen_weight_bytes_per_param", Num(f.frozen_weight_bytes_per_param)}};
}

template <typename T>
json Opt(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

json LayoutJson(const est::ParallelLayout& l) {
    return {{"tensor", l.tensor},
            {"pipeline", l.pipeline},
            {"data", l.data},
            {"zero_stage", l.zero_stage},
            {"recompute", est::RecomputeName(l.recompute)},
            {"micro_batch_size", l.micro_batch_size},
            {"virtual_stages", l.virtual_stages},
            {"sequence_parallel", l.sequence_parallel},
            {"expert", l.expert}};
}

// Levenshtein distance, for "did you mean" lists of accelerator ids (ids are short).
std::size_t Distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

}  // namespace

Result<HardwareRequest> DecodeHardware(const json& j, const std::string& ptr) {
    JsonReader r(j, ptr);
    r.OnlyKnown({"accelerator", "total_accelerators", "accelerator_count", "scale_out_gbit_per_s_per_node",
                 "scale_up_gb_per_s", "scale_up_domain"});
    r.Require("accelerator");
    r.Require("total_accelerators");
    HardwareRequest h;
    h.accelerator = r.String("accelerator").value_or("");
    h.total_accelerators = r.Int("total_accelerators").value_or(1);
    h.accelerator_count = r.Int("accelerator_count");
    h.scale_out_gbit_per_s_per_node = r.Number("scale_out_gbit_per_s_per_node");
    h.scale_up_gb_per_s = r.Number("scale_up_gb_per_s");
    h.scale_up_domain = r.Int("scale_up_domain");
    if (!r.ok()) return r.error();
    if (h.accelerator.size() > 200) {
        return MakeError(ErrorCode::kInvalidArgument, "accelerator id is too long",
                         ptr + "/accelerator");
    }
    return h;
}

pricing::Error UnknownAccelerator(const std::string& id, const pricing::Catalog& catalog,
                                  const std::string& field) {
    std::vector<std::pair<std::size_t, std::string>> ranked;
    for (const auto& a : catalog.Accelerators()) {
        ranked.emplace_back(Distance(id, a.id), a.id);
    }
    std::sort(ranked.begin(), ranked.end());
    std::string closest;
    for (std::size_t i = 0; i < ranked.size() && i < 5; ++i) {
        closest += (i ? ", " : "") + ranked[i].second;
    }
    return MakeError(ErrorCode::kInvalidArgument,
                     "unknown accelerator '" + id.substr(0, 64) + "'; closest known ids: " +
                         closest + " (GET /v1/accelerators lists all)",
                     field);
}

pricing::Status CheckAcceleratorIds(const std::vector<std::string>& ids,
                                    const pricing::Catalog& catalog, const std::string& pointer) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (!catalog.FindAccelerator(ids[i]).ok()) {
            return UnknownAccelerator(ids[i], catalog, pointer + "/" + std::to_string(i));
        }
    }
    return pricing::Ok{};
}

Result<est::ClusterSpec> ResolveHardware(const HardwareRequest& h, const pricing::Catalog& catalog) {
    auto found = catalog.FindAccelerator(h.accelerator);
    if (!found.ok()) {
        return UnknownAccelerator(h.accelerator, catalog, "/hardware/accelerator");
    }
    est::ClusterSpec c;
    c.accelerator = found.value();
    c.accelerator_count = h.total_accelerators;
    c.accelerators_per_node = h.accelerator_count.value_or(0);
    if (h.accelerator_count && *h.accelerator_count < 1) {
        return MakeError(ErrorCode::kInvalidArgument, "accelerator_count must be at least 1",
                         "/hardware/accelerator_count");
    }
    c.scale_out_gbit_per_s_per_node = h.scale_out_gbit_per_s_per_node;
    c.scale_up_gb_per_s = h.scale_up_gb_per_s;
    c.scale_up_domain = h.scale_up_domain;
    if (auto s = est::ValidateCluster(c); !s.ok()) {
        return s.error();
    }
    return c;
}

Result<est::TrainingRequest> DecodeTrainingRequest(const json& body, HardwareRequest* hardware,
                                                   const std::vector<std::string>& extra_keys) {
    JsonReader r(body, "");
    std::vector<std::string> known = {"model", "tokens_b", "hardware", "precision",
                                      "global_batch_tokens", "parallelism", "efficiency",
                                      "goodput", "comm_overlap_fraction", "tp_overlap_fraction",
                                      "memory_overhead_gb", "flash_attention", "mode",
                                      "lora_rank", "lora_target_modules",
                                      "expert_overlap_fraction"};
    known.insert(known.end(), extra_keys.begin(), extra_keys.end());
    r.OnlyKnown(known);
    r.Require("model");
    r.Require("tokens_b");
    est::TrainingRequest req;
    const json* model = r.Member("model");
    const json* hw = r.Object("hardware");
    if (hardware != nullptr) r.Require("hardware");
    req.tokens_b = r.Number("tokens_b").value_or(0);
    req.precision = PrecisionField(r, "precision").value_or(pricing::Precision::kBf16);
    req.global_batch_tokens = r.Number("global_batch_tokens");
    req.goodput = r.Number("goodput");
    req.comm_overlap_fraction = r.Number("comm_overlap_fraction");
    req.tp_overlap_fraction = r.Number("tp_overlap_fraction");
    req.memory_overhead_gb = r.Number("memory_overhead_gb");
    req.flash_attention = r.Bool("flash_attention");
    req.expert_overlap_fraction = r.Number("expert_overlap_fraction");
    if (auto mode = r.String("mode")) {
        auto parsed = est::ParseTrainingMode(*mode);
        if (!parsed) {
            r.Fail(ErrorCode::kInvalidArgument, "mode",
                   "unknown mode '" + mode->substr(0, 16) +
                       "'; use pretrain, full_finetune, lora or qlora");
        }
        req.mode = parsed.value_or(est::TrainingMode::kPretrain);
    }
    req.lora_rank = r.Int("lora_rank");
    req.lora_target_modules = r.Strings("lora_target_modules");
    const json* par = r.Object("parallelism");
    const json* eff = r.Object("efficiency");
    if (!r.ok()) return r.error();
    auto m = DecodeModel(*model, "/model");
    if (!m.ok()) return m.error();
    req.model = m.value();
    if (hardware != nullptr && hw != nullptr) {
        auto h = DecodeHardware(*hw, "/hardware");
        if (!h.ok()) return h.error();
        *hardware = h.value();
    }
    if (eff != nullptr) {
        auto e = DecodeEfficiency(*eff, "/efficiency");
        if (!e.ok()) return e.error();
        req.efficiency = e.value();
    }
    if (par != nullptr) {
        JsonReader p(*par, "/parallelism");
        p.OnlyKnown({"tensor", "pipeline", "data", "zero_stage", "recompute", "micro_batch_size",
                     "virtual_stages", "sequence_parallel", "expert"});
        est::ParallelismRequest pr;
        pr.tensor = p.Int("tensor");
        pr.pipeline = p.Int("pipeline");
        pr.data = p.Int("data");
        pr.zero_stage = p.Int("zero_stage");
        pr.micro_batch_size = p.Int("micro_batch_size");
        pr.virtual_stages = p.Int("virtual_stages");
        pr.sequence_parallel = p.Bool("sequence_parallel");
        pr.expert = p.Int("expert");
        if (auto rc = p.String("recompute")) {
            pr.recompute = est::ParseRecompute(*rc);
            if (!pr.recompute) {
                p.Fail(ErrorCode::kInvalidArgument, "recompute",
                       "recompute must be none, selective or full");
            }
        }
        if (!p.ok()) return p.error();
        req.parallelism = pr;
    }
    return req;
}

Result<est::InferenceRequest> DecodeInferenceRequest(const json& body, HardwareRequest* hardware) {
    JsonReader r(body, "");
    r.OnlyKnown({"model", "hardware", "precision", "kv_cache_precision", "batch_size",
                 "input_tokens", "output_tokens", "tensor_parallel", "efficiency",
                 "step_overhead_s", "memory_overhead_gb", "concurrency", "requests_per_second"});
    r.Require("model");
    r.Require("hardware");
    r.Require("input_tokens");
    r.Require("output_tokens");
    est::InferenceRequest req;
    const json* model = r.Member("model");
    const json* hw = r.Object("hardware");
    const json* eff = r.Object("efficiency");
    req.precision = PrecisionField(r, "precision").value_or(pricing::Precision::kBf16);
    req.kv_cache_precision = PrecisionField(r, "kv_cache_precision");
    req.batch_size = r.Int("batch_size").value_or(1);
    req.input_tokens = r.Int("input_tokens").value_or(0);
    req.output_tokens = r.Int("output_tokens").value_or(0);
    req.tensor_parallel = r.Int("tensor_parallel");
    req.step_overhead_s = r.Number("step_overhead_s");
    req.memory_overhead_gb = r.Number("memory_overhead_gb");
    req.concurrency = r.Int("concurrency");
    req.requests_per_second = r.Number("requests_per_second");
    if (!r.ok()) return r.error();
    auto m = DecodeModel(*model, "/model");
    if (!m.ok()) return m.error();
    req.model = m.value();
    auto h = DecodeHardware(*hw, "/hardware");
    if (!h.ok()) return h.error();
    if (hardware != nullptr) *hardware = h.value();
    if (eff != nullptr) {
        auto e = DecodeEfficiency(*eff, "/efficiency");
        if (!e.ok()) return e.error();
        req.efficiency = e.value();
    }
    return req;
}

Result<RooflineRequest> DecodeRooflineRequest(const json& body) {
    JsonReader r(body, "");
    r.OnlyKnown({"accelerator", "precision", "ops", "efficiency"});
    r.Require("accelerator");
    r.Require("ops");
    RooflineRequest req;
    req.accelerator = r.String("accelerator").value_or("");
    req.precision = PrecisionField(r, "precision").value_or(pricing::Precision::kBf16);
    const json* eff = r.Object("efficiency");
    const json* ops = r.Member("ops");
    if (ops != nullptr && !ops->is_array()) {
        r.Fail(ErrorCode::kMalformed, "ops", "ops must be an array");
    }
    if (!r.ok()) return r.error();
    if (eff != nullptr) {
        auto e = DecodeEfficiency(*eff, "/efficiency");
        if (!e.ok()) return e.error();
        req.efficiency = e.value();
    }
    std::size_t i = 0;
    for (const json& op : *ops) {
        std::string ptr = "/ops/" + std::to_string(i++);
        if (!op.is_object()) {
            return MakeError(ErrorCode::kMalformed, "each op must be an object", ptr);
        }
        JsonReader o(op, ptr);
        auto kind = o.String("kind");
        if (!o.ok()) return o.error();
        est::RooflineOp rop;
        rop.name = o.String("name").value_or("");
        if (kind == "gemm") {
            o.OnlyKnown({"kind", "name", "m", "n", "k"});
            rop.kind = est::OpKind::kGemm;
            o.Require("m");
            o.Require("n");
            o.Require("k");
            rop.m = o.Number("m").value_or(0);
            rop.n = o.Number("n").value_or(0);
            rop.k = o.Number("k").value_or(0);
        } else if (kind == "memory") {
            o.OnlyKnown({"kind", "name", "bytes_read", "bytes_written"});
            rop.kind = est::OpKind::kMemory;
            rop.bytes_read = o.Number("bytes_read").value_or(0);
            rop.bytes_written = o.Number("bytes_written").value_or(0);
        } else if (kind == "custom") {
            o.OnlyKnown({"kind", "name", "flops", "bytes"});
            rop.kind = est::OpKind::kCustom;
            rop.flops = o.Number("flops").value_or(0);
            rop.bytes = o.Number("bytes").value_or(0);
        } else {
            return MakeError(kind ? ErrorCode::kInvalidArgument : ErrorCode::kMalformed,
                             "kind must be gemm, memory or custom", ptr + "/kind");
        }
        if (!o.ok()) return o.error();
        req.ops.push_back(rop);
    }
    return req;
}

json EstimateToJson(const est::TrainingEstimate& e) {
    const auto& b = e.breakdown;
    const auto& m = e.memory;
    json runner = nullptr;
    if (e.runner_up) {
        runner = {{"parallelism", LayoutJson(e.runner_up->layout)},
                  {"step_time_s", Num(e.runner_up->step_time_s)},
                  {"memory_per_accelerator_gb", Num(e.runner_up->memory_per_accelerator_gb)},
                  {"mfu", Num(e.runner_up->mfu)}};
    }
    return {
        {"wall_clock_hours", Num(e.wall_clock_hours)},
        {"accelerator_hours", Num(e.accelerator_hours)},
        {"ideal_wall_clock_hours", Num(e.ideal_wall_clock_hours)},
        {"ideal_accelerator_hours", Num(e.ideal_accelerator_hours)},
        {"mfu", Num(e.mfu)},
        {"hfu", Num(e.hfu)},
        {"achieved_tflops_per_accelerator", Num(e.achieved_tflops_per_accelerator)},
        {"achieved_tflops_definition",
         "model FLOPs (PaLM): 6 * (active non-embedding params + output projection) + 12 * layers "
         "* hidden * seq_len per token (attention over heads * head width; MLA over its score and "
         "value widths); modes lora and qlora count 4 per frozen and 6 per active adapter "
         "parameter; no recompute, attention not halved for causal masks"},
        {"hardware_tflops_per_accelerator", Num(e.hardware_tflops_per_accelerator)},
        {"tokens_per_second", Num(e.tokens_per_second)},
        {"step_time_s", Num(e.step_time_s)},
        {"steps", Num(e.steps)},
        {"tokens_per_step", Num(e.tokens_per_step)},
        {"global_batch_sequences", e.global_batch_sequences},
        {"micro_batches_per_step", e.micro_batches_per_step},
        {"model_flops_per_token", Num(e.model_flops_per_token)},
        {"total_model_flops", Num(e.total_model_flops)},
        {"memory_per_accelerator_gb", Num(e.memory_per_accelerator_gb)},
        {"memory_capacity_gb", Num(e.memory_capacity_gb)},
        {"memory_headroom_gb", Num(e.memory_headroom_gb)},
        {"fits_in_memory", e.fits_in_memory},
        {"memory",
         {{"weights_gb", Num(m.weights_gb)},
          {"gradients_gb", Num(m.gradients_gb)},
          {"optimizer_gb", Num(m.optimizer_gb)},
          {"activations_gb", Num(m.activations_gb)},
          {"overhead_gb", Num(m.overhead_gb)},
          {"total_gb", Num(m.total_gb)}}},
        {"breakdown",
         {{"compute_s", Num(b.compute_s)},
          {"memory_bound_s", Num(b.memory_bound_s)},
          {"communication_s", Num(b.communication_s)},
          {"bubble_s", Num(b.bubble_s)},
          {"optimizer_s", Num(b.optimizer_s)},
          {"tp_comm_s", Num(b.tp_comm_s)},
          {"dp_comm_s", Num(b.dp_comm_s)},
          {"pp_comm_s", Num(b.pp_comm_s)},
          {"expert_comm_s", Num(b.expert_comm_s)}}},
        {"bottleneck", e.bottleneck},
        {"mode", est::TrainingModeName(e.fine_tuning.mode)},
        {"fine_tuning", FineTuningJson(e.fine_tuning)},
        {"parallelism", LayoutJson(e.parallelism)},
        {"layout_searched", e.layout_searched},
        {"layouts_considered", e.layouts_considered},
        {"runner_up", runner},
        {"model", ModelJson(e.model)},
        {"warnings", ModelWarningsJson(e.model)},
        {"assumptions", ToJson(e.assumptions)},
    };
}

namespace {

json ServingPointJson(const est::ServingPoint& p) {
    return {{"concurrency", Num(p.concurrency)},
            {"running_sequences", Num(p.running_sequences)},
            {"queued_requests", Num(p.queued_requests)},
            {"prefill_tokens_per_step", Num(p.prefill_tokens_per_step)},
            {"inter_token_latency_ms", Num(p.inter_token_latency_ms)},
            {"time_to_first_token_ms", Num(p.time_to_first_token_ms)},
            {"request_latency_ms", Num(p.request_latency_ms)},
            {"requests_per_second", Num(p.requests_per_second)},
            {"output_tokens_per_second", Num(p.output_tokens_per_second)},
            {"kv_cache_bound", p.kv_cache_bound}};
}

json ServingJson(const std::optional<est::ServingEstimate>& s) {
    if (!s) return nullptr;
    json curve = json::array();
    for (const auto& p : s->curve) curve.push_back(ServingPointJson(p));
    return {{"mode", s->mode},
            {"offered_requests_per_second",
             s->offered_requests_per_second ? Num(*s->offered_requests_per_second) : json(nullptr)},
            {"saturated", s->saturated},
            {"point", ServingPointJson(s->point)},
            {"curve", std::move(curve)},
            {"kv_cache_budget_gb_per_accelerator", Num(s->kv_cache_budget_gb_per_accelerator)},
            {"kv_cache_limit_sequences", s->kv_cache_limit_sequences},
            {"max_num_seqs", s->max_num_seqs},
            {"max_num_batched_tokens", s->max_num_batched_tokens}};
}

}  // namespace

json EstimateToJson(const est::InferenceEstimate& e) {
    return {
        {"time_to_first_token_ms", Num(e.time_to_first_token_ms)},
        {"inter_token_latency_ms", Num(e.inter_token_latency_ms)},
        {"output_tokens_per_second", Num(e.output_tokens_per_second)},
        {"output_tokens_per_second_per_accelerator", Num(e.output_tokens_per_second_per_accelerator)},
        {"request_latency_ms", Num(e.request_latency_ms)},
        {"prefill_tokens_per_second", Num(e.prefill_tokens_per_second)},
        {"prefill_bound", e.prefill_bound},
        {"decode_bound", e.decode_bound},
        {"memory_per_accelerator_gb", Num(e.memory_per_accelerator_gb)},
        {"weights_gb_per_accelerator", Num(e.weights_gb_per_accelerator)},
        {"kv_cache_gb_per_accelerator", Num(e.kv_cache_gb_per_accelerator)},
        {"memory_capacity_gb", Num(e.memory_capacity_gb)},
        {"fits_in_memory", e.fits_in_memory},
        {"max_batch_size", e.max_batch_size},
        {"tensor_parallel", e.tensor_parallel},
        {"replicas", e.replicas},
        {"serving", ServingJson(e.serving)},
        {"model", ModelJson(e.model)},
        {"warnings", ModelWarningsJson(e.model)},
        {"assumptions", ToJson(e.assumptions)},
    };
}

json EstimateToJson(const est::RooflineResult& r) {
    auto op_json = [](const est::RooflineOpResult& o) {
        const char* kind = o.kind == est::OpKind::kGemm     ? "gemm"
                           : o.kind == est::OpKind::kMemory ? "memory"
                                                            : "custom";
        return json{{"name", o.name},
                    {"kind", kind},
                    {"seconds", o.seconds},
                    {"bound", est::BoundName(o.bound)},
                    {"flops", Num(o.flops)},
                    {"bytes", Num(o.bytes)},
                    {"arithmetic_intensity", Num(o.arithmetic_intensity)},
                    {"achieved_tflops", Num(o.achieved_tflops)},
                    {"achieved_gb_per_s", Num(o.achieved_gb_per_s)},
                    {"efficiency", Num(o.efficiency)}};
    };
    json ops = json::array();
    for (const auto& o : r.ops) ops.push_back(op_json(o));
    json total = op_json(r.total);
    total.erase("kind");
    total.erase("name");
    return {{"ops", std::move(ops)},
            {"total", std::move(total)},
            {"ridge_point_flops_per_byte", Num(r.ridge_point_flops_per_byte)},
            {"assumptions", ToJson(r.assumptions)}};
}

}  // namespace gpucost::http
