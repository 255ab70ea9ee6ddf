#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pricing/actuals.hpp"
#include "service/ports/actuals_store.hpp"
#include "service/ports/memory/recorded_answers.hpp"

namespace gpucost::ports {

// The in-memory twin of storage::PgActualsStore: the same answers for the same calls (the
// store contract suite runs both), nothing kept past the process. Thread-safe.
class MemoryActualsStore final : public ActualsStore {
public:
    explicit MemoryActualsStore(TimestampUs now_us = 0) : now_us_(now_us) {}

    // A team that may import (the database's teams table).
    void AddTeam(const std::string& team);

    using ActualsStore::Import;
    pricing::Result<StoredResponse> Import(const WriteRequest& request, const std::string& tag_key,
                                           const ExportReader& read,
                                           const ImportEncoder& encode) override;
    pricing::Result<std::vector<ActualMonth>> MonthsTagged(std::string_view tag_key,
                                                           std::string_view tag_value,
                                                           std::string_view team) override;
    pricing::Result<std::vector<ActualClassMonth>> ClassesTagged(std::string_view tag_key,
                                                                 std::string_view tag_value,
                                                                 std::string_view team) override;
    pricing::Result<std::pair<std::vector<ActualsImportRecord>, std::size_t>> ListImports(
        std::string_view team, std::size_t limit, std::int64_t before) override;
    pricing::Result<StoredResponse> DeleteImport(const WriteRequest& request,
                                                 std::int64_t id) override;

private:
    struct StoredCharge {
        std::int64_t import_id = 0;
        std::string team;
        pricing::ActualCharge charge;
    };

    mutable std::mutex mutex_;
    std::set<std::string, std::less<>> teams_{kDefaultTeam};
    std::map<std::int64_t, ActualsImportRecord> imports_;
    std::vector<StoredCharge> charges_;
    std::set<std::pair<std::string, std::string>> row_ids_;  // (team, row_id) stored
    RecordedAnswers answers_;
    std::int64_t next_import_id_ = 1;
    TimestampUs now_us_ = 0;
};

}  // namespace gpucost::ports
