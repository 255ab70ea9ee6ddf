#include "service/http/routes/calibration.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_text.hpp"
#include "service/http/ports.hpp"
#include "service/http/routes/scenario_plan_use.hpp"
#include "service/http/routes/tag_key.hpp"

namespace gpucost::http {
namespace {

using json = nlohmann::json;
using pricing::ErrorCode;
using pricing::MakeError;

constexpr char kMember[] = "calibration";

pricing::Error InvalidCalibration(const std::string& field, const std::string& message) {
    return MakeError(ErrorCode::kInvalidArgument, field + ": " + message, field);
}

std::string IdField(std::size_t index) {
    return "/calibration/scenario_ids/" + std::to_string(index);
}

// {"scenario_ids": ["3", "7"], "tag_key": "team"}: the ids in order, and the tag key the
// scenarios' charges were imported under (kActualsTagKey when absent).
struct CalibrationRequest {
    std::vector<std::int64_t> scenario_ids;
    std::string tag_key = kActualsTagKey;
};

pricing::Result<std::string> ReadTagKey(const json& calibration) {
    const auto given = calibration.find("tag_key");
    if (given == calibration.end()) return std::string(kActualsTagKey);
    const std::string field = "/calibration/tag_key";
    if (!given->is_string())
        return InvalidCalibration(field, "must be a string (a FOCUS Tags key)");
    auto checked = CheckActualsTagKey(given->get<std::string>(), field);
    if (!checked.ok()) return checked.error();
    return given->get<std::string>();
}

pricing::Result<CalibrationRequest> ReadRequest(const json& calibration) {
    if (!calibration.is_object()) return InvalidCalibration("/calibration", "must be an object");
    for (const auto& [key, value] : calibration.items()) {
        if (key != "scenario_ids" && key != "tag_key") {
            return InvalidCalibration("/calibration/" + key,
                                      "unknown member; give scenario_ids (and tag_key)");
        }
    }
    CalibrationRequest out;
    auto tag_key = ReadTagKey(calibration);
    if (!tag_key.ok()) return tag_key.error();
    out.tag_key = tag_key.value();
    const auto ids = calibration.find("scenario_ids");
    if (ids == calibration.end() || !ids->is_array() || ids->empty() ||
        ids->size() > kMaxCalibrationScenarios) {
        return InvalidCalibration("/calibration/scenario_ids",
                                  "must list 1 to " + std::to_string(kMaxCalibrationScenarios) +
                                      " saved training scenario ids");
    }
    std::vector<std::int64_t>& ids_out = out.scenario_ids;
    for (std::size_t i = 0; i < ids->size(); ++i) {
        const json& id = (*ids)[i];
        std::int64_t value = 0;
        const std::string text = id.is_string() ? id.get<std::string>() : std::string();
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value <= 0) {
            return InvalidCalibration(IdField(i),
                                      "must be a scenario id (a string such as \"12\")");
        }
        if (std::find(ids_out.begin(), ids_out.end(), value) != ids_out.end()) {
            return InvalidCalibration(IdField(i), "scenario " + text + " is listed twice");
        }
        ids_out.push_back(value);
    }
    return out;
}

// One scenario's implied speed, or why it gives none.
pricing::Result<pricing::ImpliedSpeed> MeasureScenario(const Deps& deps,
                                                       const std::optional<Principal>& caller,
                                                       std::int64_t id, const std::string& tag_key,
                                                       const std::string& field) {
    const std::string name = "scenario " + std::to_string(id);
    auto found = deps.scenarios->GetScenario(id);
    if (found.ok() && !ReadsTeam(caller, found.value().team)) {
        found = MakeError(ErrorCode::kNotFound, "", "id");  // not there for this caller
    }
    if (!found.ok()) {
        if (found.error().code == ErrorCode::kNotFound) {
            return InvalidCalibration(field, "no " + name);
        }
        return found.error();
    }
    const Scenario& s = found.value();
    if (s.plan_kind != "training") {
        return InvalidCalibration(field, name + " is a '" + s.plan_kind +
                                             "' plan; calibration measures " +
                                             "training scenarios");
    }
    if (!s.progress) {
        return InvalidCalibration(field, name + " has no progress recorded (PUT /v1/scenarios/" +
                                             std::to_string(id) + "/progress)");
    }
    auto tagged = deps.actuals->MonthsTagged(tag_key, std::to_string(id), s.team);
    if (!tagged.ok()) return tagged.error();
    double actual_hours = 0;
    for (const ActualMonth& m : tagged.value()) actual_hours += m.accelerator_hours;
    const SavedPlanUse use = SavedPlanUseOf(s);
    auto speed = pricing::ImpliedSpeedOf(s.progress->tokens_done_b, use.tokens_planned_b,
                                         use.estimated_accelerator_hours, actual_hours);
    if (!speed) {
        return InvalidCalibration(field,
                                  name + " has nothing to measure yet (no tokens done, no hours " +
                                      "planned, or no accelerator charges tagged with it)");
    }
    const double ratio = speed->actual_to_estimated_hours_ratio;
    if (ratio < pricing::kMinCalibrationRatio || ratio > pricing::kMaxCalibrationRatio) {
        return InvalidCalibration(field,
                                  name + " measures " + ToJsonText(Num(ratio)) +
                                      " actual/estimated accelerator-hours, outside [" +
                                      ToJsonText(Num(pricing::kMinCalibrationRatio)) + ", " +
                                      ToJsonText(Num(pricing::kMaxCalibrationRatio)) +
                                      "]: check its tags and progress before learning from it");
    }
    return *speed;
}

}  // namespace

pricing::Result<std::optional<Calibration>> TakeCalibration(
    const Deps& deps, json& body, const std::optional<Principal>& caller) {
    if (!body.is_object() || !body.contains(kMember)) return std::optional<Calibration>();
    const json given = body[kMember];
    body.erase(kMember);
    if (!deps.keys || !deps.scenarios || !deps.actuals) {
        return MakeError(ErrorCode::kDatabaseRequired,
                         "calibration measures saved scenarios against their actual spend, kept "
                         "only in PostgreSQL mode: start gpucost with DATABASE_URL",
                         "/calibration");
    }
    auto request = ReadRequest(given);
    if (!request.ok()) return request.error();
    Calibration out;
    out.tag_key = request.value().tag_key;
    std::vector<pricing::ImpliedSpeed> speeds;
    const std::vector<std::int64_t>& ids = request.value().scenario_ids;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        auto speed = MeasureScenario(deps, caller, ids[i], out.tag_key, IdField(i));
        if (!speed.ok()) return speed.error();
        speeds.push_back(speed.value());
        out.scenarios.emplace_back(ids[i], speed.value());
    }
    out.hours_factor = pricing::CombinedHoursRatio(speeds);
    return std::optional<Calibration>(std::move(out));
}

pricing::Assumptions CalibrationAssumptions(const Calibration& calibration) {
    pricing::Assumptions out;
    // The tag key is named where it is not the default one, so answers without it read as
    // before.
    const std::string tag_key = calibration.tag_key == kActualsTagKey
                                    ? std::string()
                                    : ", calibration.tag_key " + calibration.tag_key;
    std::string ids;
    for (const auto& [id, speed] : calibration.scenarios) {
        ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    }
    out.push_back({"calibration_hours_factor", calibration.hours_factor, "ratio",
                   "Every estimate's hours multiplied by this: the scenarios' actual over "
                   "estimated accelerator-hours, weighted by estimated hours",
                   std::string("request: calibration.scenario_ids ") + ids + tag_key});
    for (const auto& [id, speed] : calibration.scenarios) {
        out.push_back({"calibration_ratio_scenario_" + std::to_string(id),
                       speed.actual_to_estimated_hours_ratio, "ratio",
                       "Scenario " + std::to_string(id) + ": " +
                           ToJsonText(Num(speed.actual_accelerator_hours)) +
                           " accelerator-hours billed for " + ToJsonText(Num(speed.tokens_done_b)) +
                           " B tokens against " +
                           ToJsonText(Num(speed.estimated_accelerator_hours)) + " estimated",
                       "GET /v1/scenarios/" + std::to_string(id) + "/actuals progress" +
                           (tag_key.empty() ? "" : " (tag_key " + calibration.tag_key + ")")});
    }
    return out;
}

}  // namespace gpucost::http
