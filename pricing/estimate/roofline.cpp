#include "pricing/estimate/roofline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "pricing/accelerator_facts.hpp"

namespace gpucost::pricing::estimate {
namespace {

bool IsLowPrecision(Precision p) {
    return p == Precision::kFp8 || p == Precision::kInt8 || p == Precision::kFp4;
}

// Memory-bandwidth efficiency by transfer size: Calculon's HBM table for A100/H100
// (calculon-ai/calculon systems/*.json: >=100 MB 0.90, >=10 MB 0.75, >=1 MB 0.60, else 0.30),
// interpolated in log10(bytes) between those anchors and scaled to the asymptote.
constexpr std::array<std::pair<double, double>, 4> kMemAnchors = {
    {{5.0, 0.30 / 0.90}, {6.0, 0.60 / 0.90}, {7.0, 0.75 / 0.90}, {8.0, 1.0}}};

}  // namespace

const char* BoundName(Bound bound) {
    switch (bound) {
        case Bound::kCompute:
            return "compute";
        case Bound::kMemory:
            return "memory";
    }
    return "compute";
}

namespace {

// The accelerator's dense peak at `precision`, or why it cannot be modelled (no published
// peak, no memory bandwidth).
Result<double> CheckedPeakTflops(const Accelerator& a, Precision precision,
                                 const std::string& precision_field) {
    auto peak = a.PeakTflops(precision);
    if (!peak || !(*peak > 0)) {
        std::string supported;
        for (Precision p : kAllPrecisions) {
            if (a.PeakTflops(p)) {
                supported += (supported.empty() ? "" : ", ") + std::string(PrecisionName(p));
            }
        }
        return MakeError(ErrorCode::kInvalidArgument,
                         "accelerator '" + a.id + "' has no published " +
                             std::string(PrecisionName(precision)) +
                             " peak; it supports: " + (supported.empty() ? "none" : supported),
                         precision_field);
    }
    if (!(a.memory_gb_per_s > 0)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "accelerator '" + a.id + "' has no memory bandwidth in the catalog",
                         "/hardware/accelerator");
    }
    return *peak;
}

// The request's efficiency overrides, each within its range.
Status CheckEfficiencyOverrides(const EfficiencyOverrides& o) {
    struct Check {
        const std::optional<double>* v;
        const char* name;
        double lo, hi;
    };
    const Check checks[] = {
        {&o.gemm_max_efficiency, "gemm_max_efficiency", 0.01, 1.0},
        {&o.memory_bandwidth_efficiency, "memory_bandwidth_efficiency", 0.01, 1.0},
        {&o.attention_efficiency, "attention_efficiency", 0.01, 1.0},
        {&o.scale_up_efficiency, "scale_up_efficiency", 0.01, 1.0},
        {&o.scale_out_efficiency, "scale_out_efficiency", 0.01, 1.0},
        {&o.kernel_overhead_s, "kernel_overhead_s", 0.0, 0.01},
    };
    for (const Check& c : checks) {
        if (*c.v && !(std::isfinite(**c.v) && **c.v >= c.lo && **c.v <= c.hi)) {
            return MakeError(ErrorCode::kInvalidArgument,
                             std::string(c.name) + " must be between " + std::to_string(c.lo) +
                                 " and " + std::to_string(c.hi),
                             std::string("/efficiency/") + c.name);
        }
    }

    return Ok{};
}

// The large-GEMM efficiency before overrides: the accelerator's MAMF measurement (or the
// default), times the in-step sustained fraction; with its source when echoed.
std::pair<double, std::string> GemmMaxEfficiency(const Accelerator& a, Precision precision,
                                                 bool with_assumptions, bool in_step) {
    const double sustained = in_step ? kGemmSustainedFractionOfMamf : 1.0;
    // The source texts are built only when echoed (the planner runs hundreds of estimates
    // without assumptions).
    const std::string times_sustained = in_step ? " times gemm_sustained_fraction_of_mamf" : "";
    double mamf = kDefaultGemmMaxEfficiency * sustained;
    std::string mamf_source;
    if (with_assumptions) {
        mamf_source = "default for accelerators without a published MAMF measurement (0.75)" +
                      times_sustained;
    }
    if (const AcceleratorFacts* f = FindAcceleratorFacts(a.id)) {
        double v = IsLowPrecision(precision) ? f->mamf_fp8 : f->mamf_bf16;
        if (v > 0) {
            mamf = v * sustained;
            if (with_assumptions) {
                mamf_source = "MAMF measurement (stas00/ml-engineering, compute/accelerator: " +
                              std::to_string(v).substr(0, 5) + ")" + times_sustained;
            }
        }
    }
    return {mamf, mamf_source};
}

}  // namespace

Result<DeviceModel> MakeDeviceModel(const Accelerator& a, Precision precision,
                                    const EfficiencyOverrides& o,
                                    const std::string& precision_field, bool with_assumptions,
                                    GemmSetting setting) {
    auto peak = CheckedPeakTflops(a, precision, precision_field);
    if (!peak.ok()) {
        return peak.error();
    }
    if (auto checked = CheckEfficiencyOverrides(o); !checked.ok()) {
        return checked.error();
    }
    DeviceModel d;
    d.peak_flops = peak.value() * 1e12;
    d.memory_bytes_per_s = a.memory_gb_per_s * 1e9;
    const bool in_step = setting == GemmSetting::kInStep;
    auto [mamf, mamf_source] = GemmMaxEfficiency(a, precision, with_assumptions, in_step);
    auto pick = [&](const std::optional<double>& over, double def, AssumptionText name,
                    AssumptionText unit, AssumptionText desc, AssumptionText source) {
        double v = over.value_or(def);
        if (with_assumptions) {
            d.assumptions.push_back({std::move(name), v, std::move(unit), std::move(desc),
                                     SourceOf(over.has_value(), std::move(source))});
        }
        return v;
    };
    // Records a constant that has no override; nothing is built when assumptions are off.
    auto note = [&](AssumptionText name, double v, AssumptionText unit, AssumptionText desc,
                    AssumptionText source) {
        if (with_assumptions) {
            d.assumptions.push_back(
                {std::move(name), v, std::move(unit), std::move(desc), std::move(source)});
        }
    };
    if (precision == Precision::kFp4)
        note("fp4_bytes_per_element", kFp4BytesPerElement, "bytes",
             "an fp4 value with its share of the NVFP4 block scale (4 + 8 / 16 bits), for "
             "weights, activations and memory; an MXFP4 checkpoint is 4.25 bits",
             kFp4BytesSource);
    d.gemm_max_efficiency =
        pick(o.gemm_max_efficiency, mamf, "gemm_max_efficiency", "fraction",
             "large-GEMM throughput as a fraction of dense peak (asymptote of the GEMM curve)",
             mamf_source);
    if (in_step)
        note("gemm_sustained_fraction_of_mamf", kGemmSustainedFractionOfMamf, "fraction",
             "share of the best-shape MAMF figure that GEMMs reach inside a real training or "
             "serving step (sustained clocks, neighbouring kernels)",
             "LLMCompass A100 mid-size GEMMs measure 0.8 of the MAMF-anchored curve; a global "
             "fit on tests/data/published-runs.csv gives 0.78-0.80 (docs/estimator.md)");
    // The vendor library's own curve where it is measured (accelerator_facts.cpp).
    const GemmCurveFacts* curve = FindGemmCurveFacts(a.id);
    const double half_s = curve != nullptr ? curve->half_efficiency_seconds_at_peak
                                           : kGemmHalfEfficiencySecondsAtPeak;
    d.gemm_curve_exponent = curve != nullptr ? curve->exponent : kGemmCurveExponent;
    d.gemm_half_flops = half_s * d.peak_flops;
    note("gemm_half_efficiency_seconds_at_peak", half_s, "s",
         "a GEMM reaches half the asymptote when its FLOPs equal peak FLOP/s times this; "
         "eff = max / (1 + (half_flops / flops)^exponent)",
         curve != nullptr ? std::string(curve->source)
                          : "fit to LLMCompass A100 fp16 GEMM measurements (PrincetonUniversity/"
                            "LLMCompass ae/figure5/ab/real_hardware/matmul_A100.csv)");
    note("gemm_curve_exponent", d.gemm_curve_exponent, "1",
         "steepness of the GEMM efficiency curve", "same fit");
    d.memory_max_efficiency =
        pick(o.memory_bandwidth_efficiency, kDefaultMemoryEfficiency, "memory_bandwidth_efficiency",
             "fraction",
             "HBM bandwidth reached by transfers of 100 MB or more; smaller ones follow Calculon's "
             "size table (>=10 MB 0.75, >=1 MB 0.60, else 0.30, relative to 0.90)",
             "calculon-ai/calculon systems/a100_80g.json, h100_80g_nvl8.json");
    bool hopper_or_later =
        a.id.starts_with("h100") || a.id.starts_with("h200") || a.id.starts_with("h800") ||
        a.id.starts_with("gh200") || a.id.starts_with("b200") || a.id.starts_with("gb200") ||
        a.id.starts_with("b300") || a.id.starts_with("gb300") || a.id.starts_with("h20");
    bool ampere =
        a.id.starts_with("a100") || a.id.starts_with("a10") || a.id.starts_with("rtx-3090");
    double attn = hopper_or_later ? kAttentionEfficiencyHopper
                  : ampere        ? kAttentionEfficiencyAmpere
                                  : kAttentionEfficiencyOther;
    d.attention_efficiency = pick(
        o.attention_efficiency, attn, "attention_efficiency", "fraction",
        "FlashAttention throughput on the causal half of the attention FLOPs, fraction of peak",
        hopper_or_later
            ? "FlashAttention-2 on H100 reaches ~335 TFLOP/s fwd+bwd (Dao 2023, arXiv 2307.08691 "
              "Fig. 7), 0.34 of 989; FlashAttention-3 does better (arXiv 2407.08608): override"
        : ampere ? "FlashAttention-2 reaches 50-73% of A100 peak (Dao 2023, arXiv 2307.08691)"
                 : "assumed (no published FlashAttention figure for this accelerator)");
    d.kernel_overhead_s =
        pick(o.kernel_overhead_s, kDefaultKernelOverheadS, "kernel_overhead_s", "s",
             "fixed launch and tail cost per kernel",
             "CUDA kernel launch latency of a few microseconds (NVIDIA Nsight Systems guides)");
    d.scale_up_efficiency =
        pick(o.scale_up_efficiency, kDefaultScaleUpEfficiency, "scale_up_efficiency", "fraction",
             "collective bus bandwidth over the scale-up link's unidirectional bandwidth",
             "nccl-tests all_reduce busbw ~230 GB/s on 8x A100 NVLink (300 GB/s per direction)");
    d.scale_out_efficiency =
        pick(o.scale_out_efficiency, kDefaultScaleOutEfficiency, "scale_out_efficiency", "fraction",
             "collective bus bandwidth over the node's network bandwidth",
             "Calculon network efficiency for InfiniBand (0.9), rounded down for RoCE/EFA");
    if (with_assumptions) {
        note("peak_tflops", peak.value(), "TFLOP/s",
             "dense peak at " + std::string(PrecisionName(precision)), "catalog: " + a.spec_source);
        note("memory_gb_per_s", a.memory_gb_per_s, "GB/s", "HBM bandwidth",
             "catalog: " + a.spec_source);
    }
    return d;
}

double GemmEfficiency(const DeviceModel& d, double flops) {
    if (!(flops > 0)) {
        return d.gemm_max_efficiency;
    }
    return d.gemm_max_efficiency /
           (1.0 + std::pow(d.gemm_half_flops / flops, d.gemm_curve_exponent));
}

double MemoryEfficiency(const DeviceModel& d, double bytes) {
    double x = bytes > 1 ? std::log10(bytes) : 0.0;
    double rel = kMemAnchors.back().second;
    if (x <= kMemAnchors.front().first) {
        rel = kMemAnchors.front().second;
    } else {
        for (std::size_t i = 1; i < kMemAnchors.size(); ++i) {
            if (x <= kMemAnchors[i].first) {
                auto [x0, y0] = kMemAnchors[i - 1];
                auto [x1, y1] = kMemAnchors[i];
                rel = y0 + (y1 - y0) * (x - x0) / (x1 - x0);
                break;
            }
        }
    }
    return d.memory_max_efficiency * rel;
}

namespace {
OpTime Finish(const DeviceModel& d, double flops, double compute_s, double bytes) {
    OpTime t;
    t.flops = flops;
    t.bytes = bytes;
    t.compute_seconds = compute_s;
    t.memory_seconds = bytes > 0 ? bytes / (d.memory_bytes_per_s * MemoryEfficiency(d, bytes)) : 0;
    t.bound = t.compute_seconds >= t.memory_seconds ? Bound::kCompute : Bound::kMemory;
    t.seconds = std::max(t.compute_seconds, t.memory_seconds) + d.kernel_overhead_s;
    return t;
}
}  // namespace

OpTime CustomTime(const DeviceModel& d, double flops, double bytes) {
    double compute = flops > 0 ? flops / (d.peak_flops * GemmEfficiency(d, flops)) : 0.0;
    return Finish(d, flops, compute, bytes);
}

OpTime GemmTime(const DeviceModel& d, double m, double n, double k, double bpe) {
    double flops = 2.0 * m * n * k;
    double bytes = (m * k + k * n + m * n) * bpe;
    return CustomTime(d, flops, bytes);
}

OpTime MemoryTime(const DeviceModel& d, double bytes) {
    OpTime t = Finish(d, 0, 0, bytes);
    t.bound = Bound::kMemory;
    return t;
}

OpTime AttentionTime(const DeviceModel& d, double flops, double work_fraction, double bytes) {
    double compute = flops * work_fraction / (d.peak_flops * d.attention_efficiency);
    return Finish(d, flops, compute, bytes);
}

Result<RooflineResult> EstimateRoofline(const Accelerator& accelerator, Precision precision,
                                        const std::vector<RooflineOp>& ops,
                                        const EfficiencyOverrides& overrides) {
    if (ops.empty() || ops.size() > kMaxRooflineOps) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            "ops must hold between 1 and " + std::to_string(kMaxRooflineOps) + " operations",
            "/ops");
    }
    auto device = MakeDeviceModel(accelerator, precision, overrides, "/precision", true,
                                  GemmSetting::kIsolated);
    if (!device.ok()) {
        return device.error();
    }
    const DeviceModel& d = device.value();
    const double bpe = BytesPerElement(precision);
    RooflineResult out;
    out.ridge_point_flops_per_byte = d.peak_flops / d.memory_bytes_per_s;
    double total_s = 0, total_flops = 0, total_bytes = 0, compute_s = 0, memory_s = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const RooflineOp& op = ops[i];
        const std::string at = "/ops/" + std::to_string(i);
        // Counts of FLOPs, bytes and GEMM dimensions are whole: 0 (where allowed) or at least
        // one. A fraction such as 5e-324 passed a "> 0" rule and drove the efficiency curve
        // to a non-finite time, written as null.
        auto in_range = [](double v, double hi, bool allow_zero) {
            return std::isfinite(v) && ((allow_zero && v == 0) || v >= 1) && v <= hi;
        };
        OpTime t;
        switch (op.kind) {
            case OpKind::kGemm:
                for (auto [v, name] :
                     {std::pair{op.m, "m"}, std::pair{op.n, "n"}, std::pair{op.k, "k"}}) {
                    if (!in_range(v, kMaxOpDimension, false)) {
                        return MakeError(ErrorCode::kInvalidArgument,
                                         std::string(name) + " must be between 1 and 1e9",
                                         at + "/" + name);
                    }
                }
                t = GemmTime(d, op.m, op.n, op.k, bpe);
                break;
            case OpKind::kMemory:
                if (!in_range(op.bytes_read, kMaxOpBytes, true)) {
                    return MakeError(ErrorCode::kInvalidArgument,
                                     "bytes_read must be 0 or between 1 and 1e18",
                                     at + "/bytes_read");
                }
                if (!in_range(op.bytes_written, kMaxOpBytes, true)) {
                    return MakeError(ErrorCode::kInvalidArgument,
                                     "bytes_written must be 0 or between 1 and 1e18",
                                     at + "/bytes_written");
                }
                if (op.bytes_read + op.bytes_written <= 0) {
                    return MakeError(ErrorCode::kInvalidArgument,
                                     "a memory op must move at least one byte", at + "/bytes_read");
                }
                t = MemoryTime(d, op.bytes_read + op.bytes_written);
                break;
            case OpKind::kCustom:
                if (!in_range(op.flops, kMaxOpFlops, true)) {
                    return MakeError(ErrorCode::kInvalidArgument,
                                     "flops must be 0 or between 1 and 1e21", at + "/flops");
                }
                if (!in_range(op.bytes, kMaxOpBytes, true)) {
                    return MakeError(ErrorCode::kInvalidArgument,
                                     "bytes must be 0 or between 1 and 1e18", at + "/bytes");
                }
                if (op.flops <= 0 && op.bytes <= 0) {
                    return MakeError(ErrorCode::kInvalidArgument,
                                     "a custom op needs flops or bytes", at + "/flops");
                }
                t = CustomTime(d, op.flops, op.bytes);
                break;
        }
        // Last guard: a time the answer cannot state is refused, naming the op, never
        // written as null.
        if (!std::isfinite(t.seconds) || !std::isfinite(t.flops) || !std::isfinite(t.bytes)) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "this op's figures give no finite time on this accelerator", at);
        }
        RooflineOpResult r;
        r.name = op.name;
        r.kind = op.kind;
        r.seconds = t.seconds;
        r.bound = t.bound;
        r.flops = t.flops;
        r.bytes = t.bytes;
        r.arithmetic_intensity = t.bytes > 0 ? t.flops / t.bytes : 0;
        r.achieved_tflops = t.flops / t.seconds / 1e12;
        r.achieved_gb_per_s = t.bytes / t.seconds / 1e9;
        r.efficiency = t.bound == Bound::kCompute ? t.flops / t.seconds / d.peak_flops
                                                  : t.bytes / t.seconds / d.memory_bytes_per_s;
        out.ops.push_back(r);
        total_s += t.seconds;
        total_flops += t.flops;
        total_bytes += t.bytes;
        (t.bound == Bound::kCompute ? compute_s : memory_s) += t.seconds;
    }
    RooflineOpResult& tot = out.total;
    tot.name = "total";
    tot.seconds = total_s;
    tot.flops = total_flops;
    tot.bytes = total_bytes;
    tot.bound = compute_s >= memory_s ? Bound::kCompute : Bound::kMemory;
    tot.arithmetic_intensity = total_bytes > 0 ? total_flops / total_bytes : 0;
    tot.achieved_tflops = total_flops / total_s / 1e12;
    tot.achieved_gb_per_s = total_bytes / total_s / 1e9;
    tot.efficiency = tot.bound == Bound::kCompute ? total_flops / total_s / d.peak_flops
                                                  : total_bytes / total_s / d.memory_bytes_per_s;
    out.assumptions = d.assumptions;
    return out;
}

}  // namespace gpucost::pricing::estimate
