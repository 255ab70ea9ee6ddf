#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "pricing/money.hpp"
#include "pricing/offering_query.hpp"
#include "service/http/codec/csv_writer.hpp"
#include "service/http/codec/encoded_cache.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_text.hpp"
#include "service/http/codec/page_cursor.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/codec/timestamp.hpp"
#include "service/http/ports.hpp"
#include "service/http/route_table.hpp"
#include "service/http/routes/as_of.hpp"
#include "service/http/routes/plan_kinds.hpp"
#include "service/http/transport/api_version.hpp"

namespace gpucost::http {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;
using pricing::Result;

Result<pricing::OfferingQuery> DecodeOfferingQuery(const QueryParams& params) {
    auto checked = params.Check();
    if (!checked.ok()) {
        return checked.error();
    }
    pricing::OfferingQuery q;
    // Ids compare case-insensitively: filters match on the lowercase key (pricing::IdKey).
    for (auto [list, name] :
         {std::pair{&q.providers, "provider"}, std::pair{&q.accelerators, "accelerator"},
          std::pair{&q.regions, "region"}, std::pair{&q.accelerator_families, "accelerator_family"},
          std::pair{&q.geography.continents, "continent"}}) {
        for (const auto& value : params.List(name)) {
            list->push_back(pricing::IdKey(value));
        }
    }
    q.geography.countries = params.List("country");  // compared upper-case, as ISO writes them
    for (const auto& name : params.List("price_type")) {
        auto type = pricing::ParsePriceType(name);
        if (!type) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "unknown price_type '" + name.substr(0, 32) +
                                 "'; use on_demand, spot, commit_1y, commit_3y or capacity_block",
                             "price_type");
        }
        q.price_types.push_back(*type);
    }
    auto min_acc = params.Int("min_accelerator_count");
    auto max_acc = params.Int("max_accelerator_count");
    auto min_mem = params.Double("min_accelerator_memory_gb");
    auto max_price = params.Double("max_usd_per_accelerator_hour");
    auto verified = params.Bool("verified");
    auto limit = params.Int("limit");
    auto sort = params.One("sort");
    auto cursor = params.One("cursor");
    for (const pricing::Error* e :
         {min_acc.ok() ? nullptr : &min_acc.error(), max_acc.ok() ? nullptr : &max_acc.error(),
          min_mem.ok() ? nullptr : &min_mem.error(), max_price.ok() ? nullptr : &max_price.error(),
          verified.ok() ? nullptr : &verified.error(), limit.ok() ? nullptr : &limit.error(),
          sort.ok() ? nullptr : &sort.error(), cursor.ok() ? nullptr : &cursor.error()}) {
        if (e != nullptr) {
            return *e;
        }
    }
    q.min_accelerator_count = min_acc.value();
    q.max_accelerator_count = max_acc.value();
    q.min_accelerator_memory_gb = min_mem.value();
    q.max_usd_per_accelerator_hour = max_price.value();
    q.verified = verified.value();
    if (limit.value()) {
        q.limit = static_cast<std::size_t>(std::max(0, *limit.value()));
    }
    if (sort.value()) {
        auto parsed = pricing::ParseOfferingSort(*sort.value());
        if (!parsed) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "unknown sort '" + sort.value()->substr(0, 40) +
                                 "'; use usd_per_accelerator_hour, usd_per_hour, "
                                 "accelerator_count, accelerator_memory_gb, as_of, provider or "
                                 "id, with a leading '-' for descending",
                             "sort");
        }
        q.sort = *parsed;
    }
    if (cursor.value()) {
        auto opened = OpenCursor(*cursor.value());
        if (!opened) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "cursor is not valid for this listing (cursors are opaque: send "
                             "next_cursor unchanged); start again without it",
                             "cursor");
        }
        q.cursor = std::move(*opened);
    }
    auto valid = q.Validate();
    if (!valid.ok()) {
        return valid.error();
    }
    return q;
}

}  // namespace

namespace {

// The listing written as text: offerings come encoded once per catalog version
// (encoded_cache.hpp), the envelope around them in the members' sorted order.
std::string OfferingListJson(const pricing::OfferingPage& page, const pricing::OfferingQuery& query,
                             const std::string& catalog_version) {
    std::string text;
    JsonWriter w(text);
    w.BeginObject();
    w.Member("catalog_version", catalog_version);
    w.Member("currency", pricing::kCurrency);
    w.Key("items");
    std::string items = "[";
    const std::string today = TodayUtc();
    for (const pricing::Offering* o : page.items) {
        if (items.size() > 1) items.push_back(',');
        AppendOfferingJson(items, catalog_version, *o, today);
    }
    items.push_back(']');
    w.Raw(items);
    w.Member("limit", query.limit);
    if (page.next_cursor) {
        w.Member("next_cursor", *page.next_cursor);
    } else {
        w.NullMember("next_cursor");
    }
    w.Member("sort", pricing::OfferingSortName(query.sort));
    w.Member("total_count", page.total_count);
    w.EndObject();
    return text;
}

// The page as CSV rows (Accept: text/csv), one per offering with its current price, and the
// currency and catalog version on every row as plan CSVs carry them. CSV has no place for the
// next cursor: a client walking the catalog pages with the JSON answer.
CsvTable OfferingListCsv(const pricing::OfferingPage& page, const std::string& catalog_version) {
    CsvTable table;
    table.header = {"id",
                    "provider",
                    "instance_type",
                    "accelerator",
                    "accelerator_count",
                    "accelerator_memory_gb",
                    "region",
                    "price_type",
                    "usd_per_hour",
                    "usd_per_accelerator_hour",
                    "as_of",
                    "as_of_estimated",
                    "verified",
                    "source",
                    "currency",
                    "catalog_version"};
    for (const pricing::Offering* o : page.items) {
        table.rows.push_back(
            {o->id, o->provider, o->instance_type, o->accelerator,
             std::to_string(o->accelerator_count),
             o->accelerator_memory_gb ? CsvNumber(*o->accelerator_memory_gb) : "", o->region,
             std::string(pricing::PriceTypeName(o->price_type)), CsvNumber(o->price.usd_per_hour),
             CsvNumber(o->UsdPerAcceleratorHour()), o->price.as_of,
             o->price.as_of_estimated ? "true" : "false", o->price.verified ? "true" : "false",
             o->price.source, pricing::kCurrency, catalog_version});
    }
    return table;
}

// The /v1/catalog answer depends only on the snapshot and the day: kept for the last
// snapshot asked about, so a request does not rescan every price for the age summary (at
// 20,000 offerings that scan was most of the answer's cost). The snapshot is held by a
// weak_ptr: the cache never keeps a replaced catalog alive, and a live snapshot's address
// names only it.
class CatalogSummaryCache {
public:
    std::string TextFor(const std::shared_ptr<const pricing::Catalog>& catalog,
                        const std::string& today) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (catalog_.lock() == catalog && today_ == today) return text_;
        }
        std::string text = Encode(*catalog, today);
        std::lock_guard<std::mutex> lock(mutex_);
        catalog_ = catalog;
        today_ = today;
        text_ = text;
        return text;
    }

private:
    static std::string Encode(const pricing::Catalog& catalog, const std::string& today) {
        json body = ToJson(catalog.Describe());
        json providers = json::array();
        for (const auto& p : catalog.Providers()) {
            providers.push_back({{"id", p.provider.id}, {"offering_count", p.offering_count}});
        }
        body["providers"] = std::move(providers);
        body["price_ages"] = ToJson(pricing::SummarizePriceAges(catalog.Offerings(), today));
        body["price_types"] = {"on_demand", "spot", "commit_1y", "commit_3y", "capacity_block"};
        body["price_selection_rule"] =
            "per offering, the most recent verified price is current; an unverified price is "
            "served (verified: false) only when no verified one exists; other observations are "
            "listed as superseded_prices on GET /v1/offerings/{id}";
        return ToJsonText(body);
    }

    std::mutex mutex_;
    std::weak_ptr<const pricing::Catalog> catalog_;
    std::string today_;
    std::string text_;
};

CatalogSummaryCache& CatalogSummaries() {
    static CatalogSummaryCache cache;
    return cache;
}

}  // namespace

namespace {

void ServeAccelerators(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    QueryParams params(req, {"vendor", "precision"});
    if (auto checked = params.Check(); !checked.ok()) {
        return WriteProblem(res, req, checked.error());
    }
    std::vector<std::string> vendors = params.List("vendor");
    std::vector<pricing::Precision> precisions;
    for (const auto& name : params.List("precision")) {
        auto p = pricing::ParsePrecision(name);
        if (!p) {
            return WriteProblem(res, req,
                                MakeError(ErrorCode::kInvalidArgument,
                                          "unknown precision '" + name.substr(0, 16) +
                                              "'; use fp32, tf32, fp16, bf16, fp8, int8 or fp4",
                                          "precision"));
        }
        precisions.push_back(*p);
    }
    json items = json::array();
    for (const auto& a : deps.catalog()->Accelerators()) {
        bool vendor_ok =
            vendors.empty() ||
            std::any_of(vendors.begin(), vendors.end(), [&](const std::string& v) {
                return v.size() == a.vendor.size() &&
                       std::equal(v.begin(), v.end(), a.vendor.begin(), [](char x, char y) {
                           return std::tolower(x) == std::tolower(y);
                       });
            });
        bool precision_ok = std::all_of(precisions.begin(), precisions.end(),
                                        [&](auto p) { return a.PeakTflops(p).has_value(); });
        if (vendor_ok && precision_ok) {
            items.push_back(ToJson(a));
        }
    }
    WriteJson(res, {{"total_count", items.size()}, {"items", std::move(items)}});
}

void ServeAccelerator(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    if (auto checked = QueryParams(req, {}).Check(); !checked.ok()) {
        return WriteProblem(res, req, checked.error());
    }
    auto found = deps.catalog()->FindAccelerator(req.matches[1].str());
    if (!found.ok()) {
        return WriteProblem(res, req, found.error());
    }
    WriteJson(res, ToJson(found.value()));
}

// The catalog a read answers from, for routes whose only parameter is `as_of` (PostgreSQL
// mode: the catalog as it stood then): a bad parameter or date is answered as problem+json and
// nullptr returned.
std::shared_ptr<const pricing::Catalog> CatalogAsOf(const Deps& deps, const httplib::Request& req,
                                                    httplib::Response& res) {
    QueryParams params(req, {kAsOfParam});
    if (auto checked = params.Check(); !checked.ok()) {
        WriteProblem(res, req, checked.error());
        return nullptr;
    }
    auto catalog = CatalogForQuery(deps, params);
    if (!catalog.ok()) {
        WriteProblem(res, req, catalog.error());
        return nullptr;
    }
    return catalog.value();
}

void ServeProviders(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto catalog = CatalogAsOf(deps, req, res);
    if (!catalog) return;
    json items = json::array();
    for (const auto& p : catalog->Providers()) {
        items.push_back(ToJson(p));
    }
    // The counts and as-of ranges are the catalog's: name which catalog, as priced answers do.
    WriteJson(res, {{"catalog_version", catalog->Describe().version},
                    {"total_count", items.size()},
                    {"items", std::move(items)}});
}

// The family and geography filters name values the catalog and the region table know (a typo is
// a 422 naming the parameter, not an empty list); the listing then reads the region table.
pricing::Status CheckPlaceFilters(const Deps& deps, const pricing::Catalog& catalog,
                                  pricing::OfferingQuery& query) {
    const pricing::RegionTable& regions = PlanReferenceOf(deps).regions;
    if (auto families = pricing::CheckAcceleratorFamilies(
            query.accelerator_families, catalog.Accelerators(), {"accelerator_family"});
        !families.ok()) {
        return families;
    }
    query.region_table = &regions;
    return pricing::CheckGeography(query.geography, regions, {"country"}, {"continent"});
}

void ServeOfferings(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    QueryParams params(
        req, {"provider", "accelerator", "price_type", "region", "min_accelerator_count",
              "max_accelerator_count", "min_accelerator_memory_gb", "max_usd_per_accelerator_hour",
              "verified", "sort", "limit", "cursor", "accelerator_family", "country", "continent",
              kAsOfParam});
    auto query = DecodeOfferingQuery(params);
    if (!query.ok()) {
        return WriteProblem(res, req, query.error());
    }
    auto chosen = CatalogForQuery(deps, params);  // as_of: PostgreSQL mode
    if (!chosen.ok()) {
        return WriteProblem(res, req, chosen.error());
    }
    auto catalog = chosen.value();
    if (auto places = CheckPlaceFilters(deps, *catalog, query.value()); !places.ok()) {
        return WriteProblem(res, req, places.error());
    }
    const std::string version = catalog->Describe().version;
    query.value().catalog_version = version;
    auto page = pricing::QueryOfferings(catalog->Offerings(), query.value());
    if (!page.ok()) {
        return WriteProblem(res, req, page.error());
    }
    if (page.value().next_cursor) {
        page.value().next_cursor = SealCursor(*page.value().next_cursor);
    }
    SetCatalogVersionHeader(res, version);
    if (WantsCsv(req)) {
        return WriteCsv(res, OfferingListCsv(page.value(), version));
    }
    WriteJsonText(res, OfferingListJson(page.value(), query.value(), version));
}

void ServeOffering(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto catalog = CatalogAsOf(deps, req, res);
    if (!catalog) return;
    auto found = catalog->FindOffering(req.matches[1].str());
    if (!found.ok()) {
        return WriteProblem(res, req, found.error());
    }
    // Database mode: the current version's ETag, for If-Match on the next write.
    if (deps.history && !req.has_param(kAsOfParam)) {
        if (auto history = deps.history->History(found.value().id); history.ok()) {
            res.set_header("ETag", OfferingEtag(history.value().version));
        }
    }
    json body = ToJson(found.value(), /*with_history=*/true, TodayUtc());
    body["catalog_version"] = catalog->Describe().version;
    body["currency"] = pricing::kCurrency;
    SetCatalogVersionHeader(res, body["catalog_version"].get<std::string>());
    WriteJson(res, body);
}

void ServeCatalog(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto chosen = CatalogAsOf(deps, req, res);
    if (!chosen) return;
    SetCatalogVersionHeader(res, chosen->Describe().version);
    WriteJsonText(res, CatalogSummaries().TextFor(chosen, TodayUtc()));
}

}  // namespace

void AddCatalogRoutes(RouteTable& routes, const Deps& deps) {
    routes.Get("/v1/accelerators", Bind(deps, &ServeAccelerators));
    routes.Get(std::string("/v1/accelerators/") + kIdPattern, Bind(deps, &ServeAccelerator));
    routes.Get("/v1/providers", Bind(deps, &ServeProviders));
    routes.Get("/v1/offerings", Bind(deps, &ServeOfferings));
    routes.Get(std::string("/v1/offerings/") + kIdPattern, Bind(deps, &ServeOffering));
    routes.Get("/v1/catalog", Bind(deps, &ServeCatalog));
}

}  // namespace gpucost::http
