#pragma once

// `gpucost actuals import focus FILE... [--tag-key KEY] [--into STORE.csv]` (issue 25,
// docs/billing.md): reads the clouds' FOCUS exports, reports what was kept and skipped (JSON on
// `out`) and, with --into, appends the kept accelerator charges not already in STORE.csv
// (idempotent: a row already imported, by its identity, is not added again).
// `gpucost actuals compare --plan FORECAST.csv --actuals STORE.csv [--tag VALUE] [--currency C]`:
// a plan's FOCUS forecast (its accelerator rows) against the imported actuals (rows with that
// tag value, in that currency), by month, the gap split into price and quantity
// (pricing/plan_vs_actual.hpp), as JSON on `out`.

#include <cstdio>
#include <string>
#include <vector>

#include "pricing/catalog.hpp"
#include "service/import/mappings.hpp"

namespace gpucost::import {

// The columns of the --into store, in order.
const std::vector<std::string>& ActualsStoreColumns();

// `args` are the words after `gpucost actuals`. Exit status: kImportOk, kImportFailed (a file
// could not be read or written), kImportBadInput (usage, or an export that is not FOCUS).
int RunActualsCommand(const std::vector<std::string>& args, const pricing::Catalog& catalog,
                      const Mappings& mappings, std::FILE* out, std::FILE* err);

}  // namespace gpucost::import
