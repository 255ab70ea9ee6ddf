#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/ports/sync_run_log.hpp"

namespace gpucost::sync {

// A run as `gpucost sync --history` prints it and sync-runs.jsonl keeps it: its members
// (id, started_at, finished_at, provider, sources, outcome, message, offerings_added,
// prices_changed, prices_unchanged, price_changes [{offering_id, old_usd_per_hour,
// new_usd_per_hour, change_percent}]).
nlohmann::json SyncRunJson(const ports::SyncRun& run);
ports::SyncRun SyncRunFromJson(const nlohmann::json& doc);

// The runs of `gpucost sync --out DIR`: one JSON line per run appended to DIR/sync-runs.jsonl
// beside the catalog files it changed (a failed run is recorded there too; the catalog files
// stay as they were).
class FileSyncRunLog final : public ports::SyncRunLog {
public:
    explicit FileSyncRunLog(std::string path) : path_(std::move(path)) {}

    [[nodiscard]] pricing::Status Record(const ports::SyncRun& run) override;
    [[nodiscard]] pricing::Result<std::vector<ports::SyncRun>> Latest(std::size_t limit) override;

private:
    pricing::Result<std::vector<ports::SyncRun>> ReadAll() const;
    std::string path_;
};

// Each provider's sync state as /metrics and /readyz show it, read from `log` at most once per
// `max_age`: a scrape or probe every few seconds must not query the database each time, and a
// probe never waits on another's query (it answers the last states read). While the log cannot
// be read, the last states read are kept. Thread-safe.
class SyncStateCache {
public:
    SyncStateCache(std::unique_ptr<ports::SyncRunLog> log, std::chrono::seconds max_age)
        : log_(std::move(log)), max_age_(max_age) {}

    [[nodiscard]] std::vector<ports::ProviderSyncState> Get();

private:
    std::unique_ptr<ports::SyncRunLog> log_;
    std::chrono::seconds max_age_;
    std::mutex reading_;  // held by the one caller reading the log
    std::mutex mutex_;    // guards the members below
    std::optional<std::chrono::steady_clock::time_point> read_at_;
    std::vector<ports::ProviderSyncState> states_;
};

}  // namespace gpucost::sync
