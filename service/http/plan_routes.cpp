#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/rent_vs_buy.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"
#include "service/http/as_of.hpp"
#include "service/http/encoded_cache.hpp"
#include "service/http/csv_writer.hpp"
#include "service/http/deprecation.hpp"
#include "service/http/json_codec.hpp"
#include "service/http/estimate_codec.hpp"
#include "service/http/plan_codec.hpp"
#include "service/http/plan_cursor.hpp"
#include "service/http/problem.hpp"
#include "service/http/query_params.hpp"
#include "service/http/router.hpp"

namespace gpucost::http {
namespace {

// The one place plan handlers take their catalog snapshot from: the current one, or with
// ?as_of= the prices valid then (PostgreSQL mode; 503 without a database, 422 if malformed).
pricing::Result<std::shared_ptr<const pricing::Catalog>> PlanCatalog(const Deps& deps,
                                                                     const httplib::Request& req) {
    return CatalogForQuery(deps, QueryParams(req, {kAsOfParam, kAssumptionsParam}));
}

// The caller's ?assumptions= detail (validated in ReadJsonBody, so full on any fault here).
AssumptionDetail DetailOf(const httplib::Request& req) {
    auto detail = AssumptionDetailOf(req);
    return detail.ok() ? detail.value() : AssumptionDetail::kFull;
}

// Checks query string and Content-Type and parses the body; on failure writes the problem
// and returns nullopt.
std::optional<json> ReadJsonBody(const httplib::Request& req, httplib::Response& res) {
    if (auto checked = QueryParams(req, {kAsOfParam, kAssumptionsParam}).Check(); !checked.ok()) {
        WriteProblem(res, req, checked.error());
        return std::nullopt;
    }
    if (auto detail = AssumptionDetailOf(req); !detail.ok()) {
        WriteProblem(res, req, detail.error());
        return std::nullopt;
    }
    if (!RequireJsonBody(req, res)) {
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
        if (auto ids = CheckBodyIds(request.value(), *catalog.value()); !ids.ok()) {
            return WriteProblem(res, req, ids.error());
        }
        auto plan = workload.value()
                        ? pricing::plan::PlanSpotForTraining(request.value(), *workload.value(),
                                                             *catalog.value())
                        : pricing::plan::PlanSpot(request.value(), *catalog.value());
        if (!plan.ok()) {
            return WriteProblem(res, req, plan.error());
        }
        const pricing::plan::SpotPlan& p = plan.value();
        WriteJsonText(res, EncodeSpotPlan(p, EncodeAssumptions(p.assumptions, DetailOf(req))));
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
        if (auto ids = CheckBodyIds(request.value(), *catalog.value()); !ids.ok()) {
            return WriteProblem(res, req, ids.error());
        }
        auto plan = pricing::plan::PlanRentVsBuy(request.value(), *catalog.value());
        if (!plan.ok()) {
            return WriteProblem(res, req, plan.error());
        }
        if (WantsCsv(req)) {
            return WriteCsv(res, CumulativeCsv(plan.value()));
        }
        const pricing::plan::RentVsBuyPlan& p = plan.value();
        WriteJsonText(res, EncodeRentVsBuyPlan(p, EncodeAssumptions(p.assumptions, DetailOf(req))));
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
        auto paging = ReadPlanPaging(*body, catalog.value()->Describe().version);
        if (!paging.ok()) {
            return WriteProblem(res, req, paging.error());
        }
        if (paging.value().cursor_offset) {
            request.value().offset = *paging.value().cursor_offset;
        }
        auto answer = AnswerTrainingPlan(request.value(), *catalog.value(), ReferenceOf(deps),
                                         TodayUtcDate(), deps.cpus);
        if (!answer.ok()) {
            return WriteProblem(res, req, answer.error());
        }
        answer.value().next_cursor =
            paging.value().Next(answer.value().offset, answer.value().plan.options.size(),
                                answer.value().plan.total_count);
        if (body->contains("offset")) {
            SetDeprecationHeaders(res, kOffsetPaging);
        }
        if (WantsCsv(req)) {
            return WriteCsv(res, OptionsCsv(answer.value().plan));
        }
        const TrainingAnswer& a = answer.value();
        WriteJsonText(res, EncodeTrainingPlan(a, EncodeAssumptions(a.plan.assumptions, DetailOf(req))));
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
        auto paging = ReadPlanPaging(*body, catalog.value()->Describe().version);
        if (!paging.ok()) {
            return WriteProblem(res, req, paging.error());
        }
        auto answer = AnswerInferencePlan(request.value(), *catalog.value(), ReferenceOf(deps),
                                          paging.value().cursor_offset.value_or(0));
        if (!answer.ok()) {
            return WriteProblem(res, req, answer.error());
        }
        answer.value().next_cursor =
            paging.value().Next(answer.value().offset, answer.value().page.options.size(),
                                answer.value().available_count);
        if (WantsCsv(req)) {
            return WriteCsv(res, OptionsCsv(answer.value()));
        }
        const InferenceAnswer& a = answer.value();
        WriteJsonText(res, EncodeInferencePlan(a, EncodeAssumptions(a.page.assumptions, DetailOf(req))));
    });
}

}  // namespace gpucost::http
