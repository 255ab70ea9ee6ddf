#pragma once

// Stored price books (issue 25, database mode): the /v1/price-books routes, and the one place
// a plan's `price_book` member is resolved, inline or by a stored book's id, for the plan
// routes and for saved scenarios alike (docs/billing.md).

#include <functional>
#include <memory>
#include <optional>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/price_book.hpp"
#include "service/http/router.hpp"

namespace gpucost::http {

// Takes `price_book` out of a plan body (so the plan's decoder never sees it): nullopt when
// absent or null; an object is the inline book; a string is the latest version of the stored
// book of that id, which needs database mode (409 database_required otherwise) and a key of
// either scope (401/403 as on GET /v1/price-books/{id}: negotiated prices are confidential);
// an id with no live book is 422 naming /price_book. On failure writes the problem and
// returns nullopt.
std::optional<std::optional<pricing::PriceBook>> TakePlanPriceBook(const Deps& deps,
                                                                   nlohmann::json& body,
                                                                   const httplib::Request& req,
                                                                   httplib::Response& res);

// A saved scenario's plan request evaluated as the plan route would price it: its
// `price_book` (inline, or a stored book's id: its latest version, as a re-evaluation prices
// on today's terms; the key was checked when the scenario was saved) applied to `catalog`
// before `evaluate` plans, and the answer marked with its pricing basis and the book's rules
// under `assumptions`. Errors name /price_book... (the caller puts them under /request).
using PlanEvaluation = std::function<pricing::Result<nlohmann::json>(
    const nlohmann::json& request, const pricing::Catalog& catalog)>;
[[nodiscard]] pricing::Result<nlohmann::json> EvaluateWithPriceBook(
    const Deps& deps, nlohmann::json request, std::shared_ptr<const pricing::Catalog> catalog,
    const PlanEvaluation& evaluate);

}  // namespace gpucost::http
