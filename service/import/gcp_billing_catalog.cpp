// Cloud Billing Catalog API SKU lists (cloudbilling.googleapis.com/v1/services/{id}/skus):
//   { "skus": [ { "description", "category": { "resourceGroup", "usageType" },
//     "serviceRegions": [...], "pricingInfo": [ { "pricingExpression": { "usageUnit",
//     "tieredRates": [ { "startUsageAmount", "unitPrice": { "currencyCode", "units",
//     "nanos" } } ] } } ] } ], "nextPageToken": "..." }
// GPUs, vCPUs and memory are separate SKUs; an accelerator-optimized machine's price is
// composed from its published shape (mappings/gcp-machine-shapes.csv): GPUs x the rate of the
// GPU SKU the shape names + vCPUs x core rate + GiB x memory rate of its family (no host
// part where the GPU SKU is a slice of the whole machine, as A4's is). Cloud TPU SKUs are per
// chip-hour.
#include <charconv>
#include <tuple>

#include "service/import/readers.hpp"

namespace gpucost::import::detail {
namespace {

using nlohmann::json;

constexpr char kGcpProvider[] = "gcp";
// A Money value's nanos are billionths of a unit (google.type.Money).
constexpr double kNanosPerUnit = 1e9;

struct ComponentKey {
    std::string component;  // gpu | vcpu | ram
    std::string key;        // GPU SKU key (a shape's gpu_sku) or family
    std::string region;
    pricing::PriceType type = pricing::PriceType::kOnDemand;
    bool operator<(const ComponentKey& o) const {
        return std::tie(component, key, region, type) <
               std::tie(o.component, o.key, o.region, o.type);
    }
};

std::optional<pricing::PriceType> UsageType(const std::string& text) {
    if (text == "OnDemand") {
        return pricing::PriceType::kOnDemand;
    }
    if (text == "Preemptible") {
        return pricing::PriceType::kSpot;
    }
    if (text == "Commit1Yr") {
        return pricing::PriceType::kCommit1y;
    }
    if (text == "Commit3Yr") {
        return pricing::PriceType::kCommit3y;
    }
    return std::nullopt;
}

// units (int64 as a decimal string, or a number) + nanos; a fault when not USD money or not
// an amount (negative, above kMaxFileAmountUsd).
FileAmount Money(const json& money) {
    FileAmount amount;
    amount.fault = "price_not_usd_money";
    if (!money.is_object() || Text(money, "currencyCode") != "USD") {
        return amount;
    }
    double units = 0;
    if (money.contains("units")) {
        const json& u = money["units"];
        if (u.is_number_integer()) {
            units = static_cast<double>(u.get<std::int64_t>());
        } else if (u.is_string()) {
            std::int64_t whole = 0;
            const auto& text = u.get_ref<const std::string&>();
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), whole);
            if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
                return amount;
            }
            units = static_cast<double>(whole);
        } else {
            return amount;
        }
    }
    double nanos = 0;
    if (money.contains("nanos")) {
        if (!money["nanos"].is_number_integer()) {
            return amount;
        }
        nanos = static_cast<double>(money["nanos"].get<std::int64_t>());
    }
    amount.usd = units + nanos / kNanosPerUnit;
    amount.fault = AmountFault(amount.usd);
    return amount;
}

class GcpReader {
public:
    GcpReader(FileResult& result, const Mappings& mappings, const ParseOptions& options)
        : result_(result), sink_(result), mappings_(mappings), options_(options) {}

    std::optional<std::string> OnSku(const json& sku) {
        ++result_.records_read;
        Classify(sku);
        return std::nullopt;
    }

    // Machine prices from the components read; a shape missing a component is counted. Each
    // shape takes the GPU SKU it names (gpu_sku), so which SKU prices which machine does not
    // depend on the order of the file.
    void Compose() {
        for (const auto& [gpu, gpu_rate] : components_) {
            if (gpu.component != "gpu") {
                continue;
            }
            for (const auto& [machine, shape] : mappings_.gcp_machine_shapes) {
                if (shape.gpu_sku == gpu.key) {
                    ComposeMachine(machine, shape, gpu, gpu_rate);
                }
            }
        }
    }

    std::size_t Skus() const { return result_.records_read; }

private:
    struct Rate {
        double usd = 0;
        std::string description;
    };

    void ComposeMachine(const std::string& machine, const InstanceShape& shape,
                        const ComponentKey& gpu, const Rate& gpu_rate) {
        const double count = static_cast<double>(shape.accelerator_count);
        const std::string gpus =
            Num(count) + " GPU x " + Num(gpu_rate.usd) + " ('" + gpu_rate.description + "')";
        if (shape.family.empty()) {
            // A slice SKU prices the whole machine per GPU: there is no host to add.
            sink_.Add(MakeOffering(kGcpProvider, machine, gpu.region, gpu.type, shape,
                                   count * gpu_rate.usd,
                                   "composed from SKUs: " + gpus +
                                       "; the slice SKU includes the host's vCPUs and memory"));
            return;
        }
        auto core = components_.find({"vcpu", shape.family, gpu.region, gpu.type});
        auto ram = components_.find({"ram", shape.family, gpu.region, gpu.type});
        if (core == components_.end() || ram == components_.end()) {
            sink_.Skip("machine_shape_incomplete");
            return;
        }
        double usd = count * gpu_rate.usd + *shape.vcpus * core->second.usd +
                     *shape.ram_gib * ram->second.usd;
        sink_.Add(MakeOffering(kGcpProvider, machine, gpu.region, gpu.type, shape, usd,
                               "composed from SKUs: " + gpus + " + " + Num(*shape.vcpus) +
                                   " vCPU x " + Num(core->second.usd) + " ('" +
                                   core->second.description + "') + " + Num(*shape.ram_gib) +
                                   " GiB x " + Num(ram->second.usd) + " ('" +
                                   ram->second.description + "')"));
    }

    // The single rate of a SKU's current pricing, or a skip reason.
    static std::variant<double, std::string> ReadRate(const json& sku, const std::string& unit) {
        if (!sku.contains("pricingInfo") || !sku["pricingInfo"].is_array() ||
            sku["pricingInfo"].empty()) {
            return std::string("no_pricing_info");
        }
        const json& info = sku["pricingInfo"].front();
        const json empty = json::object();
        const json& expr = info.is_object() && info.contains("pricingExpression")
                               ? info["pricingExpression"]
                               : empty;
        if (Text(expr, "usageUnit") != unit) {
            return std::string("unit_unexpected");
        }
        if (!expr.contains("tieredRates") || !expr["tieredRates"].is_array() ||
            expr["tieredRates"].empty()) {
            return std::string("no_tiered_rates");
        }
        std::optional<double> rate;
        for (const json& tier : expr["tieredRates"]) {
            const FileAmount value = tier.is_object() && tier.contains("unitPrice")
                                         ? Money(tier["unitPrice"])
                                         : FileAmount{0, "price_not_usd_money"};
            if (!value.fault.empty()) {
                return value.fault;
            }
            // Tiers that charge differently by usage have no single hourly price.
            if (rate && *rate != value.usd) {
                return std::string("tiered_rate_varies_with_usage");
            }
            rate = value.usd;
        }
        if (*rate <= 0) {
            return std::string("zero_price");
        }
        return *rate;
    }

    void Classify(const json& sku) {
        std::string description = Text(sku, "description");
        const GcpSkuComponent* match = mappings_.MatchGcpSku(description);
        if (match == nullptr) {
            return sink_.Skip("sku_not_mapped");
        }
        if (match->component == "skip") {
            return sink_.Skip(match->key);
        }
        const json empty = json::object();
        const json& category = sku.contains("category") ? sku["category"] : empty;
        auto type = UsageType(Text(category, "usageType"));
        // Some spot SKUs carry an OnDemand category ("Spot Preemptible A4 Nvidia B200 (1 gpu
        // slice) ..."): the wording decides, else the spot rate would pass for on-demand.
        if (type && description.find("Spot Preemptible") != std::string::npos) {
            type = pricing::PriceType::kSpot;
        }
        if (!type) {
            return sink_.Skip("usage_type_unknown");
        }
        auto rate = ReadRate(sku, match->component == "ram" ? "GiBy.h" : "h");
        if (const auto* reason = std::get_if<std::string>(&rate)) {
            return sink_.Skip(*reason, "SKU '" + description.substr(0, 120) + "'");
        }
        double usd = std::get<double>(rate);
        if (!sku.contains("serviceRegions") || !sku["serviceRegions"].is_array()) {
            return sink_.Skip("no_region");
        }
        bool any_region = false;
        for (const json& r : sku["serviceRegions"]) {
            if (!r.is_string()) {
                continue;
            }
            std::string region = r.get<std::string>();
            if (!options_.regions.empty() && !options_.regions.count(region)) {
                continue;
            }
            any_region = true;
            if (match->component == "tpu") {
                InstanceShape chip;
                chip.accelerator = match->key;
                chip.accelerator_count = 1;
                chip.source = "one chip of a Cloud TPU slice, priced per chip-hour";
                sink_.Add(MakeOffering(kGcpProvider, match->key + "-chip", region, *type, chip, usd,
                                       "SKU '" + description + "'"));
            } else if (!components_
                            .emplace(ComponentKey{match->component, match->key, region, *type},
                                     Rate{usd, description})
                            .second) {
                sink_.Skip("duplicate_component_sku");
            }
        }
        if (!any_region) {
            sink_.Skip("region_not_selected");
        }
    }

    FileResult& result_;
    OfferingSink sink_;
    const Mappings& mappings_;
    const ParseOptions& options_;
    std::map<ComponentKey, Rate> components_;
};

}  // namespace

pricing::Assumptions GcpAssumptions() {
    return {{"nanos_per_unit", kNanosPerUnit, "count",
             "a Money value is units + nanos / 1e9; a machine is GPUs x GPU rate + vCPUs x core "
             "rate + GiB x memory rate of its family (mappings/gcp-machine-shapes.csv)",
             "google.type.Money; Cloud Billing Catalog API"}};
}

pricing::Result<FileResult> ReadGcp(const std::vector<NamedInput>& pages, const Mappings& mappings,
                                    const ParseOptions& options) {
    FileResult result;
    GcpReader gcp(result, mappings, options);
    for (const auto& [input, name] : pages) {
        result.file += (result.file.empty() ? "" : ", ") + name;
        bool saw_skus = false;
        RecordReader reader(
            {{"skus", "[]"}}, [&](const JsonPath&) { return true; },
            [&](const JsonPath&, json&& sku) {
                saw_skus = true;
                return gcp.OnSku(sku);
            });
        if (auto read = input.Read(reader, name); !read.ok()) {
            return read.error();
        }
        if (!saw_skus && !reader.TopLevel().count("nextPageToken")) {
            return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                      name +
                                          ": not a Cloud Billing Catalog SKU list (needs "
                                          "skus)");
        }
    }
    gcp.Compose();
    if (auto stamped = StampObservations(result, options,
                                         "Cloud Billing Catalog API (cloudbilling.googleapis.com) "
                                         "Compute Engine and Cloud TPU SKUs, retrieved " +
                                             options.as_of);
        !stamped.ok()) {
        return stamped.error();
    }
    return result;
}

}  // namespace gpucost::import::detail
