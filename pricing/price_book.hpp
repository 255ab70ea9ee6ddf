#pragma once

// Price books: negotiated prices as rules over the catalog's list prices, applied
// as a view of the catalog before planning, so every planner ranks, budgets and compares by
// the effective price without knowing a book exists.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"

namespace gpucost::pricing {

// A discount of 1 would make compute free; a negotiated discount that large is a typo.
// Upper bound on discount_fraction (exclusive); judgement (public EDP and private-pricing
// discounts reported by AWS/Azure/GCP customers are 5-60 %, billing-references).
inline constexpr double kMaxDiscountFraction = 1.0;
// Rules in one book; a private rate card of a few hundred lines fits.
inline constexpr std::size_t kMaxPriceBookRules = 1000;
// Owned-capacity entries in one book: a company's live reservations of one provider run to
// tens; judgement.
inline constexpr std::size_t kMaxOwnedCapacity = 100;
// Hours in a UTC day: owned capacity's dates are whole days.
inline constexpr double kHoursPerDay = 24.0;
// Uncovered hours below this are floating-point residue of subtracting hours counted from
// 1970 (about 5e5 h), not time to pay for: 3.6 ms. Definition.
inline constexpr double kOwnedHoursResidue = 1e-6;

// The currency a book's contract is written in unless it says otherwise: the catalog's.
inline constexpr char kBookCurrencyDefault[] = "USD";

// One rule. Either a discount (`discount_fraction` in [0, 1)) on the offerings of `provider`,
// narrowed by any of instance_family, accelerator, region and price_types; or a fixed rate
// (`usd_per_hour` for the whole offering, as catalog prices are) for one `offering_id`.
// A discount applies to on-demand prices only unless `price_types` names others: a provider's
// enterprise discount (EDP, private pricing) is written against on-demand rates, usually
// excludes spot and does not stack on commitment prices, which are discounted already
// (billing-references), so spot and commitments are opted into, never in by default.
// `valid_from` / `valid_until` (YYYY-MM-DD, both days included) bound when the contract
// grants the rule: outside them it prices nothing.
// Ids compare case-insensitively (IdKey). `instance_family` matches an instance type that
// starts with it followed by a separator ('.', '-', '_') or nothing: "p5" matches
// "p5.48xlarge" but not "p5e.48xlarge"; "a3-highgpu" matches "a3-highgpu-8g".
struct PriceBookRule {
    std::optional<std::string> provider;
    std::optional<std::string> instance_family;
    std::optional<std::string> accelerator;
    std::optional<std::string> region;
    std::vector<PriceType> price_types;  // empty: on_demand only
    std::optional<double> discount_fraction;
    std::optional<std::string> offering_id;
    std::optional<double> usd_per_hour;
    std::optional<std::string> valid_from;   // YYYY-MM-DD, the first day it applies
    std::optional<std::string> valid_until;  // YYYY-MM-DD, the last day it applies
};

// The price types a discount rule applies to: its price_types, else on_demand alone.
std::vector<PriceType> RulePriceTypes(const PriceBookRule& rule);

// True when `rule` is in force on `day` (days since 1970-01-01 UTC): within its valid_from /
// valid_until, both included; a rule without them always is.
bool RuleInForce(const PriceBookRule& rule, long long day);

// Capacity already owned: a reservation or committed capacity of `nodes` instances of one
// offering from `start_date` (first day, UTC) to `end_date` (exclusive), whose hours are paid
// whether used or not at `usd_per_hour` per instance (the commitment's own rate, as paid).
// Every plan uses it first at no marginal cost while it lasts (docs/billing.md).
struct OwnedCapacity {
    std::string offering_id;
    int nodes = 0;
    std::string start_date;  // YYYY-MM-DD
    std::string end_date;    // YYYY-MM-DD, the day after the last day owned
    double usd_per_hour = 0;
    // A part of an entry that the plans ahead of this one left (owned_ledger.hpp): hours since
    // 1970-01-01 UTC, finer than the dates, which they then override. Unset in a book.
    std::optional<double> from_hour = std::nullopt;
    std::optional<double> until_hour = std::nullopt;
};

// The hours [start, end) an entry owns (since 1970-01-01 UTC): its from_hour/until_hour when
// set, else its dates; nullopt for a malformed date.
std::optional<std::pair<double, double>> OwnedSpanHours(const OwnedCapacity& entry);

// Covered instance-hours as stated: to kOwnedHoursResidue (hours counted from 1970, about 5e5,
// leave residue in the last bits of their differences: 6131.999999999999 h for 6132).
double StatedOwnedHours(double instance_hours);

// What owned capacity covers of a run: instance-hours, and those hours at the commitments'
// own rates (paid whether used or not: sunk, not marginal).
struct OwnedCover {
    double instance_hours = 0;
    double sunk_usd = 0;
};

// The instance-hours of a run of `nodes` instances of `offering_id` over [start_hour,
// end_hour) (hours since 1970-01-01 UTC) that the entries of `owned` for that offering cover:
// at each moment at most `nodes` instances, taken from the entries in list order (so their
// rates are charged in that order); entries of other offerings are ignored.
OwnedCover CoverRun(const std::vector<OwnedCapacity>& owned, std::string_view offering_id,
                    int nodes, double start_hour, double end_hour);

// The warning every plan gives when its book lists owned capacity yet none of it covers what
// the plan prices: `/price_book/owned_capacity`, naming the offerings owned and what was
// looked for (`looked_for`, e.g. "the options planned from 2027-01-01"); the plan is then
// priced as if nothing were owned.
FieldError OwnedCoversNothing(const std::vector<OwnedCapacity>& owned, std::string_view looked_for);

// A named, versioned set of rules. `id` is empty for an inline book.
struct PriceBook {
    std::string name;
    std::string id;
    int version = 1;
    std::vector<PriceBookRule> rules;
    std::vector<OwnedCapacity> owned_capacity;
    // ISO 4217 code of the contract's currency. Plans price in the catalog's USD, so a book in
    // another currency gives discounts only (fractions mean the same in any currency): an
    // amount of it (a fixed rate, an owned rate) beside USD list prices would mix currencies.
    std::string currency = kBookCurrencyDefault;

    // kInvalidArgument naming `<pointer>/name`, `<pointer>/currency`, `<pointer>/rules/<i>/...`,
    // `<pointer>/owned_capacity/<i>/...`: a name; up to kMaxPriceBookRules rules and up to
    // kMaxOwnedCapacity owned entries, at least one of either; each rule either a discount
    // with a provider (discount_fraction in [0, kMaxDiscountFraction)) or a fixed
    // usd_per_hour > 0 with an offering_id and no narrowing fields; not both; each owned entry
    // an offering_id, nodes >= 1, dates (YYYY-MM-DD) with end_date after start_date and
    // usd_per_hour >= 0; a rule's valid_from / valid_until dates, valid_until not before
    // valid_from; currency three capital letters, and in a book not in USD no fixed rate and
    // no owned rate above 0. Every failing field is listed.
    [[nodiscard]] Status Validate(const std::string& pointer = "/price_book") const;
};

// Which rule priced an offering, and how.
struct AppliedPrice {
    double list_usd_per_hour = 0;
    double effective_usd_per_hour = 0;
    std::optional<std::size_t> rule_index;  // nullopt: no rule matched (list price)
};

// The catalog seen through a price book on one day: the same accelerators and offerings, each
// offering's current price replaced by its effective price (provenance kept). Precedence per
// offering, among the rules in force that day: a fixed-rate rule for its id; else the matching
// discount rule that narrows by most fields (ties: the first listed); else the list price.
// Discounts do not stack. Immutable and thread-safe; keeps the base catalog alive.
class PricedCatalog final : public Catalog {
public:
    PricedCatalog(std::shared_ptr<const Catalog> base, PriceBook book,
                  std::vector<Offering> offerings, std::vector<AppliedPrice> applied,
                  std::vector<std::size_t> matches_per_rule,
                  std::optional<std::string> priced_on = std::nullopt);

    const std::vector<Accelerator>& Accelerators() const override { return base_->Accelerators(); }
    const OfferingList& Offerings() const override { return offerings_; }
    Result<Accelerator> FindAccelerator(std::string_view id) const override {
        return base_->FindAccelerator(id);
    }
    Result<Offering> FindOffering(std::string_view id) const override;
    CatalogInfo Describe() const override { return base_->Describe(); }
    std::vector<ProviderSummary> Providers() const override { return base_->Providers(); }

    const PriceBook& Book() const { return book_; }
    // The list and effective price of an offering (case-insensitive id); nullptr if unknown.
    const AppliedPrice* PriceOf(std::string_view offering_id) const;
    // Offerings each rule priced, in rule order.
    const std::vector<std::size_t>& MatchesPerRule() const { return matches_per_rule_; }
    // The day the rules' validity was checked against (YYYY-MM-DD); nullopt: not checked.
    const std::optional<std::string>& PricedOn() const { return priced_on_; }
    // What an answer priced through the book says about it: a rule out of force on PricedOn
    // (`/price_book/rules/<i>/valid_from` or `/valid_until`), a rule that priced no offering
    // (`/price_book/rules/<i>`), a rule that discounts spot (`/price_book/rules/<i>/price_types`),
    // and a book not in USD (`/price_book/currency`), each saying why.
    std::vector<FieldError> Warnings() const;
    // The rules as echoed constants: `price_book.rules[i].discount_fraction` (fraction) or
    // `price_book.rules[i].usd_per_hour` (usd_per_hour), and each owned entry's rate as
    // `price_book.owned_capacity[i].usd_per_hour`, source "request".
    Assumptions BookAssumptions() const;

private:
    std::shared_ptr<const Catalog> base_;
    PriceBook book_;
    OfferingList offerings_;
    std::vector<AppliedPrice> applied_;  // parallel to offerings_
    std::vector<std::size_t> matches_per_rule_;
    std::optional<std::string> priced_on_;
    std::unordered_map<std::string, std::size_t> index_;
};

// True when `rule` (a discount rule) applies to `offering`; fixed-rate rules match their id.
bool RuleMatches(const PriceBookRule& rule, const Offering& offering);

// Validates `book` and applies to every offering of `base` the rules in force on `priced_on`
// (YYYY-MM-DD: the plan's start date, else its as_of day, else today; nullopt, as when a
// written book is checked, applies every rule). Errors as PriceBook::Validate; a fixed-rate
// rule or an owned entry naming an offering the catalog lacks is kInvalidArgument naming
// `/price_book/rules/<i>/offering_id` or `/price_book/owned_capacity/<i>/offering_id`; a
// `priced_on` that is not a date is kInvalidArgument naming `start_date`.
[[nodiscard]] Result<std::shared_ptr<const PricedCatalog>> ApplyPriceBook(
    std::shared_ptr<const Catalog> base, PriceBook book,
    const std::optional<std::string>& priced_on = std::nullopt);

}  // namespace gpucost::pricing
