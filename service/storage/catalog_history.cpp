#include "service/storage/catalog_history.hpp"

#include <algorithm>
#include <set>

#include "service/http/timestamp.hpp"

namespace gpucost::storage {
namespace {

TimestampUs DayStart(const std::string& iso_date) {
    auto day = http::ParseIsoDate(iso_date);
    return day.ok() ? day.value() : 0;
}

bool Contains(const PriceInterval& p, TimestampUs t) {
    bool non_empty = !p.valid_to_us || *p.valid_to_us > p.valid_from_us;
    return non_empty && p.valid_from_us <= t && (!p.valid_to_us || t < *p.valid_to_us);
}

}  // namespace

pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> BuildSnapshot(
    const CatalogHistory& history, std::optional<TimestampUs> at) {
    std::vector<pricing::Offering> offerings;
    std::size_t observations = 0;
    for (const OfferingHistory& h : history.offerings) {
        if (!at && h.retired_at_us) {
            continue;
        }
        const PriceInterval* served = nullptr;
        for (const PriceInterval& p : h.prices) {
            bool is_served = at ? Contains(p, *at) : !p.valid_to_us.has_value();
            if (!is_served) {
                continue;
            }
            if (served != nullptr) {
                return pricing::MakeError(pricing::ErrorCode::kInternal,
                                          "offering '" + h.offering.id +
                                              "' has two prices valid at the same time");
            }
            served = &p;
        }
        if (served == nullptr) {
            continue;
        }
        pricing::Offering o = h.offering;
        o.price = served->observation;
        o.superseded_prices.clear();
        for (const PriceInterval& p : h.prices) {
            if (&p != served && (!at || p.valid_from_us <= *at)) {
                o.superseded_prices.push_back(p.observation);
            }
        }
        std::stable_sort(o.superseded_prices.begin(), o.superseded_prices.end(),
                         [](const pricing::PriceObservation& a, const pricing::PriceObservation& b) {
                             return a.as_of > b.as_of;
                         });
        observations += 1 + o.superseded_prices.size();
        offerings.push_back(std::move(o));
    }
    std::string version = "pg-r" + std::to_string(history.revision);
    if (at) {
        version += "@" + http::FormatTimestamp(*at);
    }
    return pricing::InMemoryCatalog::Build(history.accelerators, std::move(offerings),
                                           std::move(version), "postgresql", observations);
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
        const TimestampUs start = DayStart(date);
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
            TimestampUs day = DayStart(observations[i].as_of);
            out[i] = {day, day};
        }
    }
    return out;
}

}  // namespace gpucost::storage
