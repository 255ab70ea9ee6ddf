#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/offering_list.hpp"

namespace gpucost::pricing {

// One change between two versions of a catalog: the offering `id` becomes `offering`
// (added when the id is new), or is removed when `offering` is nullopt.
struct OfferingChange {
    std::string id;
    std::optional<Offering> offering;  // REQUIRES: offering->id == id when set
};

// Immutable catalog held in memory; share it as std::shared_ptr<const InMemoryCatalog>.
// Construct through Build(), which validates the data, or Patch(), which derives the next
// version from one: a version shares the accelerators and every unchanged offering with the
// one it came from, so a change costs a pointer per offering, not a copy.
class InMemoryCatalog final : public Catalog {
    struct Parts;

public:
    // Builds a snapshot. REQUIRES: accelerator ids unique, offering ids unique, every
    // offering's accelerator known (LoadCatalog checks all this and reports rows; Build
    // re-checks and returns kInvalidArgument naming the offending id).
    [[nodiscard]] static Result<std::shared_ptr<const InMemoryCatalog>> Build(
        std::vector<Accelerator> accelerators, std::vector<Offering> offerings, std::string version,
        std::string origin, std::size_t price_observation_count);

    // The next version of `base`, described as `version`: the offerings `changes` name
    // replaced, added or removed, every other one shared with `base`; the price observation
    // count moves by the changed offerings' own (current plus superseded). Work is
    // proportional to the changes plus a pointer copy per offering. kInvalidArgument when a
    // changed offering names an unknown accelerator or two changes name the same id.
    [[nodiscard]] static Result<std::shared_ptr<const InMemoryCatalog>> Patch(
        const InMemoryCatalog& base, std::vector<OfferingChange> changes, std::string version);

    const std::vector<Accelerator>& Accelerators() const override { return accelerators_->list; }
    const OfferingList& Offerings() const override { return offerings_; }
    Result<Accelerator> FindAccelerator(std::string_view id) const override;
    Result<Offering> FindOffering(std::string_view id) const override;
    CatalogInfo Describe() const override { return info_; }
    // Built on the first call for this version (only /v1/catalog and /v1/providers read it),
    // so that a write does not pay for it.
    std::vector<ProviderSummary> Providers() const override;

    // Public for make_shared; Parts is private, so only Build and Patch construct one.
    explicit InMemoryCatalog(Parts parts);

private:
    struct AcceleratorTable {
        std::vector<Accelerator> list;  // ordered by id
        std::unordered_map<std::string, std::size_t> index;
    };
    struct Parts {
        std::shared_ptr<const AcceleratorTable> accelerators;
        OfferingList offerings;
        // The same offerings ordered by IdKey(id), for FindOffering.
        std::vector<const Offering*> by_key;
        // How many current prices carry each as_of date: the oldest and newest in
        // CatalogInfo, kept exact as offerings come and go.
        std::map<std::string, std::size_t> current_price_dates;
        CatalogInfo info;
    };
    struct Tally;

    std::shared_ptr<const AcceleratorTable> accelerators_;
    OfferingList offerings_;
    std::vector<const Offering*> by_key_;
    std::map<std::string, std::size_t> current_price_dates_;
    CatalogInfo info_;
    mutable std::once_flag providers_once_;
    mutable std::vector<ProviderSummary> providers_;
};

}  // namespace gpucost::pricing
