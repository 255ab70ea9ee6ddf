#include "service/http/routes/calibration.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "service/http/actuals_store.hpp"
#include "service/http/catalog_store.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/routes/scenario_plan_use.hpp"

namespace gpucost::http {
namespace {

using json = nlohmann::json;
using pricing::ErrorCode;
using pricing::MakeError;

constexpr char kMember[] = "calibration";

pricing::Error Invalid(const std::string& field, const std::string& message) {
    return MakeError(ErrorCode::kInvalidArgument, field + ": " + message, field);
}

std::string IdField(std::size_t index) {
    return "/calibration/scenario_ids/" + std::to_string(index);
}

// {"scenario_ids": ["3", "7"]} as ids, in order.
pricing::Result<std::vector<std::int64_t>> ReadScenarioIds(const json& calibration) {
    if (!calibration.is_object()) return Invalid("/calibration", "must be an object");
    for (const auto& [key, value] : calibration.items()) {
        if (key != "scenario_ids") {
            return Invalid("/calibration/" + key, "unknown member; give scenario_ids");
        }
    }
    const auto ids = calibration.find("scenario_ids");
    if (ids == calibration.end() || !ids->is_array() || ids->empty() ||
        ids->size() > kMaxCalibrationScenarios) {
        return Invalid("/calibration/scenario_ids", "must list 1 to " +
                                                        std::to_string(kMaxCalibrationScenarios) +
                                                        " saved training scenario ids");
    }
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < ids->size(); ++i) {
        const json& id = (*ids)[i];
        std::int64_t value = 0;
        const std::string text = id.is_string() ? id.get<std::string>() : std::string();
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value <= 0) {
            return Invalid(IdField(i), "must be a scenario id (a string such as \"12\")");
        }
        if (std::find(out.begin(), out.end(), value) != out.end()) {
            return Invalid(IdField(i), "scenario " + text + " is listed twice");
        }
        out.push_back(value);
    }
    return out;
}

// One scenario's implied speed, or why it gives none.
pricing::Result<pricing::ImpliedSpeed> MeasureScenario(const Deps& deps, std::int64_t id,
                                                       const std::string& field) {
    const std::string name = "scenario " + std::to_string(id);
    auto found = deps.store->GetScenario(id);
    if (!found.ok()) {
        if (found.error().code == ErrorCode::kNotFound) {
            return Invalid(field, "no " + name);
        }
        return found.error();
    }
    const Scenario& s = found.value();
    if (s.plan_kind != "training") {
        return Invalid(field, name + " is a '" + s.plan_kind + "' plan; calibration measures " +
                                  "training scenarios");
    }
    if (!s.progress) {
        return Invalid(field, name + " has no progress recorded (PUT /v1/scenarios/" +
                                  std::to_string(id) + "/progress)");
    }
    auto tagged = deps.actuals->MonthsTagged(kActualsTagKey, std::to_string(id));
    if (!tagged.ok()) return tagged.error();
    double actual_hours = 0;
    for (const ActualMonth& m : tagged.value()) actual_hours += m.accelerator_hours;
    const SavedPlanUse use = SavedPlanUseOf(s);
    auto speed = pricing::ImpliedSpeedOf(s.progress->tokens_done_b, use.tokens_planned_b,
                                         use.estimated_accelerator_hours, actual_hours);
    if (!speed) {
        return Invalid(field, name + " has nothing to measure yet (no tokens done, no hours " +
                                  "planned, or no accelerator charges tagged with it)");
    }
    const double ratio = speed->actual_to_estimated_hours_ratio;
    if (ratio < pricing::kMinCalibrationRatio || ratio > pricing::kMaxCalibrationRatio) {
        return Invalid(field, name + " measures " + Num(ratio).dump() +
                                  " actual/estimated accelerator-hours, outside [" +
                                  Num(pricing::kMinCalibrationRatio).dump() + ", " +
                                  Num(pricing::kMaxCalibrationRatio).dump() +
                                  "]: check its tags and progress before learning from it");
    }
    return *speed;
}

}  // namespace

pricing::Result<std::optional<Calibration>> TakeCalibration(const Deps& deps, json& body) {
    if (!body.is_object() || !body.contains(kMember)) return std::optional<Calibration>();
    const json given = body[kMember];
    body.erase(kMember);
    if (!deps.store || !deps.actuals) {
        return MakeError(ErrorCode::kDatabaseRequired,
                         "calibration measures saved scenarios against their actual spend, kept "
                         "only in PostgreSQL mode: start gpucost with DATABASE_URL",
                         "/calibration");
    }
    auto ids = ReadScenarioIds(given);
    if (!ids.ok()) return ids.error();
    Calibration out;
    std::vector<pricing::ImpliedSpeed> speeds;
    for (std::size_t i = 0; i < ids.value().size(); ++i) {
        const std::int64_t id = ids.value()[i];
        auto speed = MeasureScenario(deps, id, IdField(i));
        if (!speed.ok()) return speed.error();
        speeds.push_back(speed.value());
        out.scenarios.emplace_back(id, speed.value());
    }
    out.hours_factor = pricing::CombinedHoursRatio(speeds);
    return std::optional<Calibration>(std::move(out));
}

pricing::Assumptions CalibrationAssumptions(const Calibration& calibration) {
    pricing::Assumptions out;
    std::string ids;
    for (const auto& [id, speed] : calibration.scenarios) {
        ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    }
    out.push_back({"calibration_hours_factor", calibration.hours_factor, "ratio",
                   "Every estimate's hours multiplied by this: the scenarios' actual over "
                   "estimated accelerator-hours, weighted by estimated hours",
                   std::string("request: calibration.scenario_ids ") + ids});
    for (const auto& [id, speed] : calibration.scenarios) {
        out.push_back({"calibration_ratio_scenario_" + std::to_string(id),
                       speed.actual_to_estimated_hours_ratio, "ratio",
                       "Scenario " + std::to_string(id) + ": " +
                           Num(speed.actual_accelerator_hours).dump() +
                           " accelerator-hours billed for " + Num(speed.tokens_done_b).dump() +
                           " B tokens against " + Num(speed.estimated_accelerator_hours).dump() +
                           " estimated",
                       "GET /v1/scenarios/" + std::to_string(id) + "/actuals progress"});
    }
    return out;
}

}  // namespace gpucost::http
