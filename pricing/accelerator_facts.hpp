#pragma once

#include <string_view>

namespace gpucost::pricing {

// What the estimator knows of an accelerator family beyond schema/seed/accelerators.csv's spec
// columns: measured matmul efficiency and the scale-up domain its fabric joins. One row per
// family, matched by id prefix (first row that matches, so a longer prefix comes first); every
// accelerator the catalog loads must match a row, so a new id cannot silently take defaults.
struct AcceleratorFacts {
    std::string_view id_prefix;
    // Maximum Achievable Matmul FLOPS as a fraction of dense peak (BF16, FP8); 0 = not measured,
    // the estimator's default applies and its assumptions say so.
    double mamf_bf16 = 0;
    double mamf_fp8 = 0;
    // Accelerators one NVLink switch fabric or ICI torus joins beyond a node; 0 = none.
    int scale_up_domain = 0;
    std::string_view scale_up_domain_source;
};

// The family row for an accelerator id; nullptr when no row matches (a catalog load error).
const AcceleratorFacts* FindAcceleratorFacts(std::string_view accelerator_id);

// A vendor library's GEMM size curve where it is measured to differ from the estimator's
// default fit (roofline.hpp kGemmHalfEfficiencySecondsAtPeak, kGemmCurveExponent): AMD's
// hipBLASLt reaches half its asymptote at far larger GEMMs than cuBLASLt, and more steeply.
struct GemmCurveFacts {
    std::string_view id_prefix;
    double half_efficiency_seconds_at_peak = 0;
    double exponent = 0;
    std::string_view source;
};

// The family's measured curve; nullptr = the default fit applies.
const GemmCurveFacts* FindGemmCurveFacts(std::string_view accelerator_id);

}  // namespace gpucost::pricing
