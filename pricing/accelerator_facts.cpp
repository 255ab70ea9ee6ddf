#include "pricing/accelerator_facts.hpp"

#include <array>

namespace gpucost::pricing {
namespace {

// MAMF: measured with mamf-finder.py and published in stas00/ml-engineering
// compute/accelerator/README.md ("Maximum Achievable Matmul FLOPS comparison table", BF16 and
// FP8 tables). Scale-up domains larger than one node, as the vendor documents them.
constexpr auto kFacts = std::to_array<AcceleratorFacts>({
    {"a100-pcie", 0.811, 0, 0, {}},
    {"a100", 0.869, 0, 0, {}},
    {"a10", 0, 0, 0, {}},  // a10, a10g
    {"b200", 0.776, 0.763, 0, {}},
    {"b300", 0.786, 0.745, 0, {}},
    {"gaudi2", 0.969, 0.955, 0, {}},
    {"gaudi3", 0.741, 0.769, 0, {}},
    {"gb200", 0.729, 0.723, 72,
     "NVIDIA GB200 NVL72 product page: 72 Blackwell GPUs in one NVLink domain (130 TB/s)"},
    // Same Blackwell Ultra die as b300, measured there (B300 MAMF BF16 1769, FP8 3353).
    {"gb300", 0.786, 0.745, 72,
     "NVIDIA GB300 NVL72 page: 72 Blackwell Ultra GPUs in one NVLink domain (130 TB/s)"},
    {"gh200", 0.838, 0.776, 0, {}},
    {"h100", 0.803, 0.709, 0, {}},
    {"h200", 0.803, 0.734, 0, {}},
    {"h800", 0.803, 0.709, 0, {}},
    {"h20", 0, 0, 0, {}},  // after h200: the export Hopper, not measured
    {"inferentia", 0, 0, 0, {}},
    {"l40s", 0, 0, 0, {}},
    {"l4", 0, 0, 0, {}},
    {"mi250x", 0.767, 0, 0, {}},
    // CDNA3 (MI300X, MI325X) FP8: AMD's Maximum Achievable FLOPS (hipBLASLt, ROCm/rocm-blogs
    // "measuring-max-achievable-flops-part2": MI300X 1273, MI325X 1519 of 2615 TFLOP/s).
    {"mi300x", 0.514, 0.487, 0, {}},
    {"mi325x", 0.604, 0.581, 0, {}},
    // MAMF BF16 1565 TFLOP/s of the 2516.6 clock-formula peak the catalog stores (ml-engineering
    // quotes it as 68 % of MI350X-class 2300).
    {"mi355x", 0.622, 0, 0, {}},
    {"rtx-", 0, 0, 0, {}},
    {"t4", 0, 0, 0, {}},
    {"tpu-v4", 0, 0, 4096, "Google Cloud TPU v4 docs: a v4 Pod is 4,096 chips joined by ICI"},
    {"tpu-v5p", 0, 0, 6144,
     "Google Cloud TPU v5p docs: the largest single slice is 16x16x24 = 6,144 chips over ICI "
     "(Pod 8,960); larger jobs are multislice over the data-centre network"},
    {"tpu-v5e", 0, 0, 256,
     "Google Cloud TPU v5e docs: a Pod (and the largest slice) is 256 chips, 2D torus"},
    {"tpu-v6e", 0, 0, 256,
     "Google Cloud TPU v6e (Trillium) docs: a Pod (and the largest slice) is 256 chips"},
    {"tpu7x", 0, 0, 9216,
     "Google Cloud TPU7x (Ironwood) docs: a superpod is 9,216 chips joined by ICI (3D torus)"},
    {"trainium3", 0, 0, 144,
     "AWS Neuron docs trn3-arch.rst: a Trn3 UltraServer (Gen2) joins 144 chips over "
     "NeuronLink-v4 through NeuronSwitch-v1 (Gen1: 64)"},
    {"trainium", 0, 0, 0, {}},
    {"v100", 0, 0, 0, {}},
});

// CDNA3 (MI300X, MI325X: one compute die): fitted to the Azure AI-benchmarking-guide hipBLASLt
// FP8 sweep on MI300X (samuel-bohman fork @3de0c294: 2048^3 428, 4096^3 955 against 1159
// TFLOP/s at 8192^3 give half the asymptote at 29 GFLOP with exponent 1.0, and 79 TFLOP/s at
// 1024^3 where 53 is measured); cuBLASLt on H100 reaches 78 % of its asymptote at 2048^3
// where hipBLASLt reaches 37 %. Taken for BF16 too (the same library and tiles).
constexpr auto kGemmCurves = std::to_array<GemmCurveFacts>({
    {"mi300x", 1.1e-5, 1.0,
     "fit to the Azure AI-benchmarking-guide hipBLASLt FP8 GEMM sweep on MI300X (2048^3 428, "
     "4096^3 955, 8192^3 1159 TFLOP/s): half the asymptote at 29 GFLOP (1.1e-5 s at 2615 "
     "TFLOP/s), exponent 1.0"},
    {"mi325x", 1.1e-5, 1.0,
     "the MI300X hipBLASLt fit (same CDNA3 compute die; Azure AI-benchmarking-guide FP8 sweep): "
     "half the asymptote at 1.1e-5 s of peak, exponent 1.0"},
});

}  // namespace

const GemmCurveFacts* FindGemmCurveFacts(std::string_view accelerator_id) {
    for (const GemmCurveFacts& g : kGemmCurves) {
        if (accelerator_id.substr(0, g.id_prefix.size()) == g.id_prefix) return &g;
    }
    return nullptr;
}

const AcceleratorFacts* FindAcceleratorFacts(std::string_view accelerator_id) {
    for (const AcceleratorFacts& f : kFacts) {
        if (accelerator_id.substr(0, f.id_prefix.size()) == f.id_prefix) return &f;
    }
    return nullptr;
}

}  // namespace gpucost::pricing
