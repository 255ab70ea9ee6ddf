#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/rent_vs_buy.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"
#include "service/http/as_of.hpp"
#include "service/http/csv_writer.hpp"
#include "service/http/json_codec.hpp"
#include "service/http/plan_codec.hpp"
#include "service/http/problem.hpp"
#include "service/http/query_params.hpp"
#include "service/http/router.hpp"

namespace gpucost::http {
namespace {

// The one place plan handlers take their catalog snapshot from: the current one, or with
// ?as_of= the prices valid then (PostgreSQL mode; 503 without a database, 422 if malformed).
pricing::Result<std::shared_ptr<const pricing::Catalog>> PlanCatalog(const Deps& deps,
                                                                     const httplib::Request& req) {
    return CatalogForQuery(deps, QueryParams(req, {kAsOfParam}));
}

// Checks query string and Content-Type and parses the body; on failure writes the problem
// and returns nullopt.
std::optional<json> ReadJsonBody(const httplib::Request& req, httplib::Response& res) {
    if (auto checked = QueryParams(req, {kAsOfParam}).Check(); !checked.ok()) {
        WriteProblem(res, req, checked.error());
        return std::nullopt;
    }
    std::string type = req.get_header_value("Content-Type");
    type = type.substr(0, type.find(';'));
    while (!type.empty() && type.back() == ' ') {
        type.pop_back();
    }
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (type != "application/json") {
        WriteTransportProblem(res, req, 415, "unsupported_media_type",
                              "send the request body as Content-Type: application/json");
        return std::nullopt;
    }
    auto parsed = ParseJsonBody(req.body);
    if (!parsed.ok()) {
        WriteProblem(res, req, parsed.error());
        return std::nullopt;
    }
    return std::move(parsed).value();
}

const pricing::PlanReference& ReferenceOf(const Deps& deps) {
    static const pricing::PlanReference kEmpty;
    return deps.plan_reference ? *deps.plan_reference : kEmpty;
}

}  // namespace

void AddPlanRoutes(RouteTable& routes, const Deps& deps) {
    routes.Post("/v1/plans/spot", [deps](const httplib::Request& req, httplib::Response& res) {
        auto body = ReadJsonBody(req, res);
        if (!body) {
            return;
        }
        auto request = DecodeSpotPlanRequest(*body, {"workload"});
        if (!request.ok()) {
            return WriteProblem(res, req, request.error());
        }
        auto workload = DecodeSpotWorkload(*body);
        if (!workload.ok()) {
            return WriteProblem(res, req, workload.error());
        }
        auto catalog = PlanCatalog(deps, req);
        if (!catalog.ok()) {
            return WriteProblem(res, req, catalog.error());
        }
        auto plan = workload.value()
                        ? pricing::plan::PlanSpotForTraining(request.value(), *workload.value(),
                                                             *catalog.value())
                        : pricing::plan::PlanSpot(request.value(), *catalog.value());
        if (!plan.ok()) {
            return WriteProblem(res, req, plan.error());
        }
        WriteJson(res, ToJson(plan.value()));
    });

    routes.Post("/v1/plans/rent-vs-buy",
                [deps](const httplib::Request& req, httplib::Response& res) {
        auto body = ReadJsonBody(req, res);
        if (!body) {
            return;
        }
        auto request = DecodeRentVsBuyRequest(*body);
        if (!request.ok()) {
            return WriteProblem(res, req, request.error());
        }
        auto catalog = PlanCatalog(deps, req);
        if (!catalog.ok()) {
            return WriteProblem(res, req, catalog.error());
        }
        auto plan = pricing::plan::PlanRentVsBuy(request.value(), *catalog.value());
        if (!plan.ok()) {
            return WriteProblem(res, req, plan.error());
        }
        if (WantsCsv(req)) {
            return WriteCsv(res, CumulativeCsv(plan.value()));
        }
        WriteJson(res, ToJson(plan.value()));
    });

    routes.Post("/v1/plans/training", [deps](const httplib::Request& req, httplib::Response& res) {
        auto body = ReadJsonBody(req, res);
        if (!body) {
            return;
        }
        auto request = DecodeTrainingPlanRequest(*body);
        if (!request.ok()) {
            return WriteProblem(res, req, request.error());
        }
        auto catalog = PlanCatalog(deps, req);  // options point into it: keep it alive
        if (!catalog.ok()) {
            return WriteProblem(res, req, catalog.error());
        }
        auto answer = AnswerTrainingPlan(request.value(), *catalog.value(), ReferenceOf(deps),
                                         TodayUtcDate());
        if (!answer.ok()) {
            return WriteProblem(res, req, answer.error());
        }
        if (WantsCsv(req)) {
            return WriteCsv(res, OptionsCsv(answer.value().plan));
        }
        WriteJson(res, answer.value().body);
    });

    routes.Post("/v1/plans/inference",
                [deps](const httplib::Request& req, httplib::Response& res) {
        auto body = ReadJsonBody(req, res);
        if (!body) {
            return;
        }
        auto request = DecodeInferencePlanRequest(*body);
        if (!request.ok()) {
            return WriteProblem(res, req, request.error());
        }
        auto catalog = PlanCatalog(deps, req);  // options point into it: keep it alive
        if (!catalog.ok()) {
            return WriteProblem(res, req, catalog.error());
        }
        auto answer = AnswerInferencePlan(request.value(), *catalog.value());
        if (!answer.ok()) {
            return WriteProblem(res, req, answer.error());
        }
        if (WantsCsv(req)) {
            return WriteCsv(res, OptionsCsv(answer.value().page));
        }
        WriteJson(res, answer.value().body);
    });
}

}  // namespace gpucost::http
