#pragma once

#include <string>
#include <string_view>

#include <httplib.h>

namespace gpucost::http {

// The contract's version (openapi.yaml info.version), sent on every answer as `API-Version`
// so a client can log which contract answered it. Minor versions add, and rename with the old
// name kept for one more minor version (docs/api.md, "Versions and deprecation"); the contract
// test checks that this equals info.version.
inline constexpr std::string_view kApiVersion = "0.2.0";
inline constexpr char kApiVersionHeader[] = "API-Version";

// Every answer computed from catalog prices (offerings, the catalog, plans, scenario
// evaluations, their CSVs) names the catalog version in this header as well as in its body,
// so a CSV or a cached copy can still say which prices it holds.
inline constexpr char kCatalogVersionHeader[] = "Catalog-Version";
inline void SetCatalogVersionHeader(httplib::Response& res, const std::string& version) {
    res.set_header(kCatalogVersionHeader, version);
}

}  // namespace gpucost::http
