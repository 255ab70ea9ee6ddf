#pragma once
// A saved scenario's plan read back as the figures plan vs actual needs (
// docs/billing.md): the recommended option's accelerator charges by month, as the plan's FOCUS
// forecast (pricing/plan/forecast.hpp) spreads them, and the training estimate's
// accelerator-hours and tokens for the implied speed.
#include <map>
#include <optional>
#include <string>

#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/error.hpp"
#include "pricing/plan_vs_actual.hpp"
#include "pricing/price_book.hpp"
#include "service/http/deps.hpp"
#include "service/http/ports.hpp"

namespace gpucost::http {

struct SavedPlanUse {
    // Compute charges of the saved recommendation by month (USD); empty when the saved answer
    // has no recommendation or no budget view (other plan kinds).
    std::map<std::string, pricing::SpendFigures> accelerator_spend_by_month;
    // The same charges by month and kind (committed, or by offering): the planned side of the
    // price effect's split into rate, commitment coverage and mix.
    std::map<std::string, std::vector<pricing::PriceClassSpend>> price_classes_by_month;
    // The saved answer's budget.monthly (training and serving plans) as planned spend by month,
    // with the owned hours the plan used at the commitment's rate added (its FOCUS forecast's
    // Committed rows; budget.owned_usd): `monthly` is the marginal cash and leaves them out,
    // the bill's EffectiveCost counts covered usage at the amortised commitment, so the plan is
    // set against it fully loaded. Empty when the answer has no budget.
    std::map<std::string, pricing::SpendFigures> planned_by_month;
    // Training plans: the recommendation's expected wall-clock hours x its accelerators (what
    // the estimate says the whole run takes) and the request's tokens_b; 0 otherwise.
    double estimated_accelerator_hours = 0;
    double tokens_planned_b = 0;
};

// Reads the saved answer (and, for tokens, the saved request) of `s`. The figures are the
// saved ones, not re-priced: the plan is what was planned. `owned` is the owned capacity the
// plan was made with (SavedOwnedCapacity): the hours it covered count at the commitment's
// rate, as the plan's FOCUS forecast states them (EffectiveCost of a Committed row) and as
// the clouds' exports state covered usage (the amortised commitment), so a plan that used
// a reservation is not read as a price cut when the bill shows it.
SavedPlanUse SavedPlanUseOf(const Scenario& s,
                            const std::vector<pricing::OwnedCapacity>& owned = {});

// The owned capacity of the price book `s` was planned with: the saved request's inline book,
// or its stored book at the version the saved answer names (its `price_book.version`; the
// request's own version when it names one). Empty without a book. Errors as
// ResolvePlanBook (a stored book that can no longer be read, or not by `caller`).
pricing::Result<std::vector<pricing::OwnedCapacity>> SavedOwnedCapacity(
    const Deps& deps, const Scenario& s, const std::optional<Principal>& caller);

// Adds to a GET /v1/scenarios/{id}/actuals answer (`answer`, its `months` already listed) the
// accelerator charges compared: `planned` and `accelerator_split` at the top and in each month
// (the split of pricing::ComparePlanToActual, actual USD charges against the saved plan's
// accelerator charges), the price paid per accelerator-hour beside each `actual`, and
// `progress` (null without recorded progress) with the implied speed, whose actual hours are
// those of `tagged` in every currency (hours are hours).
// The headline `accelerator_split` is over the months billed so far (up to the last month with
// charges), `accelerator_split_full_plan` over the whole plan, and `reforecast` the months not
// billed yet at the run rate billed so far; every split's price effect is split into rate,
// commitment coverage and mix (`price_effect_split`) from `classes`, the tagged charges by kind.
void AddAcceleratorComparison(nlohmann::json& answer, const Scenario& s, const SavedPlanUse& use,
                              const std::map<std::string, pricing::SpendFigures>& actual_usd,
                              const std::vector<ActualMonth>& tagged,
                              const std::vector<ActualClassMonth>& classes);

}  // namespace gpucost::http
