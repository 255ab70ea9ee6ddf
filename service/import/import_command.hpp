#pragma once

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "pricing/catalog_loader.hpp"
#include "service/import/catalog_merge.hpp"
#include "service/ports/catalog_store.hpp"

namespace gpucost::import {

// `gpucost import FORMAT FILE... [--as-of DATE] [--region R,...] (--out DIR | DATABASE_URL)`.
struct ImportArgs {
    std::string format;
    std::vector<std::string> files;
    std::string out_dir;
    std::string as_of;
    std::set<std::string> regions;
    // Directory holding the four mapping CSVs (the base catalog directory's mappings/ when it
    // has one); empty: the tables embedded in the binary.
    std::string mappings_dir;
    // When set, receives what the import changed (`gpucost sync` records it with the run).
    ImportPlan* changed = nullptr;
};

// Exit status of the import subcommand: 0 done, 1 the catalog or the database refused the
// result, 2 bad arguments or a malformed/unreadable price file (nothing written).
inline constexpr int kImportOk = 0;
inline constexpr int kImportFailed = 1;
inline constexpr int kImportBadInput = 2;

// Reads the files, merges them into `base` and writes the complete catalog to args.out_dir.
// Prints the JSON summary on `out`, errors on `err`.
int RunImportToDir(const ImportArgs& args, const pricing::CatalogCsv& base, std::FILE* out,
                   std::FILE* err);

// The same, recorded in the writable catalog through its write path (PostgreSQL mode): new
// offerings in one CreateOfferings write, then every new observation in one PutPrices write
// (placed by the current-price rule, as PUT places one).
int RunImportToStore(const ImportArgs& args, ports::CatalogStore& store, std::FILE* out,
                     std::FILE* err);

}  // namespace gpucost::import
