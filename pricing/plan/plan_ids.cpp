#include "pricing/plan/plan_ids.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "pricing/close_match.hpp"
#include "pricing/text_case.hpp"

namespace gpucost::pricing::plan {
namespace {

// Resolves one list in place; records each unknown id under `pointer`/i.
void Resolve(std::vector<std::string>* ids, const std::vector<std::string>& known,
             const std::string& pointer, const std::string& what, Error& error) {
    if (ids == nullptr) {
        return;
    }
    for (std::size_t i = 0; i < ids->size(); ++i) {
        std::string& id = (*ids)[i];
        const std::string lower = LowerAscii(id);
        auto it = std::find_if(known.begin(), known.end(),
                               [&](const std::string& k) { return LowerAscii(k) == lower; });
        if (it != known.end()) {
            id = *it;
            continue;
        }
        std::string detail = "unknown " + what + " '" + id.substr(0, 64) + "'";
        const auto close = CloseMatches(id, known);
        if (!close.empty()) {
            detail += "; close matches: ";
            for (std::size_t k = 0; k < close.size(); ++k) {
                detail += (k > 0 ? ", " : "") + close[k];
            }
        }
        error.errors.push_back({pointer + "/" + std::to_string(i), detail});
    }
}

}  // namespace

Status ResolveConstraintIds(const ConstraintIds& ids, const Catalog& catalog,
                            const std::string& prefix) {
    std::vector<std::string> providers;
    for (const Provider& p : KnownProviders()) {
        providers.push_back(p.id);
    }
    // The catalog's regions only when the request names some: collecting them walks every
    // offering, and most requests name none.
    std::vector<std::string> regions;
    if (ids.regions != nullptr && !ids.regions->empty()) {
        std::set<std::string> region_set;
        for (const Offering& o : catalog.Offerings()) {
            region_set.insert(o.region);
        }
        regions.assign(region_set.begin(), region_set.end());
    }
    std::vector<std::string> accelerators;
    for (const Accelerator& a : catalog.Accelerators()) {
        accelerators.push_back(a.id);
    }
    Error error{ErrorCode::kInvalidArgument, "", "", {}};
    Resolve(ids.providers, providers, prefix + "/providers", "provider", error);
    Resolve(ids.regions, regions, prefix + "/regions", "region", error);
    Resolve(ids.accelerators, accelerators, prefix + "/accelerators", "accelerator", error);
    if (error.errors.empty()) {
        return Ok{};
    }
    error.field = error.errors.front().field;
    error.message = error.errors.front().field + ": " + error.errors.front().detail;
    return error;
}

}  // namespace gpucost::pricing::plan
