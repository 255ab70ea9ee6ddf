#include "pricing/price_book.hpp"

#include <cmath>
#include <utility>

#include "pricing/plan/field_checker.hpp"

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

void ValidateRule(const PriceBookRule& r, const std::string& at, plan::FieldChecker& check) {
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
            check.Fail(at, "a fixed-rate rule names one offering_id and nothing else to match");
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

AppliedPrice PriceOne(const PriceBook& book, const Offering& o) {
    AppliedPrice applied{o.price.usd_per_hour, o.price.usd_per_hour, std::nullopt};
    int best_narrowness = -1;
    for (std::size_t i = 0; i < book.rules.size(); ++i) {
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
    plan::FieldChecker check;
    if (name.empty()) check.Fail(pointer + "/name", "a price book needs a name");
    if (version < 1) check.Fail(pointer + "/version", "must be an integer >= 1");
    if (rules.empty() || rules.size() > kMaxPriceBookRules) {
        check.Fail(pointer + "/rules",
                   "must list 1 to " + std::to_string(kMaxPriceBookRules) + " rules");
    }
    for (std::size_t i = 0; i < rules.size() && i < kMaxPriceBookRules; ++i) {
        ValidateRule(rules[i], pointer + "/rules/" + std::to_string(i), check);
    }
    return check.Done();
}

bool RuleMatches(const PriceBookRule& r, const Offering& o) {
    if (IsFixedRate(r)) return r.offering_id && IdKey(*r.offering_id) == IdKey(o.id);
    if (!SameId(r.provider, o.provider) || !SameId(r.accelerator, o.accelerator) ||
        !SameId(r.region, o.region) || !FamilyMatches(r.instance_family, o.instance_type)) {
        return false;
    }
    if (r.price_types.empty()) return true;
    for (PriceType t : r.price_types) {
        if (t == o.price_type) return true;
    }
    return false;
}

PricedCatalog::PricedCatalog(std::shared_ptr<const Catalog> base, PriceBook book,
                             std::vector<Offering> offerings, std::vector<AppliedPrice> applied,
                             std::vector<std::size_t> matches_per_rule)
    : base_(std::move(base)),
      book_(std::move(book)),
      offerings_(OfferingList::FromVector(std::move(offerings))),
      applied_(std::move(applied)),
      matches_per_rule_(std::move(matches_per_rule)) {
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

std::vector<FieldError> PricedCatalog::Warnings() const {
    std::vector<FieldError> out;
    for (std::size_t i = 0; i < matches_per_rule_.size(); ++i) {
        if (matches_per_rule_[i] != 0) continue;
        out.push_back({"/price_book/rules/" + std::to_string(i),
                       "this rule prices no offering of the catalog (nothing matches it, or a "
                       "narrower rule or a fixed rate wins everywhere it matches)"});
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
    return out;
}

Result<std::shared_ptr<const PricedCatalog>> ApplyPriceBook(std::shared_ptr<const Catalog> base,
                                                            PriceBook book) {
    if (auto valid = book.Validate(); !valid.ok()) return valid.error();
    for (std::size_t i = 0; i < book.rules.size(); ++i) {
        const PriceBookRule& r = book.rules[i];
        if (r.offering_id && !base->FindOffering(*r.offering_id).ok()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "no offering with id '" + *r.offering_id + "' in the catalog",
                             "/price_book/rules/" + std::to_string(i) + "/offering_id");
        }
    }
    std::vector<Offering> offerings = base->Offerings().Copy();
    std::vector<AppliedPrice> applied;
    applied.reserve(offerings.size());
    std::vector<std::size_t> matches(book.rules.size(), 0);
    for (Offering& o : offerings) {
        AppliedPrice a = PriceOne(book, o);
        if (a.rule_index) ++matches[*a.rule_index];
        o.price.usd_per_hour = a.effective_usd_per_hour;
        applied.push_back(a);
    }
    return std::make_shared<const PricedCatalog>(std::move(base), std::move(book),
                                                 std::move(offerings), std::move(applied),
                                                 std::move(matches));
}

}  // namespace gpucost::pricing
