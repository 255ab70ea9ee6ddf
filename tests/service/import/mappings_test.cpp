#include "service/import/mappings.hpp"

#include <doctest/doctest.h>

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
