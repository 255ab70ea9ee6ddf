#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "service/ports/actuals_store.hpp"
#include "service/storage/pg_session.hpp"

namespace gpucost::storage {

// Imported actual spend on PostgreSQL (schema/migrations/004_actuals.sql): a row per import and
// a row per kept charge, none ever changed. An import is one transaction; its charges go in
// batches through COPY into a temporary table and one INSERT ... SELECT ... ON CONFLICT DO
// NOTHING each (not a statement per charge: an export has hundreds of thousands). An import is
// its team's (008_teams.sql): deleting it removes the charges it stored first. Thread-safe
// (one connection, one call at a time: exports arrive a few times a month).
class PgActualsStore final : public ports::ActualsStore {
public:
    explicit PgActualsStore(std::string database_url) : session_(std::move(database_url)) {}

    using ports::ActualsStore::Import;
    pricing::Result<ports::StoredResponse> Import(const ports::WriteRequest& request,
                                                  const std::string& tag_key,
                                                  const ExportReader& read,
                                                  const ImportEncoder& encode) override;
    pricing::Result<std::vector<ports::ActualMonth>> MonthsTagged(std::string_view tag_key,
                                                                  std::string_view tag_value,
                                                                  std::string_view team) override;
    pricing::Result<std::vector<ports::ActualClassMonth>> ClassesTagged(
        std::string_view tag_key, std::string_view tag_value, std::string_view team) override;
    pricing::Result<std::pair<std::vector<ports::ActualsImportRecord>, std::size_t>> ListImports(
        std::string_view team, std::size_t limit, std::int64_t before) override;
    pricing::Result<ports::StoredResponse> DeleteImport(const ports::WriteRequest& request,
                                                        std::int64_t id) override;

private:
    PgSession session_;
};

}  // namespace gpucost::storage
