#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pricing/catalog.hpp"

namespace gpucost::pricing {

// Immutable catalog held in memory; share it as std::shared_ptr<const InMemoryCatalog>.
// Construct through Build(), which validates the data.
class InMemoryCatalog final : public Catalog {
public:
    // Builds a snapshot. REQUIRES: accelerator ids unique, offering ids unique, every
    // offering's accelerator known (LoadCatalog checks all this and reports rows; Build
    // re-checks and returns kInvalidArgument naming the offending id).
    [[nodiscard]] static Result<std::shared_ptr<const InMemoryCatalog>> Build(
        std::vector<Accelerator> accelerators, std::vector<Offering> offerings, std::string version,
        std::string origin, std::size_t price_observation_count);

    const std::vector<Accelerator>& Accelerators() const override { return accelerators_; }
    const std::vector<Offering>& Offerings() const override { return offerings_; }
    Result<Accelerator> FindAccelerator(std::string_view id) const override;
    Result<Offering> FindOffering(std::string_view id) const override;
    CatalogInfo Describe() const override { return info_; }
    std::vector<ProviderSummary> Providers() const override { return providers_; }

    InMemoryCatalog(std::vector<Accelerator> accelerators, std::vector<Offering> offerings,
                    CatalogInfo info);

private:
    std::vector<Accelerator> accelerators_;
    std::vector<Offering> offerings_;
    std::unordered_map<std::string, std::size_t> accelerator_index_;
    std::unordered_map<std::string, std::size_t> offering_index_;
    CatalogInfo info_;
    std::vector<ProviderSummary> providers_;
};

}  // namespace gpucost::pricing
