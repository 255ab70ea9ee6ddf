#include "service/storage/pg_store.hpp"

#include "service/storage/pg_store_lease.hpp"
#include "service/text/timestamp.hpp"

// PgStore's history reads: an offering's prices and the catalog as it was served at an instant.
namespace gpucost::storage {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

// A catalog that answers as `base` does but describes itself as `info` says: an as_of
// snapshot shared by several instants carries each request's own version string.
class DescribedAs final : public pricing::Catalog {
public:
    DescribedAs(std::shared_ptr<const pricing::InMemoryCatalog> base, pricing::CatalogInfo info)
        : base_(std::move(base)), info_(std::move(info)) {}
    const std::vector<pricing::Accelerator>& Accelerators() const override {
        return base_->Accelerators();
    }
    const pricing::OfferingList& Offerings() const override { return base_->Offerings(); }
    pricing::Result<pricing::Accelerator> FindAccelerator(std::string_view id) const override {
        return base_->FindAccelerator(id);
    }
    pricing::Result<pricing::Offering> FindOffering(std::string_view id) const override {
        return base_->FindOffering(id);
    }
    pricing::CatalogInfo Describe() const override { return info_; }
    std::vector<pricing::ProviderSummary> Providers() const override { return base_->Providers(); }

private:
    std::shared_ptr<const pricing::InMemoryCatalog> base_;
    pricing::CatalogInfo info_;
};

}  // namespace

pricing::Result<std::shared_ptr<const pricing::Catalog>> PgStore::At(ports::TimestampUs at) const {
    auto snapshot = Load();
    auto built = AsOfCatalog(*snapshot, at);
    if (!built.ok()) {
        return built.error();
    }
    pricing::CatalogInfo info = built.value()->Describe();
    info.version = RevisionVersion(snapshot->history->revision) + "@" + text::FormatTimestamp(at);
    return std::shared_ptr<const pricing::Catalog>(
        std::make_shared<const DescribedAs>(std::move(built).value(), std::move(info)));
}

pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> PgStore::AsOfCatalog(
    const Snapshot& snapshot, ports::TimestampUs at) const {
    std::call_once(snapshot.change_points_once,
                   [&] { snapshot.change_points = ChangePoints(*snapshot.history); });
    const auto& points = snapshot.change_points;
    const std::size_t interval = static_cast<std::size_t>(
        std::upper_bound(points.begin(), points.end(), at) - points.begin());
    const std::int64_t revision = snapshot.history->revision;
    auto cached = [&]() -> std::shared_ptr<const pricing::InMemoryCatalog> {
        std::lock_guard<std::mutex> lock(as_of_mutex_);
        for (auto it = as_of_cache_.begin(); it != as_of_cache_.end(); ++it) {
            if (it->revision == revision && it->interval == interval) {
                AsOfEntry hit = *it;
                as_of_cache_.erase(it);
                as_of_cache_.push_back(hit);
                return hit.catalog;
            }
        }
        return nullptr;
    };
    if (auto hit = cached()) {
        return hit;
    }
    std::lock_guard<std::mutex> building(as_of_build_mutex_);
    if (auto hit = cached()) {
        return hit;  // another request built it while this one waited
    }
    auto built = BuildSnapshot(*snapshot.history, at);
    if (!built.ok()) {
        return built.error();
    }
    std::lock_guard<std::mutex> lock(as_of_mutex_);
    if (as_of_cache_.size() >= kAsOfCacheEntries) {
        as_of_cache_.erase(as_of_cache_.begin());
    }
    as_of_cache_.push_back(AsOfEntry{revision, interval, built.value()});
    return built.value();
}

pricing::Result<ports::OfferingHistory> PgStore::History(std::string_view id) const {
    auto snapshot = Load();
    const OfferingHistory* h = FindHistory(*snapshot->history, id);
    if (h == nullptr) {
        return MakeError(ErrorCode::kNotFound, "no offering with id '" + std::string(id) + "'",
                         "id");
    }
    OfferingHistory found = *h;
    found.catalog_version = RevisionVersion(snapshot->history->revision);
    return found;
}

}  // namespace gpucost::storage
