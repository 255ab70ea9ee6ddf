#include "service/sync/sync_runs.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

namespace gpucost::sync {
namespace {

using nlohmann::json;
using pricing::ErrorCode;
using pricing::MakeError;

// The change of a price as a percentage of the old one, to two decimals (how much a sync moved
// it); null when the old price was 0.
json ChangePercent(double old_usd, double new_usd) {
    if (old_usd == 0) return nullptr;
    return std::round((new_usd - old_usd) / old_usd * 10000) / 100;
}

}  // namespace

json SyncRunJson(const ports::SyncRun& run) {
    json changes = json::array();
    for (const auto& c : run.price_changes) {
        changes.push_back(
            {{"offering_id", c.offering_id},
             {"old_usd_per_hour", c.old_usd_per_hour},
             {"new_usd_per_hour", c.new_usd_per_hour},
             {"change_percent", ChangePercent(c.old_usd_per_hour, c.new_usd_per_hour)}});
    }
    return {{"id", run.id},
            {"started_at", run.started_at},
            {"finished_at", run.finished_at},
            {"provider", run.provider},
            {"sources", run.sources},
            {"outcome", run.outcome},
            {"message", run.message},
            {"offerings_added", run.offerings_added},
            {"prices_changed", run.prices_changed},
            {"prices_unchanged", run.prices_unchanged},
            {"price_changes", std::move(changes)}};
}

ports::SyncRun SyncRunFromJson(const json& doc) {
    ports::SyncRun run;
    run.id = doc.value("id", std::int64_t{0});
    run.started_at = doc.value("started_at", std::string());
    run.finished_at = doc.value("finished_at", std::string());
    run.provider = doc.value("provider", std::string());
    run.sources = doc.value("sources", std::vector<std::string>());
    run.outcome = doc.value("outcome", std::string());
    run.message = doc.value("message", std::string());
    run.offerings_added = doc.value("offerings_added", std::size_t{0});
    run.prices_changed = doc.value("prices_changed", std::size_t{0});
    run.prices_unchanged = doc.value("prices_unchanged", std::size_t{0});
    for (const json& c : doc.value("price_changes", json::array())) {
        run.price_changes.push_back({c.value("offering_id", std::string()),
                                     c.value("old_usd_per_hour", 0.0),
                                     c.value("new_usd_per_hour", 0.0)});
    }
    return run;
}

pricing::Result<std::vector<ports::SyncRun>> FileSyncRunLog::ReadAll() const {
    std::vector<ports::SyncRun> runs;
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line)) {
        json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!doc.is_object()) {
            return MakeError(
                ErrorCode::kInvalidArgument,
                path_ + ": line " + std::to_string(runs.size() + 1) + " is not a recorded run");
        }
        runs.push_back(SyncRunFromJson(doc));
    }
    return runs;
}

pricing::Status FileSyncRunLog::Record(const ports::SyncRun& run) {
    auto runs = ReadAll();
    if (!runs.ok()) return runs.error();
    ports::SyncRun numbered = run;
    numbered.id = static_cast<std::int64_t>(runs.value().size()) + 1;
    std::ofstream out(path_, std::ios::app);
    out << SyncRunJson(numbered).dump() << '\n';
    out.close();
    if (!out) {
        return MakeError(ErrorCode::kUnavailable, "cannot append to " + path_);
    }
    return pricing::Ok{};
}

pricing::Result<std::vector<ports::SyncRun>> FileSyncRunLog::Latest(std::size_t limit) {
    auto runs = ReadAll();
    if (!runs.ok()) return runs.error();
    std::vector<ports::SyncRun> out(runs.value().rbegin(), runs.value().rend());
    out.resize(std::min(limit, out.size()));
    return out;
}

std::vector<ports::ProviderSyncState> SyncStateCache::Get() {
    std::unique_lock<std::mutex> reading(reading_, std::try_to_lock);
    if (reading.owns_lock()) {
        const auto now = std::chrono::steady_clock::now();
        bool due = false;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            due = !read_at_ || now - *read_at_ >= max_age_;
        }
        if (due) {
            auto states = log_->ProviderStates();
            std::lock_guard<std::mutex> lock(mutex_);
            read_at_ = now;
            if (states.ok()) states_ = std::move(states).value();
        }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return states_;
}

}  // namespace gpucost::sync
