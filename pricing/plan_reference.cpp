#include "pricing/plan_reference.hpp"

#include <algorithm>

#include <cctype>

namespace gpucost::pricing {
namespace {

bool EqualNoCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && EqualNoCase(text.substr(0, prefix.size()), prefix);
}

}  // namespace

OfferingCapacity PlanReference::CapacityOf(const Offering& offering) const {
    const CapacityRule* best = nullptr;
    std::size_t best_family = 0;
    bool best_typed = false;
    for (const CapacityRule& rule : capacity) {
        if (!EqualNoCase(rule.provider, offering.provider)) {
            continue;
        }
        if (rule.price_type && *rule.price_type != offering.price_type) {
            continue;
        }
        const bool any_family = rule.instance_family == "*";
        if (!any_family && !StartsWithNoCase(offering.instance_type, rule.instance_family)) {
            continue;
        }
        const std::size_t family = any_family ? 0 : rule.instance_family.size();
        const bool typed = rule.price_type.has_value();
        if (best == nullptr || family > best_family ||
            (family == best_family && typed && !best_typed)) {
            best = &rule;
            best_family = family;
            best_typed = typed;
        }
    }
    OfferingCapacity out;
    if (best == nullptr) {
        out.max_instances = kDefaultMaxInstances;
        out.cluster = kDefaultCluster;
        out.defaulted = true;
        out.source = "default: no published limit on record; one independent instance";
        return out;
    }
    out.max_instances = best->max_instances;
    out.cluster = best->cluster;
    out.min_block_hours = best->min_block_hours;
    out.max_block_hours = best->max_block_hours;
    out.instance_counts = best->instance_counts;
    out.source = best->source;
    return out;
}

bool OfferingCapacity::Sells(int nodes) const {
    return nodes <= max_instances && SoldAsOne(nodes);
}

bool OfferingCapacity::SoldAsOne(int nodes) const {
    return instance_counts.empty() ||
           std::binary_search(instance_counts.begin(), instance_counts.end(), nodes);
}

std::string OfferingCapacity::SizesText() const {
    std::string out;
    for (int n : instance_counts) out += (out.empty() ? "" : ", ") + std::to_string(n);
    return out;
}

const DataPrice* PlanReference::DataPriceOf(std::string_view provider) const {
    for (const DataPrice& price : data_prices) {
        if (EqualNoCase(price.provider, provider)) {
            return &price;
        }
    }
    return nullptr;
}

AcceleratorWorkloads PlanReference::WorkloadsOf(const Accelerator& accelerator) const {
    auto it = workloads.find(accelerator.id);
    return it != workloads.end() ? it->second : accelerator.workloads;
}

}  // namespace gpucost::pricing
