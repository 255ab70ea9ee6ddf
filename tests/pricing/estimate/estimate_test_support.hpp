#pragma once

#include <string>
#include <string_view>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"

namespace gpucost::testing {

// Hand-built accelerators with catalog figures (shared/data/hardware.csv).
inline pricing::Accelerator A100Sxm80() {
    pricing::Accelerator a;
    a.id = "a100-sxm4-80gb";
    a.name = "A100 80GB SXM";
    a.vendor = "NVIDIA";
    a.form_factor = "SXM4";
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kFp16)] = 312;
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kBf16)] = 312;
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kFp32)] = 19.5;
    a.memory_gb = 80;
    a.memory_gb_per_s = 2039;
    a.scale_up_gb_per_s = 600;
    a.host_pcie_gen = "Gen4";
    return a;
}

inline pricing::Accelerator H100Sxm() {
    pricing::Accelerator a;
    a.id = "h100-sxm";
    a.name = "H100 SXM";
    a.vendor = "NVIDIA";
    a.form_factor = "SXM5";
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kBf16)] = 989;
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kFp16)] = 989;
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kFp8)] = 1979;
    a.memory_gb = 80;
    a.memory_gb_per_s = 3350;
    a.scale_up_gb_per_s = 900;
    a.host_pcie_gen = "Gen5";
    return a;
}

// A 24 GB consumer card without a scale-up link (catalog figures for rtx-4090).
inline pricing::Accelerator Rtx4090() {
    pricing::Accelerator a;
    a.id = "rtx-4090";
    a.name = "RTX 4090";
    a.vendor = "NVIDIA";
    a.form_factor = "consumer PCIe";
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kBf16)] = 165.2;
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kFp16)] = 165.2;
    a.memory_gb = 24;
    a.memory_gb_per_s = 1008;
    a.scale_up_gb_per_s = 0;
    a.host_pcie_gen = "Gen4";
    return a;
}

// A 48 GB PCIe card (catalog figures for l40s).
inline pricing::Accelerator L40s() {
    pricing::Accelerator a;
    a.id = "l40s";
    a.name = "L40S";
    a.vendor = "NVIDIA";
    a.form_factor = "PCIe dual-slot";
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kBf16)] = 362;
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kFp16)] = 362;
    a.memory_gb = 48;
    a.memory_gb_per_s = 864;
    a.scale_up_gb_per_s = 0;
    a.host_pcie_gen = "Gen4";
    return a;
}

// One Blackwell GPU of a GB200 NVL72 rack (catalog figures for gb200).
inline pricing::Accelerator Gb200() {
    pricing::Accelerator a;
    a.id = "gb200";
    a.name = "GB200 (per Blackwell GPU in NVL72)";
    a.vendor = "NVIDIA";
    a.form_factor = "Superchip (2 GPUs + 1 Grace)";
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kBf16)] = 2500;
    a.peak_tflops[static_cast<std::size_t>(pricing::Precision::kFp16)] = 2500;
    a.memory_gb = 186;
    a.memory_gb_per_s = 8000;
    a.scale_up_gb_per_s = 1800;
    a.host_pcie_gen = "n/a";
    return a;
}

// H200 SXM: H100 SXM compute with 141 GB of HBM3e at 4.8 TB/s (schema/seed/accelerators.csv).
inline pricing::Accelerator H200Sxm() {
    pricing::Accelerator a = H100Sxm();
    a.id = "h200-sxm";
    a.name = "H200 SXM";
    a.memory_gb = 141;
    a.memory_gb_per_s = 4800;
    return a;
}

// The value and the source of the echoed assumption `name` (-1 and "" when absent).
inline double AssumptionValue(const pricing::Assumptions& as, std::string_view name) {
    for (const auto& a : as) {
        if (a.name.view() == name) return a.value;
    }
    return -1;
}
inline std::string AssumptionSource(const pricing::Assumptions& as, std::string_view name) {
    for (const auto& a : as) {
        if (a.name.view() == name) return a.source.str();
    }
    return "";
}

}  // namespace gpucost::testing
