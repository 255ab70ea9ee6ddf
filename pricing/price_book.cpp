#include "pricing/price_book.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "pricing/calendar.hpp"
#include "pricing/field_checker.hpp"

namespace gpucost::pricing {
namespace {

bool IsFixedRate(const PriceBookRule& r) {
    return r.usd_per_hour.has_value();
}

bool SameId(const std::optional<std::string>& rule_value, std::string_view offering_value) {
    return !rule_value || IdKey(*rule_value) == IdKey(offering_value);
}

bool FamilyMatches(const std::optional<std::string>& family, std::string_view instance_type) {
    if (!family) return true;
    std::string f = IdKey(*family);
    std::string t = IdKey(instance_type);
    if (t.size() < f.size() || t.compare(0, f.size(), f) != 0) return false;
    if (t.size() == f.size()) return true;
    char next = t[f.size()];
    return next == '.' || next == '-' || next == '_';
}

// How many fields narrow a discount rule beyond its provider: the more, the more specific.
int Narrowness(const PriceBookRule& r) {
    return (r.instance_family ? 1 : 0) + (r.accelerator ? 1 : 0) + (r.region ? 1 : 0) +
           (r.price_types.empty() ? 0 : 1);
}

bool IsCurrencyCode(const std::string& code) {
    return code.size() == 3 &&
           std::all_of(code.begin(), code.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

// A book not in USD holds no amount: plans price in the catalog's USD (PriceBook::currency).
std::string AmountsAreUsd(const std::string& currency) {
    return "a " + currency +
           " book gives discounts only: plans price in USD (the catalog's currency), so an "
           "amount here would be read as USD; give the rate as a discount_fraction, or in a USD "
           "book converted at the contract's rate";
}

void ValidateWindow(const PriceBookRule& r, const std::string& at, FieldChecker& check) {
    const auto from = r.valid_from ? DaysFromIsoDate(*r.valid_from) : std::nullopt;
    const auto until = r.valid_until ? DaysFromIsoDate(*r.valid_until) : std::nullopt;
    if (r.valid_from && !from) {
        check.Fail(at + "/valid_from", "must be a date, YYYY-MM-DD (UTC; the first day)");
    }
    if (r.valid_until && !until) {
        check.Fail(at + "/valid_until", "must be a date, YYYY-MM-DD (UTC; the last day)");
    } else if (from && until && *until < *from) {
        check.Fail(at + "/valid_until", "must not be before valid_from (both days are included)");
    }
}

void ValidateRule(const PriceBookRule& r, const std::string& at, FieldChecker& check) {
    ValidateWindow(r, at, check);
    if (IsFixedRate(r)) {
        if (!std::isfinite(*r.usd_per_hour) || *r.usd_per_hour <= 0) {
            check.Fail(at + "/usd_per_hour", "must be a number > 0");
        }
        if (!r.offering_id || r.offering_id->empty()) {
            check.Fail(at + "/offering_id", "a fixed usd_per_hour needs the offering_id it prices");
        }
        if (r.discount_fraction) {
            check.Fail(at + "/discount_fraction",
                       "give either discount_fraction or usd_per_hour, not both");
        }
        if (r.instance_family || r.accelerator || r.region || !r.price_types.empty() ||
            r.provider) {
            check.Fail(at,
                       "a fixed-rate rule names one offering_id (and its validity) and nothing "
                       "else to match");
        }
        return;
    }
    if (!r.discount_fraction) {
        check.Fail(at + "/discount_fraction",
                   "a rule needs discount_fraction (with provider) or usd_per_hour (with "
                   "offering_id)");
        return;
    }
    check.Range(*r.discount_fraction, at + "/discount_fraction", 0, kMaxDiscountFraction);
    if (*r.discount_fraction >= kMaxDiscountFraction) {
        check.Fail(at + "/discount_fraction", "must be < 1 (1 would make compute free)");
    }
    if (!r.provider || r.provider->empty()) {
        check.Fail(at + "/provider", "a discount rule needs the provider it applies to");
    } else if (FindProvider(IdKey(*r.provider)) == nullptr) {
        check.Fail(at + "/provider", "unknown provider '" + *r.provider + "'");
    }
    if (r.offering_id) {
        check.Fail(at + "/offering_id", "offering_id goes with a fixed usd_per_hour");
    }
}

void ValidateOwned(const OwnedCapacity& c, const std::string& at, FieldChecker& check) {
    if (c.offering_id.empty()) {
        check.Fail(at + "/offering_id", "owned capacity names the offering it reserves");
    }
    if (c.nodes < 1) check.Fail(at + "/nodes", "must be an integer >= 1 (instances owned)");
    const auto start = DaysFromIsoDate(c.start_date);
    const auto end = DaysFromIsoDate(c.end_date);
    if (!start) check.Fail(at + "/start_date", "must be a date, YYYY-MM-DD (UTC)");
    if (!end) {
        check.Fail(at + "/end_date", "must be a date, YYYY-MM-DD (UTC; the day after the last)");
    } else if (start && *end <= *start) {
        check.Fail(at + "/end_date", "must be after start_date (it is exclusive)");
    }
    if (!std::isfinite(c.usd_per_hour) || c.usd_per_hour < 0) {
        check.Fail(at + "/usd_per_hour", "must be a number >= 0 (per instance, as paid)");
    }
}

// The currency and the amounts a book not in USD may not hold.
void ValidateCurrency(const PriceBook& book, const std::string& pointer, FieldChecker& check) {
    if (!IsCurrencyCode(book.currency)) {
        check.Fail(pointer + "/currency", "must be an ISO 4217 code, three capital letters");
        return;
    }
    if (book.currency == kBookCurrencyDefault) return;
    for (std::size_t i = 0; i < book.rules.size() && i < kMaxPriceBookRules; ++i) {
        if (IsFixedRate(book.rules[i])) {
            check.Fail(pointer + "/rules/" + std::to_string(i) + "/usd_per_hour",
                       AmountsAreUsd(book.currency));
        }
    }
    for (std::size_t i = 0; i < book.owned_capacity.size() && i < kMaxOwnedCapacity; ++i) {
        if (book.owned_capacity[i].usd_per_hour > 0) {
            check.Fail(pointer + "/owned_capacity/" + std::to_string(i) + "/usd_per_hour",
                       AmountsAreUsd(book.currency));
        }
    }
}

// `in_force[i]`: rule i applies on the day priced (every rule when no day is).
AppliedPrice PriceOne(const PriceBook& book, const std::vector<bool>& in_force, const Offering& o) {
    AppliedPrice applied{o.price.usd_per_hour, o.price.usd_per_hour, std::nullopt};
    int best_narrowness = -1;
    for (std::size_t i = 0; i < book.rules.size(); ++i) {
        if (!in_force[i]) continue;
        const PriceBookRule& r = book.rules[i];
        if (IsFixedRate(r)) {
            if (IdKey(*r.offering_id) == IdKey(o.id)) {
                applied.effective_usd_per_hour = *r.usd_per_hour;
                applied.rule_index = i;
                return applied;  // a rate for this very offering beats any discount
            }
            continue;
        }
        if (RuleMatches(r, o) && Narrowness(r) > best_narrowness) {
            best_narrowness = Narrowness(r);
            applied.rule_index = i;
            applied.effective_usd_per_hour = o.price.usd_per_hour * (1 - *r.discount_fraction);
        }
    }
    return applied;
}

}  // namespace

Status PriceBook::Validate(const std::string& pointer) const {
    FieldChecker check;
    if (name.empty()) check.Fail(pointer + "/name", "a price book needs a name");
    if (version < 1) check.Fail(pointer + "/version", "must be an integer >= 1");
    if ((rules.empty() && owned_capacity.empty()) || rules.size() > kMaxPriceBookRules) {
        check.Fail(pointer + "/rules", "must list 1 to " + std::to_string(kMaxPriceBookRules) +
                                           " rules (none only beside owned_capacity)");
    }
    for (std::size_t i = 0; i < rules.size() && i < kMaxPriceBookRules; ++i) {
        ValidateRule(rules[i], pointer + "/rules/" + std::to_string(i), check);
    }
    if (owned_capacity.size() > kMaxOwnedCapacity) {
        check.Fail(pointer + "/owned_capacity",
                   "must list at most " + std::to_string(kMaxOwnedCapacity) + " entries");
    }
    for (std::size_t i = 0; i < owned_capacity.size() && i < kMaxOwnedCapacity; ++i) {
        ValidateOwned(owned_capacity[i], pointer + "/owned_capacity/" + std::to_string(i), check);
    }
    ValidateCurrency(*this, pointer, check);
    return check.Done();
}

FieldError OwnedCoversNothing(const std::vector<OwnedCapacity>& owned,
                              std::string_view looked_for) {
    std::string offerings;
    for (const OwnedCapacity& c : owned) {
        if (offerings.find(c.offering_id) == std::string::npos) {
            offerings += (offerings.empty() ? "" : ", ") + c.offering_id;
        }
    }
    return {"/price_book/owned_capacity",
            "owned capacity (" + offerings + ") covers none of " + std::string(looked_for) +
                ": every hour is priced at the effective price, as if nothing were owned"};
}

double StatedOwnedHours(double instance_hours) {
    const double residues_per_hour = std::round(1.0 / kOwnedHoursResidue);  // exactly 1e6
    return std::round(instance_hours * residues_per_hour) / residues_per_hour;
}

std::optional<std::pair<double, double>> OwnedSpanHours(const OwnedCapacity& entry) {
    const auto start = DaysFromIsoDate(entry.start_date);
    const auto end = DaysFromIsoDate(entry.end_date);
    if (!start || !end) return std::nullopt;
    return std::pair<double, double>{
        entry.from_hour.value_or(static_cast<double>(*start) * kHoursPerDay),
        entry.until_hour.value_or(static_cast<double>(*end) * kHoursPerDay)};
}

OwnedCover CoverRun(const std::vector<OwnedCapacity>& owned, std::string_view offering_id,
                    int nodes, double start_hour, double end_hour) {
    struct Span {
        double start_hour, end_hour;
        const OwnedCapacity* entry;
    };
    if (end_hour <= start_hour || nodes < 1) return {};
    std::vector<Span> spans;
    std::vector<double> cuts = {start_hour, end_hour};
    for (const OwnedCapacity& c : owned) {
        if (IdKey(c.offering_id) != IdKey(offering_id)) continue;
        const auto hours = OwnedSpanHours(c);
        if (!hours) continue;
        Span s{hours->first, hours->second, &c};
        if (s.end_hour <= start_hour || s.start_hour >= end_hour) continue;
        spans.push_back(s);
        cuts.push_back(std::clamp(s.start_hour, start_hour, end_hour));
        cuts.push_back(std::clamp(s.end_hour, start_hour, end_hour));
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    OwnedCover cover;
    // Between two cuts the same entries are live: each gives instances until the run has all
    // it needs.
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        const double a = cuts[k];
        const double b = cuts[k + 1];
        int wanted = nodes;
        for (const Span& s : spans) {
            if (wanted == 0) break;
            if (s.start_hour > a || s.end_hour < b) continue;
            const int taken = std::min(wanted, s.entry->nodes);
            wanted -= taken;
            cover.instance_hours += taken * (b - a);
            cover.sunk_usd += taken * (b - a) * s.entry->usd_per_hour;
        }
    }
    cover.instance_hours = StatedOwnedHours(cover.instance_hours);
    return cover;
}

std::vector<PriceType> RulePriceTypes(const PriceBookRule& rule) {
    if (rule.price_types.empty()) return {PriceType::kOnDemand};
    return rule.price_types;
}

bool RuleInForce(const PriceBookRule& rule, long long day) {
    const auto from = rule.valid_from ? DaysFromIsoDate(*rule.valid_from) : std::nullopt;
    const auto until = rule.valid_until ? DaysFromIsoDate(*rule.valid_until) : std::nullopt;
    return (!from || day >= *from) && (!until || day <= *until);
}

bool RuleMatches(const PriceBookRule& r, const Offering& o) {
    if (IsFixedRate(r)) return r.offering_id && IdKey(*r.offering_id) == IdKey(o.id);
    if (!SameId(r.provider, o.provider) || !SameId(r.accelerator, o.accelerator) ||
        !SameId(r.region, o.region) || !FamilyMatches(r.instance_family, o.instance_type)) {
        return false;
    }
    const std::vector<PriceType> types = RulePriceTypes(r);
    return std::find(types.begin(), types.end(), o.price_type) != types.end();
}

PricedCatalog::PricedCatalog(std::shared_ptr<const Catalog> base, PriceBook book,
                             std::vector<Offering> offerings, std::vector<AppliedPrice> applied,
                             std::vector<std::size_t> matches_per_rule,
                             std::optional<std::string> priced_on)
    : base_(std::move(base)),
      book_(std::move(book)),
      offerings_(OfferingList::FromVector(std::move(offerings))),
      applied_(std::move(applied)),
      matches_per_rule_(std::move(matches_per_rule)),
      priced_on_(std::move(priced_on)) {
    for (std::size_t i = 0; i < offerings_.size(); ++i) index_.emplace(IdKey(offerings_[i].id), i);
}

Result<Offering> PricedCatalog::FindOffering(std::string_view id) const {
    auto it = index_.find(IdKey(id));
    if (it == index_.end()) {
        return MakeError(ErrorCode::kNotFound, "no offering with id '" + std::string(id) + "'",
                         "id");
    }
    return offerings_[it->second];
}

const AppliedPrice* PricedCatalog::PriceOf(std::string_view offering_id) const {
    auto it = index_.find(IdKey(offering_id));
    return it == index_.end() ? nullptr : &applied_[it->second];
}

namespace {

// Why rule `at` is out of force on `day` (`priced_on`), or nullopt when it is in force.
std::optional<FieldError> OutOfForce(const PriceBookRule& r, const std::string& at, long long day,
                                     const std::string& priced_on) {
    if (RuleInForce(r, day)) return std::nullopt;
    const auto from = r.valid_from ? DaysFromIsoDate(*r.valid_from) : std::nullopt;
    if (from && day < *from) {
        return FieldError{at + "/valid_from", "this rule applies from " + *r.valid_from +
                                                  ", after the plan's pricing day " + priced_on +
                                                  ": it prices nothing in this answer"};
    }
    return FieldError{at + "/valid_until", "this rule applied until " + r.valid_until.value_or("") +
                                               ", before the plan's pricing day " + priced_on +
                                               ": it prices nothing in this answer"};
}

}  // namespace

std::vector<FieldError> PricedCatalog::Warnings() const {
    std::vector<FieldError> out;
    const auto day = priced_on_ ? DaysFromIsoDate(*priced_on_) : std::nullopt;
    for (std::size_t i = 0; i < matches_per_rule_.size(); ++i) {
        const PriceBookRule& r = book_.rules[i];
        const std::string at = "/price_book/rules/" + std::to_string(i);
        const auto out_of_force = day ? OutOfForce(r, at, *day, *priced_on_) : std::nullopt;
        if (out_of_force) {
            out.push_back(*out_of_force);
        } else if (matches_per_rule_[i] == 0) {
            out.push_back({at,
                           "this rule prices no offering of the catalog (nothing matches it, or "
                           "a narrower rule or a fixed rate wins everywhere it matches)"});
        }
        if (std::find(r.price_types.begin(), r.price_types.end(), PriceType::kSpot) !=
            r.price_types.end()) {
            out.push_back({at + "/price_types",
                           "this rule discounts spot prices: a provider's enterprise discount "
                           "(EDP, private pricing) usually excludes spot, so check the contract "
                           "before planning on it"});
        }
    }
    if (book_.currency != kBookCurrencyDefault) {
        out.push_back({"/price_book/currency",
                       "the book's contract is in " + book_.currency +
                           ": its discounts are applied to the catalog's USD list prices and "
                           "every amount in this answer is USD; the invoice will be in " +
                           book_.currency + " at the provider's exchange rate"});
    }
    return out;
}

Assumptions PricedCatalog::BookAssumptions() const {
    Assumptions out;
    for (std::size_t i = 0; i < book_.rules.size(); ++i) {
        const PriceBookRule& r = book_.rules[i];
        std::string prefix = "price_book.rules[" + std::to_string(i) + "].";
        if (r.usd_per_hour) {
            out.push_back({prefix + "usd_per_hour", *r.usd_per_hour, "usd_per_hour",
                           "fixed negotiated rate for offering " + *r.offering_id +
                               " (whole offering), replacing its list price",
                           "request"});
        } else {
            out.push_back({prefix + "discount_fraction", r.discount_fraction.value_or(0),
                           "fraction",
                           "negotiated discount off list prices of the offerings this rule "
                           "matches (price book '" +
                               book_.name + "')",
                           "request"});
        }
    }
    for (std::size_t i = 0; i < book_.owned_capacity.size(); ++i) {
        const OwnedCapacity& c = book_.owned_capacity[i];
        out.push_back({"price_book.owned_capacity[" + std::to_string(i) + "].usd_per_hour",
                       c.usd_per_hour, "usd_per_hour",
                       "paid per instance for " + std::to_string(c.nodes) + " owned " +
                           c.offering_id + " from " + c.start_date + " to " + c.end_date +
                           " (exclusive), used or not: sunk, so plans use these hours first at "
                           "no marginal cost",
                       "request"});
    }
    return out;
}

Result<std::shared_ptr<const PricedCatalog>> ApplyPriceBook(
    std::shared_ptr<const Catalog> base, PriceBook book,
    const std::optional<std::string>& priced_on) {
    if (auto valid = book.Validate(); !valid.ok()) return valid.error();
    const auto day = priced_on ? DaysFromIsoDate(*priced_on) : std::nullopt;
    if (priced_on && !day) {
        return MakeError(ErrorCode::kInvalidArgument, "must be a date, YYYY-MM-DD (UTC)",
                         "start_date");
    }
    std::vector<bool> in_force(book.rules.size(), true);
    for (std::size_t i = 0; i < book.rules.size() && day; ++i) {
        in_force[i] = RuleInForce(book.rules[i], *day);
    }
    for (std::size_t i = 0; i < book.rules.size(); ++i) {
        const PriceBookRule& r = book.rules[i];
        if (r.offering_id && !base->FindOffering(*r.offering_id).ok()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "no offering with id '" + *r.offering_id + "' in the catalog",
                             "/price_book/rules/" + std::to_string(i) + "/offering_id");
        }
    }
    for (std::size_t i = 0; i < book.owned_capacity.size(); ++i) {
        const std::string& id = book.owned_capacity[i].offering_id;
        if (!base->FindOffering(id).ok()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "no offering with id '" + id + "' in the catalog",
                             "/price_book/owned_capacity/" + std::to_string(i) + "/offering_id");
        }
    }
    std::vector<Offering> offerings = base->Offerings().Copy();
    std::vector<AppliedPrice> applied;
    applied.reserve(offerings.size());
    std::vector<std::size_t> matches(book.rules.size(), 0);
    for (Offering& o : offerings) {
        AppliedPrice a = PriceOne(book, in_force, o);
        if (a.rule_index) ++matches[*a.rule_index];
        o.price.usd_per_hour = a.effective_usd_per_hour;
        applied.push_back(a);
    }
    return std::make_shared<const PricedCatalog>(std::move(base), std::move(book),
                                                 std::move(offerings), std::move(applied),
                                                 std::move(matches), priced_on);
}

}  // namespace gpucost::pricing
