#pragma once

#include <mutex>
#include <vector>

#include "service/ports/sync_run_log.hpp"

namespace gpucost::ports {

// The in-memory twin of storage::PgSyncRunLog: runs numbered from 1 in the order recorded,
// read back newest first; nothing kept past the process. Thread-safe.
class MemorySyncRunLog final : public SyncRunLog {
public:
    [[nodiscard]] pricing::Status Record(const SyncRun& run) override;
    [[nodiscard]] pricing::Result<std::vector<SyncRun>> Latest(std::size_t limit) override;

private:
    std::mutex mutex_;
    std::vector<SyncRun> runs_;
};

}  // namespace gpucost::ports
