#pragma once

#include <memory>
#include <string>

#include "pricing/error.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "pricing/plan_reference.hpp"

namespace gpucost::pricing {

// The three catalog tables as CSV text (columns documented in schema/seed/README.md).
// The *_name fields are used in error messages only.
struct CatalogCsv {
    std::string accelerators_csv;
    std::string offerings_csv;
    std::string prices_csv;
    std::string accelerators_name = "accelerators.csv";
    std::string offerings_name = "offerings.csv";
    std::string prices_name = "prices.csv";
    std::string origin = "embedded";
};

// Parses and validates the catalog tables and builds a snapshot whose offerings carry their
// current price (SelectCurrentPrice) and superseded observations.
// Errors (kInvalidArgument), each naming the file and line: missing or unknown column, a
// value that is not a number where one is required, a negative number, a duplicate
// accelerator or offering id, an unknown accelerator/provider/price type/spot bucket, a
// malformed date, a price row both verified and with an estimated date, a price row for an
// unknown offering, a duplicate price row (same offering,
// as_of and source), and an offering with no price row.
[[nodiscard]] Result<std::shared_ptr<const InMemoryCatalog>> LoadCatalog(const CatalogCsv& csv);

// The planners' reference tables as CSV text (schema/seed/capacity.csv, data_prices.csv,
// regions.csv) and
// the catalog whose accelerators' `workloads` the planners should use (the CSV catalog the
// service started from; may be null).
struct PlanReferenceCsv {
    std::string capacity_csv;
    std::string data_prices_csv;
    std::string regions_csv;  // empty: no region table (no offering is in any geography)
    std::string capacity_name = "capacity.csv";
    std::string data_prices_name = "data_prices.csv";
    std::string regions_name = "regions.csv";
    const Catalog* catalog = nullptr;
};

// Parses and validates the reference tables. Errors (kInvalidArgument) name the file and
// line: missing or unknown column, unknown provider or price type, a bad number, boolean or
// date, a missing source, a duplicate provider in data_prices.csv; in regions.csv a duplicate
// (provider, region), a country that is not an upper-case ISO 3166-1 alpha-2 code, an unknown
// continent, countries without continents or the reverse.
[[nodiscard]] Result<PlanReference> LoadPlanReference(const PlanReferenceCsv& csv);

// 16 hex digits of FNV-1a 64 over the text; used as the catalog version.
std::string ContentHash(const std::string& text);

// True for a valid calendar date written YYYY-MM-DD.
bool IsIsoDate(const std::string& text);

}  // namespace gpucost::pricing
