#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "pricing/error.hpp"

namespace gpucost::storage {

// A numbered, forward-only migration from schema/migrations/NNN_name.sql (compiled in).
struct Migration {
    int version = 0;
    std::string_view name;
    std::string_view sql;
};

// The migrations this binary knows, ascending by version.
const std::vector<Migration>& KnownMigrations();

struct SchemaStatus {
    int database_version = 0;  // highest applied; 0 for an empty database
    int binary_version = 0;    // highest known
    std::vector<int> missing;  // known but not applied
};

// What the database has applied. kFailedPrecondition when it has a migration this binary
// does not know (the database is ahead) or an applied migration's checksum differs.
[[nodiscard]] pricing::Result<SchemaStatus> CheckSchema(pqxx::connection& conn);

// Applies every missing migration in one transaction (serialised across processes by an
// advisory lock) and records each in schema_migrations. Returns the versions applied;
// nothing on an up-to-date database. Same errors as CheckSchema.
[[nodiscard]] pricing::Result<std::vector<int>> Migrate(pqxx::connection& conn);

// Hex SHA-256 of a migration's text, recorded so an edited applied migration is noticed.
std::string MigrationChecksum(std::string_view sql);

}  // namespace gpucost::storage
