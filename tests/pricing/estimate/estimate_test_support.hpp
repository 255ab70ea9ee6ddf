#pragma once

#include "pricing/accelerator.hpp"

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

}  // namespace gpucost::testing
