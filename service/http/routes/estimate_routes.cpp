#include <cmath>

#include "pricing/deadline.hpp"
#include "pricing/estimate/inference.hpp"
#include "pricing/estimate/roofline.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/training_recipe.hpp"
#include "service/http/codec/encoded_cache.hpp"
#include "service/http/codec/estimate_codec.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/model_codec.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/route_table.hpp"

namespace gpucost::http {
namespace {

// Training and inference answers are written as text with their assumptions spliced in
// pre-encoded (see encoded_cache.hpp): the assumptions are most of the answer's bytes and all
// of its long texts, and no DOM is built for the rest.
template <typename Estimate>
void WriteEncoded(httplib::Response& res, const Estimate& estimate, AssumptionDetail detail) {
    WriteJsonText(res, EncodeEstimate(estimate, EncodeAssumptions(estimate.assumptions, detail)));
}

// The roofline answer is small: a DOM with the assumptions spliced in.
void WriteEncoded(httplib::Response& res, pricing::estimate::RooflineResult result,
                  AssumptionDetail detail) {
    pricing::Assumptions assumptions = std::move(result.assumptions);
    result.assumptions.clear();
    WriteJsonWithAssumptions(res, EstimateToJson(result), assumptions, detail);
}

// Estimates read no prices, so `as_of` is as unknown here as any other parameter: 400, like an
// unknown parameter on a plan route (never silently ignored).
pricing::Status CheckQuery(const httplib::Request& req) {
    if (auto checked = QueryParams(req, {kAssumptionsParam}).Check(); !checked.ok()) {
        return checked;
    }
    auto detail = AssumptionDetailOf(req);
    if (!detail.ok()) return detail.error();
    return pricing::Ok{};
}

// Last guard before encoding: a headline figure the spec says is a number is never written as
// null. The inputs' documented ranges keep them finite; a result that is not is refused as
// 422 for the request as a whole ("/"), since no single input can be blamed.
pricing::Status FiniteFigures(std::initializer_list<double> figures) {
    for (double figure : figures) {
        if (!std::isfinite(figure)) {
            return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                      "these inputs give no finite estimate; keep each number "
                                      "within its documented range (openapi.yaml)",
                                      "/");
        }
    }
    return pricing::Ok{};
}

pricing::Status Finite(const pricing::estimate::TrainingEstimate& e) {
    return FiniteFigures({e.wall_clock_hours, e.accelerator_hours, e.ideal_wall_clock_hours,
                          e.ideal_accelerator_hours, e.mfu, e.hfu,
                          e.achieved_tflops_per_accelerator, e.hardware_tflops_per_accelerator,
                          e.tokens_per_second, e.step_time_s, e.memory_per_accelerator_gb});
}

pricing::Status Finite(const pricing::estimate::InferenceEstimate& e) {
    return FiniteFigures({e.time_to_first_token_ms, e.inter_token_latency_ms,
                          e.output_tokens_per_second, e.output_tokens_per_second_per_accelerator,
                          e.request_latency_ms, e.prefill_tokens_per_second,
                          e.memory_per_accelerator_gb});
}

// The roofline answer's figures come from the accelerator's peaks and the request's counts,
// both checked finite by the decoder.
pricing::Status Finite(const pricing::estimate::RooflineResult& /*result*/) {
    return pricing::Ok{};
}

// Where a hardware fault is named: the training and inference requests' `/hardware/...`
// members as ResolveHardware names them, or one member for a request naming only an
// accelerator (the roofline's `/accelerator`).
void NameHardwareField(pricing::Error& error, std::string_view pointer) {
    if (pointer.empty()) return;
    error.field = pointer;
    for (auto& field_error : error.errors) field_error.field = pointer;
}

// Every estimate route's steps: the query checked, the JSON body decoded (with the hardware it
// names), the hardware resolved from the catalog, the request's computing budget checked
// (Deps::request_budget, from the handler's start; the training and serving estimators check
// it again in their layout searches), the estimator run, its headline figures checked finite,
// and the answer written with its assumptions at the requested detail. The first fault is
// answered as problem+json.
template <typename Decode, typename Estimate>
void AnswerEstimate(const Deps& deps, const httplib::Request& req, httplib::Response& res,
                    Decode decode, Estimate estimate, std::string_view hardware_pointer = {}) {
    const auto deadline = pricing::Deadline::After(deps.request_budget);
    if (auto query = CheckQuery(req); !query.ok()) return WriteProblem(res, req, query.error());
    if (!RequireJsonBody(req, res)) return;
    auto body = ParseJsonBody(req.body);
    if (!body.ok()) return WriteProblem(res, req, body.error());
    HardwareRequest hw;
    auto decoded = decode(body.value(), hw);
    if (!decoded.ok()) return WriteProblem(res, req, decoded.error());
    auto cluster = ResolveHardware(hw, *deps.catalog());
    if (!cluster.ok()) {
        pricing::Error error = cluster.error();
        NameHardwareField(error, hardware_pointer);
        return WriteProblem(res, req, error);
    }
    if (auto time_left = deadline.Check(); !time_left.ok()) {
        return WriteProblem(res, req, time_left.error());
    }
    auto result = estimate(decoded.value(), cluster.value(), deadline);
    if (!result.ok()) return WriteProblem(res, req, result.error());
    if (auto finite = Finite(result.value()); !finite.ok()) {
        return WriteProblem(res, req, finite.error());
    }
    WriteEncoded(res, std::move(result).value(), AssumptionDetailOf(req).value());
}

// The training request decoded, then its model's published recipe decided on it (in pricing/).
pricing::Result<pricing::estimate::TrainingRequest> DecodeTrainingWithRecipe(
    const json& body, const pricing::ModelLibrary& models, HardwareRequest& hw) {
    auto decoded = DecodeTrainingRequest(body, models, &hw);
    if (!decoded.ok()) return decoded;
    if (auto recipe = pricing::ResolveTrainingRecipe(TrainingRecipesInUse(), decoded.value());
        !recipe.ok()) {
        return recipe.error();
    }
    return decoded;
}

}  // namespace

// Thin handlers: decode -> look the accelerator up -> call the estimator core -> encode.
void AddEstimateRoutes(RouteTable& routes, const Deps& deps) {
    namespace est = pricing::estimate;
    routes.Post("/v1/estimates/training",
                [deps](const httplib::Request& req, httplib::Response& res) {
                    AnswerEstimate(
                        deps, req, res,
                        [&deps](const json& body, HardwareRequest& hw) {
                            return DecodeTrainingWithRecipe(body, ModelsOf(deps), hw);
                        },
                        [](est::TrainingRequest request, const est::ClusterSpec& cluster,
                           const pricing::Deadline& deadline) {
                            request.deadline = deadline;  // the layout search stops at it
                            return est::EstimateTraining(request, cluster);
                        });
                });
    routes.Post("/v1/estimates/inference",
                [deps](const httplib::Request& req, httplib::Response& res) {
                    AnswerEstimate(
                        deps, req, res,
                        [&deps](const json& body, HardwareRequest& hw) {
                            return DecodeInferenceRequest(body, ModelsOf(deps), &hw);
                        },
                        [](est::InferenceRequest request, const est::ClusterSpec& cluster,
                           const pricing::Deadline& deadline) {
                            request.deadline = deadline;  // the layout search stops at it
                            return est::EstimateInference(request, cluster);
                        });
                });
    routes.Post("/v1/estimates/roofline", [deps](const httplib::Request& req,
                                                 httplib::Response& res) {
        AnswerEstimate(
            deps, req, res,
            [](const json& body, HardwareRequest& hw) {
                auto decoded = DecodeRooflineRequest(body);
                if (decoded.ok()) hw.accelerator = decoded.value().accelerator;
                return decoded;
            },
            [](const RooflineRequest& r, const est::ClusterSpec& cluster,
               const pricing::Deadline& /*deadline: checked before it*/) {
                return est::EstimateRoofline(cluster.accelerator, r.precision, r.ops, r.efficiency);
            },
            "/accelerator");
    });
}

}  // namespace gpucost::http
