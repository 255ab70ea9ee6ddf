#include "service/import/focus_actuals.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "service/import/row_hash_set.hpp"

namespace gpucost::import {
namespace {

using pricing::ActualCharge;
using pricing::SkipReason;

// Seconds in an hour: GCP's FOCUS view may meter GPUs in seconds.
constexpr double kSecondsPerHour = 3600.0;
constexpr std::size_t kReadChunkBytes = std::size_t{64} * 1024;

std::string Lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool Contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

// FNV-1a, 64 bits: the same identity for the same row on every run and build.
std::uint64_t RowHashValue(std::string_view record, std::size_t repeat) {
    std::uint64_t h = 1469598103934665603ULL;
    auto mix = [&h](unsigned char c) {
        h ^= c;
        h *= 1099511628211ULL;
    };
    for (char c : record) mix(static_cast<unsigned char>(c));
    for (char c : std::to_string(repeat)) mix(static_cast<unsigned char>(c));
    return h;
}

// A row's identity as stored: RowHashValue as 16 hex digits.
std::string RowHash(std::string_view record, std::size_t repeat) {
    std::uint64_t h = RowHashValue(record, repeat);
    static const char kHex[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i) {
        out[static_cast<std::size_t>(i)] = kHex[h & 0xF];
        h >>= 4;
    }
    return out;
}

// Reads CSV records (quoted fields may hold newlines) from chunks `fill` hands out: a gzip or
// plain file, or a request body already in memory.
class RecordSource {
public:
    // Copies up to `capacity` bytes into `buffer`; 0 at the end.
    using Fill = std::function<std::size_t(char* buffer, std::size_t capacity)>;
    explicit RecordSource(Fill fill) : fill_(std::move(fill)) {}
    // The next record without its line end; nullopt at the end. Sets `too_long` instead of
    // growing past kMaxFocusRecordBytes.
    std::optional<std::string> Next(bool& too_long) {
        std::string record;
        bool quoted = false;
        while (true) {
            if (pos_ == end_ && !Refill()) {
                if (quoted) {
                    unterminated_ = true;  // the rest of the export would be one field
                    return std::nullopt;
                }
                if (record.empty()) return std::nullopt;
                return record;
            }
            char c = buffer_[pos_++];
            if (c == '"') quoted = !quoted;
            if (c == '\n' && !quoted) {
                if (!record.empty() && record.back() == '\r') record.pop_back();
                return record;
            }
            record.push_back(c);
            if (record.size() > kMaxFocusRecordBytes) {
                too_long = true;
                return std::nullopt;
            }
        }
    }

    // Whether the export ended inside a quoted field.
    bool Unterminated() const { return unterminated_; }

private:
    bool Refill() {
        std::size_t n = fill_(buffer_, sizeof buffer_);
        if (n == 0) return false;
        pos_ = 0;
        end_ = n;
        return true;
    }
    Fill fill_;
    char buffer_[kReadChunkBytes];
    std::size_t pos_ = 0;
    std::size_t end_ = 0;
    bool unterminated_ = false;
};

struct Row {
    const std::map<std::string, std::size_t>& columns;
    const std::vector<std::string>& cells;
    std::size_t line;  // the record's number, the header being 1
    std::string Get(const std::string& name) const {
        auto it = columns.find(name);
        return it == columns.end() || it->second >= cells.size() ? "" : cells[it->second];
    }
    // A FOCUS value column (ChargeCategory, ChargeClass, PricingCategory, ...) in lower case:
    // Google's view writes `usage`, `correction`, `committed` where AWS and Azure write
    // `Usage`, `Correction`, `Committed`.
    std::string Value(const std::string& name) const { return Lower(Get(name)); }
    bool Has(const std::string& name) const { return columns.count(name) != 0; }
};

// A cell the export may not hold: the whole export is refused (422), naming the record as
// "line N" in Error.field and the column in the message, never storing any of its rows.
pricing::Error CellError(std::size_t line, const std::string& column, const std::string& what) {
    const std::string where = "line " + std::to_string(line);
    return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                              where + ": " + column + " " + what, where);
}

std::optional<double> ChargeNumber(const std::string& text) {
    if (text.empty()) return 0.0;
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
}

std::string ProviderOf(const Row& row) {
    std::string name = Lower(row.Get("ProviderName"));
    if (name.empty()) name = Lower(row.Get("ServiceProviderName"));
    if (Contains(name, "amazon") || Contains(name, "aws")) return "aws";
    if (Contains(name, "microsoft") || Contains(name, "azure")) return "azure";
    if (Contains(name, "google")) return "gcp";
    return "";
}

// The SKU the mappings key on, and the accelerator shape when they know it.
struct SkuMatch {
    std::string sku;
    std::string accelerator;
    int accelerator_count = 0;
    bool per_accelerator = false;  // GCP GPU SKUs: quantities are accelerator-hours
    bool looks_accelerated = false;
    bool spot_meter = false;
    bool commitment_fee = false;  // GCP's monthly CUD fee: the commitment's price, not hours
};

SkuMatch MatchAws(const Row& row, const Mappings& m) {
    SkuMatch match;
    std::string usage = row.Get("x_UsageType");
    auto colon = usage.find(':');
    if (colon == std::string::npos) return match;
    match.sku = usage.substr(colon + 1);
    match.spot_meter = Contains(usage, "SpotUsage");
    if (auto it = m.aws_instance_types.find(match.sku); it != m.aws_instance_types.end()) {
        match.accelerator = it->second.accelerator;
        match.accelerator_count = it->second.accelerator_count;
    }
    std::string family = Lower(match.sku.substr(0, match.sku.find('.')));
    match.looks_accelerated =
        !family.empty() && (family[0] == 'p' || family[0] == 'g' || family.rfind("trn", 0) == 0 ||
                            family.rfind("inf", 0) == 0);
    return match;
}

SkuMatch MatchAzure(const Row& row, const Mappings& m) {
    SkuMatch match;
    std::string details = row.Get("x_SkuDetails");
    if (!details.empty()) {
        auto parsed = nlohmann::json::parse(details, nullptr, false);
        if (parsed.is_object() && parsed.contains("ServiceType") &&
            parsed["ServiceType"].is_string()) {
            match.sku = parsed["ServiceType"].get<std::string>();
        }
    }
    std::string meter = row.Get("x_SkuMeterName");
    for (const char* suffix : {" Spot", " Low Priority"}) {
        std::string s(suffix);
        if (meter.size() > s.size() && meter.compare(meter.size() - s.size(), s.size(), s) == 0) {
            meter.resize(meter.size() - s.size());
            match.spot_meter = true;
        }
    }
    if (match.sku.empty() && !meter.empty()) {
        match.sku = "Standard_" + meter;
        std::replace(match.sku.begin(), match.sku.end(), ' ', '_');
    }
    if (auto it = m.azure_vm_sizes.find(match.sku); it != m.azure_vm_sizes.end()) {
        match.accelerator = it->second.accelerator;
        match.accelerator_count = it->second.accelerator_count;
    }
    match.looks_accelerated = match.sku.rfind("Standard_N", 0) == 0;
    return match;
}

// Google bills Cloud TPU as "TPU v5p pod core" in its FOCUS view where the billing catalog
// (and gcp-sku-components.csv) writes "Tpu-v5p": the description with "TPU v" as "Tpu-v".
std::string CatalogTpuWording(const std::string& description) {
    const std::size_t at = Lower(description).find("tpu v");
    if (at == std::string::npos) return description;
    return description.substr(0, at) + "Tpu-v" + description.substr(at + 5);
}

SkuMatch MatchGcp(const Row& row, const Mappings& m) {
    SkuMatch match;
    match.sku = row.Get("x_SkuDescription");
    if (match.sku.empty()) match.sku = row.Get("ChargeDescription");
    const std::string lower = Lower(match.sku);
    // "Spot Preemptible Nvidia H100 80GB GPU running in Americas" is the spot price of the GPU;
    // "Commitment v1: Nvidia H100 80GB GPU in Americas for 1 Year" the commitment's fee.
    match.spot_meter = Contains(lower, "preemptible") || lower.rfind("spot ", 0) == 0;
    match.commitment_fee = lower.rfind("commitment", 0) == 0;
    const GcpSkuComponent* c = m.MatchGcpSku(match.sku);
    if (c == nullptr) c = m.MatchGcpSku(CatalogTpuWording(match.sku));
    if (c != nullptr && (c->component == "gpu" || c->component == "tpu")) {
        match.accelerator = c->key;
        match.accelerator_count = 1;
        match.per_accelerator = true;
    }
    match.looks_accelerated = Contains(match.sku, "GPU") || Contains(match.sku, "TPU");
    return match;
}

// The catalog offering of this accelerator SKU in the row's region under its pricing.
std::string OfferingFor(const pricing::Catalog& catalog, const std::string& provider,
                        const SkuMatch& match, const std::string& region, bool spot) {
    const pricing::PriceType wanted =
        spot ? pricing::PriceType::kSpot : pricing::PriceType::kOnDemand;
    for (const pricing::Offering& o : catalog.Offerings()) {
        if (o.provider != provider || pricing::IdKey(o.region) != pricing::IdKey(region) ||
            o.price_type != wanted) {
            continue;
        }
        bool same = match.per_accelerator
                        ? o.accelerator == match.accelerator
                        : pricing::IdKey(o.instance_type) == pricing::IdKey(match.sku);
        if (same) return o.id;
    }
    return "";
}

// A correction (FOCUS ChargeClass Correction) of usage, or Google's `adjustment` rows that
// correct a SKU's usage, is kept: it belongs to the period it corrects, or actuals never
// reconcile with the invoice.
bool IsCorrection(const Row& row) {
    return row.Value("ChargeClass") == "correction";
}

std::optional<SkipReason> ChargeSkip(const Row& row) {
    const std::string category = row.Value("ChargeCategory");
    if (category == "tax") return SkipReason::kTax;
    if (category == "credit") return SkipReason::kCredit;
    if (category == "purchase") return SkipReason::kPurchase;
    if (category == "adjustment" && !IsCorrection(row)) return SkipReason::kAdjustment;
    return std::nullopt;
}

// The words each provider's own rows carry in PublisherName; any other publisher sells
// software through the cloud's marketplace.
const std::map<std::string, std::vector<std::string>>& OwnPublisherWords() {
    static const std::map<std::string, std::vector<std::string>> kWords = {
        {"aws", {"amazon", "aws"}}, {"azure", {"microsoft"}}, {"gcp", {"google"}}};
    return kWords;
}

// A third party's software fee billed through the cloud (AWS "NVIDIA AI Enterprise (AWS
// Marketplace)" whose usage type names the instance it runs on; Azure x_PublisherCategory
// Vendor): the instance's hours are billed on their own row.
bool IsMarketplace(const Row& row, const std::string& provider) {
    if (Contains(row.Value("ServiceName"), "marketplace")) return true;
    if (row.Value("x_PublisherCategory") == "vendor") return true;
    const std::string publisher = row.Value("PublisherName");
    if (publisher.empty()) return false;
    const auto& own = OwnPublisherWords().at(provider);
    return std::none_of(own.begin(), own.end(),
                        [&](const std::string& word) { return Contains(publisher, word); });
}

// FOCUS PricingCategory in the specification's case (Google writes `committed`).
std::string PricingCategoryOf(const Row& row) {
    static const std::array<const char*, 4> kCategories = {"Standard", "Dynamic", "Committed",
                                                           "Other"};
    std::string given = row.Get("PricingCategory");
    for (const char* category : kCategories) {
        if (Lower(given) == Lower(category)) return category;
    }
    return given;
}

// The prefixes a provider puts before a user's tag key: AWS writes cost allocation tags as
// `user:KEY`; Azure and Google write the key as given.
const std::vector<std::string>& TagKeyPrefixes() {
    static const std::vector<std::string> kPrefixes = {"", "user:"};
    return kPrefixes;
}

// A row's Tags as key -> value: a JSON object (FOCUS) or Google's array of {key, value, ...};
// nullopt when they are neither: a row whose tags cannot be read is refused rather than
// stored untagged.
std::optional<std::map<std::string, std::string>> ReadTags(const std::string& text) {
    std::map<std::string, std::string> tags;
    if (text.empty()) return tags;
    auto parsed = nlohmann::json::parse(text, nullptr, false);
    if (parsed.is_object()) {
        for (const auto& [key, value] : parsed.items()) {
            if (value.is_string()) tags.emplace(key, value.get<std::string>());
        }
        return tags;
    }
    if (!parsed.is_array()) return std::nullopt;
    for (const auto& entry : parsed) {
        if (!entry.is_object() || !entry.contains("key") || !entry["key"].is_string()) {
            return std::nullopt;
        }
        auto value = entry.find("value");
        if (value != entry.end() && value->is_string()) {
            tags.emplace(entry["key"].get<std::string>(), value->get<std::string>());
        }
    }
    return tags;
}

// The value of tag `key` ("" when the row has none), under any of the providers' prefixes.
std::string TagValue(const std::map<std::string, std::string>& tags, const std::string& key) {
    if (key.empty()) return "";
    for (const std::string& prefix : TagKeyPrefixes()) {
        if (auto it = tags.find(prefix + key); it != tags.end()) return it->second;
    }
    return "";
}

// The figures of a kept row: each a number within its bounds (pricing/actuals.hpp).
pricing::Result<std::array<double, 4>> ReadFigures(const Row& row, bool correction) {
    static constexpr std::array<const char*, 4> kColumns = {"BilledCost", "EffectiveCost",
                                                            "ListCost", "ConsumedQuantity"};
    std::array<double, 4> figures{};
    for (std::size_t i = 0; i < kColumns.size(); ++i) {
        const std::string text = row.Get(kColumns[i]);
        auto value = ChargeNumber(text);
        if (!value) {
            return CellError(row.line, kColumns[i], "'" + text.substr(0, 40) + "' is not a number");
        }
        // A correction may take hours back, as it takes costs back.
        const std::string fault = i < 3 || correction ? pricing::ChargeAmountFault(*value)
                                                      : pricing::ConsumedQuantityFault(*value);
        if (!fault.empty()) {
            return CellError(row.line, kColumns[i], "'" + text.substr(0, 40) + "' " + fault);
        }
        figures[i] = *value;
    }
    return figures;
}

// The texts of a kept row that are stored and grouped on: a period start in the window, an
// ISO 4217 currency, readable tags.
pricing::Status CheckTexts(const Row& row) {
    const std::string start = row.Get("ChargePeriodStart");
    if (std::string fault = pricing::ChargePeriodFault(start); !fault.empty()) {
        return CellError(row.line, "ChargePeriodStart", "'" + start.substr(0, 40) + "' " + fault);
    }
    if (!pricing::IsCurrencyCode(row.Get("BillingCurrency"))) {
        return CellError(row.line, "BillingCurrency",
                         "'" + row.Get("BillingCurrency").substr(0, 40) +
                             "' is not an ISO 4217 code (three capital letters)");
    }
    return pricing::Ok{};
}

// A fault of the header (line 1) or of the whole export.
pricing::Status Fail(const std::string& path, const std::string& what) {
    return pricing::MakeError(pricing::ErrorCode::kInvalidArgument, path + ": " + what, "line 1");
}

// The columns Azure writes each cost in US dollars in, BilledCost, EffectiveCost, ListCost.
constexpr std::array<const char*, 3> kAzureUsdColumns = {"x_BilledCostInUsd",
                                                         "x_EffectiveCostInUsd", "x_ListCostInUsd"};
// Google's rate from US dollars to the billing currency (cost / rate = USD).
constexpr char kGcpConversionRate[] = "x_CurrencyConversionRate";

// A row billed in another currency, converted to US dollars (the plans' currency) with the
// rate the export itself gives: Azure's x_*CostInUsd columns, Google's
// x_CurrencyConversionRate. The column the rate came from, or "" when the export gives none
// (the costs stay in their currency, listed apart).
pricing::Result<std::string> ConvertToUsd(const Row& row, std::array<double, 4>& figures) {
    if (row.Get("BillingCurrency") == "USD") return std::string();
    if (!row.Get(kAzureUsdColumns[1]).empty()) {
        for (std::size_t i = 0; i < kAzureUsdColumns.size(); ++i) {
            const std::string text = row.Get(kAzureUsdColumns[i]);
            auto value = ChargeNumber(text);
            if (!value || !pricing::ChargeAmountFault(*value).empty()) {
                return CellError(row.line, kAzureUsdColumns[i],
                                 "'" + text.substr(0, 40) + "' is not an amount in USD");
            }
            figures[i] = *value;
        }
        return std::string(kAzureUsdColumns[1]);
    }
    const std::string rate_text = row.Get(kGcpConversionRate);
    if (rate_text.empty()) return std::string();
    auto rate = ChargeNumber(rate_text);
    if (!rate || !(*rate > 0) || !pricing::ChargeAmountFault(*rate).empty()) {
        return CellError(row.line, kGcpConversionRate,
                         "'" + rate_text.substr(0, 40) + "' is not a positive rate");
    }
    for (std::size_t i = 0; i < 3; ++i) figures[i] /= *rate;
    return std::string(kGcpConversionRate);
}

// The charge of an accelerator row: its figures (in USD where the export gives the rate), its
// period, tags and offering; its accelerator-hours from ConsumedQuantity.
pricing::Result<ActualCharge> BuildCharge(const Row& row, const FocusReadOptions& options,
                                          const pricing::Catalog& catalog,
                                          const std::string& provider, const SkuMatch& match,
                                          pricing::ActualsReport& report) {
    ActualCharge c;
    c.correction = IsCorrection(row);
    auto figures = ReadFigures(row, c.correction);
    if (!figures.ok()) return figures.error();
    if (auto texts = CheckTexts(row); !texts.ok()) return texts.error();
    const auto tags = ReadTags(row.Get("Tags"));
    if (!tags) {
        return CellError(row.line, "Tags",
                         "is neither a JSON object nor an array of {key, value} objects");
    }
    auto rate_column = ConvertToUsd(row, figures.value());
    if (!rate_column.ok()) return rate_column.error();
    c.billing_currency = row.Get("BillingCurrency");
    if (!rate_column.value().empty()) {
        ++report.converted_to_usd[{c.billing_currency, rate_column.value()}];
        c.billing_currency = "USD";
    }
    const auto [billed, effective, list, consumed] = figures.value();
    c.provider = provider;
    c.charge_period_start = row.Get("ChargePeriodStart");
    c.month = c.charge_period_start.substr(0, 7);
    c.sku = match.sku;
    c.accelerator = match.accelerator;
    c.region = row.Get("RegionId");
    c.pricing_category = PricingCategoryOf(row);
    const bool spot = match.spot_meter || c.pricing_category == "Dynamic";
    c.offering_id = OfferingFor(catalog, provider, match, c.region, spot);
    double hours = consumed;
    if (Contains(row.Value("ConsumedUnit"), "second")) hours /= kSecondsPerHour;
    c.accelerator_hours = hours * match.accelerator_count;
    c.billed_cost = billed;
    c.effective_cost = effective;
    c.list_cost = list;
    c.tag_value = TagValue(*tags, options.tag_key);
    c.group_value = TagValue(*tags, options.group_by);
    return c;
}

// Reserved hours nobody used (FOCUS CommitmentDiscountStatus Unused; its quantity is the
// PricingQuantity, ConsumedQuantity being null): commitment waste, reported by who holds the
// commitment, never kept as usage.
pricing::Status ReportUnused(const Row& row, const FocusReadOptions& options,
                             const pricing::Catalog& catalog, const std::string& provider,
                             const SkuMatch& match, pricing::ActualsReport& report) {
    auto unused = BuildCharge(row, options, catalog, provider, match, report);
    if (!unused.ok()) return unused.error();
    const std::string quantity_text = row.Get("PricingQuantity");
    auto quantity = ChargeNumber(quantity_text);
    if (!quantity || !pricing::ConsumedQuantityFault(*quantity).empty()) {
        return CellError(row.line, "PricingQuantity",
                         "'" + quantity_text.substr(0, 40) + "' is not a quantity");
    }
    double hours = *quantity;
    if (Contains(row.Value("PricingUnit"), "second")) hours /= kSecondsPerHour;
    unused.value().accelerator_hours = hours * match.accelerator_count;
    report.Unused(unused.value(), row.Get("CommitmentDiscountId"));
    return pricing::Ok{};
}

// Classifies one row: a kept charge, or nullopt with the row counted as skipped (or, for
// unused commitment hours, reported). A bad cell is an error.
pricing::Result<std::optional<ActualCharge>> Classify(const Row& row,
                                                      const FocusReadOptions& options,
                                                      const pricing::Catalog& catalog,
                                                      const Mappings& mappings,
                                                      pricing::ActualsReport& report) {
    const std::string example = row.Get("ChargeDescription");
    if (auto skip = ChargeSkip(row)) {
        report.Skip(*skip, example);
        return std::optional<ActualCharge>{};
    }
    const std::string provider = ProviderOf(row);
    if (provider.empty()) {
        report.Skip(SkipReason::kUnknownProvider, row.Get("ProviderName"));
        return std::optional<ActualCharge>{};
    }
    if (IsMarketplace(row, provider)) {
        report.Skip(SkipReason::kMarketplace, row.Get("ServiceName"));
        return std::optional<ActualCharge>{};
    }
    SkuMatch match = provider == "aws"     ? MatchAws(row, mappings)
                     : provider == "azure" ? MatchAzure(row, mappings)
                                           : MatchGcp(row, mappings);
    if (match.accelerator.empty()) {
        report.Skip(match.looks_accelerated ? SkipReason::kUnknownSku : SkipReason::kNonAccelerator,
                    match.sku.empty() ? example : match.sku);
        return std::optional<ActualCharge>{};
    }
    if (match.commitment_fee) {
        // The commitment's price: the usage it covers is kept, at its amortised cost.
        report.Skip(SkipReason::kPurchase, match.sku);
        return std::optional<ActualCharge>{};
    }
    if (row.Value("CommitmentDiscountStatus") == "unused") {
        if (auto status = ReportUnused(row, options, catalog, provider, match, report);
            !status.ok()) {
            return status.error();
        }
        return std::optional<ActualCharge>{};
    }
    auto charge = BuildCharge(row, options, catalog, provider, match, report);
    if (!charge.ok()) return charge.error();
    return std::optional<ActualCharge>(std::move(charge.value()));
}

}  // namespace

std::vector<std::string> ParseCsvRecord(std::string_view record) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < record.size(); ++i) {
        char c = record[i];
        if (quoted) {
            if (c == '"' && i + 1 < record.size() && record[i + 1] == '"') {
                fields.back().push_back('"');
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                fields.back().push_back(c);
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.emplace_back();
        } else {
            fields.back().push_back(c);
        }
    }
    return fields;
}

namespace {

// Every cell of every row, kept or not, is UTF-8 without NUL: PostgreSQL refuses anything else
// and a skipped row's text is echoed in the report.
pricing::Status CheckCells(const std::vector<std::string>& cells,
                           const std::vector<std::string>& header, std::size_t line) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
        if (!pricing::IsCleanUtf8(cells[i])) {
            return CellError(line,
                             i < header.size() ? header[i] : "column " + std::to_string(i + 1),
                             "is not UTF-8 or holds a NUL byte");
        }
    }
    return pricing::Ok{};
}

// The records of one export after its header: each kept row to `on_charge`, every row counted.
// Errors are prefixed with `name` (the file, or "the body").
pricing::Status ReadRecords(RecordSource& source, const std::string& name,
                            const FocusReadOptions& options, const pricing::Catalog& catalog,
                            const Mappings& mappings, pricing::ActualsReport& report,
                            const std::function<void(const ActualCharge&)>& on_charge) {
    bool too_long = false;
    auto header_text = source.Next(too_long);
    if (!header_text) return Fail(name, "empty file, no FOCUS header");
    if (header_text->rfind("\xEF\xBB\xBF", 0) == 0) header_text->erase(0, 3);
    std::map<std::string, std::size_t> columns;
    const auto header = ParseCsvRecord(*header_text);
    for (std::size_t i = 0; i < header.size(); ++i) {
        if (!pricing::IsCleanUtf8(header[i])) {
            return Fail(name, "column " + std::to_string(i + 1) +
                                  " of the header is not UTF-8 or holds a NUL byte");
        }
        // Two columns of one name would leave which one is read to chance.
        if (!columns.emplace(header[i], i).second) {
            return Fail(name, "column '" + header[i].substr(0, 40) + "' appears twice");
        }
    }
    for (const char* needed :
         {"ChargeCategory", "BilledCost", "ChargePeriodStart", "BillingCurrency"}) {
        if (columns.count(needed) == 0) return Fail(name, std::string("no ") + needed + " column");
    }
    if (columns.count("ProviderName") == 0 && columns.count("ServiceProviderName") == 0) {
        return Fail(name, "no ProviderName (or ServiceProviderName) column");
    }
    // Identical rows are told apart by their order: how many of each text came before, by the
    // text's 64-bit hash (repeats: only the texts seen more than once). Only kept rows get an
    // identity (identical rows are kept or skipped alike), so the rows an export is mostly
    // made of cost no memory.
    RowHashSet seen;
    std::unordered_map<std::uint64_t, std::size_t> repeats;
    std::size_t line = 1;
    while (auto record = source.Next(too_long)) {
        ++line;
        if (record->empty()) continue;
        ++report.rows_read;
        const auto cells = ParseCsvRecord(*record);
        if (auto clean = CheckCells(cells, header, line); !clean.ok()) {
            return pricing::MakeError(clean.error().code, name + ": " + clean.error().message,
                                      clean.error().field);
        }
        auto kept = Classify(Row{columns, cells, line}, options, catalog, mappings, report);
        if (!kept.ok()) {
            return pricing::MakeError(kept.error().code, name + ": " + kept.error().message,
                                      kept.error().field);
        }
        if (kept.value()) {
            ActualCharge& charge = *kept.value();
            const std::uint64_t text_hash = RowHashValue(*record, 0);
            charge.row_id = RowHash(*record, seen.Insert(text_hash) ? 0 : ++repeats[text_hash]);
            report.Keep(charge);
            on_charge(charge);
        }
    }
    if (too_long) return Fail(name, "a record is longer than 1 MiB");
    if (source.Unterminated()) {
        const std::string where = "line " + std::to_string(line + 1);
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  name + ": " + where +
                                      ": a quoted field is not closed before the end of the "
                                      "export",
                                  where);
    }
    return pricing::Ok{};
}

}  // namespace

pricing::Status ReadFocusExport(const std::string& path, const FocusReadOptions& options,
                                const pricing::Catalog& catalog, const Mappings& mappings,
                                pricing::ActualsReport& report,
                                const std::function<void(const ActualCharge&)>& on_charge) {
    std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
    if (!file) {
        return pricing::MakeError(pricing::ErrorCode::kNotFound, path + ": cannot be opened");
    }
    auto source = std::make_unique<RecordSource>([f = file.get()](char* buffer, std::size_t n) {
        int got = gzread(f, buffer, static_cast<unsigned>(n));
        return got > 0 ? static_cast<std::size_t>(got) : std::size_t{0};
    });
    return ReadRecords(*source, path, options, catalog, mappings, report, on_charge);
}

pricing::Status ReadFocusText(std::string_view text, const FocusReadOptions& options,
                              const pricing::Catalog& catalog, const Mappings& mappings,
                              pricing::ActualsReport& report,
                              const std::function<void(const ActualCharge&)>& on_charge) {
    auto source = std::make_unique<RecordSource>([&text](char* buffer, std::size_t n) {
        const std::size_t got = std::min(n, text.size());
        text.copy(buffer, got);
        text.remove_prefix(got);
        return got;
    });
    return ReadRecords(*source, "the body", options, catalog, mappings, report, on_charge);
}

}  // namespace gpucost::import
