#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pricing/price_age.hpp"

#include "service/ports/catalog_store.hpp"
#include "service/ports/price_book_store.hpp"
#include "service/ports/principal.hpp"
#include "service/ports/scenario_store.hpp"
#include "service/ports/seed_intervals.hpp"
#include "service/ports/write_request.hpp"

namespace gpucost::ports {
namespace {

constexpr TimestampUs kUsPerDay = 86'400'000'000;

// Midnight UTC of a YYYY-MM-DD date (0 for one that does not parse: the loader refuses those).
TimestampUs MidnightUtc(const std::string& iso_date) {
    return pricing::DaysBetween("1970-01-01", iso_date).value_or(0) * kUsPerDay;
}

}  // namespace

std::string_view KeyScopeName(KeyScope scope) {
    switch (scope) {
        case KeyScope::kRead:
            return "read";
        case KeyScope::kAdmin:
            return "admin";
        case KeyScope::kOrg:
            return "org";
    }
    return "read";
}

std::string OfferingEtag(std::int64_t version) {
    return "\"v" + std::to_string(version) + "\"";
}

std::string ScenarioEtag(std::int64_t version) {
    return "\"s" + std::to_string(version) + "\"";
}

std::string PriceBookEtag(std::int64_t version) {
    return "\"b" + std::to_string(version) + "\"";
}

bool IfMatchAccepts(const std::string& header, const std::string& etag) {
    std::size_t start = 0;
    while (start <= header.size()) {
        std::size_t end = header.find(',', start);
        if (end == std::string::npos) end = header.size();
        std::string item = header.substr(start, end - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (item == "*" || item == etag) return true;
        start = end + 1;
    }
    return false;
}

std::vector<std::pair<TimestampUs, std::optional<TimestampUs>>> SeedIntervals(
    const std::vector<pricing::PriceObservation>& observations) {
    const std::size_t n = observations.size();
    std::vector<std::pair<TimestampUs, std::optional<TimestampUs>>> out(n);
    std::vector<bool> served_ever(n, false);
    std::set<std::string> dates;
    for (const auto& o : observations) {
        dates.insert(o.as_of);
    }
    std::optional<std::size_t> serving;
    for (const std::string& date : dates) {
        std::vector<pricing::PriceObservation> known;
        std::vector<std::size_t> index;
        for (std::size_t i = 0; i < n; ++i) {
            if (observations[i].as_of <= date) {
                known.push_back(observations[i]);
                index.push_back(i);
            }
        }
        std::size_t pick = index[pricing::SelectCurrentPrice(known)];
        if (serving && *serving == pick) {
            continue;
        }
        const TimestampUs start = MidnightUtc(date);
        if (serving) {
            out[*serving].second = start;
        }
        // An observation, once replaced, is never selected again: a newer verified one
        // always wins over it, and an unverified one loses to any verified one.
        out[pick] = {start, std::nullopt};
        served_ever[pick] = true;
        serving = pick;
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!served_ever[i]) {
            TimestampUs day = MidnightUtc(observations[i].as_of);
            out[i] = {day, day};
        }
    }
    return out;
}

}  // namespace gpucost::ports
