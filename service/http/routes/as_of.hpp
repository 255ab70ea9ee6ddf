#pragma once

#include <memory>
#include <optional>
#include <string>

#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/deps.hpp"

namespace gpucost::http {

// Name of the query parameter (and plan-request member) that asks for time travel.
inline constexpr char kAsOfParam[] = "as_of";

// The catalog a request is evaluated against: the current snapshot without `as_of`; with
// it, the prices valid at that instant (see ParseAsOf). kInvalidArgument (422) for a bad
// value, kUnavailable (503) in embedded mode, which keeps no history.
[[nodiscard]] pricing::Result<std::shared_ptr<const pricing::Catalog>> CatalogAsOf(
    const Deps& deps, const std::optional<std::string>& as_of);

// CatalogAsOf for the request's `as_of` query parameter (kMalformed when given twice).
[[nodiscard]] pricing::Result<std::shared_ptr<const pricing::Catalog>> CatalogForQuery(
    const Deps& deps, const QueryParams& params);

}  // namespace gpucost::http
