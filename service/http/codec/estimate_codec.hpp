#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/estimate/inference.hpp"
#include "pricing/estimate/roofline.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/model_library.hpp"

namespace gpucost::http {

// The `hardware` object of an estimate request, before the accelerator id is looked up.
struct HardwareRequest {
    std::string accelerator;
    int total_accelerators = 1;            // of the whole cluster
    std::optional<int> accelerator_count;  // per instance (node)
    std::optional<double> scale_out_gbit_per_s_per_node;
    std::optional<double> scale_up_gb_per_s;
    std::optional<int> scale_up_domain;
};

// POST /v1/estimates/training body (openapi.yaml TrainingEstimateRequest). Wrong types and
// unknown keys are kMalformed (400), bad values kInvalidArgument (422), each naming a JSON
// pointer. `extra_keys` are top-level keys a caller layering on this request (the planner)
// accepts besides the estimator's; they are not read here. A library id is looked up in
// `models` (ModelsOf(deps) in a route).
[[nodiscard]] pricing::Result<pricing::estimate::TrainingRequest> DecodeTrainingRequest(
    const nlohmann::json& body, const pricing::ModelLibrary& models, HardwareRequest* hardware,
    const std::vector<std::string>& extra_keys = {});

// POST /v1/estimates/inference body (InferenceEstimateRequest).
[[nodiscard]] pricing::Result<pricing::estimate::InferenceRequest> DecodeInferenceRequest(
    const nlohmann::json& body, const pricing::ModelLibrary& models, HardwareRequest* hardware);

// Decodes a `hardware` object found at `pointer` (e.g. "/hardware").
[[nodiscard]] pricing::Result<HardwareRequest> DecodeHardware(const nlohmann::json& hardware,
                                                              const std::string& pointer);

// An unknown accelerator id at `field` (a JSON pointer): kInvalidArgument (422) listing the
// five closest known ids. The one answer for an unknown accelerator anywhere in a body.
[[nodiscard]] pricing::Error UnknownAccelerator(const std::string& id,
                                                const pricing::Catalog& catalog,
                                                const std::string& field);

// Checks every id of a list of accelerator ids (plan constraints) at `pointer`/i.
[[nodiscard]] pricing::Status CheckAcceleratorIds(const std::vector<std::string>& ids,
                                                  const pricing::Catalog& catalog,
                                                  const std::string& pointer);

// Looks the accelerator up in the catalog: unknown id -> kInvalidArgument (422) naming
// /hardware/accelerator and listing the closest known ids.
[[nodiscard]] pricing::Result<pricing::estimate::ClusterSpec> ResolveHardware(
    const HardwareRequest& hardware, const pricing::Catalog& catalog);

struct RooflineRequest {
    std::string accelerator;
    pricing::Precision precision = pricing::Precision::kBf16;
    std::vector<pricing::estimate::RooflineOp> ops;
    pricing::estimate::EfficiencyOverrides efficiency;
};
[[nodiscard]] pricing::Result<RooflineRequest> DecodeRooflineRequest(const nlohmann::json& body);

// The answers of POST /v1/estimates/training and /inference as JSON text, `assumptions` set to
// `assumptions_json` (EncodeAssumptions), written without a DOM (byte-identical to one).
std::string EncodeEstimate(const pricing::estimate::TrainingEstimate& e,
                           std::string_view assumptions_json);
std::string EncodeEstimate(const pricing::estimate::InferenceEstimate& e,
                           std::string_view assumptions_json);
nlohmann::json EstimateToJson(const pricing::estimate::RooflineResult& r);

class JsonWriter;
// A layout as every answer's `parallelism` gives it (estimates, runner-ups, plan options).
void WriteLayout(JsonWriter& w, const pricing::estimate::ParallelLayout& l);

}  // namespace gpucost::http
