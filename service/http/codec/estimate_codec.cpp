#include "service/http/codec/estimate_codec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include "pricing/close_match.hpp"
#include "pricing/estimate/moe.hpp"
#include "service/http/codec/field_table.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_reader.hpp"
#include "service/http/codec/model_codec.hpp"

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

// /efficiency: the estimator's efficiency overrides.
const auto kEfficiencyFields = std::to_array<RequestField<est::EfficiencyOverrides>>({
    {"gemm_max_efficiency", &Optional<&est::EfficiencyOverrides::gemm_max_efficiency>},
    {"memory_bandwidth_efficiency",
     &Optional<&est::EfficiencyOverrides::memory_bandwidth_efficiency>},
    {"attention_efficiency", &Optional<&est::EfficiencyOverrides::attention_efficiency>},
    {"scale_up_efficiency", &Optional<&est::EfficiencyOverrides::scale_up_efficiency>},
    {"scale_out_efficiency", &Optional<&est::EfficiencyOverrides::scale_out_efficiency>},
    {"kernel_overhead_s", &Optional<&est::EfficiencyOverrides::kernel_overhead_s>},
});

Result<est::EfficiencyOverrides> DecodeEfficiency(const json& j, const std::string& ptr) {
    est::EfficiencyOverrides o;
    if (auto read = ReadNested(&j, ptr, o, kEfficiencyFields); !read.ok()) {
        return read.error();
    }
    return o;
}

template <typename T>
json Opt(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

}  // namespace

namespace {

// The estimate's `hardware` object: its members, read in this order (any other is refused).
const auto kHardwareFields = std::to_array<RequestField<HardwareRequest>>({
    {"accelerator",
     [](JsonReader& r, std::string_view key, HardwareRequest& h) {
         r.Require(key);
         h.accelerator = pricing::IdKey(r.String(key).value_or(""));
     }},
    {"total_accelerators", &Required<&HardwareRequest::total_accelerators>},
    {"accelerator_count", &Optional<&HardwareRequest::accelerator_count>},
    {"scale_out_gbit_per_s_per_node", &Optional<&HardwareRequest::scale_out_gbit_per_s_per_node>},
    {"scale_up_gb_per_s", &Optional<&HardwareRequest::scale_up_gb_per_s>},
    {"scale_up_domain", &Optional<&HardwareRequest::scale_up_domain>},
});

}  // namespace

Result<HardwareRequest> DecodeHardware(const json& j, const std::string& ptr) {
    HardwareRequest h;
    if (auto read = ReadNested(&j, ptr, h, kHardwareFields); !read.ok()) return read.error();
    if (h.accelerator.size() > 200) {
        return MakeError(ErrorCode::kInvalidArgument, "accelerator id is too long",
                         ptr + "/accelerator");
    }
    return h;
}

pricing::Error UnknownAccelerator(const std::string& id, const pricing::Catalog& catalog,
                                  const std::string& field) {
    std::vector<std::string> ids;
    for (const auto& a : catalog.Accelerators()) ids.push_back(a.id);
    std::string closest;
    for (const std::string& near : pricing::NearestIds(id, ids, 5)) {
        closest += (closest.empty() ? "" : ", ") + near;
    }
    return MakeError(ErrorCode::kInvalidArgument,
                     "unknown accelerator '" + id.substr(0, 64) +
                         "'; closest known ids: " + closest + " (GET /v1/accelerators lists all)",
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

Result<est::ClusterSpec> ResolveHardware(const HardwareRequest& h,
                                         const pricing::Catalog& catalog) {
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

// The training estimate request's members, in the order they are read; the nested objects
// (model, hardware, parallelism, efficiency) are read apart by DecodeTrainingRequest.
const auto kTrainingRequestFields = std::to_array<RequestField<est::TrainingRequest>>({
    {"model"},
    {"hardware"},
    {"tokens_b",
     [](JsonReader& r, std::string_view key, est::TrainingRequest& q) {
         q.tokens_b = r.Number(key).value_or(0);
     }},
    {"precision",
     [](JsonReader& r, std::string_view key, est::TrainingRequest& q) {
         q.precision = PrecisionField(r, std::string(key)).value_or(pricing::Precision::kBf16);
     }},
    {"global_batch_tokens", &Optional<&est::TrainingRequest::global_batch_tokens>},
    {"goodput", &Optional<&est::TrainingRequest::goodput>},
    {"comm_overlap_fraction", &Optional<&est::TrainingRequest::comm_overlap_fraction>},
    {"tp_overlap_fraction", &Optional<&est::TrainingRequest::tp_overlap_fraction>},
    {"memory_overhead_gb", &Optional<&est::TrainingRequest::memory_overhead_gb>},
    {"flash_attention", &Optional<&est::TrainingRequest::flash_attention>},
    {"expert_overlap_fraction", &Optional<&est::TrainingRequest::expert_overlap_fraction>},
    {"recipe", &Optional<&est::TrainingRequest::recipe_name>},
    {"mode",
     [](JsonReader& r, std::string_view key, est::TrainingRequest& q) {
         auto mode = r.String(key);
         if (!mode) return;
         auto parsed = est::ParseTrainingMode(*mode);
         if (!parsed) {
             r.Fail(ErrorCode::kInvalidArgument, key,
                    "unknown mode '" + mode->substr(0, 16) +
                        "'; use pretrain, full_finetune, lora or qlora");
         }
         q.mode = parsed.value_or(est::TrainingMode::kPretrain);
     }},
    {"lora_rank", &Optional<&est::TrainingRequest::lora_rank>},
    {"lora_target_modules", &Optional<&est::TrainingRequest::lora_target_modules>},
    {"parallelism"},
    {"efficiency"},
    {"moe"},
});

// The training request's `moe` members (how Megatron-Core runs the MoE layers).
const auto kMoeFields = std::to_array<RequestField<est::MoeOptions>>({
    {"cuda_graphs",
     [](JsonReader& r, std::string_view key, est::MoeOptions& o) {
         auto name = r.String(key);
         if (!name) return;
         o.cuda_graphs = est::ParseMoeCudaGraphs(*name);
         if (!o.cuda_graphs) {
             r.Fail(ErrorCode::kInvalidArgument, key,
                    "unknown cuda_graphs '" + name->substr(0, 16) +
                        "'; use none, router or full_iteration");
         }
     }},
    {"a2a_overlap", &Optional<&est::MoeOptions::a2a_overlap>},
});

// The recompute modules a request may name, for the message that refuses another.
std::string RecomputeModuleChoices() {
    std::string out;
    for (std::string_view name : est::kRecomputeModuleNames) {
        out += (out.empty() ? "" : ", ") + std::string(name);
    }
    return out;
}

// `parallelism.recompute_modules`: Megatron-Core's selective recompute modules, read after
// `recompute` and `recompute_layers`, which they must agree with (they imply selective).
void ReadRecomputeModules(JsonReader& r, std::string_view key, est::ParallelismRequest& pr) {
    auto names = r.Strings(key);
    if (!names) return;
    if (names->empty()) {
        r.Fail(ErrorCode::kInvalidArgument, key,
               "recompute_modules names at least one module; leave it out for none");
        return;
    }
    if ((pr.recompute && *pr.recompute != est::Recompute::kSelective) || pr.recompute_layers) {
        r.Fail(ErrorCode::kInvalidArgument, key,
               "recompute_modules is selective recompute (Megatron-Core --recompute-granularity "
               "selective --recompute-modules); give recompute selective or leave it out, and "
               "no recompute_layers");
        return;
    }
    est::RecomputeModules modules;
    for (std::size_t i = 0; i < names->size(); ++i) {
        auto module = est::ParseRecomputeModule((*names)[i]);
        if (!module) {
            r.FailAt(ErrorCode::kInvalidArgument, key, i,
                     "unknown recompute module '" + (*names)[i].substr(0, 16) + "'; use one of " +
                         RecomputeModuleChoices());
            return;
        }
        modules.Add(*module);
    }
    pr.recompute_modules = modules;
    pr.recompute = est::Recompute::kSelective;
}

// The training request's `parallelism` members, read in this order (the first fault in it is
// the one answered); each row also makes its key known.
using est::ParallelismRequest;
const auto kParallelismFields = std::to_array<RequestField<ParallelismRequest>>({
    {"tensor", &Optional<&ParallelismRequest::tensor>},
    {"context", &Optional<&ParallelismRequest::context>},
    {"pipeline", &Optional<&ParallelismRequest::pipeline>},
    {"data", &Optional<&ParallelismRequest::data>},
    {"zero_stage", &Optional<&ParallelismRequest::zero_stage>},
    {"micro_batch_size", &Optional<&ParallelismRequest::micro_batch_size>},
    {"virtual_stages", &Optional<&ParallelismRequest::virtual_stages>},
    {"sequence_parallel", &Optional<&ParallelismRequest::sequence_parallel>},
    {"expert", &Optional<&ParallelismRequest::expert>},
    {"expert_tensor", &Optional<&ParallelismRequest::expert_tensor>},
    {"recompute",
     [](JsonReader& r, std::string_view key, ParallelismRequest& pr) {
         auto name = r.String(key);
         if (!name) return;
         pr.recompute = est::ParseRecompute(*name);
         if (!pr.recompute) {
             r.Fail(ErrorCode::kInvalidArgument, key, "recompute must be none, selective or full");
         }
     }},
    {"recompute_layers", &Optional<&ParallelismRequest::recompute_layers>},
    {"recompute_modules", &ReadRecomputeModules},
});

Result<est::TrainingRequest> DecodeTrainingRequest(const json& body,
                                                   const pricing::ModelLibrary& models,
                                                   HardwareRequest* hardware,
                                                   const std::vector<std::string>& extra_keys) {
    JsonReader r(body, "");
    static const std::vector<std::string> kKnown = RequestKeys(kTrainingRequestFields);
    r.OnlyKnown(extra_keys.empty() ? kKnown : RequestKeys(kTrainingRequestFields, extra_keys));
    r.Require("model");
    r.Require("tokens_b");
    est::TrainingRequest req;
    const json* model = r.Member("model");
    const json* hw = r.Object("hardware");
    if (hardware != nullptr) r.Require("hardware");
    ReadFields(r, req, kTrainingRequestFields);
    const json* par = r.Object("parallelism");
    const json* eff = r.Object("efficiency");
    const json* moe = r.Object("moe");
    if (!r.ok()) return r.error();
    auto m = DecodeModel(*model, models, "/model");
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
        est::ParallelismRequest pr;
        auto read = ReadNested(par, "/parallelism", pr, kParallelismFields);
        if (!read.ok()) return read.error();
        req.parallelism = pr;
    }
    if (moe != nullptr) {
        auto read = ReadNested(moe, "/moe", req.moe, kMoeFields);
        if (!read.ok()) return read.error();
    }
    // What pricing::ResolveTrainingRecipe decides the model's recipe on, after decoding.
    req.library_model_id = PlainLibraryId(*model).value_or("");
    req.precision_given = body.contains("precision");
    return req;
}

// The inference estimate request's members, in the order the unknown-member check lists
// them; the nested objects (model, hardware, efficiency) are read apart.
using est::InferenceRequest;
// An optional precision member: absent stays absent, an unknown name fails naming it.
template <std::optional<pricing::Precision> InferenceRequest::*Member>
void OptionalPrecision(JsonReader& r, std::string_view key, InferenceRequest& q) {
    q.*Member = PrecisionField(r, std::string(key));
}
const auto kInferenceRequestFields = std::to_array<RequestField<InferenceRequest>>({
    {"model"},
    {"hardware"},
    {"precision",
     [](JsonReader& r, std::string_view key, InferenceRequest& q) {
         q.precision = PrecisionField(r, std::string(key)).value_or(pricing::Precision::kBf16);
     }},
    {"kv_cache_precision", &OptionalPrecision<&InferenceRequest::kv_cache_precision>},
    {"weight_precision", &OptionalPrecision<&InferenceRequest::weight_precision>},
    {"batch_size", &OrDefault<&InferenceRequest::batch_size, 1>},
    {"input_tokens", &OrDefault<&InferenceRequest::input_tokens, 0>},
    {"output_tokens", &OrDefault<&InferenceRequest::output_tokens, 0>},
    {"tensor_parallel", &Optional<&InferenceRequest::tensor_parallel>},
    {"pipeline_parallel", &Optional<&InferenceRequest::pipeline_parallel>},
    {"expert_parallel", &Optional<&InferenceRequest::expert_parallel>},
    {"efficiency"},
    {"step_overhead_s", &Optional<&InferenceRequest::step_overhead_s>},
    {"memory_overhead_gb", &Optional<&InferenceRequest::memory_overhead_gb>},
    {"concurrency", &Optional<&InferenceRequest::concurrency>},
    {"requests_per_second", &Optional<&InferenceRequest::requests_per_second>},
    {"layout_objective",
     [](JsonReader& r, std::string_view key, InferenceRequest& q) {
         auto name = r.String(key);
         if (!name) return;
         q.layout_objective = est::ParseLayoutObjective(*name);
         if (!q.layout_objective) {
             r.Fail(ErrorCode::kInvalidArgument, key,
                    "unknown layout_objective '" + name->substr(0, 16) +
                        "'; use throughput or latency");
         }
     }},
    {"max_inter_token_latency_ms", &Optional<&InferenceRequest::max_inter_token_latency_ms>},
    {"max_time_to_first_token_ms", &Optional<&InferenceRequest::max_time_to_first_token_ms>},
});

Result<est::InferenceRequest> DecodeInferenceRequest(const json& body,
                                                     const pricing::ModelLibrary& models,
                                                     HardwareRequest* hardware) {
    JsonReader r(body, "");
    static const std::vector<std::string> kKnown = RequestKeys(kInferenceRequestFields);
    r.OnlyKnown(kKnown);
    r.Require("model");
    r.Require("hardware");
    r.Require("input_tokens");
    r.Require("output_tokens");
    est::InferenceRequest req;
    const json* model = r.Member("model");
    const json* hw = r.Object("hardware");
    const json* eff = r.Object("efficiency");
    ReadFields(r, req, kInferenceRequestFields);
    if (!r.ok()) return r.error();
    auto m = DecodeModel(*model, models, "/model");
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

namespace {

// The roofline request's members, read in this order (any other is refused); `ops` is checked
// here as a whole and decoded op by op below, by the tables of each kind of op.
const auto kRooflineFields = std::to_array<RequestField<RooflineRequest>>({
    {"accelerator",
     [](JsonReader& r, std::string_view key, RooflineRequest& q) {
         r.Require(key);
         q.accelerator = pricing::IdKey(r.String(key).value_or(""));
     }},
    {"precision",
     [](JsonReader& r, std::string_view key, RooflineRequest& q) {
         q.precision = PrecisionField(r, std::string(key)).value_or(pricing::Precision::kBf16);
     }},
    {"ops",
     [](JsonReader& r, std::string_view key, RooflineRequest& /*q*/) {
         r.Require(key);
         const json* ops = r.Member(key);
         if (ops != nullptr && !ops->is_array()) {
             r.Fail(ErrorCode::kMalformed, key, "ops must be an array");
         } else if (ops != nullptr && ops->size() > est::kMaxRooflineOps) {
             // Refused before any op is decoded (the estimator's own check comes after).
             r.Fail(ErrorCode::kInvalidArgument, key,
                    "ops must hold between 1 and " + std::to_string(est::kMaxRooflineOps) +
                        " operations");
         }
     }},
    {"efficiency", nullptr},  // read apart (DecodeEfficiency)
});
// One op of each kind: `kind` and `name` (read first, apart), then the kind's own members.
const auto kGemmOpFields = std::to_array<RequestField<est::RooflineOp>>({
    {"kind", nullptr},
    {"name", nullptr},
    {"m", &Required<&est::RooflineOp::m>},
    {"n", &Required<&est::RooflineOp::n>},
    {"k", &Required<&est::RooflineOp::k>},
});
// An op's number that is 0 when absent or null (OrDefault takes no double as its default:
// clang, which clang-tidy runs, has no floating-point template arguments before version 18).
template <double est::RooflineOp::*Member>
void NumberOrZero(JsonReader& r, std::string_view key, est::RooflineOp& op) {
    op.*Member = r.Number(key).value_or(0);
}
const auto kMemoryOpFields = std::to_array<RequestField<est::RooflineOp>>({
    {"kind", nullptr},
    {"name", nullptr},
    {"bytes_read", &NumberOrZero<&est::RooflineOp::bytes_read>},
    {"bytes_written", &NumberOrZero<&est::RooflineOp::bytes_written>},
});
const auto kCustomOpFields = std::to_array<RequestField<est::RooflineOp>>({
    {"kind", nullptr},
    {"name", nullptr},
    {"flops", &NumberOrZero<&est::RooflineOp::flops>},
    {"bytes", &NumberOrZero<&est::RooflineOp::bytes>},
});

// The op's own members by its table (unknown ones refused), then read.
template <std::size_t N>
void ReadOp(JsonReader& o, est::RooflineOp& op, est::OpKind kind,
            const std::array<RequestField<est::RooflineOp>, N>& fields) {
    o.OnlyKnown(RequestKeys(fields));
    op.kind = kind;
    ReadFields(o, op, fields);
}

}  // namespace

Result<RooflineRequest> DecodeRooflineRequest(const json& body) {
    JsonReader r(body, "");
    r.OnlyKnown(RequestKeys(kRooflineFields));
    RooflineRequest req;
    ReadFields(r, req, kRooflineFields);
    const json* eff = r.Object("efficiency");
    const json* ops = r.Member("ops");
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
        o.Require("kind");  // missing: 422, as every missing required field
        auto kind = o.String("kind");
        if (!o.ok()) return o.error();
        est::RooflineOp rop;
        rop.name = o.String("name").value_or("");
        if (kind == "gemm") {
            ReadOp(o, rop, est::OpKind::kGemm, kGemmOpFields);
        } else if (kind == "memory") {
            ReadOp(o, rop, est::OpKind::kMemory, kMemoryOpFields);
        } else if (kind == "custom") {
            ReadOp(o, rop, est::OpKind::kCustom, kCustomOpFields);
        } else {
            return MakeError(ErrorCode::kInvalidArgument, "kind must be gemm, memory or custom",
                             ptr + "/kind");
        }
        if (!o.ok()) return o.error();
        req.ops.push_back(rop);
    }
    return req;
}

// Training and inference answers are written as JSON text, one function per section of the
// answer, members in the sorted order nlohmann::json keeps, so the bytes are those a DOM's
// dump gave (JsonWriter checks the order in debug builds). `assumptions` comes encoded from
// the cache (encoded_cache.hpp).
namespace {

constexpr std::string_view kAchievedTflopsDefinition =
    "model FLOPs (PaLM): 6 * (active non-embedding params + output projection) + 12 * layers "
    "* hidden * seq_len per token (attention over heads * head width; MLA over its score and "
    "value widths); modes lora and qlora count 4 per frozen and 6 per active adapter "
    "parameter; no recompute, attention not halved for causal masks";

using est::InferenceEstimate;
using est::TrainingEstimate;

constexpr auto kBreakdownFields = std::to_array<AnswerField<est::StepBreakdown>>({
    {"bubble_s", &Scalar<&est::StepBreakdown::bubble_s>},
    {"communication_s", &Scalar<&est::StepBreakdown::communication_s>},
    {"compute_s", &Scalar<&est::StepBreakdown::compute_s>},
    {"context_comm_s", &Scalar<&est::StepBreakdown::context_comm_s>},
    {"dp_comm_s", &Scalar<&est::StepBreakdown::dp_comm_s>},
    {"expert_comm_s", &Scalar<&est::StepBreakdown::expert_comm_s>},
    {"memory_bound_s", &Scalar<&est::StepBreakdown::memory_bound_s>},
    {"optimizer_s", &Scalar<&est::StepBreakdown::optimizer_s>},
    {"pp_comm_s", &Scalar<&est::StepBreakdown::pp_comm_s>},
    {"tp_comm_s", &Scalar<&est::StepBreakdown::tp_comm_s>},
});
static_assert(KeysAscending(kBreakdownFields));

constexpr auto kMemoryFields = std::to_array<AnswerField<est::MemoryBreakdown>>({
    {"activations_gb", &Scalar<&est::MemoryBreakdown::activations_gb>},
    {"gradients_gb", &Scalar<&est::MemoryBreakdown::gradients_gb>},
    {"optimizer_gb", &Scalar<&est::MemoryBreakdown::optimizer_gb>},
    {"overhead_gb", &Scalar<&est::MemoryBreakdown::overhead_gb>},
    {"total_gb", &Scalar<&est::MemoryBreakdown::total_gb>},
    {"weights_gb", &Scalar<&est::MemoryBreakdown::weights_gb>},
});
static_assert(KeysAscending(kMemoryFields));

constexpr auto kFineTuningFields = std::to_array<AnswerField<est::FineTuning>>({
    {"frozen_weight_bytes_per_param", &Scalar<&est::FineTuning::frozen_weight_bytes_per_param>},
    {"lora_rank", &Scalar<&est::FineTuning::lora_rank>},
    {"lora_target_modules",
     [](JsonWriter& w, const est::FineTuning& f) {
         w.BeginArray();
         for (const auto& module : f.lora_target_modules) w.String(module);
         w.EndArray();
     }},
    {"trainable_params_b",
     [](JsonWriter& w, const est::FineTuning& f) { w.Number(f.trainable_params / 1e9); }},
});
static_assert(KeysAscending(kFineTuningFields));

constexpr auto kLayoutFields = std::to_array<AnswerField<est::ParallelLayout>>({
    {"context", &Scalar<&est::ParallelLayout::context>},
    {"data", &Scalar<&est::ParallelLayout::data>},
    {"expert", &Scalar<&est::ParallelLayout::expert>},
    {"expert_tensor",
     [](JsonWriter& w, const est::ParallelLayout& l) { w.Integer(est::ExpertTensorDegree(l)); }},
    {"micro_batch_size", &Scalar<&est::ParallelLayout::micro_batch_size>},
    {"pipeline", &Scalar<&est::ParallelLayout::pipeline>},
    {"recompute", [](JsonWriter& w,
                     const est::ParallelLayout& l) { w.String(est::RecomputeName(l.recompute)); }},
    {"recompute_layers", &Scalar<&est::ParallelLayout::recompute_layers>},
    {"recompute_modules",
     [](JsonWriter& w, const est::ParallelLayout& l) {
         w.BeginArray();
         for (const auto& name : l.recompute_modules.Names()) w.String(name);
         w.EndArray();
     }},
    {"sequence_parallel", &Scalar<&est::ParallelLayout::sequence_parallel>},
    {"tensor", &Scalar<&est::ParallelLayout::tensor>},
    {"virtual_stages", &Scalar<&est::ParallelLayout::virtual_stages>},
    {"zero_stage", &Scalar<&est::ParallelLayout::zero_stage>},
});
static_assert(KeysAscending(kLayoutFields));

constexpr auto kRunnerUpFields = std::to_array<AnswerField<est::LayoutSummary>>({
    {"memory_per_accelerator_gb", &Scalar<&est::LayoutSummary::memory_per_accelerator_gb>},
    {"mfu", &Scalar<&est::LayoutSummary::mfu>},
    {"parallelism",
     [](JsonWriter& w, const est::LayoutSummary& r) { WriteFields(w, r.layout, kLayoutFields); }},
    {"step_time_s", &Scalar<&est::LayoutSummary::step_time_s>},
});
static_assert(KeysAscending(kRunnerUpFields));

// The training estimate's members; `assumptions` is written in its place by EncodeEstimate.
constexpr auto kTrainingEstimateFields = std::to_array<AnswerField<TrainingEstimate>>({
    {"accelerator_hours", &Scalar<&TrainingEstimate::accelerator_hours>},
    {"achieved_tflops_definition",
     [](JsonWriter& w, const TrainingEstimate&) { w.String(kAchievedTflopsDefinition); }},
    {"achieved_tflops_per_accelerator",
     &Scalar<&TrainingEstimate::achieved_tflops_per_accelerator>},
    {"bottleneck", &Scalar<&TrainingEstimate::bottleneck>},
    {"breakdown", &Object<kBreakdownFields, &TrainingEstimate::breakdown>},
    {"fine_tuning",  // null unless an adapter mode (lora, qlora)
     [](JsonWriter& w, const TrainingEstimate& e) {
         if (!est::IsAdapterMode(e.fine_tuning.mode)) return w.Null();
         WriteFields(w, e.fine_tuning, kFineTuningFields);
     }},
    {"fits_in_memory", &Scalar<&TrainingEstimate::fits_in_memory>},
    {"global_batch_sequences", &Scalar<&TrainingEstimate::global_batch_sequences>},
    {"hardware_tflops_per_accelerator",
     &Scalar<&TrainingEstimate::hardware_tflops_per_accelerator>},
    {"hfu", &Scalar<&TrainingEstimate::hfu>},
    {"ideal_accelerator_hours", &Scalar<&TrainingEstimate::ideal_accelerator_hours>},
    {"ideal_wall_clock_hours", &Scalar<&TrainingEstimate::ideal_wall_clock_hours>},
    {"layout_searched", &Scalar<&TrainingEstimate::layout_searched>},
    {"layouts_considered", &Scalar<&TrainingEstimate::layouts_considered>},
    {"memory", &Object<kMemoryFields, &TrainingEstimate::memory>},
    {"memory_capacity_gb", &Scalar<&TrainingEstimate::memory_capacity_gb>},
    {"memory_headroom_gb", &Scalar<&TrainingEstimate::memory_headroom_gb>},
    {"memory_per_accelerator_gb", &Scalar<&TrainingEstimate::memory_per_accelerator_gb>},
    {"mfu", &Scalar<&TrainingEstimate::mfu>},
    {"micro_batches_per_step", &Scalar<&TrainingEstimate::micro_batches_per_step>},
    {"mode",
     [](JsonWriter& w,
        const TrainingEstimate& e) { w.String(est::TrainingModeName(e.fine_tuning.mode)); }},
    {"model", [](JsonWriter& w, const TrainingEstimate& e) { WriteModel(w, e.model); }},
    {"model_flops_per_token", &Scalar<&TrainingEstimate::model_flops_per_token>},
    {"parallelism", &Object<kLayoutFields, &TrainingEstimate::parallelism>},
    {"pipeline_bubble_fraction",  // the share of a step spent idle in the pipeline bubble
     [](JsonWriter& w, const TrainingEstimate& e) {
         w.Number(e.step_time_s > 0 ? e.breakdown.bubble_s / e.step_time_s : 0.0);
     }},
    {"runner_up", &Object<kRunnerUpFields, &TrainingEstimate::runner_up>},
    {"step_time_s", &Scalar<&TrainingEstimate::step_time_s>},
    {"steps", &Scalar<&TrainingEstimate::steps>},
    {"tokens_per_second", &Scalar<&TrainingEstimate::tokens_per_second>},
    {"tokens_per_step", &Scalar<&TrainingEstimate::tokens_per_step>},
    {"total_model_flops", &Scalar<&TrainingEstimate::total_model_flops>},
    {"wall_clock_hours", &Scalar<&TrainingEstimate::wall_clock_hours>},
    {"wall_clock_hours_p10", &Scalar<&TrainingEstimate::wall_clock_hours_p10>},
    {"wall_clock_hours_p90", &Scalar<&TrainingEstimate::wall_clock_hours_p90>},
    {"warnings", [](JsonWriter& w, const TrainingEstimate& e) { WriteModelWarnings(w, e.model); }},
});
static_assert(KeysAscending(kTrainingEstimateFields));

using est::ServingPoint;
constexpr auto kServingPointFields = std::to_array<AnswerField<ServingPoint>>({
    {"concurrency", &Scalar<&ServingPoint::concurrency>},
    {"inter_token_latency_ms", &Scalar<&ServingPoint::inter_token_latency_ms>},
    {"kv_cache_bound", &Scalar<&ServingPoint::kv_cache_bound>},
    {"output_tokens_per_second", &Scalar<&ServingPoint::output_tokens_per_second>},
    {"prefill_tokens_per_step", &Scalar<&ServingPoint::prefill_tokens_per_step>},
    {"queued_requests", &Scalar<&ServingPoint::queued_requests>},
    {"request_latency_ms", &Scalar<&ServingPoint::request_latency_ms>},
    {"requests_per_second", &Scalar<&ServingPoint::requests_per_second>},
    {"running_sequences", &Scalar<&ServingPoint::running_sequences>},
    {"time_to_first_token_ms", &Scalar<&ServingPoint::time_to_first_token_ms>},
});
static_assert(KeysAscending(kServingPointFields));

using est::ServingEstimate;
constexpr auto kServingFields = std::to_array<AnswerField<ServingEstimate>>({
    {"curve", &Array<kServingPointFields, &ServingEstimate::curve>},
    {"kv_cache_budget_gb_per_accelerator",
     &Scalar<&ServingEstimate::kv_cache_budget_gb_per_accelerator>},
    {"kv_cache_limit_sequences", &Scalar<&ServingEstimate::kv_cache_limit_sequences>},
    {"max_num_batched_tokens", &Scalar<&ServingEstimate::max_num_batched_tokens>},
    {"max_num_seqs", &Scalar<&ServingEstimate::max_num_seqs>},
    {"mode", &Scalar<&ServingEstimate::mode>},
    {"offered_requests_per_second", &Scalar<&ServingEstimate::offered_requests_per_second>},
    // null when there is no room for one sequence; `warnings` says why
    {"point", &Object<kServingPointFields, &ServingEstimate::point>},
    {"saturated", &Scalar<&ServingEstimate::saturated>},
});
static_assert(KeysAscending(kServingFields));

// The model's consistency warnings, then the estimate's own.
void WriteInferenceWarnings(JsonWriter& w, const InferenceEstimate& e) {
    std::vector<pricing::FieldError> warnings = e.model.warnings;
    warnings.insert(warnings.end(), e.warnings.begin(), e.warnings.end());
    WriteWarnings(w, warnings);
}

constexpr auto kClusterServingFields = std::to_array<AnswerField<est::ClusterServing>>({
    {"accelerators", &Scalar<&est::ClusterServing::accelerators>},
    {"accelerators_per_replica", &Scalar<&est::ClusterServing::accelerators_per_replica>},
    {"concurrency_per_replica", &Scalar<&est::ClusterServing::concurrency_per_replica>},
    {"output_tokens_per_second", &Scalar<&est::ClusterServing::output_tokens_per_second>},
    {"output_tokens_per_second_per_accelerator",
     &Scalar<&est::ClusterServing::output_tokens_per_second_per_accelerator>},
    {"replicas", &Scalar<&est::ClusterServing::replicas>},
    {"requests_per_second", &Scalar<&est::ClusterServing::requests_per_second>},
});
static_assert(KeysAscending(kClusterServingFields));

constexpr auto kLayoutCandidateFields = std::to_array<AnswerField<est::LayoutCandidate>>({
    {"expert_parallel", &Scalar<&est::LayoutCandidate::expert_parallel>},
    {"inter_token_latency_ms", &Scalar<&est::LayoutCandidate::inter_token_latency_ms>},
    {"meets_latency_bounds", &Scalar<&est::LayoutCandidate::meets_latency_bounds>},
    {"output_tokens_per_second", &Scalar<&est::LayoutCandidate::output_tokens_per_second>},
    {"output_tokens_per_second_per_accelerator",
     &Scalar<&est::LayoutCandidate::output_tokens_per_second_per_accelerator>},
    {"replicas", &Scalar<&est::LayoutCandidate::replicas>},
    {"serves", &Scalar<&est::LayoutCandidate::serves>},
    {"tensor_parallel", &Scalar<&est::LayoutCandidate::tensor_parallel>},
    {"time_to_first_token_ms", &Scalar<&est::LayoutCandidate::time_to_first_token_ms>},
});
static_assert(KeysAscending(kLayoutCandidateFields));

constexpr auto kLayoutSearchFields = std::to_array<AnswerField<est::LayoutSearch>>({
    {"candidates", &Array<kLayoutCandidateFields, &est::LayoutSearch::candidates>},
    {"chosen_because", &Scalar<&est::LayoutSearch::chosen_because>},
    {"max_inter_token_latency_ms", &Scalar<&est::LayoutSearch::max_inter_token_latency_ms>},
    {"max_time_to_first_token_ms", &Scalar<&est::LayoutSearch::max_time_to_first_token_ms>},
    {"objective",
     [](JsonWriter& w, const est::LayoutSearch& l) {
         w.String(est::LayoutObjectiveName(l.objective));
     }},
});
static_assert(KeysAscending(kLayoutSearchFields));

// The inference estimate's members; `assumptions` is written in its place by EncodeEstimate.
constexpr auto kInferenceEstimateFields = std::to_array<AnswerField<InferenceEstimate>>({
    {"cluster", &Object<kClusterServingFields, &InferenceEstimate::cluster>},
    {"decode_bound", &Scalar<&InferenceEstimate::decode_bound>},
    {"expert_parallel", &Scalar<&InferenceEstimate::expert_parallel>},
    {"fits_in_memory", &Scalar<&InferenceEstimate::fits_in_memory>},
    {"inter_token_latency_ms", &Scalar<&InferenceEstimate::inter_token_latency_ms>},
    {"kv_cache_gb_per_accelerator", &Scalar<&InferenceEstimate::kv_cache_gb_per_accelerator>},
    {"layout_search", &Object<kLayoutSearchFields, &InferenceEstimate::layout_search>},
    {"max_batch_size", &Scalar<&InferenceEstimate::max_batch_size>},
    {"memory_capacity_gb", &Scalar<&InferenceEstimate::memory_capacity_gb>},
    {"memory_per_accelerator_gb", &Scalar<&InferenceEstimate::memory_per_accelerator_gb>},
    {"model", [](JsonWriter& w, const InferenceEstimate& e) { WriteModel(w, e.model); }},
    {"output_tokens_per_second", &Scalar<&InferenceEstimate::output_tokens_per_second>},
    {"output_tokens_per_second_per_accelerator",
     &Scalar<&InferenceEstimate::output_tokens_per_second_per_accelerator>},
    {"pipeline_parallel", &Scalar<&InferenceEstimate::pipeline_parallel>},
    {"prefill_bound", &Scalar<&InferenceEstimate::prefill_bound>},
    {"prefill_tokens_per_second", &Scalar<&InferenceEstimate::prefill_tokens_per_second>},
    {"replicas", &Scalar<&InferenceEstimate::replicas>},
    {"request_latency_ms", &Scalar<&InferenceEstimate::request_latency_ms>},
    {"serving", &Object<kServingFields, &InferenceEstimate::serving>},
    {"tensor_parallel", &Scalar<&InferenceEstimate::tensor_parallel>},
    {"time_to_first_token_ms", &Scalar<&InferenceEstimate::time_to_first_token_ms>},
    {"warnings", &WriteInferenceWarnings},
    {"weights_gb_per_accelerator", &Scalar<&InferenceEstimate::weights_gb_per_accelerator>},
});
static_assert(KeysAscending(kInferenceEstimateFields));

}  // namespace

void WriteLayout(JsonWriter& w, const est::ParallelLayout& l) {
    WriteFields(w, l, kLayoutFields);
}

std::string EncodeEstimate(const est::TrainingEstimate& e, std::string_view assumptions_json) {
    std::string out;
    out.reserve(assumptions_json.size() + 4096);
    JsonWriter w(out);
    WriteFields(w, e, kTrainingEstimateFields, "assumptions", assumptions_json);
    return out;
}

std::string EncodeEstimate(const est::InferenceEstimate& e, std::string_view assumptions_json) {
    std::string out;
    out.reserve(assumptions_json.size() + 4096);
    JsonWriter w(out);
    WriteFields(w, e, kInferenceEstimateFields, "assumptions", assumptions_json);
    return out;
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
