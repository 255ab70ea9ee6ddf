#include "service/http/routes/plan_kinds.hpp"

#include <initializer_list>
#include <utility>

#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/rent_vs_buy.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"
#include "pricing/training_recipe.hpp"
#include "service/http/codec/focus_codec.hpp"
#include "service/http/codec/model_codec.hpp"
#include "service/http/codec/plan_codec.hpp"
#include "service/http/routes/owned_ledger.hpp"
#include "service/http/routes/price_book_routes.hpp"

namespace gpucost::http {
namespace {

using nlohmann::json;
using pricing::Result;

std::vector<std::string> NamedIds(std::initializer_list<std::optional<std::string>> ids) {
    std::vector<std::string> out;
    for (const auto& id : ids) {
        if (id) out.push_back(*id);
    }
    return out;
}

// The assumptions as echoed: the planner's, then the price book's rules.
std::string AssumptionsJson(const pricing::Assumptions& assumptions, const PricingView& view,
                            AssumptionDetail detail) {
    return EncodeAssumptions(WithBookAssumptions(assumptions, view), detail);
}

// POST /v1/plans/spot: spot or on-demand for one job, or for a training workload it estimates.
Result<PreparedPlan> PrepareSpot(const json& body, const pricing::ModelLibrary& models) {
    auto request = DecodeSpotPlanRequest(body, {"workload"});
    if (!request.ok()) {
        return request.error();
    }
    auto workload = DecodeSpotWorkload(body, models);
    if (!workload.ok()) {
        return workload.error();
    }
    if (workload.value()) {
        auto recipe = pricing::ResolveTrainingRecipe(TrainingRecipesInUse(), *workload.value());
        if (!recipe.ok()) {
            pricing::Error e = recipe.error();
            e.field = "/workload" + e.field;  // the workload is decoded as if it were the body
            return e;
        }
    }
    return PreparedPlan([request = std::move(request).value(),
                         workload = std::move(workload).value()](
                            const PlanContext& context) -> Result<PlanOutcome> {
        const pricing::Catalog& catalog = *context.view.catalog;
        if (auto ids = CheckBodyIds(request, catalog); !ids.ok()) {
            return ids.error();
        }
        auto dated = request;
        dated.today = TodayUtcDate();
        dated.owned_capacity = OwnedOf(context.view);
        std::optional<pricing::estimate::TrainingRequest> timed = workload;
        if (timed) timed->deadline = context.deadline;  // its estimate's layout search
        auto plan = timed ? pricing::plan::PlanSpotForTraining(dated, *timed, catalog)
                          : pricing::plan::PlanSpot(dated, catalog);
        if (!plan.ok()) {
            return plan.error();
        }
        auto p = std::make_shared<const pricing::plan::SpotPlan>(std::move(plan).value());
        PlanOutcome out;
        out.json_text = [p, view = context.view,
                         named =
                             NamedIds({request.spot_offering_id, request.on_demand_offering_id})](
                            AssumptionDetail detail, const std::optional<std::string>&) {
            return MarkPricingBasis(
                EncodeSpotPlan(*p, AssumptionsJson(p->assumptions, view, detail)), view, named);
        };
        return out;
    });
}

// POST /v1/plans/rent-vs-buy: owning against renting over a horizon (CSV: the series; FOCUS:
// both paths by month from this month).
Result<PreparedPlan> PrepareRentVsBuy(const json& body,
                                      const pricing::ModelLibrary& /*models: no model*/) {
    auto request = DecodeRentVsBuyRequest(body);
    if (!request.ok()) {
        return request.error();
    }
    return PreparedPlan(
        [request = std::move(request).value()](const PlanContext& context) -> Result<PlanOutcome> {
            const pricing::Catalog& catalog = *context.view.catalog;
            if (auto ids = CheckBodyIds(request, catalog); !ids.ok()) {
                return ids.error();
            }
            auto dated = request;
            dated.today = TodayUtcDate();
            dated.owned_capacity = OwnedOf(context.view);
            auto plan = pricing::plan::PlanRentVsBuy(dated, catalog);
            if (!plan.ok()) {
                return plan.error();
            }
            auto p = std::make_shared<const pricing::plan::RentVsBuyPlan>(std::move(plan).value());
            PlanOutcome out;
            out.json_text = [p, view = context.view, named = NamedIds({request.rent.offering_id})](
                                AssumptionDetail detail, const std::optional<std::string>&) {
                return MarkPricingBasis(
                    EncodeRentVsBuyPlan(*p, AssumptionsJson(p->assumptions, view, detail)), view,
                    named);
            };
            out.csv = [p] { return CumulativeCsv(*p); };
            out.focus = [p, view = context.view,
                         rent_id = request.rent.offering_id](const FocusTags& tags) {
                return RentVsBuyFocusCsv(*p, rent_id, TodayUtcDate().substr(0, 7), view, tags);
            };
            return out;
        });
}

// POST /v1/plans/training: every offering ranked for a run (CSV, FOCUS; paged by cursor).
Result<PreparedPlan> PrepareTraining(const json& body, const pricing::ModelLibrary& models) {
    auto request = DecodeTrainingPlanRequest(body, models);
    if (!request.ok()) {
        return request.error();
    }
    if (auto recipe =
            pricing::ResolveTrainingRecipe(TrainingRecipesInUse(), request.value().workload);
        !recipe.ok()) {
        return recipe.error();
    }
    return PreparedPlan([request = std::move(request).value(),
                         deprecated_offset = body.contains("offset")](
                            const PlanContext& context) -> Result<PlanOutcome> {
        auto paged = request;
        paged.owned_capacity = OwnedOf(context.view);
        if (context.cursor_offset) {
            paged.offset = *context.cursor_offset;
        }
        if (context.calibration) {
            paged.calibration_hours_factor = context.calibration->hours_factor;
        }
        paged.deadline = context.deadline;
        // The options point into the view's catalog, which the closures below keep alive.
        auto answer = AnswerTrainingPlan(paged, *context.view.catalog, *context.reference,
                                         TodayUtcDate(), context.cpus);
        if (!answer.ok()) {
            return answer.error();
        }
        auto a = std::make_shared<TrainingAnswer>(std::move(answer).value());
        if (context.calibration) {
            for (auto& c : CalibrationAssumptions(*context.calibration)) {
                a->plan.assumptions.push_back(std::move(c));
            }
        }
        PlanOutcome out;
        out.page = PlanOutcome::Page{a->offset, a->plan.options.size(), a->plan.total_count};
        out.deprecated_offset = deprecated_offset;
        out.json_text = [a, view = context.view](AssumptionDetail detail,
                                                 std::optional<std::string> next_cursor) {
            a->next_cursor = std::move(next_cursor);
            return MarkPricingBasis(
                EncodeTrainingPlan(*a, AssumptionsJson(a->plan.assumptions, view, detail)), view);
        };
        out.csv = [a] { return OptionsCsv(a->plan); };
        out.focus = [a, paged, view = context.view](const FocusTags& tags) {
            return TrainingFocusCsv(a->plan, paged, view, tags);
        };
        return out;
    });
}

// POST /v1/plans/inference: offerings sized for serving traffic (CSV, FOCUS; cursor), on the
// price book's owned capacity first.
Result<PreparedPlan> PrepareInference(const json& body, const pricing::ModelLibrary& models) {
    auto request = DecodeInferencePlanRequest(body, models);
    if (!request.ok()) {
        return request.error();
    }
    return PreparedPlan([request = std::move(request).value()](
                            const PlanContext& context) -> Result<PlanOutcome> {
        auto owned = request;
        owned.owned_capacity = OwnedOf(context.view);
        owned.deadline = context.deadline;
        auto answer = AnswerInferencePlan(owned, *context.view.catalog, *context.reference,
                                          context.cursor_offset.value_or(0));
        if (!answer.ok()) {
            return answer.error();
        }
        auto a = std::make_shared<InferenceAnswer>(std::move(answer).value());
        PlanOutcome out;
        out.page = PlanOutcome::Page{a->offset, a->page.options.size(), a->available_count};
        out.json_text = [a, view = context.view](AssumptionDetail detail,
                                                 std::optional<std::string> next_cursor) {
            a->next_cursor = std::move(next_cursor);
            // Owned capacity is applied (or, covering no option, warned in `warnings`).
            return MarkPricingBasis(
                EncodeInferencePlan(*a, AssumptionsJson(a->page.assumptions, view, detail)), view);
        };
        out.csv = [a] { return OptionsCsv(*a); };
        out.focus = [a, view = context.view](const FocusTags& tags) {
            return ServingFocusCsv(a->recommendation, a->budget, a->catalog_version, view, tags);
        };
        return out;
    });
}

}  // namespace

const std::vector<PlanKind>& PlanKinds() {
    static const std::vector<PlanKind> kinds = {
        {"spot", /*paged=*/false, /*focus=*/false, &PrepareSpot},
        {"training", /*paged=*/true, /*focus=*/true, &PrepareTraining},
        {"inference", /*paged=*/true, /*focus=*/true, &PrepareInference},
        {"rent-vs-buy", /*paged=*/false, /*focus=*/true, &PrepareRentVsBuy},
    };
    return kinds;
}

const PlanKind* FindPlanKind(std::string_view name) {
    for (const auto& kind : PlanKinds()) {
        if (kind.name == name) {
            return &kind;
        }
    }
    return nullptr;
}

std::string PlanKindNames() {
    std::string names;
    for (const auto& kind : PlanKinds()) {
        names += (names.empty() ? "" : ", ") + std::string(kind.name);
    }
    return names;
}

const pricing::PlanReference& PlanReferenceOf(const Deps& deps) {
    static const pricing::PlanReference kNone;
    return deps.plan_reference ? *deps.plan_reference : kNone;
}

Result<PlanOutcome> PlanSavedRequest(const PlanKind& kind, json request,
                                     std::shared_ptr<const pricing::Catalog> catalog,
                                     const Deps& deps, const std::optional<Principal>& caller,
                                     std::optional<std::int64_t> ledger_before) {
    auto book = ResolvePlanBook(deps, request, caller);
    if (!book.ok()) {
        return book.error();
    }
    std::optional<Calibration> calibration;
    if (kind.name == "training") {
        auto taken = TakeCalibration(deps, request, caller);
        if (!taken.ok()) return taken.error();
        calibration = std::move(taken).value();
    }
    auto priced_on = PlanPricingDay(request, std::nullopt);
    auto prepared = kind.prepare(request, ModelsOf(deps));
    if (!prepared.ok()) {
        return prepared.error();
    }
    auto view = ViewThroughBook(std::move(catalog), std::move(book).value(), priced_on);
    if (!view.ok()) {
        return view.error();
    }
    if (auto ledger = UseOwnedLedger(deps, view.value(), ledger_before); !ledger.ok()) {
        return ledger.error();
    }
    auto outcome = prepared.value()(PlanContext{view.value(), &PlanReferenceOf(deps), deps.cpus,
                                                std::nullopt, std::move(calibration),
                                                pricing::Deadline::After(deps.request_budget)});
    if (outcome.ok()) AddOwnedLedger(outcome.value(), view.value(), kind.name);
    return outcome;
}

Result<json> AnswerSavedPlan(const PlanKind& kind, json request,
                             std::shared_ptr<const pricing::Catalog> catalog, const Deps& deps,
                             const std::optional<Principal>& caller,
                             std::optional<std::int64_t> ledger_before) {
    auto outcome =
        PlanSavedRequest(kind, std::move(request), std::move(catalog), deps, caller, ledger_before);
    if (!outcome.ok()) {
        return outcome.error();
    }
    // Saved scenarios keep the answer as a DOM; reading the text back keeps one encoder.
    return json::parse(outcome.value().json_text(AssumptionDetail::kFull, std::nullopt));
}

}  // namespace gpucost::http
