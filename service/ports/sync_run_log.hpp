#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "pricing/error.hpp"

namespace gpucost::ports {

// One price a sync changed: the offering's current price before and the one recorded.
struct SyncPriceChange {
    std::string offering_id;
    double old_usd_per_hour = 0;
    double new_usd_per_hour = 0;
};

// One `gpucost sync` run of one provider (schema/migrations/010_sync_runs.sql).
struct SyncRun {
    std::int64_t id = 0;      // given by the log when recorded
    std::string started_at;   // RFC 3339, UTC
    std::string finished_at;  // RFC 3339, UTC
    std::string provider;
    std::vector<std::string> sources;  // the URLs read (API keys left out)
    std::string outcome;               // kSyncImported | kSyncFailed | kSyncSkipped
    std::string message;               // why it failed or was skipped; empty when imported
    std::size_t offerings_added = 0;
    std::size_t prices_changed = 0;
    std::size_t prices_unchanged = 0;
    std::vector<SyncPriceChange> price_changes;
};

inline constexpr char kSyncImported[] = "imported";
inline constexpr char kSyncFailed[] = "failed";
// Named but not run: its API key is not set (an optional Secret left empty). Its prices are left
// as they were, and turn stale at their bound like a failed provider's.
inline constexpr char kSyncSkipped[] = "skipped";
inline constexpr std::array<const char*, 3> kSyncOutcomes = {kSyncImported, kSyncFailed,
                                                             kSyncSkipped};

// How one provider's syncs stand, for /metrics and /readyz: when its latest run ended and how,
// and when its latest imported run ended (its prices last confirmed by a sync).
struct ProviderSyncState {
    std::string provider;
    std::string last_run_at;       // RFC 3339, UTC
    std::string last_outcome;      // kSyncImported | kSyncFailed | kSyncSkipped
    std::string last_imported_at;  // RFC 3339, UTC; empty: no imported run recorded
};

// The state of each provider in `runs` (newest first, as Latest answers), by provider id.
inline std::vector<ProviderSyncState> ProviderStatesOf(const std::vector<SyncRun>& runs) {
    std::vector<ProviderSyncState> out;
    for (const SyncRun& run : runs) {
        auto it = std::find_if(out.begin(), out.end(), [&](const ProviderSyncState& s) {
            return s.provider == run.provider;
        });
        if (it == out.end()) {
            it = out.insert(out.end(), {run.provider, run.finished_at, run.outcome, ""});
        }
        if (it->last_imported_at.empty() && run.outcome == kSyncImported) {
            it->last_imported_at = run.finished_at;
        }
    }
    std::sort(out.begin(), out.end(), [](const ProviderSyncState& a, const ProviderSyncState& b) {
        return a.provider < b.provider;
    });
    return out;
}

// Where sync runs are recorded and read back: the database (storage::PgSyncRunLog), a catalog
// directory's sync-runs.jsonl (sync::FileSyncRunLog) or memory (MemorySyncRunLog, the tests').
class SyncRunLog {
public:
    SyncRunLog() = default;
    SyncRunLog(const SyncRunLog&) = delete;
    SyncRunLog& operator=(const SyncRunLog&) = delete;
    SyncRunLog(SyncRunLog&&) = delete;
    SyncRunLog& operator=(SyncRunLog&&) = delete;
    virtual ~SyncRunLog() = default;

    // Records `run`; kUnavailable when the log cannot be written.
    [[nodiscard]] virtual pricing::Status Record(const SyncRun& run) = 0;
    // The latest `limit` runs, newest first, each with its id.
    [[nodiscard]] virtual pricing::Result<std::vector<SyncRun>> Latest(std::size_t limit) = 0;
    // Each provider's latest run and latest imported run, by provider id (from every run; the
    // database answers it in one query).
    [[nodiscard]] virtual pricing::Result<std::vector<ProviderSyncState>> ProviderStates() {
        auto runs = Latest(std::numeric_limits<std::size_t>::max());
        if (!runs.ok()) return runs.error();
        return ProviderStatesOf(runs.value());
    }
};

}  // namespace gpucost::ports
