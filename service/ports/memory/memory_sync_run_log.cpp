#include "service/ports/memory/memory_sync_run_log.hpp"

#include <algorithm>

namespace gpucost::ports {

pricing::Status MemorySyncRunLog::Record(const SyncRun& run) {
    std::lock_guard<std::mutex> lock(mutex_);
    runs_.push_back(run);
    runs_.back().id = static_cast<std::int64_t>(runs_.size());
    return pricing::Ok{};
}

pricing::Result<std::vector<SyncRun>> MemorySyncRunLog::Latest(std::size_t limit) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t n = std::min(limit, runs_.size());
    return std::vector<SyncRun>(runs_.rbegin(), runs_.rbegin() + static_cast<std::ptrdiff_t>(n));
}

}  // namespace gpucost::ports
