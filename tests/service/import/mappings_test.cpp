#include "service/import/mappings.hpp"

#include <doctest/doctest.h>

#include <string>

#include "import_test_support.hpp"

namespace gpucost::import {
namespace {

TEST_CASE("the embedded mapping tables load and name a source for every row") {
    const Mappings& m = testing::EmbeddedMappings();
    REQUIRE(m.aws_instance_types.count("p6-b200.48xlarge"));
    CHECK(m.aws_instance_types.at("p6-b200.48xlarge").accelerator == "b200");
    CHECK(m.azure_vm_sizes.at("Standard_ND96isr_MI300X_v5").accelerator == "mi300x");
    CHECK(m.gcp_machine_shapes.at("a3-highgpu-8g").family == "a3");
    for (const auto& [type, shape] : m.aws_instance_types) {
        CHECK_MESSAGE(!shape.source.empty(), type);
    }
}

TEST_CASE("a GCP SKU matches its longest rule, and a skip rule wins over a component") {
    const Mappings& m = testing::EmbeddedMappings();
    CHECK(m.MatchGcpSku("Nvidia Tesla A100 80GB GPU running in Americas")->key == "a100-sxm4-80gb");
    CHECK(m.MatchGcpSku("Nvidia Tesla A100 GPU running in Americas")->key == "a100-sxm4-40gb");
    CHECK(m.MatchGcpSku("Sole Tenancy Premium for A2 Instance Core")->component == "skip");
    CHECK(m.MatchGcpSku("E2 Instance Core running in Americas") == nullptr);
}

TEST_CASE("GCP's real GPU SKU wordings map to the SKU key their machine shape names") {
    const Mappings& m = testing::EmbeddedMappings();
    auto key = [&](const char* description) {
        const GcpSkuComponent* c = m.MatchGcpSku(description);
        return c == nullptr ? std::string("(none)") : c->component + ":" + c->key;
    };
    CHECK(key("Nvidia H100 80GB GPU running in Americas") == "gpu:h100-sxm");
    CHECK(key("Nvidia H100 80GB Plus GPU running in Americas") == "gpu:h100-sxm-mega");
    CHECK(key("Nvidia H100 80GB Mega GPU attached to Spot Preemptible VMs running in Tokyo") ==
          "gpu:h100-sxm-mega");
    CHECK(key("Commitment v1: Nvidia H100 80GB Mega GPU in Americas for 1 Year") ==
          "gpu:h100-sxm-mega");
    CHECK(key("Nvidia H100 Mega 80GB GPU attached to DWS Defined Duration VMs running in "
              "Americas") == "skip:dws");
    CHECK(key("H200 141GB GPU running in Belgium") == "gpu:h200-sxm");
    CHECK(key("A4 Nvidia B200 (1 gpu slice) running in Americas") == "gpu:b200-a4-slice");
    CHECK(key("Commitment v1: A4 Nvidia B200 (1 gpu slice) in Americas for 1 Year") ==
          "gpu:b200-a4-slice");
    CHECK(key("A3 Ultra Instance Core running in Americas") == "vcpu:a3ultra");
    CHECK(key("A3 Instance Core running in Americas") == "vcpu:a3");
    CHECK(key("Spot Preemptible A3Plus Instance Ram running in Tokyo") == "ram:a3plus");
    CHECK(m.gcp_machine_shapes.at("a3-megagpu-8g").gpu_sku == "h100-sxm-mega");
    CHECK(m.gcp_machine_shapes.at("a3-highgpu-8g").gpu_sku == "h100-sxm");
    CHECK(m.gcp_machine_shapes.at("a3-ultragpu-8g").accelerator == "h200-sxm");
    CHECK(m.gcp_machine_shapes.at("a4-highgpu-8g").gpu_sku == "b200-a4-slice");
    CHECK(m.gcp_machine_shapes.at("a4-highgpu-8g").family.empty());
    CHECK(m.gcp_machine_shapes.at("a4x-highgpu-4g").accelerator == "gb200");
}

TEST_CASE("the 2026 families map under the names AWS and Azure sell them by") {
    const Mappings& m = testing::EmbeddedMappings();
    REQUIRE(m.aws_instance_types.count("p6-b300.48xlarge"));
    CHECK(m.aws_instance_types.at("p6-b300.48xlarge").accelerator == "b300");
    CHECK(m.aws_instance_types.at("p6-b300.48xlarge").accelerator_count == 8);
    REQUIRE(m.aws_instance_types.count("p6e-gb200.36xlarge"));
    CHECK(m.aws_instance_types.at("p6e-gb200.36xlarge").accelerator == "gb200");
    CHECK(m.aws_instance_types.at("p6e-gb200.36xlarge").accelerator_count == 4);
    REQUIRE(m.azure_vm_sizes.count("Standard_ND128isr_NDR_GB200_v6"));
    CHECK(m.azure_vm_sizes.at("Standard_ND128isr_NDR_GB200_v6").accelerator == "gb200");
    CHECK(m.azure_vm_sizes.at("Standard_ND128isr_NDR_GB200_v6").accelerator_count == 4);
    REQUIRE(m.azure_vm_sizes.count("Standard_ND128isr_GB300_v6"));
    CHECK(m.azure_vm_sizes.at("Standard_ND128isr_GB300_v6").accelerator == "gb300");
    CHECK(m.azure_vm_sizes.at("Standard_ND128isr_GB300_v6").accelerator_count == 4);
}

TEST_CASE("A3 High's 1-, 2- and 4-GPU shapes are priced by the H100 SKU and A3's host SKUs") {
    const Mappings& m = testing::EmbeddedMappings();
    for (int gpus : {1, 2, 4}) {
        const std::string type = "a3-highgpu-" + std::to_string(gpus) + "g";
        CAPTURE(type);
        REQUIRE(m.gcp_machine_shapes.count(type));
        const InstanceShape& shape = m.gcp_machine_shapes.at(type);
        CHECK(shape.accelerator == "h100-sxm");
        CHECK(shape.accelerator_count == gpus);
        CHECK(shape.family == "a3");
        CHECK(shape.vcpus.value_or(0) == 26 * gpus);
    }
}

TEST_CASE("a mapping row with a bad count is refused naming the file and line") {
    MappingsCsv csv;
    csv.aws_instance_types_csv =
        "instance_type,accelerator,accelerator_count,accelerator_memory_gb,source\n"
        "p5.48xlarge,h100-sxm,eight,80,src\n";
    csv.azure_vm_sizes_csv =
        "arm_sku_name,accelerator,accelerator_count,accelerator_memory_gb,vcpus,ram_gib,source\n";
    csv.gcp_machine_shapes_csv =
        "machine_type,family,accelerator,accelerator_count,vcpus,ram_gib,source\n";
    csv.gcp_sku_components_csv = "description_contains,component,key,source\n";
    auto loaded = LoadMappings(csv);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().message.find("aws-instance-types.csv line 2") != std::string::npos);
}

}  // namespace
}  // namespace gpucost::import
