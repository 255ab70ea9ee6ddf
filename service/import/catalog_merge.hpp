#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/catalog_loader.hpp"
#include "service/import/price_file.hpp"

namespace gpucost::import {

struct ProviderCounts {
    std::size_t offerings_added = 0;
    std::size_t prices_added = 0;
};

// A price an import changes: the offering's current price and the imported one.
struct PriceChange {
    std::string offering_id;
    double old_usd_per_hour = 0;
    double new_usd_per_hour = 0;
};

// What an import adds to a catalog, and the counts the summary prints.
struct ImportPlan {
    std::vector<pricing::Offering> new_offerings;  // each carries its first price in `price`
    // Observations for offerings that exist (in the base catalog or earlier in this plan).
    std::vector<std::pair<std::string, pricing::PriceObservation>> new_prices;
    std::size_t offerings_added = 0;
    std::size_t prices_added = 0;
    std::size_t prices_changed = 0;              // differ from the offering's current price
    std::size_t prices_unchanged = 0;            // same price, newer observation
    std::vector<PriceChange> price_changes;      // one per prices_changed
    std::map<std::string, std::size_t> skipped;  // the files' skips plus the merge's own
    std::map<std::string, ProviderCounts> by_provider;
};

// Compares the files' offerings with `base`: a new id becomes a new offering; a known id
// gains a price observation unless one with the same as_of and source is already recorded
// (skipped as "already_recorded"). An imported row whose accelerator or count disagrees with
// the catalog's offering of the same id, or whose accelerator the catalog lacks, is skipped.
ImportPlan PlanImport(const pricing::Catalog& base, const std::vector<FileResult>& files);

// `base` with the plan's offerings and prices appended in the base files' own column order
// (columns the importer does not know are left empty); accelerators.csv is copied unchanged.
pricing::CatalogCsv AppendToCatalog(const pricing::CatalogCsv& base, const ImportPlan& plan);

// Writes accelerators.csv, offerings.csv and prices.csv to `dir` (created if missing): each
// file is written beside its target and flushed; then a marker records that all three are
// whole (the commit point), and they are renamed over the old ones. A failed import leaves the
// directory as it was; one stopped (a crash, a killed Job) before the marker leaves the old
// files, after it the next write or FinishCatalogDirWrite completes the renames: the three
// files never stay a mix of two writes.
[[nodiscard]] pricing::Status WriteCatalogDir(const std::string& dir,
                                              const pricing::CatalogCsv& csv);

// Completes a write of `dir` stopped after its commit point (renames what is staged), or
// discards one stopped before it. Called before a catalog directory is read to be extended.
[[nodiscard]] pricing::Status FinishCatalogDirWrite(const std::string& dir);

}  // namespace gpucost::import
