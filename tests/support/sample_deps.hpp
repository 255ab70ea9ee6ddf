#pragma once

#include <memory>

#include <doctest/doctest.h>

#include "pricing/catalog_loader.hpp"
#include "service/http/deps.hpp"
#include "tests/support/sample_catalog.hpp"

namespace gpucost::testing {

// Handler dependencies over the sample catalog (embedded mode: no database).
inline http::Deps SampleDeps() {
    auto loaded = pricing::LoadCatalog(SampleCatalogCsv());
    REQUIRE(loaded.ok());
    std::shared_ptr<const pricing::Catalog> catalog = loaded.value();
    http::Deps deps;
    deps.catalog = [catalog] { return catalog; };
    deps.openapi_yaml = "openapi: 3.1.0\n";
    deps.service_version = "test";
    pricing::PlanReferenceCsv reference_csv = SamplePlanReferenceCsv();
    reference_csv.catalog = catalog.get();
    auto reference = pricing::LoadPlanReference(reference_csv);
    REQUIRE(reference.ok());
    deps.plan_reference =
        std::make_shared<const pricing::PlanReference>(std::move(reference).value());
    return deps;
}

}  // namespace gpucost::testing
