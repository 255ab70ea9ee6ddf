#pragma once

#include <string_view>

namespace gpucost::http {

// The contract's version (openapi.yaml info.version), sent on every answer as `API-Version`
// so a client can log which contract answered it. Minor versions add, and rename with the old
// name kept for one more minor version (docs/api.md, "Versions and deprecation"); the contract
// test checks that this equals info.version.
inline constexpr std::string_view kApiVersion = "0.2.0";
inline constexpr char kApiVersionHeader[] = "API-Version";

}  // namespace gpucost::http
