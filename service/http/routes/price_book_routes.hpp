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

// Takes `price_book` out of a plan request without writing an answer: the inline book, the
// latest version of a stored book named by id (database mode; 409 database_required
// without one, 422 on /price_book for an unknown id), or none. Saved scenarios resolve
// theirs here (the key was checked when the scenario was saved).
[[nodiscard]] pricing::Result<std::optional<pricing::PriceBook>> ResolvePlanBook(
    const Deps& deps, nlohmann::json& body);

}  // namespace gpucost::http
