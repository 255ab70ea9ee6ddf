#include "service/storage/pg_sync_run_log.hpp"

#include <nlohmann/json.hpp>

namespace gpucost::storage {
namespace {

using nlohmann::json;

constexpr char kInsertRun[] =
    "INSERT INTO sync_runs (started_at, finished_at, provider, sources, outcome, message,"
    " offerings_added, prices_changed, prices_unchanged, price_changes)"
    " VALUES ($1::timestamptz, $2::timestamptz, $3,"
    " ARRAY(SELECT jsonb_array_elements_text($4::jsonb)), $5, $6, $7, $8, $9, $10::jsonb)";

constexpr char kLatestRuns[] =
    "SELECT id,"
    " to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
    " to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
    " provider, to_jsonb(sources)::text, outcome, message, offerings_added, prices_changed,"
    " prices_unchanged, price_changes::text"
    " FROM sync_runs ORDER BY id DESC LIMIT $1";

// Each provider's latest run and its latest imported run, without reading any run's changes.
constexpr char kProviderStates[] =
    "SELECT provider,"
    " to_char((array_agg(finished_at ORDER BY id DESC))[1] AT TIME ZONE 'UTC',"
    " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
    " (array_agg(outcome ORDER BY id DESC))[1],"
    " coalesce(to_char(max(finished_at) FILTER (WHERE outcome = 'imported') AT TIME ZONE 'UTC',"
    " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), '')"
    " FROM sync_runs GROUP BY provider ORDER BY provider";

std::string ChangesJson(const std::vector<ports::SyncPriceChange>& changes) {
    json out = json::array();
    for (const auto& c : changes) {
        out.push_back({{"offering_id", c.offering_id},
                       {"old_usd_per_hour", c.old_usd_per_hour},
                       {"new_usd_per_hour", c.new_usd_per_hour}});
    }
    return out.dump();
}

std::vector<ports::SyncPriceChange> ChangesFrom(const std::string& text) {
    std::vector<ports::SyncPriceChange> out;
    for (const json& c : json::parse(text, nullptr, false)) {
        if (!c.is_object()) continue;
        out.push_back({c.value("offering_id", std::string()), c.value("old_usd_per_hour", 0.0),
                       c.value("new_usd_per_hour", 0.0)});
    }
    return out;
}

}  // namespace

pricing::Status PgSyncRunLog::Record(const ports::SyncRun& run) {
    auto done = session_.Run<bool>([&](pqxx::connection& conn) -> pricing::Result<bool> {
        pqxx::work tx(conn);
        tx.exec_params(
            kInsertRun, run.started_at, run.finished_at, run.provider, json(run.sources).dump(),
            run.outcome, run.message, static_cast<std::int64_t>(run.offerings_added),
            static_cast<std::int64_t>(run.prices_changed),
            static_cast<std::int64_t>(run.prices_unchanged), ChangesJson(run.price_changes));
        tx.commit();
        return true;
    });
    if (!done.ok()) return done.error();
    return pricing::Ok{};
}

pricing::Result<std::vector<ports::SyncRun>> PgSyncRunLog::Latest(std::size_t limit) {
    using Runs = std::vector<ports::SyncRun>;
    return session_.Run<Runs>([&](pqxx::connection& conn) -> pricing::Result<Runs> {
        pqxx::read_transaction tx(conn);
        Runs out;
        for (const auto& r : tx.exec_params(kLatestRuns, static_cast<std::int64_t>(limit))) {
            ports::SyncRun run;
            run.id = r[0].as<std::int64_t>();
            run.started_at = r[1].as<std::string>();
            run.finished_at = r[2].as<std::string>();
            run.provider = r[3].as<std::string>();
            for (const json& s : json::parse(r[4].as<std::string>(), nullptr, false)) {
                if (s.is_string()) run.sources.push_back(s.get<std::string>());
            }
            run.outcome = r[5].as<std::string>();
            run.message = r[6].as<std::string>();
            run.offerings_added = r[7].as<std::size_t>();
            run.prices_changed = r[8].as<std::size_t>();
            run.prices_unchanged = r[9].as<std::size_t>();
            run.price_changes = ChangesFrom(r[10].as<std::string>());
            out.push_back(std::move(run));
        }
        return out;
    });
}

pricing::Result<std::vector<ports::ProviderSyncState>> PgSyncRunLog::ProviderStates() {
    using States = std::vector<ports::ProviderSyncState>;
    return session_.Run<States>([&](pqxx::connection& conn) -> pricing::Result<States> {
        pqxx::read_transaction tx(conn);
        States out;
        for (const auto& r : tx.exec(kProviderStates)) {
            out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>(),
                           r[3].as<std::string>()});
        }
        return out;
    });
}

}  // namespace gpucost::storage
