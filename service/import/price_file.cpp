#include "service/import/price_file.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "pricing/catalog_loader.hpp"
#include "service/import/readers.hpp"

namespace gpucost::import {

namespace {

// The format table: one row per price-file format, its name on the command line, the
// assumptions its reader makes, and its reader: of one file at a time (`per_file`: one result per
// file), or of all the files as the pages of one catalog (`all_files`: one result).
using ReadOneFile = pricing::Result<FileResult> (*)(const detail::Input&, const std::string&,
                                                    const Mappings&, const ParseOptions&);
using ReadAllFiles = pricing::Result<FileResult> (*)(const std::vector<detail::NamedInput>&,
                                                     const Mappings&, const ParseOptions&);
struct FormatRow {
    Format format;
    std::string_view name;
    pricing::Assumptions (*assumptions)();
    ReadOneFile per_file;
    ReadAllFiles all_files;
};
const auto kFormats = std::to_array<FormatRow>({
    {Format::kAwsPriceList, "aws-price-list", &detail::AwsAssumptions, &detail::ReadAws, nullptr},
    {Format::kAzureRetailPrices, "azure-retail-prices", &detail::AzureAssumptions,
     &detail::ReadAzure, nullptr},
    {Format::kGcpBillingCatalog, "gcp-billing-catalog", &detail::GcpAssumptions, nullptr,
     &detail::ReadGcp},
    {Format::kLambdaInstanceTypes, "lambda-instance-types", &detail::LambdaAssumptions,
     &detail::ReadLambda, nullptr},
    {Format::kRunpodGpuTypes, "runpod-gpu-types", &detail::RunpodAssumptions, &detail::ReadRunpod,
     nullptr},
    {Format::kVastaiBundles, "vastai-bundles", &detail::VastaiAssumptions, nullptr,
     &detail::ReadVastai},
    {Format::kCoreweavePricing, "coreweave-pricing", &detail::CoreweaveAssumptions,
     &detail::ReadCoreweave, nullptr},
});

const FormatRow& RowOf(Format format) {
    for (const FormatRow& row : kFormats) {
        if (row.format == format) return row;
    }
    return kFormats.front();  // unreachable: every enumerator has a row (price_file_test)
}

}  // namespace

std::string_view FormatName(Format format) {
    return RowOf(format).name;
}

std::optional<Format> ParseFormat(std::string_view name) {
    for (const FormatRow& row : kFormats) {
        if (row.name == name) return row.format;
    }
    return std::nullopt;
}

pricing::Assumptions FormatAssumptions(Format format) {
    return RowOf(format).assumptions();
}

std::string OfferingId(std::string_view provider, std::string_view instance_type,
                       std::string_view region, pricing::PriceType price_type) {
    std::string type(pricing::PriceTypeName(price_type));
    for (char& c : type) {
        c = c == '_' ? '-' : c;
    }
    std::string raw = std::string(provider) + "-" + std::string(instance_type) + "-" +
                      std::string(region) + "-" + type;
    std::string id;
    bool in_run = false;
    for (char c : raw) {
        char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        bool keep = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') ||
                    lower == '.' || lower == '_';
        if (keep) {
            id += lower;
            in_run = false;
        } else if (!in_run) {
            id += '-';
            in_run = true;
        }
    }
    while (!id.empty() && id.back() == '-') {
        id.pop_back();
    }
    while (!id.empty() && id.front() == '-') {
        id.erase(id.begin());
    }
    return id;
}

namespace {

pricing::Status CheckOptions(const ParseOptions& options) {
    if (!options.as_of.empty() && !pricing::IsIsoDate(options.as_of)) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  "--as-of must be a date written YYYY-MM-DD", "--as-of");
    }
    return pricing::Ok{};
}

// Closes the files opened for one import.
struct OpenFiles {
    std::vector<std::FILE*> files;
    OpenFiles() = default;
    OpenFiles(const OpenFiles&) = delete;
    OpenFiles& operator=(const OpenFiles&) = delete;
    OpenFiles(OpenFiles&&) = delete;
    OpenFiles& operator=(OpenFiles&&) = delete;
    ~OpenFiles() {
        for (std::FILE* f : files) {
            std::fclose(f);  // NOLINT(cppcoreguidelines-owning-memory): read-only, nothing to flush
        }
    }
};

}  // namespace

pricing::Result<std::vector<FileResult>> ReadPriceFiles(Format format,
                                                        const std::vector<std::string>& paths,
                                                        const Mappings& mappings,
                                                        const ParseOptions& options) {
    if (auto checked = CheckOptions(options); !checked.ok()) {
        return checked.error();
    }
    OpenFiles open;
    std::vector<detail::NamedInput> inputs;
    for (const std::string& path : paths) {
        std::FILE* file = std::fopen(path.c_str(), "rb");
        if (file == nullptr) {
            return pricing::MakeError(pricing::ErrorCode::kNotFound, "cannot open " + path);
        }
        open.files.push_back(file);
        detail::Input input;
        input.file = file;
        inputs.emplace_back(input, path);
    }
    std::vector<FileResult> results;
    const FormatRow& row = RowOf(format);
    if (row.all_files != nullptr) {
        auto read = row.all_files(inputs, mappings, options);
        if (!read.ok()) {
            return read.error();
        }
        results.push_back(std::move(read).value());
        return results;
    }
    for (const auto& [input, name] : inputs) {
        auto read = row.per_file(input, name, mappings, options);
        if (!read.ok()) {
            return read.error();
        }
        results.push_back(std::move(read).value());
    }
    return results;
}

pricing::Result<FileResult> ReadPriceBuffer(Format format, std::string_view text,
                                            const std::string& name, const Mappings& mappings,
                                            const ParseOptions& options) {
    if (auto checked = CheckOptions(options); !checked.ok()) {
        return checked.error();
    }
    detail::Input input;
    input.buffer = text;
    const FormatRow& row = RowOf(format);
    return row.all_files != nullptr ? row.all_files({{input, name}}, mappings, options)
                                    : row.per_file(input, name, mappings, options);
}

namespace detail {

namespace {
constexpr double kMicroDollarsPerDollar = 1e6;
}  // namespace

std::string Text(const nlohmann::json& object, const char* key) {
    if (!object.is_object()) {
        return {};
    }
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string AmountFault(double usd) {
    if (std::isnan(usd) || std::isinf(usd)) {
        return "price_not_finite";
    }
    if (usd < 0) {
        return "price_negative";
    }
    return usd > kMaxFileAmountUsd ? "price_too_large" : "";
}

bool IsPriceFault(const std::string& reason) {
    return reason == "price_not_finite" || reason == "price_negative" ||
           reason == "price_too_large" || reason == "price_not_a_number" ||
           reason == "price_not_usd_money";
}

FileAmount Usd(const nlohmann::json& value) {
    FileAmount amount;
    if (value.is_number()) {
        amount.usd = value.get<double>();
    } else if (value.is_string()) {
        const auto& text = value.get_ref<const std::string&>();
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), amount.usd);
        if (ec == std::errc::result_out_of_range && end == text.data() + text.size()) {
            amount.fault = "price_too_large";  // 1e999: past any double
            return amount;
        }
        if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
            amount.fault = "price_not_a_number";
            return amount;
        }
    } else {
        amount.fault = "price_not_a_number";
        return amount;
    }
    amount.fault = AmountFault(amount.usd);
    return amount;
}

std::string Num(double value) {
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return ec == std::errc() ? std::string(buffer, end) : std::string("?");
}

std::string DatePart(const std::string& timestamp) {
    std::string date = timestamp.substr(0, 10);
    return pricing::IsIsoDate(date) ? date : std::string();
}

void OfferingSink::Skip(const std::string& reason, const std::string& row) {
    ++result_.skipped[reason];
    if (!row.empty() && IsPriceFault(reason) && result_.refused.size() < kMaxRefusedListed) {
        result_.refused.push_back({row.substr(0, 200), reason});
    }
}

void OfferingSink::Add(pricing::Offering offering) {
    if (const double usd = offering.price.usd_per_hour; !pricing::IsUsableUsdPerHour(usd)) {
        std::string fault = AmountFault(usd);
        Skip(fault.empty() ? "price_too_large" : fault, offering.id + " (" + Num(usd) + " USD/h)");
        return;
    }
    if (index_.count(offering.id)) {
        Skip("duplicate_offering_in_file");
        return;
    }
    index_[offering.id] = result_.offerings.size();
    result_.offerings.push_back(std::move(offering));
}

pricing::Offering MakeOffering(std::string_view provider, std::string_view instance_type,
                               std::string_view region, pricing::PriceType price_type,
                               const InstanceShape& shape, double usd_per_hour, std::string notes) {
    pricing::Offering o;
    o.id = OfferingId(provider, instance_type, region, price_type);
    o.provider = std::string(provider);
    o.instance_type = std::string(instance_type);
    o.accelerator = shape.accelerator;
    o.accelerator_count = shape.accelerator_count;
    o.accelerator_memory_gb = shape.accelerator_memory_gb;
    o.vcpus = shape.vcpus;
    o.ram_gib = shape.ram_gib;
    o.region = std::string(region);
    o.price_type = price_type;
    o.notes = "shape: " + shape.source;
    // The catalog keeps micro-dollars (numeric(18, 6)); composed and amortised rates are
    // rounded to that once, here, so the same file always yields the same text.
    o.price.usd_per_hour =
        std::round(usd_per_hour * kMicroDollarsPerDollar) / kMicroDollarsPerDollar;
    o.price.verified = true;  // a dated primary source: the provider's own price file
    o.price.notes = std::move(notes);
    return o;
}

pricing::Status StampObservations(FileResult& result, const ParseOptions& options,
                                  const std::string& source_prefix) {
    result.as_of = !options.as_of.empty() ? options.as_of : DatePart(result.publication_date);
    if (result.as_of.empty()) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  result.file +
                                      ": the file carries no publication date; pass --as-of "
                                      "YYYY-MM-DD (the day it was downloaded)",
                                  "--as-of");
    }
    for (auto& o : result.offerings) {
        o.price.as_of = result.as_of;
        o.price.source = source_prefix;
    }
    return pricing::Ok{};
}

}  // namespace detail
}  // namespace gpucost::import
