#pragma once

// Stored price books (database mode): the /v1/price-books routes, and the one place
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
#include "service/http/deps.hpp"

namespace gpucost::http {

// A plan's price book and how it was chosen.
struct PlanBook {
    std::optional<pricing::PriceBook> book;  // none: list prices
    // The calling key's default book (the request named none): the answer says so.
    bool from_key_default = false;
};

// Takes `price_book` out of a plan body (so the plan's decoder never sees it). Absent: the
// latest version of the calling key's default book when it has one (database mode), else list
// prices; null: list prices (a key's default declined); an object with `name` and `rules`: the
// inline book; a string or {"id", "version"}: that stored book (its latest version, or
// `version`), which needs database mode (409 database_required otherwise) and a key of either
// scope (401 without one: negotiated prices are confidential); an id with no live book the
// key's team may plan with (its own, one shared with it, any for an org key) is 422 naming
// /price_book (/price_book/id in the object form), a version it never had 422 naming
// /price_book/version. On failure writes the problem and returns
// nullopt.
std::optional<PlanBook> TakePlanPriceBook(const Deps& deps, nlohmann::json& body,
                                          const httplib::Request& req, httplib::Response& res);

// Takes `price_book` out of a plan request without writing an answer: the inline book, a
// stored book named by id or {"id", "version"} (database mode; 409 database_required
// without one, 422 as above), or none (absent or null: a saved request is not given its
// caller's default book here). A stored book is resolved only for a `caller` that may plan
// with it (PlansWithBook); to anyone else it is an unknown id. Saved scenarios resolve theirs
// here, for the caller evaluating them, so a book's current version is never priced for a
// caller who may not plan with it.
[[nodiscard]] pricing::Result<std::optional<pricing::PriceBook>> ResolvePlanBook(
    const Deps& deps, nlohmann::json& body, const std::optional<Principal>& caller);

}  // namespace gpucost::http
