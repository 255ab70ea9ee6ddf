// Azure Retail Prices API pages (prices.azure.com/api/retail/prices):
//   { "BillingCurrency": "USD", "Items": [ { "armSkuName", "armRegionName", "type",
//     "skuName", "productName", "serviceName", "unitOfMeasure", "unitPrice",
//     "reservationTerm", ... } ], "NextPageLink": ..., "Count": N }
// One file per page; each Item is read and dropped.
#include "service/import/readers.hpp"

namespace gpucost::import::detail {
namespace {

using nlohmann::json;

constexpr char kAzureProvider[] = "azure";
// A reservation's unitPrice is the price of the whole term (learn.microsoft.com/rest/api/
// cost-management/retail-prices/azure-retail-prices: "unitPrice ... for reservations, the
// price of the whole term"); terms are 365-day years.
constexpr double kHoursPerYear = 8760;

bool EndsWith(const std::string& text, std::string_view suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class AzureReader {
public:
    AzureReader(FileResult& result, const Mappings& mappings, const ParseOptions& options)
        : result_(result), sink_(result), mappings_(mappings), options_(options) {}

    std::optional<std::string> OnItem(const json& item) {
        ++result_.records_read;
        ++items_;
        Classify(item);
        return std::nullopt;
    }
    std::size_t Items() const { return items_; }

private:
    // The filters, in order; an Item is counted under the first one it fails.
    void Classify(const json& item) {
        if (Text(item, "serviceName") != "Virtual Machines") {
            return sink_.Skip("not_virtual_machines");
        }
        auto shape = mappings_.azure_vm_sizes.find(Text(item, "armSkuName"));
        if (shape == mappings_.azure_vm_sizes.end()) {
            return sink_.Skip("vm_size_not_mapped");
        }
        std::string region = Text(item, "armRegionName");
        if (region.empty()) {
            return sink_.Skip("no_region");
        }
        if (!options_.regions.empty() && !options_.regions.count(region)) {
            return sink_.Skip("region_not_selected");
        }
        if (Text(item, "currencyCode") != "USD") {
            return sink_.Skip("currency_not_usd");
        }
        if (EndsWith(Text(item, "productName"), " Windows")) {
            return sink_.Skip("windows");
        }
        std::string sku_name = Text(item, "skuName");
        if (EndsWith(sku_name, " Low Priority")) {
            return sink_.Skip("low_priority");
        }
        std::string type = Text(item, "type");
        if (type == "DevTestConsumption") {
            return sink_.Skip("dev_test");
        }
        const FileAmount price = item.is_object() && item.contains("unitPrice")
                                     ? Usd(item["unitPrice"])
                                     : FileAmount{0, "price_not_a_number"};
        if (!price.fault.empty()) {
            return sink_.Skip(price.fault, "Items[" + std::to_string(items_ - 1) + "] (" +
                                               Text(item, "armSkuName") + ", " + region + ")");
        }
        if (price.usd <= 0) {
            return sink_.Skip("zero_price");
        }
        std::string unit = Text(item, "unitOfMeasure");
        if (type == "Consumption") {
            if (unit != "1 Hour") {
                return sink_.Skip("unit_not_hour");
            }
            auto price_type = EndsWith(sku_name, " Spot") ? pricing::PriceType::kSpot
                                                          : pricing::PriceType::kOnDemand;
            return Add(shape->first, region, price_type, shape->second, price.usd,
                       "Consumption meter '" + Text(item, "meterName") + "'");
        }
        if (type == "Reservation") {
            std::string term = Text(item, "reservationTerm");
            double years = term == "1 Year" ? 1 : term == "3 Years" ? 3 : 0;
            if (years == 0) {
                return sink_.Skip("reservation_term_unknown");
            }
            double hours = kHoursPerYear * years;
            return Add(shape->first, region,
                       years == 1 ? pricing::PriceType::kCommit1y : pricing::PriceType::kCommit3y,
                       shape->second, price.usd / hours,
                       "Reservation " + term + ": " + Num(price.usd) + " for the term / " +
                           Num(hours) + " h");
        }
        sink_.Skip("price_type_unknown");
    }

    void Add(const std::string& size, const std::string& region, pricing::PriceType type,
             const InstanceShape& shape, double usd_per_hour, std::string notes) {
        sink_.Add(MakeOffering(kAzureProvider, size, region, type, shape, usd_per_hour,
                               std::move(notes)));
    }

    FileResult& result_;
    OfferingSink sink_;
    const Mappings& mappings_;
    const ParseOptions& options_;
    std::size_t items_ = 0;
};

}  // namespace

pricing::Assumptions AzureAssumptions() {
    return {{"hours_per_reservation_year", kHoursPerYear, "h",
             "a Reservation's unitPrice is the whole term: divided by 8760 h (1 Year) or 26280 h "
             "(3 Years)",
             "Azure Retail Prices API reference (reservation unitPrice is per term)"}};
}

pricing::Result<FileResult> ReadAzure(const Input& input, const std::string& name,
                                      const Mappings& mappings, const ParseOptions& options) {
    FileResult result;
    result.file = name;
    AzureReader azure(result, mappings, options);
    bool saw_items = false;
    RecordReader reader(
        {{"Items", "[]"}}, [&](const JsonPath&) { return true; },
        [&](const JsonPath&, json&& item) {
            saw_items = true;
            return azure.OnItem(item);
        });
    if (auto read = input.Read(reader, name); !read.ok()) {
        return read.error();
    }
    const auto& top = reader.TopLevel();
    bool has_items_key = top.count("Count") > 0 || saw_items;
    if (!has_items_key) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  name +
                                      ": not an Azure Retail Prices page (needs Items and "
                                      "Count)");
    }
    if (auto currency = top.find("BillingCurrency");
        currency != top.end() && currency->second != "USD") {
        return pricing::MakeError(
            pricing::ErrorCode::kInvalidArgument,
            name + ": BillingCurrency is " + currency->second + "; only USD prices are imported");
    }
    if (auto stamped = StampObservations(result, options,
                                         "Azure Retail Prices API (prices.azure.com/api/retail/"
                                         "prices), page retrieved " +
                                             options.as_of);
        !stamped.ok()) {
        return stamped.error();
    }
    return result;
}

}  // namespace gpucost::import::detail
