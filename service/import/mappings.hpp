#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/error.hpp"

namespace gpucost::import {

// What an instance type or VM size holds (schema/seed/mappings/*.csv).
struct InstanceShape {
    std::string accelerator;  // Accelerator::id
    int accelerator_count = 1;
    std::optional<double> accelerator_memory_gb;
    std::optional<double> vcpus;
    std::optional<double> ram_gib;
    std::string family;  // GCP machine family whose vCPU and RAM SKUs price the host (a2, a3, g2)
    std::string source;
};

// One line of gcp-sku-components.csv: a SKU whose description contains `description_contains`
// is the `component` (gpu | vcpu | ram | tpu | skip) identified by `key` (accelerator id, or
// machine family for vcpu/ram, or the skip reason).
struct GcpSkuComponent {
    std::string description_contains;
    std::string component;
    std::string key;
};

struct Mappings {
    std::map<std::string, InstanceShape, std::less<>> aws_instance_types;
    std::map<std::string, InstanceShape, std::less<>> azure_vm_sizes;
    std::map<std::string, InstanceShape, std::less<>> gcp_machine_shapes;
    std::vector<GcpSkuComponent> gcp_sku_components;

    // The rule matching `description`: a skip rule if any matches, else the component whose
    // description_contains is the longest substring of it; null when none matches.
    const GcpSkuComponent* MatchGcpSku(std::string_view description) const;
};

// The four mapping tables as CSV text, with names for error messages.
struct MappingsCsv {
    std::string aws_instance_types_csv;
    std::string azure_vm_sizes_csv;
    std::string gcp_machine_shapes_csv;
    std::string gcp_sku_components_csv;
};

// kInvalidArgument naming the file and line for a missing column or a bad number.
[[nodiscard]] pricing::Result<Mappings> LoadMappings(const MappingsCsv& csv);

// The four files of `dir` (aws-instance-types.csv, azure-vm-sizes.csv, gcp-machine-shapes.csv,
// gcp-sku-components.csv); kNotFound when one cannot be read.
[[nodiscard]] pricing::Result<Mappings> LoadMappingsFromDir(const std::string& dir);

// The tables built into the binary from schema/seed/mappings/.
[[nodiscard]] pricing::Result<Mappings> LoadEmbeddedMappings();

}  // namespace gpucost::import
