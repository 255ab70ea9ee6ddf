#include "pricing/close_match.hpp"

#include <algorithm>
#include <tuple>

#include "pricing/text_case.hpp"

namespace gpucost::pricing {
namespace {

// A candidate's rank for a query: (distance, 0 when it starts with the query, the id), and
// whether it is close enough for CloseMatches.
struct Ranked {
    std::size_t distance = 0;
    int not_prefix = 1;
    std::string id;
    bool close = false;
};

std::vector<Ranked> RankAll(std::string_view query, const std::vector<std::string>& candidates) {
    const std::string q = LowerAscii(query);
    std::vector<Ranked> ranked;
    ranked.reserve(candidates.size());
    for (const std::string& c : candidates) {
        const std::string lower = LowerAscii(c);
        Ranked r;
        r.id = c;
        r.distance = EditDistance(q, lower);
        const bool contains = !q.empty() && (lower.find(q) != std::string::npos ||
                                             q.find(lower) != std::string::npos);
        if (contains) r.distance = std::min<std::size_t>(r.distance, 1);
        r.not_prefix = !q.empty() && lower.rfind(q, 0) == 0 ? 0 : 1;
        r.close = contains || r.distance * 3 <= std::max(q.size(), lower.size());
        ranked.push_back(std::move(r));
    }
    std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        return std::tie(a.distance, a.not_prefix, a.id) < std::tie(b.distance, b.not_prefix, b.id);
    });
    return ranked;
}

}  // namespace

std::size_t EditDistance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
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

std::vector<std::string> NearestIds(std::string_view query,
                                    const std::vector<std::string>& candidates, std::size_t limit) {
    std::vector<std::string> out;
    for (Ranked& r : RankAll(query, candidates)) {
        if (out.size() == limit) break;
        out.push_back(std::move(r.id));
    }
    return out;
}

std::vector<std::string> CloseMatches(std::string_view query,
                                      const std::vector<std::string>& candidates,
                                      std::size_t limit) {
    std::vector<std::string> out;
    for (Ranked& r : RankAll(query, candidates)) {
        if (out.size() == limit) break;
        if (r.close) out.push_back(std::move(r.id));
    }
    return out;
}

}  // namespace gpucost::pricing
