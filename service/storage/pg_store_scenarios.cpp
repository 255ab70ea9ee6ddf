#include "service/storage/pg_store.hpp"

#include <nlohmann/json.hpp>

#include "service/log.hpp"
#include "service/storage/pg_connection.hpp"
#include "service/storage/pg_store_lease.hpp"
#include "service/storage/recorded_answer.hpp"

// PgStore's saved scenarios.
namespace gpucost::storage {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

ports::Scenario ScenarioFromRow(const pqxx::row& r) {
    ports::Scenario s;
    s.id = r["id"].as<std::int64_t>();
    s.name = r["name"].as<std::string>();
    s.plan_kind = r["plan_kind"].as<std::string>();
    s.request_json = r["request"].as<std::string>();
    s.saved_result_json = r["saved_result"].as<std::string>();
    s.catalog_revision = r["catalog_revision"].as<std::int64_t>();
    s.created_at_us = r["created_at_us"].as<std::int64_t>();
    s.created_by = r["created_by"].is_null() ? std::string() : r["created_by"].as<std::string>();
    s.catalog_version = r["catalog_version"].as<std::string>();
    s.version = r["version"].as<std::int64_t>();
    s.team = r["team"].as<std::string>();
    s.confidential = r["confidential"].as<bool>();
    if (!r["progress_tokens_done_b"].is_null()) {
        s.progress = ports::ScenarioProgress{r["progress_tokens_done_b"].as<double>(),
                                             r["progress_as_of_us"].as<std::int64_t>()};
    }
    // array_to_json: a JSON array of strings, parsed here rather than libpqxx 6's array parser.
    auto tags = nlohmann::json::parse(r["tags"].as<std::string>(), nullptr, false);
    if (tags.is_array()) {
        for (const auto& t : tags) {
            if (t.is_string()) {
                s.tags.push_back(t.get<std::string>());
            }
        }
    }
    return s;
}

constexpr char kScenarioColumns[] =
    "SELECT s.id, s.name, s.plan_kind, s.request::text AS request,"
    " s.saved_result::text AS saved_result, s.catalog_revision,"
    " (extract(epoch from s.created_at) * 1000000)::bigint AS created_at_us,"
    " k.name AS created_by, s.catalog_version, s.version, array_to_json(s.tags)::text AS tags,"
    " s.progress_tokens_done_b,"
    " (extract(epoch from s.progress_as_of) * 1000000)::bigint AS progress_as_of_us, s.team,"
    " s.confidential"
    " FROM scenarios s LEFT JOIN api_keys k ON k.id = s.created_by";

// A text[] literal's value as one JSON array parameter ($n::jsonb turned into text[] in SQL).
std::string TagsParam(const std::vector<std::string>& tags) {
    return nlohmann::json(tags).dump();
}
constexpr char kTagsFromJson[] = "ARRAY(SELECT jsonb_array_elements_text(%s::jsonb))";

std::string TagsFrom(int param) {
    std::string out = kTagsFromJson;
    out.replace(out.find("%s"), 2, "$" + std::to_string(param));
    return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Scenarios

template <typename T>
pricing::Result<T> PgStore::RunSimple(
    const std::function<pricing::Result<T>(pqxx::connection&)>& body) {
    auto lease = Checkout();
    if (!lease.ok()) {
        return lease.error();
    }
    try {
        auto out = body(lease.value()->conn());
        connected_ = true;
        return out;
    } catch (const std::exception& e) {
        if (!lease.value()->conn().is_open() ||
            dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
            SqlState(e).rfind("57", 0) == 0 || SqlState(e).rfind("08", 0) == 0) {
            lease.value()->Drop();
            MarkDown(e.what());
            return Unavailable("the database is unreachable; retry later");
        }
        log::Error("database call failed", {{"error", e.what()}, {"sqlstate", SqlState(e)}});
        return MakeError(ErrorCode::kInternal, "database call failed");
    }
}

pricing::Result<ports::Scenario> PgStore::SaveScenario(const ports::WriteRequest& request,
                                                       const ports::Scenario& draft) {
    return RunSimple<ports::Scenario>([&](pqxx::connection& conn)
                                          -> pricing::Result<ports::Scenario> {
        pqxx::work tx(conn);
        if (!request.idempotency_key.empty()) {
            // The key's row is locked for the transaction, so two retries racing each other
            // save one scenario: the second waits, then finds the first's row.
            auto recorded = ClaimKey(tx, request);
            if (!recorded.ok()) {
                return recorded.error();
            }
            if (recorded.value()) {
                auto row = tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1",
                                          std::stoll(recorded.value()->body));
                if (row.empty()) {
                    return MakeError(ErrorCode::kNotFound,
                                     "the scenario saved with this Idempotency-Key has since been "
                                     "deleted",
                                     "Idempotency-Key");
                }
                ports::Scenario replay = ScenarioFromRow(row[0]);
                replay.replayed = true;
                return replay;
            }
        }
        auto id = tx.exec_params(
                        "INSERT INTO scenarios (name, plan_kind, request, saved_result,"
                        " catalog_revision, created_by, catalog_version, tags, team) VALUES"
                        " ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, " +
                            TagsFrom(8) + ", $9) RETURNING id",
                        draft.name, draft.plan_kind, draft.request_json, draft.saved_result_json,
                        draft.catalog_revision, request.principal.key_id, draft.catalog_version,
                        TagsParam(draft.tags), request.principal.team)[0][0]
                      .as<std::int64_t>();
        // The answer recorded is the scenario's id: a replay answers the scenario as it is then.
        RecordAnswer(tx, request, ports::StoredResponse{201, std::to_string(id), "", false});
        auto row = tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1", id);
        tx.commit();
        return ScenarioFromRow(row[0]);
    });
}

pricing::Result<std::vector<ports::Scenario>> PgStore::ListScenarios(std::size_t limit,
                                                                     std::int64_t after_id) {
    auto page = FindScenarios({}, limit, after_id);
    if (!page.ok()) {
        return page.error();
    }
    return std::move(page.value().items);
}

pricing::Result<ports::ScenarioPage> PgStore::FindScenarios(const ports::ScenarioFilter& filter,
                                                            std::size_t limit,
                                                            std::int64_t after_id) {
    return RunSimple<ports::ScenarioPage>(
        [&](pqxx::connection& conn) -> pricing::Result<ports::ScenarioPage> {
            pqxx::read_transaction tx(conn);
            // An empty filter value matches every row; one snapshot for the page and its count.
            // The reader sees what it may read: what is not confidential, its team's, or (org)
            // everything; the count is of those too.
            const std::string where =
                " WHERE ($1 = '' OR s.plan_kind = $1) AND ($2 = '' OR $2 = ANY (s.tags))"
                " AND ($3 = '' OR k.name = $3) AND (NOT s.confidential OR $4 OR s.team = $5)";
            const bool reads_all = filter.reader && filter.reader->scope == ports::KeyScope::kOrg;
            // No key: a team id no row can have (teams are slugs), so only open rows match.
            const std::string team = filter.reader ? filter.reader->team : std::string(" ");
            ports::ScenarioPage page;
            page.total_count =
                tx.exec_params(
                      "SELECT count(*) FROM scenarios s LEFT JOIN api_keys k ON"
                      " k.id = s.created_by" +
                          where,
                      filter.plan_kind, filter.tag, filter.created_by, reads_all, team)[0][0]
                    .as<std::int64_t>();
            for (const auto& r :
                 tx.exec_params(std::string(kScenarioColumns) + where +
                                    " AND s.id > $6 ORDER BY s.id LIMIT $7",
                                filter.plan_kind, filter.tag, filter.created_by, reads_all, team,
                                after_id, static_cast<std::int64_t>(limit))) {
                page.items.push_back(ScenarioFromRow(r));
            }
            return page;
        });
}

pricing::Result<ports::Scenario> PgStore::GetScenario(std::int64_t id) {
    return RunSimple<ports::Scenario>(
        [&](pqxx::connection& conn) -> pricing::Result<ports::Scenario> {
            pqxx::read_transaction tx(conn);
            auto rows = tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1", id);
            if (rows.empty()) {
                return MakeError(ErrorCode::kNotFound, "no scenario with id " + std::to_string(id),
                                 "id");
            }
            return ScenarioFromRow(rows[0]);
        });
}

namespace {

// The scenario `id` locked for a change by request.principal, or why it may not be changed.
pricing::Result<ports::Scenario> LockScenarioForChange(pqxx::work& tx,
                                                       const ports::WriteRequest& request,
                                                       std::int64_t id) {
    auto rows =
        tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1 FOR UPDATE OF s", id);
    if (rows.empty()) {
        return MakeError(ErrorCode::kNotFound, "no scenario with id " + std::to_string(id), "id");
    }
    ports::Scenario s = ScenarioFromRow(rows[0]);
    const ports::Principal& who = request.principal;
    // Another team's confidential scenario is not there for this key; one it may read is not
    // its to change (org keys change nothing).
    if (s.confidential && !ports::ReadsTeam(who, s.team)) {
        return MakeError(ErrorCode::kNotFound, "no scenario with id " + std::to_string(id), "id");
    }
    if (who.team != s.team || who.scope == ports::KeyScope::kOrg) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "scenario " + std::to_string(id) + " belongs to team '" + s.team +
                             "': only its team's keys may change it",
                         ports::kOwnerField);
    }
    if (who.scope != ports::KeyScope::kAdmin && s.created_by != who.name) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "scenario " + std::to_string(id) + " belongs to '" + s.created_by +
                             "': only its owner's keys or an admin key of its team may change it",
                         ports::kOwnerField);
    }
    if (request.if_match &&
        !ports::IfMatchAccepts(*request.if_match, ports::ScenarioEtag(s.version))) {
        return MakeError(
            ErrorCode::kFailedPrecondition,
            "If-Match does not match the scenario's current ETag " +
                ports::ScenarioEtag(s.version) +
                "; it changed since you read it: read it again and reapply your change",
            ports::kIfMatchField);
    }
    return s;
}

}  // namespace

pricing::Result<ports::StoredResponse> PgStore::UpdateScenario(const ports::WriteRequest& request,
                                                               std::int64_t id,
                                                               const ports::ScenarioChange& change,
                                                               const ScenarioEncoder& encode) {
    return RunSimple<ports::StoredResponse>(
        [&](pqxx::connection& conn) -> pricing::Result<ports::StoredResponse> {
            pqxx::work tx(conn);
            return AnswerOnce<ports::Scenario>(
                tx, request,
                [&]() -> pricing::Result<ports::Scenario> {
                    auto locked = LockScenarioForChange(tx, request, id);
                    if (!locked.ok()) {
                        return locked.error();
                    }
                    const ports::Scenario& s = locked.value();
                    tx.exec_params("UPDATE scenarios SET name = $2, tags = " + TagsFrom(3) +
                                       ", version = version + 1 WHERE id = $1",
                                   id, change.name.value_or(s.name),
                                   TagsParam(change.tags.value_or(s.tags)));
                    if (change.progress) {
                        tx.exec_params(
                            "UPDATE scenarios SET progress_tokens_done_b = $2, progress_as_of ="
                            " to_timestamp($3::double precision / 1000000) WHERE id = $1",
                            id, change.progress->tokens_done_b,
                            static_cast<double>(change.progress->as_of_us));
                    }
                    auto row =
                        tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1", id);
                    return ScenarioFromRow(row[0]);
                },
                encode);
        });
}

pricing::Result<ports::StoredResponse> PgStore::DeleteScenario(const ports::WriteRequest& request,
                                                               std::int64_t id) {
    return RunSimple<ports::StoredResponse>(
        [&](pqxx::connection& conn) -> pricing::Result<ports::StoredResponse> {
            pqxx::work tx(conn);
            return AnswerOnce<std::monostate>(
                tx, request,
                [&]() -> pricing::Result<std::monostate> {
                    auto locked = LockScenarioForChange(tx, request, id);
                    if (!locked.ok()) {
                        return locked.error();
                    }
                    tx.exec_params("DELETE FROM scenarios WHERE id = $1", id);
                    return std::monostate{};
                },
                [](const std::monostate&) { return ports::DeletedAnswer(); });
        });
}

}  // namespace gpucost::storage
