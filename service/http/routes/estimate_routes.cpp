#include <cmath>

#include "pricing/estimate/inference.hpp"
#include "pricing/estimate/roofline.hpp"
#include "pricing/estimate/training.hpp"
#include "service/http/codec/encoded_cache.hpp"
#include "service/http/codec/estimate_codec.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/router.hpp"

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

}  // namespace

// Thin handlers: decode -> look the accelerator up -> call the estimator core -> encode.
void AddEstimateRoutes(RouteTable& routes, const Deps& deps) {
    routes.Post(
        "/v1/estimates/training", [deps](const httplib::Request& req, httplib::Response& res) {
            if (auto query = CheckQuery(req); !query.ok())
                return WriteProblem(res, req, query.error());
            auto detail = AssumptionDetailOf(req);
            if (!RequireJsonBody(req, res)) return;
            auto body = ParseJsonBody(req.body);
            if (!body.ok()) return WriteProblem(res, req, body.error());
            HardwareRequest hw;
            auto decoded = DecodeTrainingRequest(body.value(), &hw);
            if (!decoded.ok()) return WriteProblem(res, req, decoded.error());
            auto cluster = ResolveHardware(hw, *deps.catalog());
            if (!cluster.ok()) return WriteProblem(res, req, cluster.error());
            auto estimate = pricing::estimate::EstimateTraining(decoded.value(), cluster.value());
            if (!estimate.ok()) return WriteProblem(res, req, estimate.error());
            if (auto finite = Finite(estimate.value()); !finite.ok()) {
                return WriteProblem(res, req, finite.error());
            }
            WriteEncoded(res, estimate.value(), detail.value());
        });

    routes.Post(
        "/v1/estimates/inference", [deps](const httplib::Request& req, httplib::Response& res) {
            if (auto query = CheckQuery(req); !query.ok())
                return WriteProblem(res, req, query.error());
            auto detail = AssumptionDetailOf(req);
            if (!RequireJsonBody(req, res)) return;
            auto body = ParseJsonBody(req.body);
            if (!body.ok()) return WriteProblem(res, req, body.error());
            HardwareRequest hw;
            auto decoded = DecodeInferenceRequest(body.value(), &hw);
            if (!decoded.ok()) return WriteProblem(res, req, decoded.error());
            auto cluster = ResolveHardware(hw, *deps.catalog());
            if (!cluster.ok()) return WriteProblem(res, req, cluster.error());
            auto estimate = pricing::estimate::EstimateInference(decoded.value(), cluster.value());
            if (!estimate.ok()) return WriteProblem(res, req, estimate.error());
            if (auto finite = Finite(estimate.value()); !finite.ok()) {
                return WriteProblem(res, req, finite.error());
            }
            WriteEncoded(res, estimate.value(), detail.value());
        });

    routes.Post("/v1/estimates/roofline",
                [deps](const httplib::Request& req, httplib::Response& res) {
                    if (auto query = CheckQuery(req); !query.ok())
                        return WriteProblem(res, req, query.error());
                    auto detail = AssumptionDetailOf(req);
                    if (!RequireJsonBody(req, res)) return;
                    auto body = ParseJsonBody(req.body);
                    if (!body.ok()) return WriteProblem(res, req, body.error());
                    auto decoded = DecodeRooflineRequest(body.value());
                    if (!decoded.ok()) return WriteProblem(res, req, decoded.error());
                    HardwareRequest hw;
                    hw.accelerator = decoded.value().accelerator;
                    auto cluster = ResolveHardware(hw, *deps.catalog());
                    if (!cluster.ok()) {
                        pricing::Error e = cluster.error();
                        e.field = "/accelerator";
                        for (auto& fe : e.errors) fe.field = "/accelerator";
                        return WriteProblem(res, req, e);
                    }
                    const auto& r = decoded.value();
                    auto result = pricing::estimate::EstimateRoofline(
                        cluster.value().accelerator, r.precision, r.ops, r.efficiency);
                    if (!result.ok()) return WriteProblem(res, req, result.error());
                    WriteEncoded(res, std::move(result).value(), detail.value());
                });
}

}  // namespace gpucost::http
