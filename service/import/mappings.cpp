#include "service/import/mappings.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include "pricing/csv.hpp"
#include "service/import/embedded_mappings.hpp"

namespace gpucost::import {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

// A CSV table read by column name.
class Table {
public:
    static pricing::Result<Table> Parse(std::string_view text, std::string name,
                                        const std::vector<std::string>& required) {
        auto records = pricing::ParseCsv(text, name);
        if (!records.ok()) {
            return records.error();
        }
        Table t;
        t.name_ = std::move(name);
        t.records_ = std::move(records).value();
        if (t.records_.empty()) {
            return MakeError(ErrorCode::kInvalidArgument, t.name_ + ": empty file");
        }
        const auto& header = t.records_.front().fields;
        for (std::size_t i = 0; i < header.size(); ++i) {
            t.columns_[header[i]] = i;
        }
        for (const auto& column : required) {
            if (!t.columns_.count(column)) {
                return MakeError(ErrorCode::kInvalidArgument,
                                 t.name_ + ": missing column '" + column + "'");
            }
        }
        return t;
    }

    std::size_t Rows() const { return records_.size() - 1; }
    bool Has(const std::string& column) const { return columns_.count(column) != 0; }
    std::size_t Line(std::size_t row) const { return records_[row + 1].line; }
    std::string Get(std::size_t row, const std::string& column) const {
        const auto& fields = records_[row + 1].fields;
        std::size_t i = columns_.at(column);
        return i < fields.size() ? fields[i] : std::string();
    }
    const std::string& Name() const { return name_; }

private:
    std::string name_;
    std::vector<pricing::CsvRecord> records_;
    std::map<std::string, std::size_t> columns_;
};

std::optional<double> MappedNumber(const std::string& text) {
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) {
        return std::nullopt;
    }
    return value;
}

pricing::Error BadValue(const Table& t, std::size_t row, const std::string& column) {
    return MakeError(ErrorCode::kInvalidArgument,
                     t.Name() + " line " + std::to_string(t.Line(row)) + ": " + column +
                         " must be a non-negative number",
                     column);
}

// Reads the shared shape columns of one row; optional numbers may be empty.
pricing::Result<InstanceShape> ReadShape(const Table& t, std::size_t row,
                                         const std::vector<std::string>& optional_numbers) {
    InstanceShape shape;
    shape.accelerator = t.Get(row, "accelerator");
    shape.source = t.Get(row, "source");
    auto count = MappedNumber(t.Get(row, "accelerator_count"));
    if (!count || *count < 1 || *count != static_cast<double>(static_cast<int>(*count))) {
        return BadValue(t, row, "accelerator_count");
    }
    shape.accelerator_count = static_cast<int>(*count);
    for (const auto& column : optional_numbers) {
        std::string text = t.Get(row, column);
        std::optional<double> value;
        if (!text.empty()) {
            value = MappedNumber(text);
            if (!value) {
                return BadValue(t, row, column);
            }
        }
        if (column == "accelerator_memory_gb") {
            shape.accelerator_memory_gb = value;
        } else if (column == "vcpus") {
            shape.vcpus = value;
        } else if (column == "ram_gib") {
            shape.ram_gib = value;
        }
    }
    if (shape.accelerator.empty() || shape.source.empty()) {
        return MakeError(ErrorCode::kInvalidArgument, t.Name() + " line " +
                                                          std::to_string(t.Line(row)) +
                                                          ": accelerator and source are required");
    }
    return shape;
}

pricing::Status LoadShapes(std::string_view text, const std::string& name,
                           const std::string& key_column,
                           const std::vector<std::string>& optional_numbers,
                           std::map<std::string, InstanceShape, std::less<>>& out) {
    std::vector<std::string> required = {key_column, "accelerator", "accelerator_count", "source"};
    required.insert(required.end(), optional_numbers.begin(), optional_numbers.end());
    auto table = Table::Parse(text, name, required);
    if (!table.ok()) {
        return table.error();
    }
    const Table& t = table.value();
    for (std::size_t row = 0; row < t.Rows(); ++row) {
        auto shape = ReadShape(t, row, optional_numbers);
        if (!shape.ok()) {
            return shape.error();
        }
        if (key_column == "machine_type") {
            shape.value().family = t.Get(row, "family");
            shape.value().gpu_sku = t.Has("gpu_sku") ? t.Get(row, "gpu_sku") : std::string();
            if (shape.value().gpu_sku.empty()) {
                shape.value().gpu_sku = shape.value().accelerator;
            }
        }
        if (!out.emplace(t.Get(row, key_column), std::move(shape).value()).second) {
            return MakeError(ErrorCode::kInvalidArgument,
                             name + " line " + std::to_string(t.Line(row)) + ": duplicate " +
                                 key_column + " '" + t.Get(row, key_column) + "'");
        }
    }
    return pricing::Ok{};
}

// neocloud-gpus.csv: one row per provider and GPU name.
pricing::Status LoadNeocloudGpus(std::string_view text,
                                 std::map<std::string, InstanceShape, std::less<>>& out) {
    if (text.empty()) {
        return pricing::Ok{};
    }
    auto table = Table::Parse(text, "mappings/neocloud-gpus.csv",
                              {"provider", "gpu_name", "accelerator", "accelerator_count",
                               "accelerator_memory_gb", "source"});
    if (!table.ok()) {
        return table.error();
    }
    const Table& t = table.value();
    for (std::size_t row = 0; row < t.Rows(); ++row) {
        auto shape = ReadShape(t, row, {"accelerator_memory_gb"});
        if (!shape.ok()) {
            return shape.error();
        }
        const std::string key = t.Get(row, "provider") + ":" + t.Get(row, "gpu_name");
        if (!out.emplace(key, std::move(shape).value()).second) {
            return MakeError(ErrorCode::kInvalidArgument,
                             t.Name() + " line " + std::to_string(t.Line(row)) +
                                 ": duplicate provider and gpu_name '" + key + "'");
        }
    }
    return pricing::Ok{};
}

}  // namespace

const InstanceShape* Mappings::NeocloudGpu(std::string_view provider, std::string_view name) const {
    auto it = neocloud_gpus.find(std::string(provider) + ":" + std::string(name));
    return it == neocloud_gpus.end() ? nullptr : &it->second;
}

const GcpSkuComponent* Mappings::MatchGcpSku(std::string_view description) const {
    const GcpSkuComponent* best = nullptr;
    for (const auto& c : gcp_sku_components) {
        if (description.find(c.description_contains) == std::string_view::npos) {
            continue;
        }
        // A skip rule wins over any component it shares words with ("Sole Tenancy Premium
        // for A2 Instance Core" is not an A2 core); otherwise the longest match wins.
        bool better = !best || (c.component == "skip" && best->component != "skip") ||
                      ((c.component == "skip") == (best->component == "skip") &&
                       c.description_contains.size() > best->description_contains.size());
        if (better) {
            best = &c;
        }
    }
    return best;
}

pricing::Result<Mappings> LoadMappings(const MappingsCsv& csv) {
    Mappings m;
    if (auto s = LoadShapes(csv.aws_instance_types_csv, "mappings/aws-instance-types.csv",
                            "instance_type", {"accelerator_memory_gb"}, m.aws_instance_types);
        !s.ok()) {
        return s.error();
    }
    if (auto s = LoadShapes(csv.azure_vm_sizes_csv, "mappings/azure-vm-sizes.csv", "arm_sku_name",
                            {"accelerator_memory_gb", "vcpus", "ram_gib"}, m.azure_vm_sizes);
        !s.ok()) {
        return s.error();
    }
    if (auto s = LoadShapes(csv.gcp_machine_shapes_csv, "mappings/gcp-machine-shapes.csv",
                            "machine_type", {"vcpus", "ram_gib"}, m.gcp_machine_shapes);
        !s.ok()) {
        return s.error();
    }
    for (const auto& [type, shape] : m.gcp_machine_shapes) {
        if (!shape.vcpus || !shape.ram_gib) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "mappings/gcp-machine-shapes.csv: " + type +
                                 " needs vcpus and ram_gib to compose its price");
        }
    }
    auto table = Table::Parse(csv.gcp_sku_components_csv, "mappings/gcp-sku-components.csv",
                              {"description_contains", "component", "key", "source"});
    if (!table.ok()) {
        return table.error();
    }
    const Table& t = table.value();
    for (std::size_t row = 0; row < t.Rows(); ++row) {
        GcpSkuComponent c{t.Get(row, "description_contains"), t.Get(row, "component"),
                          t.Get(row, "key")};
        if (c.description_contains.empty() || c.key.empty() ||
            (c.component != "gpu" && c.component != "vcpu" && c.component != "ram" &&
             c.component != "tpu" && c.component != "skip")) {
            return MakeError(ErrorCode::kInvalidArgument,
                             t.Name() + " line " + std::to_string(t.Line(row)) +
                                 ": needs description_contains, key and a component of gpu, "
                                 "vcpu, ram, tpu or skip");
        }
        m.gcp_sku_components.push_back(std::move(c));
    }
    if (auto s = LoadNeocloudGpus(csv.neocloud_gpus_csv, m.neocloud_gpus); !s.ok()) {
        return s.error();
    }
    return m;
}

pricing::Result<Mappings> LoadMappingsFromDir(const std::string& dir) {
    MappingsCsv csv;
    for (auto [name, out] : {std::pair{"aws-instance-types.csv", &csv.aws_instance_types_csv},
                             std::pair{"azure-vm-sizes.csv", &csv.azure_vm_sizes_csv},
                             std::pair{"gcp-machine-shapes.csv", &csv.gcp_machine_shapes_csv},
                             std::pair{"gcp-sku-components.csv", &csv.gcp_sku_components_csv}}) {
        std::ifstream in(dir + "/" + name, std::ios::binary);
        if (!in) {
            return MakeError(ErrorCode::kNotFound, "cannot read " + dir + "/" + name);
        }
        std::ostringstream text;
        text << in.rdbuf();
        *out = text.str();
    }
    // A catalog directory written before the neocloud readers has no neocloud-gpus.csv.
    if (std::ifstream in(dir + "/neocloud-gpus.csv", std::ios::binary); in) {
        std::ostringstream text;
        text << in.rdbuf();
        csv.neocloud_gpus_csv = text.str();
    }
    return LoadMappings(csv);
}

pricing::Result<Mappings> LoadEmbeddedMappings() {
    MappingsCsv csv;
    csv.aws_instance_types_csv = std::string(app::embedded::kAwsInstanceTypesCsv);
    csv.azure_vm_sizes_csv = std::string(app::embedded::kAzureVmSizesCsv);
    csv.gcp_machine_shapes_csv = std::string(app::embedded::kGcpMachineShapesCsv);
    csv.gcp_sku_components_csv = std::string(app::embedded::kGcpSkuComponentsCsv);
    csv.neocloud_gpus_csv = std::string(app::embedded::kNeocloudGpusCsv);
    return LoadMappings(csv);
}

}  // namespace gpucost::import
