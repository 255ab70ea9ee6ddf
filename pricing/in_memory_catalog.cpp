#include "pricing/in_memory_catalog.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace gpucost::pricing {

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

    CatalogInfo info;
    info.version = std::move(version);
    info.origin = std::move(origin);
    info.accelerator_count = accelerators.size();
    info.offering_count = offerings.size();
    info.price_observation_count = price_observation_count;
    for (const Offering& o : offerings) {
        if (!o.price.verified) {
            ++info.unverified_offering_count;
        }
        if (info.oldest_as_of.empty() || o.price.as_of < info.oldest_as_of) {
            info.oldest_as_of = o.price.as_of;
        }
        if (o.price.as_of > info.newest_as_of) {
            info.newest_as_of = o.price.as_of;
        }
    }
    return std::make_shared<const InMemoryCatalog>(std::move(accelerators), std::move(offerings),
                                                   std::move(info));
}

InMemoryCatalog::InMemoryCatalog(std::vector<Accelerator> accelerators,
                                 std::vector<Offering> offerings, CatalogInfo info)
    : accelerators_(std::move(accelerators)),
      offerings_(std::move(offerings)),
      info_(std::move(info)) {
    for (std::size_t i = 0; i < accelerators_.size(); ++i) {
        accelerator_index_.emplace(IdKey(accelerators_[i].id), i);
    }
    for (std::size_t i = 0; i < offerings_.size(); ++i) {
        offering_index_.emplace(IdKey(offerings_[i].id), i);
    }
    std::map<std::string, ProviderSummary> by_provider;
    std::map<std::string, std::map<PriceType, std::size_t>> types;
    std::map<std::string, std::set<std::string>> accels;
    std::map<std::string, std::set<std::string>> regions;
    for (const Offering& o : offerings_) {
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
        providers_.push_back(std::move(s));
    }
}

Result<Accelerator> InMemoryCatalog::FindAccelerator(std::string_view id) const {
    auto it = accelerator_index_.find(IdKey(id));
    if (it == accelerator_index_.end()) {
        return MakeError(ErrorCode::kNotFound, "no accelerator with id '" + std::string(id) + "'",
                         "id");
    }
    return accelerators_[it->second];
}

Result<Offering> InMemoryCatalog::FindOffering(std::string_view id) const {
    auto it = offering_index_.find(IdKey(id));
    if (it == offering_index_.end()) {
        return MakeError(ErrorCode::kNotFound, "no offering with id '" + std::string(id) + "'",
                         "id");
    }
    return offerings_[it->second];
}

}  // namespace gpucost::pricing
