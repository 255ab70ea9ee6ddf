#include "service/storage/catalog_history.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "service/text/timestamp.hpp"

namespace gpucost::storage {
namespace {

bool Contains(const PriceInterval& p, TimestampUs t) {
    bool non_empty = !p.valid_to_us || *p.valid_to_us > p.valid_from_us;
    return non_empty && p.valid_from_us <= t && (!p.valid_to_us || t < *p.valid_to_us);
}

// The offering as served at `at` (current when nullopt; see BuildSnapshot), or nullopt when
// it is not served then. kInternal when two of its prices are valid at the same time.
pricing::Result<std::optional<pricing::Offering>> ServedOffering(const OfferingHistory& h,
                                                                 std::optional<TimestampUs> at) {
    if (!at && h.retired_at_us) {
        return std::optional<pricing::Offering>();
    }
    const PriceInterval* served = nullptr;
    for (const PriceInterval& p : h.prices) {
        bool is_served = at ? Contains(p, *at) : !p.valid_to_us.has_value();
        if (!is_served) {
            continue;
        }
        if (served != nullptr) {
            return pricing::MakeError(
                pricing::ErrorCode::kInternal,
                "offering '" + h.offering.id + "' has two prices valid at the same time");
        }
        served = &p;
    }
    if (served == nullptr) {
        return std::optional<pricing::Offering>();
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
    return std::optional<pricing::Offering>(std::move(o));
}

}  // namespace

pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> BuildSnapshot(
    const CatalogHistory& history, std::optional<TimestampUs> at) {
    std::vector<pricing::Offering> offerings;
    offerings.reserve(history.offerings.size());
    std::size_t observations = 0;
    for (const auto& h : history.offerings) {
        auto served = ServedOffering(*h, at);
        if (!served.ok()) {
            return served.error();
        }
        if (served.value()) {
            observations += 1 + served.value()->superseded_prices.size();
            offerings.push_back(std::move(*served.value()));
        }
    }
    std::string version = RevisionVersion(history.revision);
    if (at) {
        version += "@" + text::FormatTimestamp(*at);
    }
    return pricing::InMemoryCatalog::Build(history.accelerators, std::move(offerings),
                                           std::move(version), "postgresql", observations);
}

std::string RevisionVersion(std::int64_t revision) {
    return "pg-r" + std::to_string(revision);
}

const OfferingHistory* FindHistory(const CatalogHistory& history, std::string_view id) {
    auto it = std::lower_bound(history.offerings.begin(), history.offerings.end(), id,
                               [](const std::shared_ptr<const OfferingHistory>& h,
                                  std::string_view key) { return h->offering.id < key; });
    return it != history.offerings.end() && (*it)->offering.id == id ? it->get() : nullptr;
}

std::string EncodeChange(std::int64_t revision, const CatalogChange& change) {
    // PostgreSQL refuses payloads of 8000 bytes or more; a change that large is a bulk one.
    constexpr std::size_t kMaxPayloadBytes = 7000;
    std::string out = std::to_string(revision);
    if (change.everything) {
        return out;
    }
    if (change.keys) {
        out += "\nk";
    }
    for (const std::string& id : change.offering_ids) {
        if (id.find('\n') != std::string::npos) {
            return std::to_string(revision);
        }
        out += "\no:" + id;
        if (out.size() > kMaxPayloadBytes) {
            return std::to_string(revision);
        }
    }
    if (!change.keys && change.offering_ids.empty()) {
        return out + "\n-";  // changed nothing a replica keeps (still a new revision)
    }
    return out;
}

std::optional<std::pair<std::int64_t, CatalogChange>> DecodeChange(std::string_view payload) {
    std::size_t end = payload.find('\n');
    std::string head(payload.substr(0, end));
    std::int64_t revision = 0;
    try {
        std::size_t used = 0;
        revision = std::stoll(head, &used);
        if (used != head.size()) {
            return std::nullopt;
        }
    } catch (const std::exception&) {
        return std::nullopt;
    }
    CatalogChange change;
    if (end == std::string_view::npos) {
        change.everything = true;
        return std::pair{revision, std::move(change)};
    }
    while (end != std::string_view::npos) {
        std::size_t start = end + 1;
        end = payload.find('\n', start);
        std::string_view line = payload.substr(
            start, end == std::string_view::npos ? std::string_view::npos : end - start);
        if (line == "k") {
            change.keys = true;
        } else if (line.substr(0, 2) == "o:" && line.size() > 2) {
            change.offering_ids.emplace_back(line.substr(2));
        } else if (line != "-") {
            change.everything = true;  // from a newer binary: reload rather than guess
        }
    }
    return std::pair{revision, std::move(change)};
}

CatalogHistory ApplyChange(const CatalogHistory& base, std::int64_t revision,
                           const CatalogChange& change, std::vector<OfferingHistory> loaded,
                           std::vector<KeyRecord> keys) {
    CatalogHistory next;
    next.revision = revision;
    next.accelerators = base.accelerators;
    if (change.keys) {
        next.keys = std::move(keys);
    } else {
        next.keys = base.keys;
    }
    std::map<std::string, std::shared_ptr<const OfferingHistory>> replaced;
    for (const std::string& id : change.offering_ids) {
        replaced.emplace(id, nullptr);  // removed unless loaded
    }
    for (OfferingHistory& h : loaded) {
        std::string id = h.offering.id;
        replaced[id] = std::make_shared<const OfferingHistory>(std::move(h));
    }
    // Merge two id-ordered sequences: the unchanged offerings, copied as pointers a run at a
    // time between two replacements (found by binary search, not read one by one), and the
    // replacements.
    next.offerings.reserve(base.offerings.size() + replaced.size());
    auto from = base.offerings.begin();
    for (const auto& [id, h] : replaced) {
        auto at = std::lower_bound(from, base.offerings.end(), id,
                                   [](const std::shared_ptr<const OfferingHistory>& o,
                                      const std::string& key) { return o->offering.id < key; });
        next.offerings.insert(next.offerings.end(), from, at);
        from = at;
        if (at != base.offerings.end() && (*at)->offering.id == id) {
            ++from;
        }
        if (h) {
            next.offerings.push_back(h);
        }
    }
    next.offerings.insert(next.offerings.end(), from, base.offerings.end());
    return next;
}

pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> PatchSnapshot(
    const pricing::InMemoryCatalog& base_current, const CatalogHistory& next,
    const CatalogChange& change) {
    const std::set<std::string_view> changed(change.offering_ids.begin(),
                                             change.offering_ids.end());
    // Each changed offering's new served form, or its removal (gone, retired, or not
    // served now); the unchanged ones are shared with base_current, never re-derived.
    std::vector<pricing::OfferingChange> changes;
    changes.reserve(changed.size());
    for (std::string_view id : changed) {
        pricing::OfferingChange c{std::string(id), std::nullopt};
        if (const OfferingHistory* h = FindHistory(next, id)) {
            auto served = ServedOffering(*h, std::nullopt);
            if (!served.ok()) {
                return served.error();
            }
            c.offering = std::move(served.value());
        }
        changes.push_back(std::move(c));
    }
    return pricing::InMemoryCatalog::Patch(base_current, std::move(changes),
                                           RevisionVersion(next.revision));
}

std::vector<TimestampUs> ChangePoints(const CatalogHistory& history) {
    std::vector<TimestampUs> points;
    for (const auto& h : history.offerings) {
        for (const PriceInterval& p : h->prices) {
            points.push_back(p.valid_from_us);
            if (p.valid_to_us) {
                points.push_back(*p.valid_to_us);
            }
        }
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    return points;
}

namespace {

// Whether `a` wins over `b` by the current-price rule; a tie goes to `a` (the newer write).
bool Beats(const pricing::PriceObservation& a, const pricing::PriceObservation& b) {
    return pricing::SelectCurrentPrice({a, b}) == 0;
}

bool Served(const PriceInterval& p) {
    return !p.valid_to_us || *p.valid_to_us > p.valid_from_us;
}

}  // namespace

PricePlacement PlacePrice(const OfferingHistory& history, const pricing::PriceObservation& price,
                          TimestampUs now_us) {
    PricePlacement out;
    const PriceInterval* current = nullptr;
    std::vector<const PriceInterval*> served;
    for (const PriceInterval& p : history.prices) {
        if (Served(p)) {
            served.push_back(&p);
            if (!p.valid_to_us) {
                current = &p;
            }
        }
    }
    if (current == nullptr || Beats(price, current->observation)) {
        out.current = true;
        out.valid_from = now_us;
        return out;
    }
    std::sort(served.begin(), served.end(), [](const PriceInterval* a, const PriceInterval* b) {
        return a->valid_from_us < b->valid_from_us;
    });
    const TimestampUs day = text::ParseIsoDate(price.as_of).value();
    std::optional<TimestampUs> from;
    // Before the first served row nothing is served (the offering is absent): beaten too.
    if (!served.empty() && day < served.front()->valid_from_us) {
        from = day;
    }
    for (const PriceInterval* row : served) {
        const TimestampUs end = row->valid_to_us.value_or(std::numeric_limits<TimestampUs>::max());
        if (end <= day) {
            continue;
        }
        const TimestampUs start = std::max(row->valid_from_us, day);
        if (Beats(price, row->observation)) {
            if (!from) {
                from = start;
            }
            // Shortened to end where the new row begins (empty when it begins inside it).
            out.shortened.emplace_back(row->id, std::max(row->valid_from_us, *from));
            continue;
        }
        if (from) {
            out.valid_from = *from;
            out.valid_to = start;
            return out;
        }
    }
    // The current row beats it and nothing before did: recorded, never served.
    out.shortened.clear();
    out.valid_from = day;
    out.valid_to = day;
    return out;
}

void ApplyPlacement(OfferingHistory& history, const PricePlacement& placement,
                    const pricing::PriceObservation& price, std::int64_t row_id,
                    TimestampUs now_us) {
    for (PriceInterval& p : history.prices) {
        if (placement.current && !p.valid_to_us) {
            p.valid_to_us = placement.valid_from;
        }
        for (const auto& [id, to] : placement.shortened) {
            if (p.id == id) {
                p.valid_to_us = to;
            }
        }
    }
    PriceInterval added;
    added.id = row_id;
    added.observation = price;
    added.valid_from_us = placement.valid_from;
    added.valid_to_us = placement.valid_to;
    added.recorded_at_us = now_us;
    history.prices.push_back(added);
    std::stable_sort(history.prices.begin(), history.prices.end(),
                     [](const PriceInterval& a, const PriceInterval& b) {
                         return a.valid_from_us < b.valid_from_us;
                     });
    if (placement.current) {
        history.offering.price = price;
    }
    ++history.version;
}

}  // namespace gpucost::storage
