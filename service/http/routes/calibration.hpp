#pragma once
// `calibration` of a training plan (docs/billing.md): the speed measured on
// saved training scenarios (their recorded progress against the accelerator-hours billed for
// them) applied to the plan's time estimates. Taken out of the request body before the kind
// decodes it, as the price book is, because measuring needs the database.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/assumption.hpp"
#include "pricing/error.hpp"
#include "pricing/plan_vs_actual.hpp"
#include "service/http/deps.hpp"
#include "service/http/ports.hpp"

namespace gpucost::http {

// Most scenarios one calibration may name: enough for a team's runs, bounded so that one
// request reads a bounded number of scenarios and their charges. Judgement.
inline constexpr std::size_t kMaxCalibrationScenarios = 20;

struct Calibration {
    double hours_factor = 1.0;  // pricing::CombinedHoursRatio of the scenarios
    // The FOCUS Tags key the scenarios' charges were imported under (POST /v1/actuals
    // ?tag_key=): calibration.tag_key, kActualsTagKey when the request names none.
    std::string tag_key;
    std::vector<std::pair<std::int64_t, pricing::ImpliedSpeed>> scenarios;  // in request order
};

// Removes `calibration` from a training plan `body` and measures it: nullopt when the body has
// none. Errors (kInvalidArgument naming `/calibration/...`): not {"scenario_ids": [...]} with
// 1 to kMaxCalibrationScenarios distinct ids and, optionally, a valid `tag_key`; a scenario
// that does not exist, is not a training plan, has no progress or nothing to measure (no
// charges tagged with it under that key), or whose ratio lies outside [kMinCalibrationRatio,
// kMaxCalibrationRatio] (naming `/calibration/scenario_ids/<i>`). kDatabaseRequired on
// `calibration` without a database (embedded mode keeps no scenarios). Billed hours are actual
// spend: a scenario `caller` may not read the spend of (ReadsTeam: its team's keys, org keys)
// is "no scenario", as an unknown id, and its hours are those its own team imported.
pricing::Result<std::optional<Calibration>> TakeCalibration(const Deps& deps, nlohmann::json& body,
                                                            const std::optional<Principal>& caller);

// The calibration as echoed under `assumptions`: the combined factor, then each scenario's ratio.
pricing::Assumptions CalibrationAssumptions(const Calibration& calibration);

}  // namespace gpucost::http
