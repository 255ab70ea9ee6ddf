#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <set>

#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/rent_vs_buy.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"
#include "service/http/codec/csv_writer.hpp"
#include "service/http/codec/encoded_cache.hpp"
#include "service/http/codec/estimate_codec.hpp"
#include "service/http/codec/focus_codec.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/plan_codec.hpp"
#include "service/http/codec/plan_cursor.hpp"
#include "service/http/codec/price_book_codec.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/router.hpp"
#include "service/http/routes/as_of.hpp"
#include "service/http/routes/deprecation.hpp"
#include "service/http/transport/api_version.hpp"

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
// `takes_format`: the route answers FOCUS rows for ?format=focus (focus_codec.hpp).
std::optional<json> ReadJsonBody(const httplib::Request& req, httplib::Response& res,
                                 bool takes_format = false) {
    std::set<std::string> allowed = {kAsOfParam, kAssumptionsParam};
    if (takes_format) allowed.insert(kFormatParam);
    if (auto checked = QueryParams(req, allowed).Check(); !checked.ok()) {
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

// The body's inline price book (taken out of it before the plan's decoder reads it); on failure
// writes the problem and returns nullopt.
std::optional<std::optional<pricing::PriceBook>> TakeBook(json& body, const httplib::Request& req,
                                                          httplib::Response& res) {
    auto book = TakePriceBook(body);
    if (!book.ok()) {
        WriteProblem(res, req, book.error());
        return std::nullopt;
    }
    return std::move(book).value();
}

// The plan's catalog snapshot seen through the price book (list prices without one); on
// failure writes the problem and returns nullopt. The view keeps the snapshot alive.
std::optional<PricingView> PlanPricing(const Deps& deps, const httplib::Request& req,
                                       httplib::Response& res,
                                       std::optional<pricing::PriceBook> book) {
    auto catalog = PlanCatalog(deps, req);
    if (!catalog.ok()) {
        WriteProblem(res, req, catalog.error());
        return std::nullopt;
    }
    auto view = ViewThroughBook(catalog.value(), std::move(book));
    if (!view.ok()) {
        WriteProblem(res, req, view.error());
        return std::nullopt;
    }
    SetCatalogVersionHeader(res, catalog.value()->Describe().version);
    return std::move(view).value();
}

std::vector<std::string> NamedIds(std::initializer_list<std::optional<std::string>> ids) {
    std::vector<std::string> out;
    for (const auto& id : ids) {
        if (id) out.push_back(*id);
    }
    return out;
}

const pricing::PlanReference& ReferenceOf(const Deps& deps) {
    static const pricing::PlanReference kEmpty;
    return deps.plan_reference ? *deps.plan_reference : kEmpty;
}

}  // namespace

namespace {

// POST /v1/plans/spot: spot or on-demand for one job (JSON only: 406 to a CSV Accept).
void ServeSpotPlan(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto body = ReadJsonBody(req, res);
    if (!body) {
        return;
    }
    auto book = TakeBook(*body, req, res);
    if (!book) {
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
    auto view = PlanPricing(deps, req, res, std::move(*book));
    if (!view) {
        return;
    }
    const pricing::Catalog& catalog = *view->catalog;
    if (auto ids = CheckBodyIds(request.value(), catalog); !ids.ok()) {
        return WriteProblem(res, req, ids.error());
    }
    auto plan = workload.value() ? pricing::plan::PlanSpotForTraining(request.value(),
                                                                      *workload.value(), catalog)
                                 : pricing::plan::PlanSpot(request.value(), catalog);
    if (!plan.ok()) {
        return WriteProblem(res, req, plan.error());
    }
    if (WantsCsv(req)) {
        // One plan, not rows: a CSV would be a JSON object flattened. Say so rather than
        // answer JSON to a client that asked for CSV (issue 22).
        return WriteTransportProblem(res, req, 406, "not_acceptable",
                                     "a spot plan is answered as application/json only; "
                                     "send Accept: application/json (or none)");
    }
    const pricing::plan::SpotPlan& p = plan.value();
    auto assumptions = EncodeAssumptions(WithBookAssumptions(p.assumptions, *view), DetailOf(req));
    WriteJsonText(res, MarkPricingBasis(EncodeSpotPlan(p, assumptions), *view,
                                        NamedIds({request.value().spot_offering_id,
                                                  request.value().on_demand_offering_id})));
}

// POST /v1/plans/rent-vs-buy: owning against renting over a horizon (CSV: the series).
void ServeRentVsBuyPlan(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto body = ReadJsonBody(req, res);
    if (!body) {
        return;
    }
    auto book = TakeBook(*body, req, res);
    if (!book) {
        return;
    }
    auto request = DecodeRentVsBuyRequest(*body);
    if (!request.ok()) {
        return WriteProblem(res, req, request.error());
    }
    auto view = PlanPricing(deps, req, res, std::move(*book));
    if (!view) {
        return;
    }
    if (auto ids = CheckBodyIds(request.value(), *view->catalog); !ids.ok()) {
        return WriteProblem(res, req, ids.error());
    }
    auto plan = pricing::plan::PlanRentVsBuy(request.value(), *view->catalog);
    if (!plan.ok()) {
        return WriteProblem(res, req, plan.error());
    }
    if (WantsCsv(req)) {
        return WriteCsv(res, CumulativeCsv(plan.value()));
    }
    const pricing::plan::RentVsBuyPlan& p = plan.value();
    auto assumptions = EncodeAssumptions(WithBookAssumptions(p.assumptions, *view), DetailOf(req));
    WriteJsonText(res, MarkPricingBasis(EncodeRentVsBuyPlan(p, assumptions), *view,
                                        NamedIds({request.value().rent.offering_id})));
}

// POST /v1/plans/training: every offering ranked for a run (CSV, FOCUS; paged by cursor).
void ServeTrainingPlan(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto body = ReadJsonBody(req, res, /*takes_format=*/true);
    if (!body) {
        return;
    }
    const json paged_body = *body;  // the cursor's fingerprint covers the price book too
    auto book = TakeBook(*body, req, res);
    if (!book) {
        return;
    }
    auto request = DecodeTrainingPlanRequest(*body);
    if (!request.ok()) {
        return WriteProblem(res, req, request.error());
    }
    auto view = PlanPricing(deps, req, res, std::move(*book));  // options point into it
    if (!view) {
        return;
    }
    auto paging = ReadPlanPaging(paged_body, view->catalog->Describe().version);
    if (!paging.ok()) {
        return WriteProblem(res, req, paging.error());
    }
    if (paging.value().cursor_offset) {
        request.value().offset = *paging.value().cursor_offset;
    }
    auto answer = AnswerTrainingPlan(request.value(), *view->catalog, ReferenceOf(deps),
                                     TodayUtcDate(), deps.cpus);
    if (!answer.ok()) {
        return WriteProblem(res, req, answer.error());
    }
    answer.value().next_cursor = paging.value().Next(
        answer.value().offset, answer.value().plan.options.size(), answer.value().plan.total_count);
    if (body->contains("offset")) {
        SetDeprecationHeaders(res, kOffsetPaging);
    }
    auto focus = WantsFocus(req);
    if (!focus.ok()) {
        return WriteProblem(res, req, focus.error());
    }
    if (focus.value()) {
        return WriteCsv(res, TrainingFocusCsv(answer.value().plan, request.value(), *view));
    }
    if (WantsCsv(req)) {
        return WriteCsv(res, OptionsCsv(answer.value().plan));
    }
    const TrainingAnswer& a = answer.value();
    auto assumptions =
        EncodeAssumptions(WithBookAssumptions(a.plan.assumptions, *view), DetailOf(req));
    WriteJsonText(res, MarkPricingBasis(EncodeTrainingPlan(a, assumptions), *view));
}

// POST /v1/plans/inference: offerings sized for serving traffic (CSV, FOCUS; cursor).
void ServeInferencePlan(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto body = ReadJsonBody(req, res, /*takes_format=*/true);
    if (!body) {
        return;
    }
    const json paged_body = *body;  // the cursor's fingerprint covers the price book too
    auto book = TakeBook(*body, req, res);
    if (!book) {
        return;
    }
    auto request = DecodeInferencePlanRequest(*body);
    if (!request.ok()) {
        return WriteProblem(res, req, request.error());
    }
    auto view = PlanPricing(deps, req, res, std::move(*book));  // options point into it
    if (!view) {
        return;
    }
    auto paging = ReadPlanPaging(paged_body, view->catalog->Describe().version);
    if (!paging.ok()) {
        return WriteProblem(res, req, paging.error());
    }
    auto answer = AnswerInferencePlan(request.value(), *view->catalog, ReferenceOf(deps),
                                      paging.value().cursor_offset.value_or(0));
    if (!answer.ok()) {
        return WriteProblem(res, req, answer.error());
    }
    answer.value().next_cursor = paging.value().Next(
        answer.value().offset, answer.value().page.options.size(), answer.value().available_count);
    auto focus = WantsFocus(req);
    if (!focus.ok()) {
        return WriteProblem(res, req, focus.error());
    }
    if (focus.value()) {
        const InferenceAnswer& a = answer.value();
        return WriteCsv(res, ServingFocusCsv(a.recommendation, a.catalog_version,
                                             TodayUtcDate().substr(0, 7), *view));
    }
    if (WantsCsv(req)) {
        return WriteCsv(res, OptionsCsv(answer.value()));
    }
    const InferenceAnswer& a = answer.value();
    auto assumptions =
        EncodeAssumptions(WithBookAssumptions(a.page.assumptions, *view), DetailOf(req));
    WriteJsonText(res, MarkPricingBasis(EncodeInferencePlan(a, assumptions), *view));
}

}  // namespace

void AddPlanRoutes(RouteTable& routes, const Deps& deps) {
    routes.Post("/v1/plans/spot", [deps](const httplib::Request& req, httplib::Response& res) {
        ServeSpotPlan(deps, req, res);
    });

    routes.Post("/v1/plans/rent-vs-buy",
                [deps](const httplib::Request& req, httplib::Response& res) {
                    ServeRentVsBuyPlan(deps, req, res);
                });

    routes.Post("/v1/plans/training", [deps](const httplib::Request& req, httplib::Response& res) {
        ServeTrainingPlan(deps, req, res);
    });

    routes.Post("/v1/plans/inference", [deps](const httplib::Request& req, httplib::Response& res) {
        ServeInferencePlan(deps, req, res);
    });
}

}  // namespace gpucost::http
