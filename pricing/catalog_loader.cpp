#include "pricing/catalog_loader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pricing/accelerator_facts.hpp"
#include "pricing/csv.hpp"

namespace gpucost::pricing {
namespace {

// Column access for one table: checks the header once, then reads typed values by name.
class Table {
public:
    Table(std::string name, std::vector<CsvRecord> records)
        : name_(std::move(name)), records_(std::move(records)) {}

    // `optional` columns may be absent (older files); anything else unknown is an error.
    Status CheckHeader(const std::vector<std::string>& expected,
                       const std::vector<std::string>& optional = {}) {
        if (records_.empty()) {
            return Fail(1, "file is empty; expected a header row");
        }
        const auto& header = records_.front().fields;
        for (std::size_t i = 0; i < header.size(); ++i) {
            if (!columns_.emplace(header[i], i).second) {
                return Fail(1, "duplicate column '" + header[i] + "'");
            }
        }
        for (const auto& column : expected) {
            if (columns_.count(column) == 0) {
                return Fail(1, "missing column '" + column + "'");
            }
        }
        std::set<std::string> known(expected.begin(), expected.end());
        known.insert(optional.begin(), optional.end());
        for (const auto& column : header) {
            if (known.count(column) == 0) {
                return Fail(1, "unknown column '" + column + "'");
            }
        }
        return Ok{};
    }

    bool Has(const std::string& column) const { return columns_.count(column) != 0; }

    std::size_t RowCount() const { return records_.empty() ? 0 : records_.size() - 1; }
    std::size_t Line(std::size_t row) const { return records_[row + 1].line; }

    // Trimmed text of a column; empty when the row is short.
    std::string Text(std::size_t row, const std::string& column) const {
        const auto& fields = records_[row + 1].fields;
        std::size_t index = columns_.at(column);
        if (index >= fields.size()) {
            return {};
        }
        std::string_view v = fields[index];
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) {
            v.remove_prefix(1);
        }
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) {
            v.remove_suffix(1);
        }
        return std::string(v);
    }

    Result<std::optional<double>> OptionalNumber(std::size_t row, const std::string& column) const {
        std::string text = Text(row, column);
        if (text.empty()) {
            return std::optional<double>{};
        }
        double value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
            return Fail(Line(row), column + " '" + text + "' is not a number");
        }
        if (value < 0) {
            return Fail(Line(row), column + " must not be negative (got " + text + ")");
        }
        return std::optional<double>{value};
    }

    Result<double> Number(std::size_t row, const std::string& column) const {
        auto value = OptionalNumber(row, column);
        if (!value.ok()) {
            return value.error();
        }
        if (!value.value().has_value()) {
            return Fail(Line(row), column + " is required");
        }
        return *value.value();
    }

    Result<int> Integer(std::size_t row, const std::string& column, int min_value) const {
        std::string text = Text(row, column);
        int value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
            return Fail(Line(row), column + " '" + text + "' is not an integer");
        }
        if (value < min_value) {
            return Fail(Line(row), column + " must be at least " + std::to_string(min_value));
        }
        return value;
    }

    Result<bool> Boolean(std::size_t row, const std::string& column) const {
        std::string text = Text(row, column);
        if (text == "true") {
            return true;
        }
        if (text == "false") {
            return false;
        }
        return Fail(Line(row), column + " must be true or false (got '" + text + "')");
    }

    Error Fail(std::size_t line, const std::string& what) const {
        Error e = MakeError(ErrorCode::kInvalidArgument,
                            name_ + " line " + std::to_string(line) + ": " + what);
        e.field = name_ + ":" + std::to_string(line);
        return e;
    }

private:
    std::string name_;
    std::vector<CsvRecord> records_;
    std::unordered_map<std::string, std::size_t> columns_;
};

bool IsSlug(const std::string& id) {
    if (id.empty()) {
        return false;
    }
    for (char c : id) {
        bool ok =
            (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
        if (!ok) {
            return false;
        }
    }
    return true;
}

// Unwraps a Result into `out` or returns its error from the enclosing function.
#define GPUCOST_ASSIGN(out, expr)           \
    do {                                    \
        auto result_ = (expr);              \
        if (!result_.ok()) {                \
            return result_.error();         \
        }                                   \
        (out) = std::move(result_).value(); \
    } while (false)

// `workloads`: "training;inference", "training" or "inference", with its source.
// The provenance columns every dated price table carries (prices.csv, data_prices.csv):
// as_of (YYYY-MM-DD), as_of_estimated, a required source, verified.
template <typename Dated>
Status ReadProvenance(const Table& t, std::size_t row, Dated& p) {
    p.as_of = t.Text(row, "as_of");
    if (!IsIsoDate(p.as_of)) {
        return t.Fail(t.Line(row), "as_of '" + p.as_of + "' is not a YYYY-MM-DD date");
    }
    GPUCOST_ASSIGN(p.as_of_estimated, t.Boolean(row, "as_of_estimated"));
    p.source = t.Text(row, "source");
    if (p.source.empty()) {
        return t.Fail(t.Line(row), "source is required");
    }
    GPUCOST_ASSIGN(p.verified, t.Boolean(row, "verified"));
    return Ok{};
}

Result<AcceleratorWorkloads> ReadWorkloads(const Table& t, std::size_t row) {
    AcceleratorWorkloads w;
    w.training = false;
    w.inference = false;
    const std::string text = t.Text(row, "workloads");
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(';', start), text.size());
        const std::string item = text.substr(start, end - start);
        if (item == "training") {
            w.training = true;
        } else if (item == "inference") {
            w.inference = true;
        } else {
            return t.Fail(t.Line(row), "workloads '" + text +
                                           "' must list training and/or inference, "
                                           "separated by ';'");
        }
        start = end + 1;
    }
    w.source = t.Has("workloads_source") ? t.Text(row, "workloads_source") : "";
    if (w.source.empty()) {
        return t.Fail(t.Line(row), "workloads_source is required with workloads");
    }
    return w;
}

Result<std::vector<Accelerator>> LoadAccelerators(Table& t) {
    static const std::vector<std::string> kColumns = {"id",
                                                      "name",
                                                      "vendor",
                                                      "form_factor",
                                                      "launch_year",
                                                      "fp32_tflops",
                                                      "tf32_tflops",
                                                      "fp16_tflops",
                                                      "bf16_tflops",
                                                      "fp8_tflops",
                                                      "int8_tops",
                                                      "fp4_tflops",
                                                      "memory_gb",
                                                      "memory_type",
                                                      "memory_gb_per_s",
                                                      "cache_mb",
                                                      "scale_up_interconnect",
                                                      "scale_up_gb_per_s",
                                                      "host_pcie_gen",
                                                      "tdp_w",
                                                      "purchase_price_usd",
                                                      "purchase_price_as_of",
                                                      "purchase_price_source",
                                                      "spec_source",
                                                      "confidence",
                                                      "notes"};
    static const std::vector<std::pair<Precision, std::string>> kPeakColumns = {
        {Precision::kFp32, "fp32_tflops"}, {Precision::kTf32, "tf32_tflops"},
        {Precision::kFp16, "fp16_tflops"}, {Precision::kBf16, "bf16_tflops"},
        {Precision::kFp8, "fp8_tflops"},   {Precision::kInt8, "int8_tops"},
        {Precision::kFp4, "fp4_tflops"}};
    auto header = t.CheckHeader(kColumns, {"workloads", "workloads_source"});
    if (!header.ok()) {
        return header.error();
    }
    std::vector<Accelerator> out;
    std::set<std::string> seen;
    for (std::size_t row = 0; row < t.RowCount(); ++row) {
        Accelerator a;
        a.id = t.Text(row, "id");
        if (!IsSlug(a.id)) {
            return t.Fail(t.Line(row),
                          "id '" + a.id + "' must be lowercase letters, digits, '.', '-' or '_'");
        }
        if (!seen.insert(a.id).second) {
            return t.Fail(t.Line(row), "duplicate id '" + a.id + "'");
        }
        if (FindAcceleratorFacts(a.id) == nullptr) {
            return t.Fail(t.Line(row), "id '" + a.id +
                                           "' matches no family in pricing/accelerator_facts.cpp "
                                           "(measured matmul efficiency, scale-up domain): add "
                                           "its row, with sources, so estimates do not silently "
                                           "take defaults");
        }
        a.name = t.Text(row, "name");
        a.vendor = t.Text(row, "vendor");
        a.form_factor = t.Text(row, "form_factor");
        GPUCOST_ASSIGN(a.launch_year, t.Integer(row, "launch_year", 1990));
        bool any_peak = false;
        for (const auto& [precision, column] : kPeakColumns) {
            std::optional<double> peak;
            GPUCOST_ASSIGN(peak, t.OptionalNumber(row, column));
            a.peak_tflops[static_cast<std::size_t>(precision)] = peak;
            any_peak = any_peak || peak.has_value();
        }
        if (!any_peak) {
            return t.Fail(t.Line(row), "at least one peak throughput column is required");
        }
        GPUCOST_ASSIGN(a.memory_gb, t.Number(row, "memory_gb"));
        GPUCOST_ASSIGN(a.memory_gb_per_s, t.Number(row, "memory_gb_per_s"));
        if (a.memory_gb <= 0 || a.memory_gb_per_s <= 0) {
            return t.Fail(t.Line(row), "memory_gb and memory_gb_per_s must be positive");
        }
        a.memory_type = t.Text(row, "memory_type");
        GPUCOST_ASSIGN(a.cache_mb, t.OptionalNumber(row, "cache_mb"));
        a.scale_up_interconnect = t.Text(row, "scale_up_interconnect");
        GPUCOST_ASSIGN(a.scale_up_gb_per_s, t.OptionalNumber(row, "scale_up_gb_per_s"));
        a.host_pcie_gen = t.Text(row, "host_pcie_gen");
        GPUCOST_ASSIGN(a.tdp_w, t.OptionalNumber(row, "tdp_w"));
        GPUCOST_ASSIGN(a.purchase_price_usd, t.OptionalNumber(row, "purchase_price_usd"));
        a.purchase_price_as_of = t.Text(row, "purchase_price_as_of");
        a.purchase_price_source = t.Text(row, "purchase_price_source");
        a.spec_source = t.Text(row, "spec_source");
        if (a.spec_source.empty()) {
            return t.Fail(t.Line(row), "spec_source is required");
        }
        a.confidence = t.Text(row, "confidence");
        if (a.confidence != "high" && a.confidence != "medium" && a.confidence != "low") {
            return t.Fail(t.Line(row),
                          "confidence '" + a.confidence + "' must be high, medium or low");
        }
        a.notes = t.Text(row, "notes");
        if (t.Has("workloads")) {
            GPUCOST_ASSIGN(a.workloads, ReadWorkloads(t, row));
        }
        out.push_back(std::move(a));
    }
    return out;
}

Result<std::vector<Offering>> LoadOfferings(Table& t, const std::set<std::string>& accelerators) {
    static const std::vector<std::string> kColumns = {"id",
                                                      "provider",
                                                      "instance_type",
                                                      "accelerator",
                                                      "accelerator_count",
                                                      "accelerator_memory_gb",
                                                      "vcpus",
                                                      "ram_gib",
                                                      "interconnect",
                                                      "scale_out_gbit_per_s",
                                                      "region",
                                                      "price_type",
                                                      "spot_interruption_bucket",
                                                      "notes"};
    auto header = t.CheckHeader(kColumns);
    if (!header.ok()) {
        return header.error();
    }
    std::vector<Offering> out;
    std::set<std::string> seen;
    for (std::size_t row = 0; row < t.RowCount(); ++row) {
        Offering o;
        o.id = t.Text(row, "id");
        if (!IsSlug(o.id)) {
            return t.Fail(t.Line(row),
                          "id '" + o.id + "' must be lowercase letters, digits, '.', '-' or '_'");
        }
        if (!seen.insert(o.id).second) {
            return t.Fail(t.Line(row), "duplicate id '" + o.id + "'");
        }
        o.provider = t.Text(row, "provider");
        if (FindProvider(o.provider) == nullptr) {
            return t.Fail(t.Line(row), "unknown provider '" + o.provider + "'");
        }
        o.instance_type = t.Text(row, "instance_type");
        if (o.instance_type.empty()) {
            return t.Fail(t.Line(row), "instance_type is required");
        }
        o.accelerator = t.Text(row, "accelerator");
        if (accelerators.count(o.accelerator) == 0) {
            return t.Fail(t.Line(row), "unknown accelerator id '" + o.accelerator + "'");
        }
        GPUCOST_ASSIGN(o.accelerator_count, t.Integer(row, "accelerator_count", 1));
        GPUCOST_ASSIGN(o.accelerator_memory_gb, t.OptionalNumber(row, "accelerator_memory_gb"));
        GPUCOST_ASSIGN(o.vcpus, t.OptionalNumber(row, "vcpus"));
        GPUCOST_ASSIGN(o.ram_gib, t.OptionalNumber(row, "ram_gib"));
        o.interconnect = t.Text(row, "interconnect");
        GPUCOST_ASSIGN(o.scale_out_gbit_per_s, t.OptionalNumber(row, "scale_out_gbit_per_s"));
        o.region = t.Text(row, "region");
        if (o.region.empty()) {
            return t.Fail(t.Line(row), "region is required");
        }
        std::string type = t.Text(row, "price_type");
        auto price_type = ParsePriceType(type);
        if (!price_type) {
            return t.Fail(t.Line(row), "unknown price_type '" + type + "'");
        }
        o.price_type = *price_type;
        std::string bucket = t.Text(row, "spot_interruption_bucket");
        if (!bucket.empty()) {
            o.spot_interruption = ParseSpotInterruptionBucket(bucket);
            if (!o.spot_interruption) {
                return t.Fail(t.Line(row), "unknown spot_interruption_bucket '" + bucket + "'");
            }
            if (o.price_type != PriceType::kSpot) {
                return t.Fail(t.Line(row),
                              "spot_interruption_bucket is only valid on spot offerings");
            }
        }
        o.notes = t.Text(row, "notes");
        out.push_back(std::move(o));
    }
    return out;
}

Status AttachPrices(Table& t, std::vector<Offering>& offerings, std::size_t& observation_count) {
    static const std::vector<std::string> kColumns = {
        "offering_id", "usd_per_hour", "as_of", "as_of_estimated", "source", "verified", "notes"};
    auto header = t.CheckHeader(kColumns);
    if (!header.ok()) {
        return header.error();
    }
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < offerings.size(); ++i) {
        index.emplace(offerings[i].id, i);
    }
    std::vector<std::vector<PriceObservation>> observations(offerings.size());
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (std::size_t row = 0; row < t.RowCount(); ++row) {
        std::string offering_id = t.Text(row, "offering_id");
        auto it = index.find(offering_id);
        if (it == index.end()) {
            return t.Fail(t.Line(row), "unknown offering_id '" + offering_id + "'");
        }
        PriceObservation p;
        GPUCOST_ASSIGN(p.usd_per_hour, t.Number(row, "usd_per_hour"));
        if (!IsUsableUsdPerHour(p.usd_per_hour)) {
            return t.Fail(t.Line(row), "usd_per_hour must be from 0 to 1000000 (got " +
                                           t.Text(row, "usd_per_hour") + ")");
        }
        if (auto dated = ReadProvenance(t, row, p); !dated.ok()) {
            return dated.error();
        }
        // Verified means a dated primary source; an estimated date cannot be verified.
        if (p.verified && p.as_of_estimated) {
            return t.Fail(t.Line(row),
                          "verified is true but as_of_estimated is true: a price "
                          "whose date was estimated cannot be verified");
        }
        p.notes = t.Text(row, "notes");
        if (!seen.emplace(offering_id, p.as_of, p.source).second) {
            return t.Fail(t.Line(row), "duplicate price for '" + offering_id + "' as of " +
                                           p.as_of + " from the same source");
        }
        observations[it->second].push_back(std::move(p));
        ++observation_count;
    }
    for (std::size_t i = 0; i < offerings.size(); ++i) {
        auto& obs = observations[i];
        if (obs.empty()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "offering '" + offerings[i].id + "' has no row in prices.csv");
        }
        std::size_t current = SelectCurrentPrice(obs);
        offerings[i].price = obs[current];
        for (std::size_t j = 0; j < obs.size(); ++j) {
            if (j != current) {
                offerings[i].superseded_prices.push_back(obs[j]);
            }
        }
        std::stable_sort(
            offerings[i].superseded_prices.begin(), offerings[i].superseded_prices.end(),
            [](const PriceObservation& a, const PriceObservation& b) { return a.as_of > b.as_of; });
    }
    return Ok{};
}

}  // namespace

bool IsIsoDate(const std::string& text) {
    if (text.size() != 10 || text[4] != '-' || text[7] != '-') {
        return false;
    }
    auto digits = [&](std::size_t from, std::size_t count, int& out) {
        auto [end, ec] = std::from_chars(text.data() + from, text.data() + from + count, out);
        return ec == std::errc() && end == text.data() + from + count;
    };
    int year = 0;
    int month = 0;
    int day = 0;
    if (!digits(0, 4, year) || !digits(5, 2, month) || !digits(8, 2, day)) {
        return false;
    }
    if (month < 1 || month > 12 || day < 1) {
        return false;
    }
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    int max_day = kDays[month - 1] + ((month == 2 && leap) ? 1 : 0);
    return day <= max_day;
}

std::string ContentHash(const std::string& text) {
    std::uint64_t hash = 1469598103934665603ULL;
    for (char c : text) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ULL;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i) {
        out[static_cast<std::size_t>(i)] = kHex[hash & 0xF];
        hash >>= 4;
    }
    return out;
}

Result<std::shared_ptr<const InMemoryCatalog>> LoadCatalog(const CatalogCsv& csv) {
    std::vector<CsvRecord> accelerator_records;
    GPUCOST_ASSIGN(accelerator_records, ParseCsv(csv.accelerators_csv, csv.accelerators_name));
    Table accelerator_table(csv.accelerators_name, std::move(accelerator_records));
    std::vector<Accelerator> accelerators;
    GPUCOST_ASSIGN(accelerators, LoadAccelerators(accelerator_table));

    std::set<std::string> accelerator_ids;
    for (const auto& a : accelerators) {
        accelerator_ids.insert(a.id);
    }
    std::vector<CsvRecord> offering_records;
    GPUCOST_ASSIGN(offering_records, ParseCsv(csv.offerings_csv, csv.offerings_name));
    Table offering_table(csv.offerings_name, std::move(offering_records));
    std::vector<Offering> offerings;
    GPUCOST_ASSIGN(offerings, LoadOfferings(offering_table, accelerator_ids));

    std::vector<CsvRecord> price_records;
    GPUCOST_ASSIGN(price_records, ParseCsv(csv.prices_csv, csv.prices_name));
    Table price_table(csv.prices_name, std::move(price_records));
    std::size_t observation_count = 0;
    auto attached = AttachPrices(price_table, offerings, observation_count);
    if (!attached.ok()) {
        return attached.error();
    }
    std::string version =
        ContentHash(csv.accelerators_csv + '\x1f' + csv.offerings_csv + '\x1f' + csv.prices_csv);
    return InMemoryCatalog::Build(std::move(accelerators), std::move(offerings), version,
                                  csv.origin, observation_count);
}

namespace {

std::optional<PriceType> AnyOrPriceType(const std::string& text, bool& ok) {
    ok = true;
    if (text == "*") {
        return std::nullopt;
    }
    auto type = ParsePriceType(text);
    ok = type.has_value();
    return type;
}

// "4|8|16": the instance counts sold, each within 1..max_instances, ascending.
Result<std::vector<int>> InstanceCounts(Table& t, std::size_t row, int max_instances) {
    std::vector<int> out;
    const std::string text = t.Has("instance_counts") ? t.Text(row, "instance_counts") : "";
    if (text.empty()) {
        return out;
    }
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t bar = std::min(text.find('|', start), text.size());
        const std::string item = text.substr(start, bar - start);
        int n = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
        if (ec != std::errc{} || end != item.data() + item.size() || n < 1 || n > max_instances ||
            (!out.empty() && n <= out.back())) {
            return t.Fail(t.Line(row), "instance_counts '" + text +
                                           "' must be ascending counts from 1 to max_instances, "
                                           "joined by '|'");
        }
        out.push_back(n);
        start = bar + 1;
    }
    return out;
}

Result<std::vector<CapacityRule>> LoadCapacity(Table& t) {
    auto header =
        t.CheckHeader({"provider", "instance_family", "price_type", "max_instances", "cluster",
                       "min_block_hours", "max_block_hours", "source", "notes"},
                      {"instance_counts"});
    if (!header.ok()) {
        return header.error();
    }
    std::vector<CapacityRule> out;
    for (std::size_t row = 0; row < t.RowCount(); ++row) {
        CapacityRule rule;
        rule.provider = t.Text(row, "provider");
        if (FindProvider(rule.provider) == nullptr) {
            return t.Fail(t.Line(row), "unknown provider '" + rule.provider + "'");
        }
        rule.instance_family = t.Text(row, "instance_family");
        if (rule.instance_family.empty()) {
            return t.Fail(t.Line(row), "instance_family is required ('*' for any)");
        }
        bool ok = true;
        rule.price_type = AnyOrPriceType(t.Text(row, "price_type"), ok);
        if (!ok) {
            return t.Fail(t.Line(row), "unknown price_type '" + t.Text(row, "price_type") + "'");
        }
        GPUCOST_ASSIGN(rule.max_instances, t.Integer(row, "max_instances", 1));
        GPUCOST_ASSIGN(rule.cluster, t.Boolean(row, "cluster"));
        GPUCOST_ASSIGN(rule.min_block_hours, t.OptionalNumber(row, "min_block_hours"));
        GPUCOST_ASSIGN(rule.max_block_hours, t.OptionalNumber(row, "max_block_hours"));
        if (rule.min_block_hours && rule.max_block_hours &&
            *rule.min_block_hours > *rule.max_block_hours) {
            return t.Fail(t.Line(row), "min_block_hours must not exceed max_block_hours");
        }
        GPUCOST_ASSIGN(rule.instance_counts, InstanceCounts(t, row, rule.max_instances));
        rule.source = t.Text(row, "source");
        if (rule.source.empty()) {
            return t.Fail(t.Line(row), "source is required");
        }
        rule.notes = t.Text(row, "notes");
        out.push_back(std::move(rule));
    }
    return out;
}

Result<std::vector<DataPrice>> LoadDataPrices(Table& t) {
    auto header =
        t.CheckHeader({"provider", "object_storage_usd_per_gb_month", "internet_egress_usd_per_gb",
                       "as_of", "as_of_estimated", "source", "verified", "notes"});
    if (!header.ok()) {
        return header.error();
    }
    std::vector<DataPrice> out;
    std::set<std::string> seen;
    for (std::size_t row = 0; row < t.RowCount(); ++row) {
        DataPrice p;
        p.provider = t.Text(row, "provider");
        if (FindProvider(p.provider) == nullptr) {
            return t.Fail(t.Line(row), "unknown provider '" + p.provider + "'");
        }
        if (!seen.insert(p.provider).second) {
            return t.Fail(t.Line(row), "duplicate provider '" + p.provider + "'");
        }
        GPUCOST_ASSIGN(p.object_storage_usd_per_gb_month,
                       t.Number(row, "object_storage_usd_per_gb_month"));
        GPUCOST_ASSIGN(p.internet_egress_usd_per_gb, t.Number(row, "internet_egress_usd_per_gb"));
        if (auto dated = ReadProvenance(t, row, p); !dated.ok()) {
            return dated.error();
        }
        p.notes = t.Text(row, "notes");
        out.push_back(std::move(p));
    }
    return out;
}

// A '|'-separated list of places; each must pass `valid`.
Result<std::vector<std::string>> Places(Table& t, std::size_t row, const std::string& column,
                                        bool (*valid)(const std::string&), const char* what) {
    std::vector<std::string> out;
    const std::string text = t.Text(row, column);
    std::size_t start = 0;
    while (!text.empty() && start <= text.size()) {
        std::size_t bar = std::min(text.find('|', start), text.size());
        std::string place = text.substr(start, bar - start);
        if (!valid(place)) {
            return t.Fail(t.Line(row), column + ": '" + place + "' is not " + what);
        }
        out.push_back(std::move(place));
        start = bar + 1;
    }
    return out;
}

bool IsCountryCode(const std::string& text) {
    return text.size() == 2 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

bool IsContinent(const std::string& text) {
    return std::find(kContinents.begin(), kContinents.end(), text) != kContinents.end();
}

// regions.csv: where each provider region is, one row per (provider, region) with its source.
Result<std::vector<RegionPlace>> LoadRegions(Table& t) {
    auto header =
        t.CheckHeader({"provider", "region", "countries", "continents", "source", "notes"});
    if (!header.ok()) {
        return header.error();
    }
    std::vector<RegionPlace> out;
    std::set<std::pair<std::string, std::string>> seen;
    for (std::size_t row = 0; row < t.RowCount(); ++row) {
        RegionPlace place;
        place.provider = t.Text(row, "provider");
        place.region = t.Text(row, "region");
        if (FindProvider(place.provider) == nullptr) {
            return t.Fail(t.Line(row), "unknown provider '" + place.provider + "'");
        }
        if (place.region.empty()) {
            return t.Fail(t.Line(row), "region is required");
        }
        if (!seen.emplace(IdKey(place.provider), IdKey(place.region)).second) {
            return t.Fail(t.Line(row),
                          "duplicate region '" + place.region + "' of " + place.provider);
        }
        GPUCOST_ASSIGN(place.countries, Places(t, row, "countries", &IsCountryCode,
                                               "an ISO 3166-1 alpha-2 code (upper case)"));
        GPUCOST_ASSIGN(place.continents,
                       Places(t, row, "continents", &IsContinent,
                              "a continent (africa, antarctica, asia, europe, north-america, "
                              "oceania, south-america)"));
        if (place.countries.empty() != place.continents.empty()) {
            return t.Fail(t.Line(row), "countries and continents are given together or not at all");
        }
        place.source = t.Text(row, "source");
        if (place.source.empty()) {
            return t.Fail(t.Line(row), "source is required");
        }
        place.notes = t.Text(row, "notes");
        out.push_back(std::move(place));
    }
    return out;
}

}  // namespace

Result<PlanReference> LoadPlanReference(const PlanReferenceCsv& csv) {
    PlanReference reference;
    {
        std::vector<CsvRecord> records;
        GPUCOST_ASSIGN(records, ParseCsv(csv.capacity_csv, csv.capacity_name));
        Table table(csv.capacity_name, std::move(records));
        GPUCOST_ASSIGN(reference.capacity, LoadCapacity(table));
    }
    {
        std::vector<CsvRecord> records;
        GPUCOST_ASSIGN(records, ParseCsv(csv.data_prices_csv, csv.data_prices_name));
        Table table(csv.data_prices_name, std::move(records));
        GPUCOST_ASSIGN(reference.data_prices, LoadDataPrices(table));
    }
    // Where regions are is optional reference data: without the table no offering is in any
    // geography, and every plan that names none is unchanged.
    if (!csv.regions_csv.empty()) {
        std::vector<CsvRecord> records;
        GPUCOST_ASSIGN(records, ParseCsv(csv.regions_csv, csv.regions_name));
        Table table(csv.regions_name, std::move(records));
        std::vector<RegionPlace> rows;
        GPUCOST_ASSIGN(rows, LoadRegions(table));
        reference.regions = RegionTable(std::move(rows));
    }
    if (csv.catalog != nullptr) {
        for (const Accelerator& a : csv.catalog->Accelerators()) {
            reference.workloads[a.id] = a.workloads;
        }
    }
    reference.version = ContentHash(csv.capacity_csv + '\x1f' + csv.data_prices_csv +
                                    (csv.regions_csv.empty() ? "" : '\x1f' + csv.regions_csv));
    return reference;
}

#undef GPUCOST_ASSIGN

}  // namespace gpucost::pricing
