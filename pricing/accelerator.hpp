#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace gpucost::pricing {

// Numeric formats an accelerator can run matrix math in. Order is stable (used as an index).
enum class Precision { kFp32, kTf32, kFp16, kBf16, kFp8, kInt8, kFp4 };

inline constexpr std::array<Precision, 7> kAllPrecisions = {
    Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16,
    Precision::kFp8,  Precision::kInt8, Precision::kFp4};

// "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4".
std::string_view PrecisionName(Precision precision);
// Inverse of PrecisionName (case-sensitive); nullopt for anything else.
std::optional<Precision> ParsePrecision(std::string_view name);
// Bytes per element of a tensor stored in this precision (fp32/tf32 4, fp16/bf16 2,
// fp8/int8 1, fp4 kFp4BytesPerElement).
double BytesPerElement(Precision precision);
// A quantised width: stored in fewer bytes than fp16/bf16 (fp8, int8, fp4).
bool IsBelowSixteenBits(Precision precision);

// An fp4 tensor is 4-bit E2M1 values plus their block scales: NVFP4, the format of NVIDIA's
// fp4 checkpoints and Blackwell's fp4 peak, gives every 16 values one FP8 E4M3 scale (4.5 bits
// a value; its per-tensor FP32 scale is negligible). OCP MXFP4 (one E8M0 scale per 32 values,
// 4.25 bits) is 5.6 % smaller; the estimate takes NVFP4's, the larger.
inline constexpr double kFp4BytesPerElement = (4.0 + 8.0 / 16.0) / 8.0;
inline constexpr char kFp4BytesSource[] =
    "NVIDIA Technical Blog 'Introducing NVFP4 for Efficient and Accurate Low-Precision "
    "Inference' (2025-06): 16-value blocks with an FP8 E4M3 scale; OCP Microscaling Formats "
    "(MX) v1.0: MXFP4 blocks of 32 with an E8M0 scale";

// Which workloads an accelerator is offered for, with the vendor's document that says so.
// Unset in a catalog file means both (the column is optional for older files).
struct AcceleratorWorkloads {
    bool training = true;
    bool inference = true;
    std::string source;
};

// "training;inference", "training" or "inference".
std::string WorkloadsText(const AcceleratorWorkloads& workloads);

// One accelerator model (a GPU, TPU chip or Neuron device) as the hardware model knows it.
// All throughputs are dense (no structured sparsity) vendor peaks. Units are in the names:
// TFLOP/s (TOP/s for int8), GB and GB/s in decimal units, W, USD. An unset optional means
// "not supported or not published", never zero.
struct Accelerator {
    std::string id;  // canonical id used by the API, e.g. "h100-sxm"
    std::string name;
    std::string vendor;
    std::string form_factor;
    int launch_year = 0;
    // Dense peak per precision, indexed by static_cast<size_t>(Precision).
    std::array<std::optional<double>, kAllPrecisions.size()> peak_tflops{};
    double memory_gb = 0;
    std::string memory_type;
    double memory_gb_per_s = 0;
    std::optional<double> cache_mb;
    std::string scale_up_interconnect;
    std::optional<double> scale_up_gb_per_s;  // bidirectional per chip; 0 = none (PCIe only)
    std::string host_pcie_gen;
    std::optional<double> tdp_w;
    std::optional<double> purchase_price_usd;
    std::string purchase_price_as_of;
    std::string purchase_price_source;
    std::string spec_source;
    std::string confidence;  // high | medium | low
    std::string notes;
    AcceleratorWorkloads workloads;

    // Dense peak in TFLOP/s for `precision`, or nullopt when unsupported/unpublished.
    std::optional<double> PeakTflops(Precision precision) const {
        return peak_tflops[static_cast<std::size_t>(precision)];
    }
};

}  // namespace gpucost::pricing
