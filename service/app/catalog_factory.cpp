#include "service/app/catalog_factory.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "pricing/catalog_loader.hpp"
#include "service/app/embedded_data.hpp"
#include "service/app/embedded_docs.hpp"
#include "service/app/embedded_web.hpp"

namespace gpucost::app {
namespace {

pricing::Result<std::string> ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return pricing::MakeError(pricing::ErrorCode::kNotFound, "cannot read " + path);
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

namespace {

pricing::CatalogCsv EmbeddedCsv() {
    pricing::CatalogCsv csv;
    csv.accelerators_csv = std::string(embedded::kAcceleratorsCsv);
    csv.offerings_csv = std::string(embedded::kOfferingsCsv);
    csv.prices_csv = std::string(embedded::kPricesCsv);
    csv.accelerators_name = "schema/seed/accelerators.csv (embedded)";
    csv.offerings_name = "schema/seed/offerings.csv (embedded)";
    csv.prices_name = "schema/seed/prices.csv (embedded)";
    csv.origin = "embedded";
    return csv;
}

pricing::Result<pricing::CatalogCsv> DirCsv(const std::string& dir) {
    pricing::CatalogCsv csv;
    csv.accelerators_name = dir + "/accelerators.csv";
    csv.offerings_name = dir + "/offerings.csv";
    csv.prices_name = dir + "/prices.csv";
    csv.origin = dir;
    for (auto [path, out] : {std::pair{&csv.accelerators_name, &csv.accelerators_csv},
                             std::pair{&csv.offerings_name, &csv.offerings_csv},
                             std::pair{&csv.prices_name, &csv.prices_csv}}) {
        auto text = ReadFile(*path);
        if (!text.ok()) {
            return text.error();
        }
        *out = std::move(text).value();
    }
    return csv;
}

}  // namespace

pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> LoadEmbeddedCatalog() {
    return pricing::LoadCatalog(EmbeddedCsv());
}

pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> LoadCatalogFromDir(
    const std::string& dir) {
    auto csv = DirCsv(dir);
    if (!csv.ok()) {
        return csv.error();
    }
    return pricing::LoadCatalog(csv.value());
}

pricing::Result<pricing::CatalogCsv> ReadCatalogCsv(const std::string& dir) {
    return dir.empty() ? pricing::Result<pricing::CatalogCsv>(EmbeddedCsv()) : DirCsv(dir);
}

pricing::Result<std::shared_ptr<const pricing::ModelLibrary>> LoadModelLibraryFromDir(
    const std::string& dir) {
    const std::string path = dir + "/models.csv";
    if (!std::ifstream(path).good()) {
        return std::shared_ptr<const pricing::ModelLibrary>();
    }
    auto text = ReadFile(path);
    if (!text.ok()) {
        return text.error();
    }
    auto library = pricing::LoadModelLibrary(text.value(), path);
    if (!library.ok()) {
        return library.error();
    }
    return std::make_shared<const pricing::ModelLibrary>(std::move(library).value());
}

namespace {

// The plan reference's files as built into the binary, for `catalog`.
pricing::PlanReferenceCsv EmbeddedPlanReferenceCsv(const pricing::Catalog& catalog) {
    pricing::PlanReferenceCsv csv;
    csv.capacity_csv = std::string(embedded::kCapacityCsv);
    csv.data_prices_csv = std::string(embedded::kDataPricesCsv);
    csv.capacity_name = "schema/seed/capacity.csv (embedded)";
    csv.data_prices_name = "schema/seed/data_prices.csv (embedded)";
    csv.regions_csv = std::string(embedded::kRegionsCsv);
    csv.regions_name = "schema/seed/regions.csv (embedded)";
    csv.catalog = &catalog;
    return csv;
}

}  // namespace

pricing::Result<pricing::PlanReference> LoadEmbeddedPlanReference(const pricing::Catalog& catalog) {
    return pricing::LoadPlanReference(EmbeddedPlanReferenceCsv(catalog));
}

pricing::Result<pricing::PlanReference> LoadPlanReferenceFromDir(const std::string& dir,
                                                                 const pricing::Catalog& catalog) {
    pricing::PlanReferenceCsv csv = EmbeddedPlanReferenceCsv(catalog);
    for (auto [file, text, name] :
         {std::tuple{"/capacity.csv", &csv.capacity_csv, &csv.capacity_name},
          std::tuple{"/data_prices.csv", &csv.data_prices_csv, &csv.data_prices_name},
          std::tuple{"/regions.csv", &csv.regions_csv, &csv.regions_name}}) {
        const std::string path = dir + file;
        if (!std::filesystem::exists(path)) {
            continue;  // the embedded table stands in
        }
        auto read = ReadFile(path);
        if (!read.ok()) {
            return read.error();
        }
        *text = std::move(read).value();
        *name = path;
    }
    return pricing::LoadPlanReference(csv);
}

std::string_view EmbeddedOpenApiYaml() {
    return embedded::kOpenApiYaml;
}

std::string_view EmbeddedRedocJs() {
    return embedded::kRedocStandaloneJs;
}

WebFiles EmbeddedWebFiles() {
    return {embedded::kWebIndexHtml, embedded::kWebAppJs, embedded::kWebAppCss};
}

}  // namespace gpucost::app
