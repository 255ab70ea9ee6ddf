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
    // GCP machine family whose vCPU and RAM SKUs price the host (a2, a3, g2); empty where the
    // GPU SKU is a slice of the whole machine (A4: Google sells no A4 core or RAM SKU).
    std::string family;
    // GCP: the gcp-sku-components.csv key of the GPU SKU that prices this shape's GPUs. One
    // accelerator can be sold under two SKUs at two rates (A3 High's and A3 Mega's H100), so a
    // shape names its own; defaults to `accelerator`.
    std::string gpu_sku;
    std::string source;
};

// One line of gcp-sku-components.csv: a SKU whose description contains `description_contains`
// is the `component` (gpu | vcpu | ram | tpu | skip) identified by `key` (the GPU SKU key a
// machine shape's `gpu_sku` names, or machine family for vcpu/ram, or the skip reason).
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
    // neocloud-gpus.csv: a neocloud's own name for one GPU (Lambda's gpu_description, RunPod's
    // gpuTypes id, Vast.ai's gpu_name, CoreWeave's GPU Model), keyed "provider:name"; the
    // count is one GPU (the answer says how many an instance holds).
    std::map<std::string, InstanceShape, std::less<>> neocloud_gpus;

    // The catalog's accelerator for `provider`'s GPU name; null when it is not mapped.
    const InstanceShape* NeocloudGpu(std::string_view provider, std::string_view name) const;

    // The rule matching `description`: a skip rule if any matches, else the component whose
    // description_contains is the longest substring of it; null when none matches.
    const GcpSkuComponent* MatchGcpSku(std::string_view description) const;
};

// The mapping tables as CSV text, with names for error messages.
struct MappingsCsv {
    std::string aws_instance_types_csv;
    std::string azure_vm_sizes_csv;
    std::string gcp_machine_shapes_csv;
    std::string gcp_sku_components_csv;
    std::string neocloud_gpus_csv;  // optional in a catalog directory (empty: none mapped)
};

// kInvalidArgument naming the file and line for a missing column or a bad number.
[[nodiscard]] pricing::Result<Mappings> LoadMappings(const MappingsCsv& csv);

// The four files of `dir` (aws-instance-types.csv, azure-vm-sizes.csv, gcp-machine-shapes.csv,
// gcp-sku-components.csv, and neocloud-gpus.csv when present); kNotFound when one of the
// first four cannot be read.
[[nodiscard]] pricing::Result<Mappings> LoadMappingsFromDir(const std::string& dir);

// The tables built into the binary from schema/seed/mappings/.
[[nodiscard]] pricing::Result<Mappings> LoadEmbeddedMappings();

}  // namespace gpucost::import
