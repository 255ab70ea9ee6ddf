#pragma once

#include <string>
#include <vector>

#include "service/ports/sync_run_log.hpp"
#include "service/storage/pg_session.hpp"

namespace gpucost::storage {

// Sync runs on PostgreSQL (schema/migrations/010_sync_runs.sql): one row per provider and run,
// never changed. A run is recorded after its import's own transaction, so a failed import is
// recorded as failed and a recorded import is in the catalog. Thread-safe.
class PgSyncRunLog final : public ports::SyncRunLog {
public:
    explicit PgSyncRunLog(std::string database_url) : session_(std::move(database_url)) {}

    [[nodiscard]] pricing::Status Record(const ports::SyncRun& run) override;
    [[nodiscard]] pricing::Result<std::vector<ports::SyncRun>> Latest(std::size_t limit) override;
    [[nodiscard]] pricing::Result<std::vector<ports::ProviderSyncState>> ProviderStates() override;

private:
    PgSession session_;
};

}  // namespace gpucost::storage
