#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"
#include "service/ports/catalog_store.hpp"
#include "service/ports/memory/recorded_answers.hpp"

namespace gpucost::ports {

// The in-memory twin of the PostgreSQL catalog store (storage::PgStore): the same ports, the
// same answers for the same calls (the store contract suite runs both), nothing kept past the
// process. For route tests without a database and for trying the server's database mode.
// A write prices an offering from now when the current-price rule (SelectCurrentPrice) makes
// the new observation current, and keeps it as a superseded observation otherwise; PgStore
// also back-dates such an observation into the served timeline (storage::PlacePrice), which
// its own tests cover. Thread-safe: one mutex around everything.
class MemoryCatalogStore final : public CatalogStore {
public:
    // Starts at revision 1 with `offerings`, every observation valid over the interval the
    // database's seed gives it (SeedIntervals), recorded at `now_us`.
    MemoryCatalogStore(std::vector<pricing::Accelerator> accelerators,
                       const std::vector<pricing::Offering>& offerings, TimestampUs now_us);

    // Adds an API key `key` for `who` (key_id assigned in order from 1 when 0).
    void AddKey(const std::string& key, Principal who);
    // Every price row and every offering kept, retired ones included (what the database's
    // prices and offerings tables count).
    std::size_t PriceRowCount() const;
    std::size_t OfferingCount() const;

    std::shared_ptr<const pricing::Catalog> Current() const override;
    pricing::Result<std::shared_ptr<const pricing::Catalog>> At(TimestampUs at) const override;
    pricing::Result<OfferingHistory> History(std::string_view id) const override;
    StoreHealth Health() const override;
    std::optional<Principal> Authenticate(std::string_view key) const override;

    pricing::Result<StoredResponse> PutPrice(const WriteRequest& request, std::string_view id,
                                             const NewPrice& price,
                                             const HistoryEncoder& encode) override;
    pricing::Result<StoredResponse> PutPrices(const WriteRequest& request,
                                              const std::vector<PriceUpdate>& prices,
                                              const HistoriesEncoder& encode) override;
    pricing::Result<StoredResponse> CreateOfferings(const WriteRequest& request,
                                                    const std::vector<pricing::Offering>& offerings,
                                                    const CreatedEncoder& encode) override;
    pricing::Result<StoredResponse> RetireOffering(const WriteRequest& request, std::string_view id,
                                                   const HistoryEncoder& encode) override;

    pricing::Result<Scenario> SaveScenario(const WriteRequest& request,
                                           const Scenario& draft) override;
    pricing::Result<std::vector<Scenario>> ListScenarios(std::size_t limit,
                                                         std::int64_t after_id) override;
    pricing::Result<Scenario> GetScenario(std::int64_t id) override;
    pricing::Result<ScenarioPage> FindScenarios(const ScenarioFilter& filter, std::size_t limit,
                                                std::int64_t after_id) override;
    pricing::Result<StoredResponse> UpdateScenario(const WriteRequest& request, std::int64_t id,
                                                   const ScenarioChange& change,
                                                   const ScenarioEncoder& encode) override;
    pricing::Result<StoredResponse> DeleteScenario(const WriteRequest& request,
                                                   std::int64_t id) override;

private:
    // Each under mutex_.
    std::string Version() const;
    pricing::Result<std::shared_ptr<const pricing::Catalog>> Snapshot(
        std::optional<TimestampUs> at) const;
    pricing::Status Place(const PriceUpdate& update, std::int64_t& next_row);
    pricing::Result<Scenario> ScenarioForChange(const WriteRequest& request, std::int64_t id) const;
    void Publish();
    // Moves the writes' clock to now, and past the last write's instant, as the database's
    // clock_timestamp() under the catalog lock does: two writes never share an instant.
    void Advance();

    mutable std::mutex mutex_;
    std::vector<pricing::Accelerator> accelerators_;
    std::map<std::string, OfferingHistory, std::less<>> offerings_;
    std::map<std::string, Principal, std::less<>> keys_;
    std::map<std::int64_t, Scenario> scenarios_;
    RecordedAnswers answers_;
    std::shared_ptr<const pricing::Catalog> current_;
    std::int64_t revision_ = 1;
    std::int64_t next_price_id_ = 1;
    std::int64_t next_scenario_id_ = 1;
    std::int64_t next_key_id_ = 1;
    TimestampUs now_us_ = 0;
};

}  // namespace gpucost::ports
