#pragma once

// Inline price books on the plan routes (docs/billing.md): decoding `price_book`,
// applying it to the catalog snapshot before planning, and marking the answer with its basis.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/owned_ledger.hpp"
#include "pricing/price_book.hpp"

namespace gpucost::http {

// Rules a book given inline (a plan's `price_book` object) may list. Anyone may send one with a
// plan, and the book is applied to every offering of the catalog before planning: a fixed rate
// for each offering of the shipped catalog (187) fits with room. A larger rate card is stored
// with an admin key (POST /v1/price-books, up to pricing::kMaxPriceBookRules) and named by id.
inline constexpr std::size_t kMaxInlinePriceBookRules = 200;

// Removes `price_book` from `body` (so the plan's own decoder never sees it) and decodes it:
// nullopt when absent or null. A string (a stored book's id) is kDatabaseRequired (409): stored
// books are resolved before this by TakePlanPriceBook (routes/price_book_routes.hpp) in
// database mode. Type errors and unknown members are
// kMalformed (400), missing or bad values kInvalidArgument (422), naming /price_book/..., as
// JsonReader reports them on every route.
[[nodiscard]] pricing::Result<std::optional<pricing::PriceBook>> TakePriceBook(
    nlohmann::json& body);

// A book object at `pointer` ("/price_book" in a plan, "" as a /v1/price-books body): members
// name, rules, owned_capacity, id, version (rules may be left out beside owned_capacity);
// errors as TakePriceBook's. More than `max_rules` rules or kMaxOwnedCapacity entries is
// kInvalidArgument naming the list, before any element is decoded; the rest is not validated
// (PriceBook::Validate).
[[nodiscard]] pricing::Result<pricing::PriceBook> DecodePriceBook(
    const nlohmann::json& value, const std::string& pointer,
    std::size_t max_rules = pricing::kMaxPriceBookRules);

// A stored book's owned capacity as a ledger (pricing/owned_ledger.hpp): what the saved
// scenarios ahead of a plan hold (one holding per scenario, `holder` its id, `teams` its
// team) and what they left for it.
struct OwnedLedgerView {
    std::vector<pricing::OwnedHolding> holdings;
    std::vector<std::string> teams;  // parallel to holdings
    pricing::OwnedLedger ledger;     // holdings drawn in order: ledger.left is the plan's
    // Which scenarios draw ahead of the plan: every saved one, or those saved before one.
    std::string position;
};

// The catalog the planners get: `base` itself without a book, else the book applied to it.
struct PricingView {
    std::shared_ptr<const pricing::Catalog> catalog;
    std::shared_ptr<const pricing::PricedCatalog> priced;  // null: list prices
    bool from_key_default = false;  // the book is the calling key's default (echoed)
    // A stored book's ledger (database mode); null: the book's owned capacity is the plan's.
    std::shared_ptr<const OwnedLedgerView> ledger = nullptr;
};

// The owned capacity a plan through `view` may use: what the ledger left it, else the book's
// (nothing without a book).
const std::vector<pricing::OwnedCapacity>& OwnedOf(const PricingView& view);

// Characters of a date (YYYY-MM-DD), the first of an as_of instant.
inline constexpr std::size_t kIsoDateChars = 10;

// The day a plan's book rules must be in force (their valid_from / valid_until): the plan's
// `start_date` (a date member of `body`), else the UTC day of its `as_of` instant, else
// nullopt (today).
std::optional<std::string> PlanPricingDay(const nlohmann::json& body,
                                          const std::optional<std::string>& as_of);

// `base` seen through `book` with the rules in force on `priced_on` (nullopt: today, UTC).
[[nodiscard]] pricing::Result<PricingView> ViewThroughBook(
    std::shared_ptr<const pricing::Catalog> base, std::optional<pricing::PriceBook> book,
    const std::optional<std::string>& priced_on = std::nullopt);

// `assumptions` followed by the book's rules as echoed constants (none without a book).
pricing::Assumptions WithBookAssumptions(const pricing::Assumptions& assumptions,
                                         const PricingView& view);

// The answer (a JSON object's text) with `pricing_basis` and, with a book, `price_book`:
// {id, name, version, currency, priced_on (the day its rules' validity was checked against),
// rules_matched: [count per rule], warnings, prices, and
// from_key_default: true when the book is the calling key's default} where prices lists
// {offering_id, list_usd_per_hour, usd_per_hour, rule} for every offering the answer names
// (objects with `id` and `usd_per_hour`, which also get `list_usd_per_hour`) and for
// `named_offering_ids` (the request's spot/on-demand/rent ids). Without a book the text is
// kept as it is (the plan encoders write `"pricing_basis":"list"`). Every plan applies the
// book's owned capacity itself (its options' `owned`), so nothing about it is warned here.
std::string MarkPricingBasis(std::string answer_json, const PricingView& view,
                             const std::vector<std::string>& named_offering_ids = {});

}  // namespace gpucost::http
