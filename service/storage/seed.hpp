#pragma once

#include <cstddef>

#include <pqxx/pqxx>

#include "pricing/catalog.hpp"

namespace gpucost::storage {

struct SeedReport {
    std::size_t accelerators_inserted = 0;
    std::size_t offerings_inserted = 0;
    std::size_t prices_inserted = 0;
    std::size_t offerings_skipped = 0;  // already in the database: left as they are
};

// Loads a catalog (the shipped one) into the database in one transaction. Idempotent:
// accelerators and offerings that already exist are left untouched (so corrections made
// through the API survive a re-seed), new ones are inserted with every price observation
// and the validity intervals of SeedIntervals. Bumps the revision only when it inserted
// something, so a second run changes nothing.
SeedReport Seed(pqxx::connection& conn, const pricing::Catalog& catalog);

}  // namespace gpucost::storage
