#include "pricing/accelerator.hpp"

namespace gpucost::pricing {

std::string_view PrecisionName(Precision precision) {
    switch (precision) {
        case Precision::kFp32:
            return "fp32";
        case Precision::kTf32:
            return "tf32";
        case Precision::kFp16:
            return "fp16";
        case Precision::kBf16:
            return "bf16";
        case Precision::kFp8:
            return "fp8";
        case Precision::kInt8:
            return "int8";
        case Precision::kFp4:
            return "fp4";
    }
    return "fp32";
}

std::optional<Precision> ParsePrecision(std::string_view name) {
    for (Precision p : kAllPrecisions) {
        if (PrecisionName(p) == name) {
            return p;
        }
    }
    return std::nullopt;
}

bool IsBelowSixteenBits(Precision precision) {
    return BytesPerElement(precision) < BytesPerElement(Precision::kBf16);
}

double BytesPerElement(Precision precision) {
    switch (precision) {
        case Precision::kFp32:
        case Precision::kTf32:
            return 4.0;
        case Precision::kFp16:
        case Precision::kBf16:
            return 2.0;
        case Precision::kFp8:
        case Precision::kInt8:
            return 1.0;
        case Precision::kFp4:
            return kFp4BytesPerElement;
    }
    return 4.0;
}

std::string WorkloadsText(const AcceleratorWorkloads& workloads) {
    if (workloads.training && workloads.inference) {
        return "training;inference";
    }
    return workloads.training ? "training" : "inference";
}

}  // namespace gpucost::pricing
