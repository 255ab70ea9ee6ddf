#include "service/storage/migrations.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <map>

#include "service/storage/embedded_migrations.hpp"

namespace gpucost::storage {
namespace {

// Arbitrary constant shared by every gpucost process: the advisory lock key of `migrate`.
constexpr long long kMigrationLockKey = 0x67707563'6f737431LL;  // "gpucost1"

constexpr char kCreateTable[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT now())";

// version -> checksum of what the database recorded; empty map when the table is absent.
std::map<int, std::string> Applied(pqxx::transaction_base& tx) {
    std::map<int, std::string> out;
    auto exists = tx.exec_params("SELECT to_regclass('schema_migrations') IS NOT NULL");
    if (!exists[0][0].as<bool>()) {
        return out;
    }
    for (const auto& row : tx.exec_params("SELECT version, checksum FROM schema_migrations")) {
        out.emplace(row["version"].as<int>(), row["checksum"].as<std::string>());
    }
    return out;
}

pricing::Result<SchemaStatus> Compare(const std::map<int, std::string>& applied) {
    SchemaStatus status;
    std::map<int, const Migration*> known;
    for (const Migration& m : KnownMigrations()) {
        known.emplace(m.version, &m);
        status.binary_version = std::max(status.binary_version, m.version);
    }
    for (const auto& [version, checksum] : applied) {
        status.database_version = std::max(status.database_version, version);
        auto it = known.find(version);
        if (it == known.end()) {
            return pricing::MakeError(
                pricing::ErrorCode::kFailedPrecondition,
                "the database has migration " + std::to_string(version) +
                    " which this gpucost does not know (database schema is ahead of the binary, "
                    "which knows up to " +
                    std::to_string(status.binary_version) + "); run a newer gpucost");
        }
        if (MigrationChecksum(it->second->sql) != checksum) {
            return pricing::MakeError(pricing::ErrorCode::kFailedPrecondition,
                                      "applied migration " + std::to_string(version) + " (" +
                                          std::string(it->second->name) +
                                          ") differs from this binary's copy; migrations are "
                                          "forward-only and must never be edited");
        }
    }
    for (const auto& [version, migration] : known) {
        if (applied.count(version) == 0) {
            status.missing.push_back(version);
        }
    }
    return status;
}

}  // namespace

const std::vector<Migration>& KnownMigrations() {
    static const std::vector<Migration> migrations = [] {
        std::vector<Migration> out;
        out.reserve(std::size(embedded::kMigrations));
        for (const auto& m : embedded::kMigrations) {
            out.push_back({m.version, m.name, m.sql});
        }
        std::sort(out.begin(), out.end(),
                  [](const Migration& a, const Migration& b) { return a.version < b.version; });
        return out;
    }();
    return migrations;
}

std::string MigrationChecksum(std::string_view sql) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(sql.data()), sql.size(), digest);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : digest) {
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
    return out;
}

pricing::Result<SchemaStatus> CheckSchema(pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return Compare(Applied(tx));
}

pricing::Result<std::vector<int>> Migrate(pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLockKey);
    tx.exec(kCreateTable);
    auto status = Compare(Applied(tx));
    if (!status.ok()) {
        return status.error();
    }
    std::vector<int> applied;
    for (const Migration& m : KnownMigrations()) {
        if (std::find(status.value().missing.begin(), status.value().missing.end(), m.version) ==
            status.value().missing.end()) {
            continue;
        }
        tx.exec(std::string(m.sql));  // trusted text compiled into the binary; no parameters
        tx.exec_params(
            "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
            m.version, std::string(m.name), MigrationChecksum(m.sql));
        applied.push_back(m.version);
    }
    tx.commit();
    return applied;
}

}  // namespace gpucost::storage
