#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/offering.hpp"
#include "pricing/region_table.hpp"

namespace gpucost::pricing {

// Reference data the planners need beyond the catalog's prices, each row with its source
// (schema/seed/capacity.csv, data_prices.csv, regions.csv, the `workloads` column of
// accelerators.csv).

// How many instances of an offering one customer can get at once, and whether several of
// them form one cluster over the offering's stated scale-out network or are independent hosts
// joined only by the public internet. `instance_family` is a case-insensitive prefix of the
// instance type ("*" any); `price_type` nullopt means any. Capacity blocks also bound the
// block length they are sold in.
struct CapacityRule {
    std::string provider;
    std::string instance_family = "*";
    std::optional<PriceType> price_type;
    int max_instances = 1;
    bool cluster = false;
    std::optional<double> min_block_hours;
    std::optional<double> max_block_hours;
    // The instance counts sold, ascending (TPU slices: 4, 8, 16 ... chips); empty: any count
    // up to max_instances.
    std::vector<int> instance_counts;
    std::string source;
    std::string notes;
};

// The capacity that applies to one offering (see PlanReference::CapacityOf).
struct OfferingCapacity {
    int max_instances = 1;
    bool cluster = false;
    std::optional<double> min_block_hours;
    std::optional<double> max_block_hours;
    std::vector<int> instance_counts;  // empty: any count up to max_instances
    std::string source;
    bool defaulted = false;

    // Whether `nodes` instances can be bought as one purchase: a size sold, within capacity.
    bool Sells(int nodes) const;
    // Whether `nodes` is one of the sizes sold, whatever the capacity (any, without a list).
    bool SoldAsOne(int nodes) const;
    // The sizes sold, "4, 8, 16" (empty without a list).
    std::string SizesText() const;  // no rule matched: the conservative defaults below
};

// Where a provider publishes no limit we found: one instance, an independent host. A plan
// can never overstate what can be bought this way; judgement.
inline constexpr int kDefaultMaxInstances = 1;
inline constexpr bool kDefaultCluster = false;

// Per-provider list prices of object storage and internet egress, with provenance.
struct DataPrice {
    std::string provider;
    double object_storage_usd_per_gb_month = 0;
    double internet_egress_usd_per_gb = 0;
    std::string as_of;
    bool as_of_estimated = false;
    std::string source;
    bool verified = false;
    std::string notes;
};

struct PlanReference {
    std::vector<CapacityRule> capacity;
    std::vector<DataPrice> data_prices;
    // What each accelerator is offered for, by id, as loaded with the CSV catalog. It
    // overrides the catalog's own accelerator rows (a database snapshot may lack the column).
    std::map<std::string, AcceleratorWorkloads> workloads;
    // Where each provider region is (schema/seed/regions.csv): the geography filters.
    RegionTable regions;
    std::string version;  // content hash of the reference tables

    // The most specific matching rule: same provider (case-insensitive), the longest
    // matching instance-family prefix, a named price type before "*"; defaults otherwise.
    OfferingCapacity CapacityOf(const Offering& offering) const;
    // nullptr when the provider has no row.
    const DataPrice* DataPriceOf(std::string_view provider) const;
    AcceleratorWorkloads WorkloadsOf(const Accelerator& accelerator) const;
};

}  // namespace gpucost::pricing
