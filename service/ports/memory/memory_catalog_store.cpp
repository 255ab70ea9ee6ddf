#include "service/ports/memory/memory_catalog_store.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "pricing/in_memory_catalog.hpp"
#include "service/ports/seed_intervals.hpp"

namespace gpucost::ports {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

pricing::PriceObservation Observation(const NewPrice& n) {
    return {n.usd_per_hour, n.as_of, n.as_of_estimated, n.source, n.verified, n.notes};
}

// The price served at `at` (current when nullopt): the row whose interval holds it.
const PriceInterval* ServedAt(const OfferingHistory& h, std::optional<TimestampUs> at) {
    for (const PriceInterval& p : h.prices) {
        const bool open = !p.valid_to_us;
        if (!at ? open : (p.valid_from_us <= *at && (open || *at < *p.valid_to_us))) return &p;
    }
    return nullptr;
}

// As the database derives it (schema/migrations/008_teams.sql): a saved request that carries a
// price book or `calibration` is readable by its team and org keys only.
bool Confidential(const std::string& request_json) {
    const auto request = nlohmann::json::parse(request_json, nullptr, false);
    if (!request.is_object()) return false;
    const auto book = request.find("price_book");
    return (book != request.end() && !book->is_null()) || request.contains("calibration");
}

pricing::Error NoScenario(std::int64_t id) {
    return MakeError(ErrorCode::kNotFound, "no scenario with id " + std::to_string(id), "id");
}

std::optional<pricing::Error> StaleOffering(const WriteRequest& request, const OfferingHistory& h) {
    const std::string etag = OfferingEtag(h.version);
    if (!request.if_match || IfMatchAccepts(*request.if_match, etag)) return std::nullopt;
    return MakeError(ErrorCode::kFailedPrecondition,
                     "If-Match does not match the offering's current ETag " + etag +
                         "; it changed since you read it: read it again and reapply your change",
                     kIfMatchField);
}

}  // namespace

MemoryCatalogStore::MemoryCatalogStore(std::vector<pricing::Accelerator> accelerators,
                                       const std::vector<pricing::Offering>& offerings,
                                       TimestampUs now_us)
    : accelerators_(std::move(accelerators)), now_us_(now_us) {
    for (const pricing::Offering& o : offerings) {
        OfferingHistory& h = offerings_[o.id];
        h.offering = o;
        h.offering.superseded_prices.clear();
        // Every observation, served over the intervals the database's seed gives it; the
        // current first, as the seed sends it (SelectCurrentPrice breaks ties by order).
        std::vector<pricing::PriceObservation> observations{o.price};
        observations.insert(observations.end(), o.superseded_prices.begin(),
                            o.superseded_prices.end());
        const auto intervals = SeedIntervals(observations);
        for (std::size_t i = 0; i < observations.size(); ++i) {
            h.prices.push_back({next_price_id_++, observations[i], intervals[i].first,
                                intervals[i].second, now_us});
        }
        std::stable_sort(h.prices.begin(), h.prices.end(),
                         [](const PriceInterval& a, const PriceInterval& b) {
                             return a.valid_from_us < b.valid_from_us;
                         });
    }
    Publish();
}

void MemoryCatalogStore::AddKey(const std::string& key, Principal who) {
    std::lock_guard lock(mutex_);
    if (who.key_id == 0) who.key_id = next_key_id_++;
    keys_[key] = std::move(who);
}

void MemoryCatalogStore::Advance() {
    const auto wall = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    now_us_ = std::max<TimestampUs>(wall, now_us_ + 1);
}

std::size_t MemoryCatalogStore::PriceRowCount() const {
    std::lock_guard lock(mutex_);
    std::size_t rows = 0;
    for (const auto& [id, h] : offerings_) rows += h.prices.size();
    return rows;
}

std::size_t MemoryCatalogStore::OfferingCount() const {
    std::lock_guard lock(mutex_);
    return offerings_.size();
}

std::string MemoryCatalogStore::Version() const {
    return "mem-r" + std::to_string(revision_);
}

pricing::Result<std::shared_ptr<const pricing::Catalog>> MemoryCatalogStore::Snapshot(
    std::optional<TimestampUs> at) const {
    std::vector<pricing::Offering> served;
    std::size_t observations = 0;
    for (const auto& [id, h] : offerings_) {
        if (!at && h.retired_at_us) continue;
        const PriceInterval* price = ServedAt(h, at);
        if (price == nullptr) continue;
        pricing::Offering o = h.offering;
        o.price = price->observation;
        o.superseded_prices.clear();
        for (auto p = h.prices.rbegin(); p != h.prices.rend(); ++p) {
            if (&*p != price && (!at || p->valid_from_us <= *at)) {
                o.superseded_prices.push_back(p->observation);
            }
        }
        observations += 1 + o.superseded_prices.size();
        served.push_back(std::move(o));
    }
    const std::string version = at ? Version() + "@" + std::to_string(*at) : Version();
    auto built = pricing::InMemoryCatalog::Build(accelerators_, std::move(served), version,
                                                 "memory", observations);
    if (!built.ok()) return built.error();
    return std::shared_ptr<const pricing::Catalog>(built.value());
}

void MemoryCatalogStore::Publish() {
    auto built = Snapshot(std::nullopt);
    if (built.ok()) current_ = built.value();
}

std::shared_ptr<const pricing::Catalog> MemoryCatalogStore::Current() const {
    std::lock_guard lock(mutex_);
    return current_;
}

pricing::Result<std::shared_ptr<const pricing::Catalog>> MemoryCatalogStore::At(
    TimestampUs at) const {
    std::lock_guard lock(mutex_);
    return Snapshot(at);
}

pricing::Result<OfferingHistory> MemoryCatalogStore::History(std::string_view id) const {
    std::lock_guard lock(mutex_);
    const auto found = offerings_.find(id);
    if (found == offerings_.end()) {
        return MakeError(ErrorCode::kNotFound, "no offering with id '" + std::string(id) + "'",
                         "id");
    }
    OfferingHistory h = found->second;
    h.catalog_version = Version();
    return h;
}

StoreHealth MemoryCatalogStore::Health() const {
    std::lock_guard lock(mutex_);
    return StoreHealth{true, revision_, 0, ""};
}

std::optional<Principal> MemoryCatalogStore::Authenticate(std::string_view key) const {
    std::lock_guard lock(mutex_);
    const auto found = keys_.find(key);
    return found == keys_.end() ? std::nullopt : std::optional<Principal>(found->second);
}

// ---------------------------------------------------------------------------------------
// Writes: each under the one lock, its answer recorded with the Idempotency-Key.

pricing::Status MemoryCatalogStore::Place(const PriceUpdate& update, std::int64_t& next_row) {
    const auto found = offerings_.find(update.offering_id);
    if (found == offerings_.end()) {
        return MakeError(ErrorCode::kNotFound, "no offering with id '" + update.offering_id + "'",
                         "id");
    }
    OfferingHistory& h = found->second;
    if (h.retired_at_us) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "offering '" + update.offering_id + "' is retired; create a new offering");
    }
    const pricing::PriceObservation price = Observation(update.price);
    PriceInterval* current = nullptr;
    for (PriceInterval& p : h.prices) {
        if (!p.valid_to_us) current = &p;
    }
    // A tie goes to the new write, as the current-price rule's "earlier in the input" reads it
    // with the new observation first.
    const bool wins =
        current == nullptr || pricing::SelectCurrentPrice({price, current->observation}) == 0;
    if (wins) {
        if (current != nullptr) current->valid_to_us = now_us_;
        h.prices.push_back({next_row++, price, now_us_, std::nullopt, now_us_});
        h.offering.price = price;
    } else {
        h.prices.push_back({next_row++, price, now_us_, now_us_, now_us_});
    }
    return pricing::Ok{};
}

pricing::Result<StoredResponse> MemoryCatalogStore::PutPrice(const WriteRequest& request,
                                                             std::string_view id,
                                                             const NewPrice& price,
                                                             const HistoryEncoder& encode) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        Advance();
        const auto found = offerings_.find(id);
        if (found != offerings_.end() && !found->second.retired_at_us) {
            if (auto stale = StaleOffering(request, found->second)) return *stale;
        }
        const auto before = offerings_;
        auto placed = Place({std::string(id), price}, next_price_id_);
        if (!placed.ok()) {
            offerings_ = before;
            return placed.error();
        }
        OfferingHistory& h = offerings_.find(id)->second;
        ++h.version;
        ++revision_;
        Publish();
        h.catalog_version = Version();
        return encode(h);
    });
}

pricing::Result<StoredResponse> MemoryCatalogStore::PutPrices(
    const WriteRequest& request, const std::vector<PriceUpdate>& prices,
    const HistoriesEncoder& encode) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        Advance();
        const auto before = offerings_;
        std::vector<std::string> ids;
        for (const PriceUpdate& p : prices) {
            auto placed = Place(p, next_price_id_);
            if (!placed.ok()) {
                offerings_ = before;  // all or nothing
                return placed.error();
            }
            if (std::find(ids.begin(), ids.end(), p.offering_id) == ids.end()) {
                ids.push_back(p.offering_id);
            }
        }
        ++revision_;
        Publish();
        std::vector<OfferingHistory> changed;
        for (const std::string& id : ids) {
            OfferingHistory& h = offerings_.find(id)->second;
            ++h.version;
            h.catalog_version = Version();
            changed.push_back(h);
        }
        return encode(changed);
    });
}

pricing::Result<StoredResponse> MemoryCatalogStore::CreateOfferings(
    const WriteRequest& request, const std::vector<pricing::Offering>& offerings,
    const CreatedEncoder& encode) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        Advance();
        std::set<std::string> ids;
        for (std::size_t i = 0; i < offerings.size(); ++i) {
            const pricing::Offering& o = offerings[i];
            const bool known = std::any_of(accelerators_.begin(), accelerators_.end(),
                                           [&](const auto& a) { return a.id == o.accelerator; });
            if (!known) {
                return MakeError(
                    ErrorCode::kInvalidArgument,
                    "unknown accelerator '" + o.accelerator + "' (item " + std::to_string(i) + ")");
            }
            if (offerings_.contains(o.id) || !ids.insert(o.id).second) {
                return MakeError(ErrorCode::kFailedPrecondition,
                                 "offering '" + o.id + "' already exists (item " +
                                     std::to_string(i) + "); use PUT /v1/offerings/" + o.id +
                                     "/price to change its price");
            }
        }
        ++revision_;
        std::vector<OfferingHistory> created;
        for (const pricing::Offering& o : offerings) {
            OfferingHistory& h = offerings_[o.id];
            h.offering = o;
            h.offering.superseded_prices.clear();
            h.prices.push_back({next_price_id_++, o.price, now_us_, std::nullopt, now_us_});
            h.catalog_version = Version();
            created.push_back(h);
        }
        Publish();
        return encode(created);
    });
}

pricing::Result<StoredResponse> MemoryCatalogStore::RetireOffering(const WriteRequest& request,
                                                                   std::string_view id,
                                                                   const HistoryEncoder& encode) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        Advance();
        const auto found = offerings_.find(id);
        if (found == offerings_.end()) {
            return MakeError(ErrorCode::kNotFound, "no offering with id '" + std::string(id) + "'",
                             "id");
        }
        OfferingHistory& h = found->second;
        if (h.retired_at_us) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "offering '" + std::string(id) + "' is already retired");
        }
        if (auto stale = StaleOffering(request, h)) return *stale;
        for (PriceInterval& p : h.prices) {
            if (!p.valid_to_us) p.valid_to_us = std::max(p.valid_from_us, now_us_);
        }
        h.retired_at_us = now_us_;
        ++h.version;
        ++revision_;
        Publish();
        h.catalog_version = Version();
        return encode(h);
    });
}

// ---------------------------------------------------------------------------------------
// Scenarios

pricing::Result<Scenario> MemoryCatalogStore::SaveScenario(const WriteRequest& request,
                                                           const Scenario& draft) {
    std::lock_guard lock(mutex_);
    std::optional<Scenario> saved;
    // The answer recorded is the scenario's id: a replay answers the scenario as it is then.
    auto answer = answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        Advance();
        Scenario s = draft;
        s.id = next_scenario_id_++;
        s.created_at_us = now_us_;
        s.created_by = request.principal.name;
        s.team = request.principal.team;
        s.version = 1;
        s.progress.reset();
        s.replayed = false;
        s.confidential = Confidential(s.request_json);
        scenarios_[s.id] = s;
        saved = s;
        return StoredResponse{201, std::to_string(s.id), "", false};
    });
    if (!answer.ok()) return answer.error();
    if (saved) return *saved;
    const auto found = scenarios_.find(std::stoll(answer.value().body));
    if (found == scenarios_.end()) {
        return MakeError(ErrorCode::kNotFound,
                         "the scenario saved with this Idempotency-Key has since been deleted",
                         "Idempotency-Key");
    }
    Scenario replay = found->second;
    replay.replayed = true;
    return replay;
}

pricing::Result<std::vector<Scenario>> MemoryCatalogStore::ListScenarios(std::size_t limit,
                                                                         std::int64_t after_id) {
    auto page = FindScenarios({}, limit, after_id);
    if (!page.ok()) return page.error();
    return std::move(page.value().items);
}

pricing::Result<ScenarioPage> MemoryCatalogStore::FindScenarios(const ScenarioFilter& filter,
                                                                std::size_t limit,
                                                                std::int64_t after_id) {
    std::lock_guard lock(mutex_);
    ScenarioPage page;
    for (const auto& [id, s] : scenarios_) {
        const bool matches = (filter.plan_kind.empty() || s.plan_kind == filter.plan_kind) &&
                             (filter.tag.empty() || std::find(s.tags.begin(), s.tags.end(),
                                                              filter.tag) != s.tags.end()) &&
                             (filter.created_by.empty() || s.created_by == filter.created_by) &&
                             (!s.confidential || ReadsTeam(filter.reader, s.team));
        if (!matches) continue;
        ++page.total_count;
        if (id > after_id && page.items.size() < limit) page.items.push_back(s);
    }
    return page;
}

pricing::Result<Scenario> MemoryCatalogStore::GetScenario(std::int64_t id) {
    std::lock_guard lock(mutex_);
    const auto found = scenarios_.find(id);
    if (found == scenarios_.end()) return NoScenario(id);
    return found->second;
}

pricing::Result<Scenario> MemoryCatalogStore::ScenarioForChange(const WriteRequest& request,
                                                                std::int64_t id) const {
    const auto found = scenarios_.find(id);
    if (found == scenarios_.end()) return NoScenario(id);
    const Scenario& s = found->second;
    const Principal& who = request.principal;
    // Another team's confidential scenario is not there for this key; one it may read is not
    // its to change (org keys change nothing).
    if (s.confidential && !ReadsTeam(who, s.team)) return NoScenario(id);
    if (who.team != s.team || who.scope == KeyScope::kOrg) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "scenario " + std::to_string(id) + " belongs to team '" + s.team +
                             "': only its team's keys may change it",
                         kOwnerField);
    }
    if (who.scope != KeyScope::kAdmin && s.created_by != who.name) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "scenario " + std::to_string(id) + " belongs to '" + s.created_by +
                             "': only its owner's keys or an admin key of its team may change it",
                         kOwnerField);
    }
    if (request.if_match && !IfMatchAccepts(*request.if_match, ScenarioEtag(s.version))) {
        return MakeError(
            ErrorCode::kFailedPrecondition,
            "If-Match does not match the scenario's current ETag " + ScenarioEtag(s.version) +
                "; it changed since you read it: read it again and reapply your change",
            kIfMatchField);
    }
    return s;
}

pricing::Result<StoredResponse> MemoryCatalogStore::UpdateScenario(const WriteRequest& request,
                                                                   std::int64_t id,
                                                                   const ScenarioChange& change,
                                                                   const ScenarioEncoder& encode) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        auto allowed = ScenarioForChange(request, id);
        if (!allowed.ok()) return allowed.error();
        Scenario& s = scenarios_.at(id);
        if (change.name) s.name = *change.name;
        if (change.tags) s.tags = *change.tags;
        if (change.progress) s.progress = change.progress;
        ++s.version;
        return encode(s);
    });
}

pricing::Result<StoredResponse> MemoryCatalogStore::DeleteScenario(const WriteRequest& request,
                                                                   std::int64_t id) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        auto allowed = ScenarioForChange(request, id);
        if (!allowed.ok()) return allowed.error();
        scenarios_.erase(id);
        return DeletedAnswer();
    });
}

}  // namespace gpucost::ports
