#pragma once

#include <cstddef>
#include <cstdint>
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
};

}  // namespace gpucost::ports
