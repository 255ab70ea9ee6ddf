#include "pricing/in_memory_catalog.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace gpucost::pricing {
namespace {

// IdKey's order, compared without building the keys (FindOffering's binary search).
int CompareKeys(std::string_view a, std::string_view b) {
    auto lower = [](char c) {
        return static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    };
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char x = lower(a[i]);
        const unsigned char y = lower(b[i]);
        if (x != y) {
            return x < y ? -1 : 1;
        }
    }
    return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

// By IdKey, then by id: among ids that differ only in case the first by id is found, as the
// index of the first of them did before.
bool KeyLess(const Offering* a, const Offering* b) {
    const int c = CompareKeys(a->id, b->id);
    return c < 0 || (c == 0 && a->id < b->id);
}

std::vector<ProviderSummary> SummarizeProviders(const OfferingList& offerings) {
    std::map<std::string, ProviderSummary> by_provider;
    std::map<std::string, std::map<PriceType, std::size_t>> types;
    std::map<std::string, std::set<std::string>> accels;
    std::map<std::string, std::set<std::string>> regions;
    for (const Offering& o : offerings) {
        ProviderSummary& s = by_provider[o.provider];
        ++s.offering_count;
        ++types[o.provider][o.price_type];
        accels[o.provider].insert(o.accelerator);
        regions[o.provider].insert(o.region);
        if (s.oldest_as_of.empty() || o.price.as_of < s.oldest_as_of) {
            s.oldest_as_of = o.price.as_of;
        }
        s.newest_as_of = std::max(s.newest_as_of, o.price.as_of);
    }
    std::vector<ProviderSummary> out;
    for (const Provider& p : KnownProviders()) {
        auto it = by_provider.find(p.id);
        if (it == by_provider.end()) {
            continue;
        }
        ProviderSummary s = it->second;
        s.provider = p;
        for (const auto& [type, count] : types[p.id]) {
            s.offerings_by_price_type.emplace_back(type, count);
        }
        s.accelerators.assign(accels[p.id].begin(), accels[p.id].end());
        s.regions.assign(regions[p.id].begin(), regions[p.id].end());
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace

// What each offering adds to a version's summary and index, and takes away when it leaves.
struct InMemoryCatalog::Tally {
    static void Add(Parts& parts, const Offering& o) {
        ++parts.current_price_dates[o.price.as_of];
        if (!o.price.verified) {
            ++parts.info.unverified_offering_count;
        }
        parts.by_key.insert(std::lower_bound(parts.by_key.begin(), parts.by_key.end(), &o, KeyLess),
                            &o);
    }
    static void Remove(Parts& parts, const Offering& o) {
        auto date = parts.current_price_dates.find(o.price.as_of);
        if (date != parts.current_price_dates.end() && --date->second == 0) {
            parts.current_price_dates.erase(date);
        }
        if (!o.price.verified) {
            --parts.info.unverified_offering_count;
        }
        auto at = std::lower_bound(parts.by_key.begin(), parts.by_key.end(), &o, KeyLess);
        if (at != parts.by_key.end() && *at == &o) {
            parts.by_key.erase(at);
        }
    }
    static void Finish(Parts& parts) {
        parts.info.accelerator_count = parts.accelerators->list.size();
        parts.info.offering_count = parts.offerings.size();
        const auto& dates = parts.current_price_dates;
        parts.info.oldest_as_of = dates.empty() ? std::string() : dates.begin()->first;
        parts.info.newest_as_of = dates.empty() ? std::string() : dates.rbegin()->first;
    }
};

Result<std::shared_ptr<const InMemoryCatalog>> InMemoryCatalog::Build(
    std::vector<Accelerator> accelerators, std::vector<Offering> offerings, std::string version,
    std::string origin, std::size_t price_observation_count) {
    std::set<std::string> accelerator_ids;
    for (const Accelerator& a : accelerators) {
        if (!accelerator_ids.insert(a.id).second) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "duplicate accelerator id '" + a.id + "'");
        }
    }
    std::set<std::string> offering_ids;
    for (const Offering& o : offerings) {
        if (!offering_ids.insert(o.id).second) {
            return MakeError(ErrorCode::kInvalidArgument, "duplicate offering id '" + o.id + "'");
        }
        if (accelerator_ids.count(o.accelerator) == 0) {
            return MakeError(
                ErrorCode::kInvalidArgument,
                "offering '" + o.id + "' names unknown accelerator '" + o.accelerator + "'");
        }
    }
    std::sort(accelerators.begin(), accelerators.end(),
              [](const Accelerator& a, const Accelerator& b) { return a.id < b.id; });
    std::sort(offerings.begin(), offerings.end(),
              [](const Offering& a, const Offering& b) { return a.id < b.id; });

    auto table = std::make_shared<AcceleratorTable>();
    table->list = std::move(accelerators);
    for (std::size_t i = 0; i < table->list.size(); ++i) {
        table->index.emplace(IdKey(table->list[i].id), i);
    }
    Parts parts;
    parts.accelerators = std::move(table);
    parts.offerings = OfferingList::FromVector(std::move(offerings));
    parts.info.version = std::move(version);
    parts.info.origin = std::move(origin);
    parts.info.price_observation_count = price_observation_count;
    parts.by_key.reserve(parts.offerings.size());
    for (const Offering& o : parts.offerings) {
        ++parts.current_price_dates[o.price.as_of];
        if (!o.price.verified) {
            ++parts.info.unverified_offering_count;
        }
        parts.by_key.push_back(&o);
    }
    std::sort(parts.by_key.begin(), parts.by_key.end(), KeyLess);
    Tally::Finish(parts);
    return std::make_shared<const InMemoryCatalog>(std::move(parts));
}

Result<std::shared_ptr<const InMemoryCatalog>> InMemoryCatalog::Patch(
    const InMemoryCatalog& base, std::vector<OfferingChange> changes, std::string version) {
    std::sort(changes.begin(), changes.end(),
              [](const OfferingChange& a, const OfferingChange& b) { return a.id < b.id; });
    for (std::size_t i = 0; i < changes.size(); ++i) {
        const OfferingChange& c = changes[i];
        if (i > 0 && changes[i - 1].id == c.id) {
            return MakeError(ErrorCode::kInvalidArgument, "offering '" + c.id + "' changed twice");
        }
        if (c.offering && !base.FindAccelerator(c.offering->accelerator).ok()) {
            return MakeError(ErrorCode::kInvalidArgument, "offering '" + c.id +
                                                              "' names unknown accelerator '" +
                                                              c.offering->accelerator + "'");
        }
    }
    Parts parts;
    parts.accelerators = base.accelerators_;
    parts.by_key = base.by_key_;
    parts.current_price_dates = base.current_price_dates_;
    parts.info = base.info_;
    parts.info.version = std::move(version);
    // Merge the id-ordered pointers with the id-ordered changes: the runs between two
    // changes are copied as pointers (found by binary search, never read one by one).
    const std::vector<OfferingList::Ptr>& old = base.offerings_.Pointers();
    std::vector<OfferingList::Ptr> next;
    next.reserve(old.size() + changes.size());
    auto from = old.begin();
    for (OfferingChange& c : changes) {
        auto at = std::lower_bound(
            from, old.end(), c.id,
            [](const OfferingList::Ptr& p, const std::string& id) { return p->id < id; });
        next.insert(next.end(), from, at);
        from = at;
        if (at != old.end() && (*at)->id == c.id) {
            parts.info.price_observation_count -= 1 + (*at)->superseded_prices.size();
            Tally::Remove(parts, **at);
            ++from;
        }
        if (c.offering) {
            auto added = std::make_shared<const Offering>(std::move(*c.offering));
            parts.info.price_observation_count += 1 + added->superseded_prices.size();
            Tally::Add(parts, *added);
            next.push_back(std::move(added));
        }
    }
    next.insert(next.end(), from, old.end());
    parts.offerings = OfferingList(std::move(next));
    Tally::Finish(parts);
    return std::make_shared<const InMemoryCatalog>(std::move(parts));
}

InMemoryCatalog::InMemoryCatalog(Parts parts)
    : accelerators_(std::move(parts.accelerators)),
      offerings_(std::move(parts.offerings)),
      by_key_(std::move(parts.by_key)),
      current_price_dates_(std::move(parts.current_price_dates)),
      info_(std::move(parts.info)) {}

std::vector<ProviderSummary> InMemoryCatalog::Providers() const {
    std::call_once(providers_once_, [this] { providers_ = SummarizeProviders(offerings_); });
    return providers_;
}

Result<Accelerator> InMemoryCatalog::FindAccelerator(std::string_view id) const {
    auto it = accelerators_->index.find(IdKey(id));
    if (it == accelerators_->index.end()) {
        return MakeError(ErrorCode::kNotFound, "no accelerator with id '" + std::string(id) + "'",
                         "id");
    }
    return accelerators_->list[it->second];
}

Result<Offering> InMemoryCatalog::FindOffering(std::string_view id) const {
    auto it = std::lower_bound(
        by_key_.begin(), by_key_.end(), id,
        [](const Offering* o, std::string_view key) { return CompareKeys(o->id, key) < 0; });
    if (it == by_key_.end() || CompareKeys((*it)->id, id) != 0) {
        return MakeError(ErrorCode::kNotFound, "no offering with id '" + std::string(id) + "'",
                         "id");
    }
    return **it;
}

}  // namespace gpucost::pricing
