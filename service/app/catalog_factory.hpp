#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pricing/catalog_loader.hpp"
#include "pricing/error.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "pricing/model_library.hpp"
#include "pricing/plan_reference.hpp"

namespace gpucost::app {

// The catalog built into the binary from schema/seed/*.csv at compile time.
// kInvalidArgument (naming file and line) if the embedded data is invalid, which a unit test
// rules out for every build.
[[nodiscard]] pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>>
LoadEmbeddedCatalog();

// Reads accelerators.csv, offerings.csv and prices.csv from `dir` and validates them.
// kNotFound when a file cannot be read; kInvalidArgument naming the file and line for bad data.
[[nodiscard]] pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> LoadCatalogFromDir(
    const std::string& dir);

// The catalog tables as text: from `dir`, or the embedded ones when `dir` is empty (the base
// that `gpucost import` extends). kNotFound when a file cannot be read.
[[nodiscard]] pricing::Result<pricing::CatalogCsv> ReadCatalogCsv(const std::string& dir);

// Reads `dir`/models.csv (the model library) when the directory has one: nullptr when it does
// not (the compiled-in library stays); kInvalidArgument naming the file and line for bad data.
[[nodiscard]] pricing::Result<std::shared_ptr<const pricing::ModelLibrary>> LoadModelLibraryFromDir(
    const std::string& dir);

// The planners' reference data (capacity limits, storage and egress prices, where regions are)
// built into the binary from schema/seed/capacity.csv, data_prices.csv and regions.csv;
// accelerator workloads are taken from `catalog` (the CSV catalog the service started from).
[[nodiscard]] pricing::Result<pricing::PlanReference> LoadEmbeddedPlanReference(
    const pricing::Catalog& catalog);

// As above from `dir`: its capacity.csv, data_prices.csv and regions.csv where present, the
// embedded tables otherwise. kInvalidArgument naming the file and line for bad data.
[[nodiscard]] pricing::Result<pricing::PlanReference> LoadPlanReferenceFromDir(
    const std::string& dir, const pricing::Catalog& catalog);

// The OpenAPI document built into the binary (openapi.yaml at compile time).
std::string_view EmbeddedOpenApiYaml();
// Redoc's standalone bundle for /docs, or empty when the build had no node_modules.
std::string_view EmbeddedRedocJs();
// The planning page (web/ built by CMake, or GPUCOST_WEB_DIST); app_js is empty when the build
// had neither.
struct WebFiles {
    std::string_view index_html;
    std::string_view app_js;
    std::string_view app_css;
};
WebFiles EmbeddedWebFiles();

}  // namespace gpucost::app
