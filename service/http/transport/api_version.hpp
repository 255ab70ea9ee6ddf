#pragma once

#include <string>
#include <string_view>

#include <httplib.h>

#include "service/version.hpp"

namespace gpucost::http {

// The contract's version, sent on every answer as `API-Version` so a client can log which
// contract answered it. The service and its contract share one version (service/version.hpp,
// from CMakeLists.txt's project()); a release names it (docs/development.md, "Releasing").
// Minor versions add, and rename with the old name kept for one more minor version
// (docs/api.md, "Versions and deprecation").
inline constexpr std::string_view kApiVersion = kVersion;
inline constexpr char kApiVersionHeader[] = "API-Version";

// Every answer computed from catalog prices (offerings, the catalog, plans, scenario
// evaluations, their CSVs) names the catalog version in this header as well as in its body,
// so a CSV or a cached copy can still say which prices it holds.
inline constexpr char kCatalogVersionHeader[] = "Catalog-Version";
inline void SetCatalogVersionHeader(httplib::Response& res, const std::string& version) {
    res.set_header(kCatalogVersionHeader, version);
}

}  // namespace gpucost::http
