#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <set>

#include "pricing/plan/commitment.hpp"
#include "service/http/codec/commitment_codec.hpp"
#include "service/http/codec/csv_writer.hpp"
#include "service/http/codec/encoded_cache.hpp"
#include "service/http/codec/estimate_codec.hpp"
#include "service/http/codec/focus_codec.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/model_codec.hpp"
#include "service/http/codec/plan_codec.hpp"
#include "service/http/codec/plan_cursor.hpp"
#include "service/http/codec/price_book_codec.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/ports.hpp"
#include "service/http/route_table.hpp"
#include "service/http/routes/as_of.hpp"
#include "service/http/routes/auth.hpp"
#include "service/http/routes/deprecation.hpp"
#include "service/http/routes/owned_ledger.hpp"
#include "service/http/routes/plan_kinds.hpp"
#include "service/http/routes/price_book_routes.hpp"
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

// The plan's catalog snapshot seen through the price book (list prices without one); on
// failure writes the problem and returns nullopt. The view keeps the snapshot alive.
// `priced_on`: the day the book's rules must be in force (PlanPricingDay).
std::optional<PricingView> PlanPricing(const Deps& deps, const httplib::Request& req,
                                       httplib::Response& res, PlanBook book,
                                       const std::optional<std::string>& priced_on) {
    auto catalog = PlanCatalog(deps, req);
    if (!catalog.ok()) {
        WriteProblem(res, req, catalog.error());
        return std::nullopt;
    }
    auto view = ViewThroughBook(catalog.value(), std::move(book.book), priced_on);
    if (!view.ok()) {
        WriteProblem(res, req, view.error());
        return std::nullopt;
    }
    view.value().from_key_default = book.from_key_default;
    // A live plan sees what every saved scenario already holds of the book's owned capacity.
    if (auto ledger = UseOwnedLedger(deps, view.value(), std::nullopt); !ledger.ok()) {
        WriteProblem(res, req, ledger.error());
        return std::nullopt;
    }
    SetCatalogVersionHeader(res, catalog.value()->Describe().version);
    return std::move(view).value();
}

// Where a paged kind's page starts and the cursor of the next one; on failure writes the
// problem and returns nullopt. Unpaged kinds get an empty paging.
std::optional<std::optional<PlanPaging>> ReadPaging(const PlanKind& kind, const json& paged_body,
                                                    const PricingView& view,
                                                    const httplib::Request& req,
                                                    httplib::Response& res) {
    if (!kind.paged) {
        return std::optional<PlanPaging>();
    }
    auto paging = ReadPlanPaging(paged_body, view.catalog->Describe().version);
    if (!paging.ok()) {
        WriteProblem(res, req, paging.error());
        return std::nullopt;
    }
    return std::optional<PlanPaging>(std::move(paging).value());
}

// The outcome in the form asked for: FOCUS rows (?format=focus), CSV (Accept), or JSON.
void WriteOutcome(const PlanKind& kind, const PlanOutcome& outcome,
                  const std::optional<std::string>& next_cursor, const httplib::Request& req,
                  httplib::Response& res) {
    if (kind.focus) {
        auto focus = WantsFocus(req);
        if (!focus.ok()) {
            return WriteProblem(res, req, focus.error());
        }
        if (focus.value()) {
            return WriteCsv(res, outcome.focus({}));
        }
    }
    if (WantsCsv(req)) {
        if (!outcome.csv) {
            // One plan, not rows: a CSV would be a JSON object flattened. Say so rather than
            // answer JSON to a client that asked for CSV.
            return WriteNotAcceptable(res, req,
                                      "a " + std::string(kind.name) +
                                          " plan is answered as application/json only; "
                                          "send Accept: application/json (or none)");
        }
        return WriteCsv(res, outcome.csv());
    }
    WriteJsonText(res, outcome.json_text(DetailOf(req), next_cursor));
}

// POST /v1/plans/{kind}: the body read, its price book taken out, decoded by the kind, priced on
// the catalog (current or ?as_of=) through the book, paged, planned and answered.
void ServePlan(const PlanKind& kind, const Deps& deps, const httplib::Request& req,
               httplib::Response& res) {
    const auto deadline = pricing::Deadline::After(deps.request_budget);
    auto body = ReadJsonBody(req, res, kind.focus);
    if (!body) {
        return;
    }
    // The cursor's fingerprint covers the price book too, a key's default book included.
    json paged_body = kind.paged ? *body : json();
    auto book = TakePlanPriceBook(deps, *body, req, res);
    if (!book) {
        return;
    }
    if (kind.paged && book->from_key_default) {
        paged_body["price_book"] = {{"id", book->book->id}, {"version", book->book->version}};
    }
    // Calibration reads saved scenarios' spend, which is confidential: a key of their team (or
    // an org key).
    std::optional<Calibration> calibration;
    if (kind.name == "training") {
        std::optional<Principal> caller;
        if (body->contains("calibration") && deps.keys) {
            caller = RequireKey(deps, req, res, KeyScope::kRead);
            if (!caller) return;
        }
        auto taken = TakeCalibration(deps, *body, caller);
        if (!taken.ok()) return WriteProblem(res, req, taken.error());
        calibration = std::move(taken).value();
    }
    auto as_of = QueryParams(req, {kAsOfParam, kAssumptionsParam}).One(kAsOfParam);
    auto priced_on = PlanPricingDay(*body, as_of.ok() ? as_of.value() : std::nullopt);
    auto prepared = kind.prepare(*body, ModelsOf(deps));
    if (!prepared.ok()) {
        return WriteProblem(res, req, prepared.error());
    }
    auto view = PlanPricing(deps, req, res, std::move(*book), priced_on);
    if (!view) {
        return;
    }
    auto paging = ReadPaging(kind, paged_body, *view, req, res);
    if (!paging) {
        return;
    }
    const std::optional<PlanPaging>& pages = *paging;
    auto outcome =
        prepared.value()(PlanContext{*view, &PlanReferenceOf(deps), deps.cpus,
                                     pages ? pages->cursor_offset : std::optional<std::size_t>(),
                                     std::move(calibration), deadline});
    if (!outcome.ok()) {
        return WriteProblem(res, req, outcome.error());
    }
    AddOwnedLedger(outcome.value(), *view, kind.name);
    std::optional<std::string> next_cursor;
    if (const auto& page = outcome.value().page; pages && page) {
        next_cursor = pages->Next(page->offset, page->shown, page->total);
    }
    if (outcome.value().deprecated_offset) {
        SetDeprecationHeaders(res, kOffsetPaging);
    }
    WriteOutcome(kind, outcome.value(), next_cursor, req, res);
}

// POST /v1/plans/commitments answers as the plan kinds do (JSON, CSV, ?format=focus), but is
// no kind: it plans over saved scenarios, so it is not itself saved as one.
constexpr PlanKind kCommitmentsRow{"commitments", false, true, nullptr};

// The saved runs as planned demand on `catalog`: each offering found by id (null when the
// catalog no longer has it, which the plan reports).
std::vector<pricing::plan::PlannedDemand> DemandOf(const std::vector<PlannedRun>& runs,
                                                   const pricing::Catalog& catalog) {
    std::vector<pricing::plan::PlannedDemand> out;
    for (const PlannedRun& r : runs) {
        const pricing::Offering* offering = nullptr;
        for (const pricing::Offering& o : catalog.Offerings()) {
            if (pricing::IdKey(o.id) == pricing::IdKey(r.run.offering_id)) offering = &o;
        }
        out.push_back({r.scenario_id, r.plan_kind, offering, r.run.nodes, r.run.start_hour,
                       r.run.end_hour, r.duration_spread_fraction});
    }
    return out;
}

// The book's owned offerings month by month against the saved runs: held by the ledger, planned,
// and from each run's imported bill (tagged with its id, as plan vs actual reads it) the
// instance-hours of the owned shape billed in all and as Committed.
pricing::Result<std::vector<pricing::plan::OwnedMonthUse>> OwnedUseOf(
    const Deps& deps, const PricingView& view, const std::vector<PlannedRun>& runs,
    const std::vector<pricing::plan::PlannedDemand>& demand) {
    const pricing::Catalog& catalog = *view.catalog;
    const auto& owned = view.priced->Book().owned_capacity;
    std::vector<pricing::OwnedDraw> draws;
    if (view.ledger) draws = view.ledger->ledger.draws;
    auto uses = pricing::plan::OwnedUseByMonth(catalog, owned, draws, demand);
    if (!deps.actuals || uses.empty()) return uses;
    for (const PlannedRun& r : runs) {
        auto classes = deps.actuals->ClassesTagged(ports::kActualsTagKey, r.scenario_id, r.team);
        if (!classes.ok()) return classes.error();
        for (const ports::ActualClassMonth& c : classes.value()) {
            auto billed = catalog.FindOffering(c.offering_id);
            if (!billed.ok()) continue;
            for (pricing::plan::OwnedMonthUse& u : uses) {
                auto own = catalog.FindOffering(u.offering_id);
                if (u.month != c.month || !own.ok() ||
                    pricing::IdKey(own.value().instance_type) !=
                        pricing::IdKey(billed.value().instance_type) ||
                    pricing::IdKey(own.value().region) != pricing::IdKey(billed.value().region)) {
                    continue;
                }
                const double hours = c.accelerator_hours / billed.value().accelerator_count;
                u.actual_instance_hours += hours;
                if (c.pricing_category == "Committed") u.actual_committed_instance_hours += hours;
            }
        }
    }
    for (pricing::plan::OwnedMonthUse& u : uses) {
        if (u.actual_instance_hours <= 0) continue;
        u.actual_utilisation = u.actual_committed_instance_hours / u.reserved_instance_hours;
        u.actual_coverage = u.actual_committed_instance_hours / u.actual_instance_hours;
    }
    return uses;
}

// POST /v1/plans/commitments: the commitments to buy for the planned demand of the saved
// scenarios that plan with a stored book (docs/billing.md).
void ServeCommitments(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto body = ReadJsonBody(req, res, true);
    if (!body) return;
    auto book = TakePlanPriceBook(deps, *body, req, res);
    if (!book) return;
    if (!book->book || book->book->id.empty()) {
        return WriteProblem(
            res, req,
            pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                               "a stored price book (its id): the saved scenarios planning with "
                               "it are the demand",
                               "/price_book"));
    }
    auto options = DecodeCommitmentRequest(*body);
    if (!options.ok()) return WriteProblem(res, req, options.error());
    const std::string book_id = book->book->id;
    // The book's rules in force on the commitments' start date (else today).
    auto view = PlanPricing(deps, req, res, std::move(*book), PlanPricingDay(*body, std::nullopt));
    if (!view) return;
    auto runs = PlannedRunsOf(deps, book_id);
    if (!runs.ok()) return WriteProblem(res, req, runs.error());
    pricing::plan::CommitmentRequest request;
    request.demand = DemandOf(runs.value(), *view->catalog);
    request.owned = view->priced->Book().owned_capacity;
    request.start_hour = options.value().start_hour;
    request.slip_days_given = options.value().slip_days.has_value();
    request.slip_days = options.value().slip_days.value_or(pricing::plan::kDefaultSlipDays);
    auto plan = std::make_shared<const pricing::plan::CommitmentPlan>(
        pricing::plan::RecommendCommitments(*view->catalog, request));
    auto owned_use = OwnedUseOf(deps, *view, runs.value(), request.demand);
    if (!owned_use.ok()) return WriteProblem(res, req, owned_use.error());
    PlanOutcome outcome;
    // The book's echo lists the price of every offering the commitments compare.
    std::vector<std::string> named;
    for (const pricing::plan::CommitmentLine& l : plan->lines) {
        named.push_back(l.on_demand->id);
        named.push_back(l.commitment->id);
    }
    outcome.json_text = [plan, demand = request.demand, use = std::move(owned_use).value(),
                         v = *view,
                         named](AssumptionDetail detail, const std::optional<std::string>&) {
        return MarkPricingBasis(
            EncodeCommitmentPlan(
                *plan, demand, use,
                EncodeAssumptions(WithBookAssumptions(plan->assumptions, v), detail)),
            v, named);
    };
    outcome.csv = [plan] { return CommitmentCsv(*plan); };
    outcome.focus = [plan, v = *view](const FocusTags&) {
        return CommitmentFocusCsv(*plan, v, v.catalog->Describe().version);
    };
    WriteOutcome(kCommitmentsRow, outcome, std::nullopt, req, res);
}

}  // namespace

void AddPlanRoutes(RouteTable& routes, const Deps& deps) {
    routes.Post("/v1/plans/commitments",
                [deps](const httplib::Request& req, httplib::Response& res) {
                    ServeCommitments(deps, req, res);
                });
    for (const PlanKind& kind : PlanKinds()) {
        routes.Post("/v1/plans/" + std::string(kind.name),
                    [deps, row = &kind](const httplib::Request& req, httplib::Response& res) {
                        ServePlan(*row, deps, req, res);
                    });
    }
}

}  // namespace gpucost::http
