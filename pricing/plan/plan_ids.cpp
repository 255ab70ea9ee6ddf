#include "pricing/plan/plan_ids.hpp"
#include "pricing/text_case.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace gpucost::pricing::plan {
namespace {

std::size_t EditDistance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0U : 1U)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

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

std::vector<std::string> CloseMatches(std::string_view query,
                                      const std::vector<std::string>& candidates,
                                      std::size_t limit) {
    const std::string q = LowerAscii(query);
    std::vector<std::pair<std::size_t, std::string>> scored;
    for (const std::string& c : candidates) {
        const std::string lower = LowerAscii(c);
        std::size_t distance = EditDistance(q, lower);
        const bool contains = !q.empty() && (lower.find(q) != std::string::npos ||
                                             q.find(lower) != std::string::npos);
        if (contains) {
            distance = std::min<std::size_t>(distance, 1);
        }
        // Close: at most a third of the longer id changed, or one contains the other.
        if (contains || distance * 3 <= std::max(q.size(), lower.size())) {
            scored.emplace_back(distance, c);
        }
    }
    std::sort(scored.begin(), scored.end());
    std::vector<std::string> out;
    for (const auto& [distance, id] : scored) {
        if (out.size() == limit) {
            break;
        }
        out.push_back(id);
    }
    return out;
}

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
