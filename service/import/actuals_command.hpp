#pragma once

// `gpucost actuals import focus FILE... [--tag-key KEY] [--group-by KEY] [--into STORE.csv]
// [--team TEAM]` (docs/billing.md): reads the clouds' FOCUS exports, reports what was kept and
// skipped (JSON on `out`; with --group-by, the showback by that Tags key) and stores the kept
// accelerator charges not stored already (idempotent: a row already imported, by its identity, is
// not added again): with --into, appended to STORE.csv; without it and with a database
// (DATABASE_URL), into the database as POST /v1/actuals stores them, one import per file owned by
// TEAM ("default"); with neither, nowhere. `gpucost actuals compare --plan FORECAST.csv --actuals
// STORE.csv [--tag VALUE] [--currency C]`: a plan's FOCUS forecast (its accelerator rows) against
// the imported actuals (rows with that tag value, in that currency), by month, the gap split into
// price and quantity (pricing/plan_vs_actual.hpp), as JSON on `out`.

#include <cstdio>
#include <string>
#include <vector>

#include "pricing/catalog.hpp"
#include "service/import/mappings.hpp"
#include "service/ports/actuals_store.hpp"

namespace gpucost::import {

// The columns of the --into store, in order.
const std::vector<std::string>& ActualsStoreColumns();

// `args` are the words after `gpucost actuals`; `database` the imported spend's store when
// DATABASE_URL is set (null: none). Exit status: kImportOk, kImportFailed (a file could not be
// read or written, the database not reached), kImportBadInput (usage, or an export that is not
// FOCUS).
int RunActualsCommand(const std::vector<std::string>& args, const pricing::Catalog& catalog,
                      const Mappings& mappings, std::FILE* out, std::FILE* err,
                      ports::ActualsStore* database = nullptr);

}  // namespace gpucost::import
