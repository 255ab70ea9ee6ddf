#pragma once
// The plan kinds, one row each: how a kind's request is decoded, its ids checked, planned and
// answered (JSON, CSV, FOCUS). POST /v1/plans/{kind} and saved scenarios (create and evaluate)
// both run a kind through its row, so a new plan kind is one row here and a live plan and a
// saved one cannot drift apart.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/deadline.hpp"
#include "pricing/error.hpp"
#include "pricing/plan_reference.hpp"
#include "service/http/codec/csv_writer.hpp"
#include "service/http/codec/encoded_cache.hpp"
#include "service/http/codec/focus_codec.hpp"
#include "service/http/codec/price_book_codec.hpp"
#include "service/http/deps.hpp"
#include "service/http/routes/calibration.hpp"

namespace gpucost::http {

// What planning needs besides the request: the priced catalog (list prices or through a price
// book), what each accelerator is offered for, the CPUs to plan on, and, for paged kinds, where
// the cursor says the page starts.
struct PlanContext {
    PricingView view;
    const pricing::PlanReference* reference = nullptr;
    unsigned cpus = 1;
    std::optional<std::size_t> cursor_offset;
    // Training plans: the speed measured on saved scenarios (calibration.hpp), when asked for.
    std::optional<Calibration> calibration;
    // When the request's computing budget (Deps::request_budget) runs out.
    pricing::Deadline deadline;
};

// A plan computed for one request, encoded on demand in the form the client asked for.
struct PlanOutcome {
    // Paged kinds: where this page starts, the options on it and all options, from which the
    // route makes the next page's cursor.
    struct Page {
        std::size_t offset = 0;
        std::size_t shown = 0;
        std::size_t total = 0;
    };
    std::optional<Page> page;
    // The request paged by `offset`, renamed to `cursor` in 0.2.0 (Deprecation headers).
    bool deprecated_offset = false;
    // The answer's JSON text: assumptions at `detail`, the pricing basis marked, `next_cursor`.
    std::function<std::string(AssumptionDetail detail, std::optional<std::string> next_cursor)>
        json_text;
    std::function<CsvTable()> csv;  // empty: answered as JSON only (406 to a CSV Accept)
    // FOCUS rows, each row's Tags carrying `tags` too; empty: no FOCUS rows (the route refuses
    // ?format=).
    std::function<CsvTable(const FocusTags& tags)> focus;
};

// A decoded plan request, ready to be planned on a priced catalog.
using PreparedPlan = std::function<pricing::Result<PlanOutcome>(const PlanContext&)>;

struct PlanKind {
    std::string_view name;  // the path under /v1/plans/ and a scenario's `plan`
    bool paged = false;     // takes `cursor` and answers `next_cursor`
    bool focus = false;     // answers FOCUS rows for ?format=focus
    // Decodes the request body (its price book already taken out; library ids looked up in
    // `models`); request errors only, before any catalog is read.
    pricing::Result<PreparedPlan> (*prepare)(const nlohmann::json& body,
                                             const pricing::ModelLibrary& models) = nullptr;
};

// Every plan kind, in the order error messages list them.
const std::vector<PlanKind>& PlanKinds();
// The kind named `name`, or null.
const PlanKind* FindPlanKind(std::string_view name);
// "spot, training, ...": the kinds' names for error messages.
std::string PlanKindNames();

// What each accelerator is offered for and how many instances one customer can get: the
// service's reference, or an empty one when it has none (plan routes and saved scenarios alike).
const pricing::PlanReference& PlanReferenceOf(const Deps& deps);

// A saved scenario's plan request planned as the live route plans it with every assumption
// and no paging, on `catalog` through the request's price book (inline or a stored book's
// latest version: price_book_routes.hpp ResolvePlanBook), with the service's plan reference and
// CPUs, for `caller`: its stored book and calibration are read only as far as the caller may
// read them (docs/database.md, "Teams and who reads what"). Errors are the request's own, with
// fields as in the request.
// A stored book's owned capacity is what the saved scenarios ahead of the plan left it
// (owned_ledger.hpp): every saved one (`ledger_before` none: a scenario being saved), or those
// saved before scenario `ledger_before` (one evaluated again).
pricing::Result<PlanOutcome> PlanSavedRequest(
    const PlanKind& kind, nlohmann::json request, std::shared_ptr<const pricing::Catalog> catalog,
    const Deps& deps, const std::optional<Principal>& caller,
    std::optional<std::int64_t> ledger_before = std::nullopt);
// The same answer as a DOM (what a scenario saves and compares).
pricing::Result<nlohmann::json> AnswerSavedPlan(
    const PlanKind& kind, nlohmann::json request, std::shared_ptr<const pricing::Catalog> catalog,
    const Deps& deps, const std::optional<Principal>& caller,
    std::optional<std::int64_t> ledger_before = std::nullopt);

}  // namespace gpucost::http
