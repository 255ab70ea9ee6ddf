#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "service/storage/catalog_history.hpp"

namespace gpucost::storage {

// NOTIFY channel on which every catalog write announces its new revision.
inline constexpr char kCatalogChannel[] = "gpucost_catalog";

// Reads the whole catalog (accelerators, offerings, every price row, API key records) and
// its revision. Run it in a repeatable-read transaction for a consistent view.
CatalogHistory LoadHistory(pqxx::transaction_base& tx);

// The offerings named (unknown ids are left out), with their prices, in one round trip per
// table: what a replica reads to apply one change.
std::vector<ports::OfferingHistory> LoadOfferingHistories(pqxx::transaction_base& tx,
                                                          const std::vector<std::string>& ids);

// The API key records.
std::vector<KeyRecord> LoadKeys(pqxx::transaction_base& tx);

// The current revision (catalog_state.revision).
std::int64_t LoadRevision(pqxx::transaction_base& tx);

// One offering with its prices, or nullopt when the id is unknown. `lock` takes a row lock
// (FOR UPDATE) on the offering.
std::optional<ports::OfferingHistory> LoadOfferingHistory(pqxx::transaction_base& tx,
                                                          const std::string& id, bool lock);

// Increments catalog_state.revision and queues a NOTIFY with it and what it changed
// (EncodeChange; delivered at commit). The UPDATE's row lock also serialises catalog writers.
std::int64_t BumpRevision(pqxx::transaction_base& tx, const CatalogChange& change);

// The id of a price source, inserting it when new.
std::int64_t SourceId(pqxx::transaction_base& tx, const std::string& name);

}  // namespace gpucost::storage
