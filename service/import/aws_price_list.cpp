// AWS Price List bulk offer file for AmazonEC2 (one region per file):
//   { "offerCode": "AmazonEC2", "publicationDate": "...", "products": { SKU: {...} },
//     "terms": { "OnDemand": { SKU: { TERM: {...} } }, "Reserved": { SKU: { TERM: {...} } } } }
// Products come before terms, as AWS publishes them; only products that pass the filters are
// kept (a few hundred at most), so the terms of every other SKU are skipped unparsed.
#include <charconv>
#include <unordered_map>

#include "service/import/readers.hpp"

namespace gpucost::import::detail {
namespace {

using nlohmann::json;

constexpr char kAwsProvider[] = "aws";
// AWS Reserved Instance terms are 365-day years (docs.aws.amazon.com/AWSEC2/latest/UserGuide/
// ec2-reserved-instances.html: "1-year (31536000 seconds) or 3-year (94608000 seconds)").
constexpr double kHoursPerReservedYear = 8760;

struct KeptProduct {
    std::string instance_type;
    std::string region;
    const InstanceShape* shape = nullptr;
    std::optional<double> vcpus;
    std::optional<double> ram_gib;
    std::string network;
};

std::optional<double> LeadingNumber(const std::string& text) {
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end == text.data()) {
        return std::nullopt;
    }
    return v;
}

class AwsReader {
public:
    AwsReader(FileResult& result, const Mappings& mappings, const ParseOptions& options)
        : result_(result), sink_(result), mappings_(mappings), options_(options) {}

    bool Want(const JsonPath& path) {
        if (path.front() == "products") {
            return true;
        }
        return products_seen_ == 0 || kept_.count(path.back()) > 0;
    }

    std::optional<std::string> OnRecord(const JsonPath& path, json&& record) {
        ++result_.records_read;
        if (path.front() == "products") {
            ++products_seen_;
            OnProduct(path.back(), record);
            return std::nullopt;
        }
        if (products_seen_ == 0) {
            return "terms before products: not the layout of an AWS offer file";
        }
        const KeptProduct& product = kept_.at(path.back());
        if (path[1] == "OnDemand") {
            OnDemandTerms(product, record);
        } else {
            ReservedTerms(product, record);
        }
        return std::nullopt;
    }

    std::size_t ProductsSeen() const { return products_seen_; }

private:
    // The filters, in order; a product is counted under the first one it fails.
    void OnProduct(const std::string& sku, const json& product) {
        const json empty = json::object();
        const json& a = product.is_object() && product.contains("attributes") &&
                                product["attributes"].is_object()
                            ? product["attributes"]
                            : empty;
        if (Text(product, "productFamily") != "Compute Instance") {
            return sink_.Skip("not_a_compute_instance");
        }
        auto shape = mappings_.aws_instance_types.find(Text(a, "instanceType"));
        if (shape == mappings_.aws_instance_types.end()) {
            return sink_.Skip("instance_type_not_mapped");
        }
        if (Text(a, "locationType") != "AWS Region") {
            return sink_.Skip("not_an_aws_region");
        }
        std::string region = Text(a, "regionCode");
        if (region.empty()) {
            return sink_.Skip("no_region_code");
        }
        if (!options_.regions.empty() && !options_.regions.count(region)) {
            return sink_.Skip("region_not_selected");
        }
        if (Text(a, "operatingSystem") != "Linux") {
            return sink_.Skip("not_linux");
        }
        if (Text(a, "tenancy") != "Shared") {
            return sink_.Skip("not_shared_tenancy");
        }
        if (Text(a, "preInstalledSw") != "NA") {
            return sink_.Skip("preinstalled_software");
        }
        if (Text(a, "licenseModel") != "No License required") {
            return sink_.Skip("license_included");
        }
        if (Text(a, "capacitystatus") != "Used") {
            return sink_.Skip("capacity_reservation_status");
        }
        if (std::string market = Text(a, "marketoption"); !market.empty() && market != "OnDemand") {
            return sink_.Skip("market_option_not_on_demand");
        }
        KeptProduct kept;
        kept.instance_type = shape->first;
        kept.region = region;
        kept.shape = &shape->second;
        kept.vcpus = LeadingNumber(Text(a, "vcpu"));
        kept.ram_gib = LeadingNumber(Text(a, "memory"));  // "2048 GiB"
        kept.network = Text(a, "networkPerformance");
        kept_.emplace(sku, std::move(kept));
    }

    // The hourly rate and upfront fee of one term's price dimensions.
    struct TermPrice {
        std::optional<double> usd_per_hour;
        double upfront_usd = 0;
        std::string problem;  // a skip reason when the dimensions are not understood
    };

    static TermPrice ReadDimensions(const json& term) {
        TermPrice price;
        const json* dims = term.is_object() && term.contains("priceDimensions")
                               ? &term["priceDimensions"]
                               : nullptr;
        if (dims == nullptr || !dims->is_object() || dims->empty()) {
            price.problem = "no_price_dimensions";
            return price;
        }
        for (const auto& [key, dim] : dims->items()) {
            std::string unit = Text(dim, "unit");
            const json* usd = dim.is_object() && dim.contains("pricePerUnit") &&
                                      dim["pricePerUnit"].is_object() &&
                                      dim["pricePerUnit"].contains("USD")
                                  ? &dim["pricePerUnit"]["USD"]
                                  : nullptr;
            const FileAmount value = usd ? Usd(*usd) : FileAmount{0, "price_not_a_number"};
            if (!value.fault.empty()) {
                price.problem = value.fault;
                return price;
            }
            if (unit == "Hrs") {
                if (price.usd_per_hour || Text(dim, "beginRange") != "0") {
                    price.problem = "tiered_hourly_rate";
                    return price;
                }
                price.usd_per_hour = value.usd;
            } else if (unit == "Quantity") {
                price.upfront_usd += value.usd;
            } else {
                price.problem = "unit_not_hours";
                return price;
            }
        }
        if (!price.usd_per_hour) {
            price.problem = "no_hourly_rate";
        }
        return price;
    }

    pricing::Offering Make(const KeptProduct& p, pricing::PriceType type, double usd,
                           std::string notes) const {
        InstanceShape shape = *p.shape;
        shape.vcpus = p.vcpus;
        shape.ram_gib = p.ram_gib;
        auto o = MakeOffering(kAwsProvider, p.instance_type, p.region, type, shape, usd,
                              std::move(notes));
        o.interconnect = p.network;
        if (p.network.find("Gigabit") != std::string::npos) {
            o.scale_out_gbit_per_s = LeadingNumber(p.network);
        }
        return o;
    }

    // A term named in the import report: its path in the file and the product it prices.
    static std::string Where(const KeptProduct& product, const std::string& term) {
        return term + " (" + product.instance_type + ", " + product.region + ")";
    }

    void OnDemandTerms(const KeptProduct& product, const json& terms) {
        if (!terms.is_object()) {
            return sink_.Skip("terms_not_an_object");
        }
        for (const auto& [code, term] : terms.items()) {
            TermPrice price = ReadDimensions(term);
            if (!price.problem.empty()) {
                sink_.Skip(price.problem, Where(product, "terms.OnDemand." + code));
            } else if (*price.usd_per_hour <= 0) {
                sink_.Skip("zero_price");
            } else {
                sink_.Add(Make(product, pricing::PriceType::kOnDemand, *price.usd_per_hour,
                               "terms.OnDemand " + Text(term, "offerTermCode")));
            }
        }
    }

    // One Reserved term read: its lease and purchase option and the effective hourly rate,
    // or a skip reason.
    struct ReservedRate {
        std::string lease;
        std::string option;
        double usd_per_hour = 0;
        std::string explained;
        std::string problem;
    };

    static ReservedRate ReadReservedTerm(const json& term) {
        ReservedRate rate;
        const json empty = json::object();
        const json& attrs =
            term.is_object() && term.contains("termAttributes") ? term["termAttributes"] : empty;
        rate.lease = Text(attrs, "LeaseContractLength");
        rate.option = Text(attrs, "PurchaseOption");
        if (Text(attrs, "OfferingClass") != "standard") {
            rate.problem = "reserved_not_standard_class";
            return rate;
        }
        if (rate.lease != "1yr" && rate.lease != "3yr") {
            rate.problem = "reserved_lease_unknown";
            return rate;
        }
        TermPrice price = ReadDimensions(term);
        if (!price.problem.empty()) {
            rate.problem = price.problem;
            return rate;
        }
        double hours = kHoursPerReservedYear * (rate.lease == "1yr" ? 1 : 3);
        rate.usd_per_hour = *price.usd_per_hour + price.upfront_usd / hours;
        if (rate.usd_per_hour <= 0) {
            rate.problem = "zero_price";
        }
        rate.explained = rate.option + " " + Num(rate.usd_per_hour) + " (" +
                         Num(*price.usd_per_hour) + "/h + " + Num(price.upfront_usd) +
                         " upfront / " + Num(hours) + " h)";
        return rate;
    }

    // All purchase options of one lease length become one commitment offering: the lowest
    // effective hourly rate (hourly + upfront / hours in the term) is its price, and the
    // other options are listed in the price's notes.
    void ReservedTerms(const KeptProduct& product, const json& terms) {
        if (!terms.is_object()) {
            return sink_.Skip("terms_not_an_object");
        }
        std::map<std::string, std::vector<ReservedRate>> by_lease;
        for (const auto& [code, term] : terms.items()) {
            ReservedRate rate = ReadReservedTerm(term);
            if (!rate.problem.empty()) {
                sink_.Skip(rate.problem, Where(product, "terms.Reserved." + code));
            } else {
                by_lease[rate.lease].push_back(std::move(rate));
            }
        }
        for (const auto& [lease, rates] : by_lease) {
            const ReservedRate* best = &rates.front();
            std::string all;
            for (const ReservedRate& r : rates) {
                best = r.usd_per_hour < best->usd_per_hour ? &r : best;
                all += (all.empty() ? "" : "; ") + r.explained;
            }
            for (std::size_t i = 1; i < rates.size(); ++i) {
                sink_.Skip("reserved_purchase_option_not_lowest");
            }
            auto type =
                lease == "1yr" ? pricing::PriceType::kCommit1y : pricing::PriceType::kCommit3y;
            sink_.Add(Make(product, type, best->usd_per_hour,
                           "terms.Reserved standard " + lease + ", " + best->option +
                               " (lowest effective rate); options: " + all));
        }
    }

    FileResult& result_;
    OfferingSink sink_;
    const Mappings& mappings_;
    const ParseOptions& options_;
    std::unordered_map<std::string, KeptProduct> kept_;
    std::size_t products_seen_ = 0;
};

}  // namespace

pricing::Assumptions AwsAssumptions() {
    return {{"hours_per_reserved_year", kHoursPerReservedYear, "h",
             "a Reserved term's upfront fee is spread over 8760 h a year (1yr) or 26280 h (3yr); "
             "effective hourly = hourly + upfront / hours, the lowest purchase option is served",
             "AWS EC2 User Guide, Reserved Instances: 1-year = 31536000 s"}};
}

pricing::Result<FileResult> ReadAws(const Input& input, const std::string& name,
                                    const Mappings& mappings, const ParseOptions& options) {
    FileResult result;
    result.file = name;
    AwsReader aws(result, mappings, options);
    RecordReader reader(
        {{"products", "*"}, {"terms", "OnDemand", "*"}, {"terms", "Reserved", "*"}},
        [&](const JsonPath& path) { return aws.Want(path); },
        [&](const JsonPath& path, json&& record) { return aws.OnRecord(path, std::move(record)); });
    if (auto read = input.Read(reader, name); !read.ok()) {
        return read.error();
    }
    const auto& top = reader.TopLevel();
    auto offer = top.find("offerCode");
    if (offer == top.end() || offer->second != "AmazonEC2" || aws.ProductsSeen() == 0) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  name +
                                      ": not an AWS Price List offer file for AmazonEC2 "
                                      "(needs offerCode \"AmazonEC2\" and products)");
    }
    if (auto date = top.find("publicationDate"); date != top.end()) {
        result.publication_date = date->second;
    }
    std::string version = top.count("version") ? top.at("version") : std::string("?");
    if (auto stamped =
            StampObservations(result, options,
                              "AWS Price List API, AmazonEC2 offer file version " + version +
                                  " (publicationDate " + result.publication_date + ")");
        !stamped.ok()) {
        return stamped.error();
    }
    return result;
}

}  // namespace gpucost::import::detail
