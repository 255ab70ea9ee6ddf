#pragma once

// What the planners share when they walk a catalog's offerings: the request's allow-lists and
// each accelerator looked up once with what it is offered for.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/plan_reference.hpp"

namespace gpucost::pricing::plan {

// An empty allow-list allows everything.
template <typename T>
bool Allowed(const std::vector<T>& list, const T& value) {
    return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

// An accelerator of the catalog with the workloads the reference allows it.
struct AcceleratorInfo {
    std::string id;
    Result<Accelerator> accelerator;
    AcceleratorWorkloads workloads;
};

// The catalog's accelerators, each looked up once per plan: offerings of one accelerator are
// many (regions, price types), and a lookup copies the whole record.
class AcceleratorLookup {
public:
    AcceleratorLookup(const Catalog& catalog, const PlanReference& reference)
        : catalog_(catalog), reference_(reference) {}

    const AcceleratorInfo& Of(const std::string& id) {
        for (const AcceleratorInfo& known : known_) {
            if (known.id == id) return known;
        }
        AcceleratorInfo info{id, catalog_.FindAccelerator(id), {}};
        if (info.accelerator.ok())
            info.workloads = reference_.WorkloadsOf(info.accelerator.value());
        known_.push_back(std::move(info));
        return known_.back();
    }

private:
    const Catalog& catalog_;
    const PlanReference& reference_;
    std::vector<AcceleratorInfo> known_;
};

}  // namespace gpucost::pricing::plan
