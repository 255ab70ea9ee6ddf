#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pricing/error.hpp"
#include "service/ports/principal.hpp"
#include "service/ports/write_request.hpp"

namespace gpucost::ports {

// A training scenario's progress: tokens trained so far (billions) and when (PUT
// /v1/scenarios/{id}/progress; docs/billing.md).
struct ScenarioProgress {
    double tokens_done_b = 0;
    TimestampUs as_of_us = 0;
};

struct Scenario {
    std::int64_t id = 0;
    std::string name;
    std::string plan_kind;  // which plan endpoint evaluates it
    std::string request_json;
    std::string saved_result_json;
    std::int64_t catalog_revision = 0;  // deprecated: catalog_version names it (0.2.0)
    // The catalog version the saved answer was computed on: that answer's own catalog_version.
    std::string catalog_version;
    std::vector<std::string> tags;  // in the order given
    TimestampUs created_at_us = 0;
    // The owner: the name of the key that saved it. Any key of that name in its team, or an
    // admin key of its team, may change or delete the scenario.
    std::string created_by;
    std::int64_t version = 1;  // bumped on every change; the ETag is ScenarioEtag(version)
    std::optional<ScenarioProgress> progress;  // none recorded yet
    std::string team = kDefaultTeam;           // the owning team: its saver's
    // The saved request carries a price book (stored, a key's default, or inline) or
    // `calibration`: only keys that ReadsTeam(team) read it (schema/migrations/008_teams.sql).
    bool confidential = false;
    // SaveScenario only: this is the scenario an earlier request with the same Idempotency-Key
    // saved (nothing new was saved).
    bool replayed = false;
};

// Strong entity tag of a scenario version: "\"s<version>\"".
std::string ScenarioEtag(std::int64_t version);

// GET /v1/scenarios filters; empty: any.
struct ScenarioFilter {
    std::string plan_kind;
    std::string tag;
    std::string created_by;  // key name
    // Who lists: none (anonymous) sees the scenarios that are not confidential; a key also its
    // own team's; an org key every scenario.
    std::optional<Principal> reader;
};

struct ScenarioPage {
    std::vector<Scenario> items;   // by id, after the cursor, at most the limit asked for
    std::int64_t total_count = 0;  // every scenario the filter matches, cursor aside
};

// PATCH /v1/scenarios/{id}: members absent stay as they are.
struct ScenarioChange {
    std::optional<std::string> name;
    std::optional<std::vector<std::string>> tags;
    std::optional<ScenarioProgress> progress;  // PUT /v1/scenarios/{id}/progress
};

// The scenarios port: saved plan requests and their answers.
class ScenarioStore {
public:
    ScenarioStore() = default;
    virtual ~ScenarioStore() = default;
    ScenarioStore(const ScenarioStore&) = delete;
    ScenarioStore& operator=(const ScenarioStore&) = delete;
    ScenarioStore(ScenarioStore&&) = delete;
    ScenarioStore& operator=(ScenarioStore&&) = delete;

    // Saves `draft` by request.principal. With an Idempotency-Key, a retry of the same request
    // (request_hash) returns the scenario saved the first time (replayed), a different request
    // with that key is kInvalidArgument on field Idempotency-Key.
    [[nodiscard]] virtual pricing::Result<Scenario> SaveScenario(const WriteRequest& request,
                                                                 const Scenario& draft) = 0;
    [[nodiscard]] virtual pricing::Result<std::vector<Scenario>> ListScenarios(
        std::size_t limit, std::int64_t after_id) = 0;
    [[nodiscard]] virtual pricing::Result<Scenario> GetScenario(std::int64_t id) = 0;
    // One page of the scenarios `filter` matches (limit of them after `after_id`, by id), with
    // the count of all it matches.
    [[nodiscard]] virtual pricing::Result<ScenarioPage> FindScenarios(const ScenarioFilter& filter,
                                                                      std::size_t limit,
                                                                      std::int64_t after_id) = 0;
    // Changes, or deletes, scenario `id` for request.principal, in one transaction: kNotFound
    // for an unknown id or a confidential scenario of another team; kFailedPrecondition on
    // kOwnerField when the principal is of another team, or neither an admin nor of the
    // owner's name (403), on kIfMatchField when request.if_match names
    // another version (412). The change bumps the version and answers the scenario after it,
    // as `encode` answers it; the delete answers DeletedAnswer(). Both with the
    // Idempotency-Key protocol of the catalog writes: a retry of the same request is answered
    // the recorded answer (replayed) before the If-Match or the owner is judged again.
    using ScenarioEncoder = std::function<StoredResponse(const Scenario&)>;
    [[nodiscard]] virtual pricing::Result<StoredResponse> UpdateScenario(
        const WriteRequest& request, std::int64_t id, const ScenarioChange& change,
        const ScenarioEncoder& encode) = 0;
    [[nodiscard]] virtual pricing::Result<StoredResponse> DeleteScenario(
        const WriteRequest& request, std::int64_t id) = 0;
};

}  // namespace gpucost::ports
