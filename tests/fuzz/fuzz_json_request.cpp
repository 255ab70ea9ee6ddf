// libFuzzer harness: the JSON request decoders. The first byte picks the decoder, the rest
// is the request body. Any outcome is fine except a crash, a sanitizer report or a hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "service/http/codec/estimate_codec.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/model_codec.hpp"
#include "service/http/codec/plan_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace gpucost::http;
    if (size < 1) return 0;
    std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
    auto parsed = ParseJsonBody(body);
    if (!parsed.ok()) return 0;
    const auto& json = parsed.value();
    HardwareRequest hw;
    switch (data[0] % 8) {
        case 0:
            (void)DecodeTrainingRequest(json, CompiledInModels(), &hw);
            break;
        case 1:
            (void)DecodeInferenceRequest(json, CompiledInModels(), &hw);
            break;
        case 2:
            (void)DecodeRooflineRequest(json);
            break;
        case 3:
            (void)DecodeTrainingPlanRequest(json, CompiledInModels());
            break;
        case 4:
            (void)DecodeSpotPlanRequest(json);
            break;
        case 5:
            (void)DecodeRentVsBuyRequest(json);
            break;
        case 6:
            (void)DecodeInferencePlanRequest(json, CompiledInModels());
            break;
        default:
            (void)DecodeSpotWorkload(json, CompiledInModels());
            break;
    }
    return 0;
}
