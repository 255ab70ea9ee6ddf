#pragma once
// A stored book's owned capacity as a ledger across saved scenarios (docs/billing.md, "The
// owned-capacity ledger"): the saved training and serving scenarios that plan with the book
// draw its reserved instance-hours in the order they were saved, a plan sees only what the
// scenarios ahead of it left, and its answer says what it got and who holds the rest.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/error.hpp"
#include "pricing/owned_ledger.hpp"
#include "service/http/codec/price_book_codec.hpp"
#include "service/http/deps.hpp"
#include "service/http/routes/plan_kinds.hpp"

namespace gpucost::http {

// What a plan answer's recommendation (of plan kind `kind`) runs on owned capacity: its
// offering and nodes over its run (training: the budget's start date for its expected hours;
// serving: the budget window). nullopt when it used none (`owned` null) or is of another kind.
std::optional<pricing::OwnedHolding> HoldingOfAnswer(std::string_view kind,
                                                     const nlohmann::json& answer,
                                                     std::string holder);

// What one saved scenario planning with a stored book will run, read from its saved answer.
struct PlannedRun {
    std::string scenario_id;
    std::string plan_kind;
    std::string team;           // whose imported bills are the scenario's actual spend
    pricing::OwnedHolding run;  // its offering, nodes and hours, owned capacity or not
    // The saved training plan's efficiency_spread_fraction echo (its run time's p90/p50 - 1).
    std::optional<double> duration_spread_fraction;
};

// Every saved training and serving scenario (every team's) planning with `book_id` whose saved
// answer recommends a run, in the order saved: the planned demand a commitment is bought for
// (POST /v1/plans/commitments). Errors: the store's.
pricing::Result<std::vector<PlannedRun>> PlannedRunsOf(const Deps& deps,
                                                       const std::string& book_id);

// The ledger of `book` (a stored book with owned capacity, database mode) for a plan drawing
// after every saved scenario that plans with it (`before_scenario_id` none) or after those
// saved before that id; null for an inline book, a book owning nothing or without a store.
// Every team's scenarios count: the capacity is one, whoever plans on it. Errors: the store's.
pricing::Result<std::shared_ptr<const OwnedLedgerView>> LedgerOf(
    const Deps& deps, const pricing::PriceBook& book,
    std::optional<std::int64_t> before_scenario_id);

// Sets `view.ledger` (LedgerOf for its book); nothing without a book.
pricing::Status UseOwnedLedger(const Deps& deps, PricingView& view,
                               std::optional<std::int64_t> before_scenario_id);

// The plan's JSON answers with `owned_ledger` when `view` has a ledger: the book, the order,
// who holds what ahead of the plan, what its recommendation got, and per month and offering
// the instance-hours reserved, held, got and left unused.
void AddOwnedLedger(PlanOutcome& outcome, const PricingView& view, std::string_view kind);

}  // namespace gpucost::http
