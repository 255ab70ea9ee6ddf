#pragma once

#include <string>

#include <doctest/doctest.h>

#include "pricing/catalog_loader.hpp"

namespace gpucost::testing {

// A small, hand-made catalog: two accelerators, four offerings, one of them with a stale
// and an unverified observation so the current-price rule can be seen.
inline pricing::CatalogCsv SampleCatalogCsv() {
    pricing::CatalogCsv csv;
    csv.accelerators_csv =
        "id,name,vendor,form_factor,launch_year,fp32_tflops,tf32_tflops,fp16_tflops,"
        "bf16_tflops,fp8_tflops,int8_tops,fp4_tflops,memory_gb,memory_type,memory_gb_per_s,"
        "cache_mb,scale_up_interconnect,scale_up_gb_per_s,host_pcie_gen,tdp_w,"
        "purchase_price_usd,purchase_price_as_of,purchase_price_source,spec_source,confidence,"
        "notes\n"
        "h100-sxm,H100 SXM,NVIDIA,SXM5,2022,67,494.5,989,989,1979,1979,,80,HBM3,3350,50,"
        "NVLink 4,900,Gen5,700,27500,2023-08,TEST,TEST,high,\n"
        "tpu-v5e,TPU v5e,Google,chip,2023,,,,197,,393,,16,HBM2,819,,ICI,400,,,,,,TEST,high,"
        "\"rent only, no price\"\n";
    csv.offerings_csv =
        "id,provider,instance_type,accelerator,accelerator_count,accelerator_memory_gb,vcpus,"
        "ram_gib,interconnect,scale_out_gbit_per_s,region,price_type,spot_interruption_bucket,"
        "notes\n"
        "aws-p5.48xlarge-us-east-1-on-demand,aws,p5.48xlarge,h100-sxm,8,80,192,2048,EFA,3200,"
        "us-east-1,on_demand,,\n"
        "aws-p5.48xlarge-us-east-1-spot,aws,p5.48xlarge,h100-sxm,8,80,192,2048,EFA,3200,"
        "us-east-1,spot,>20%,\n"
        "lambda-gpu_1x_h100-us-on-demand,lambda,gpu_1x_h100,h100-sxm,1,80,26,225,,,us,"
        "on_demand,,\n"
        "gcp-tpu-v5e-us-central1-on-demand,gcp,tpu-v5e,tpu-v5e,1,16,,,,,us-central1,on_demand,,\n";
    csv.prices_csv =
        "offering_id,usd_per_hour,as_of,as_of_estimated,source,verified,notes\n"
        "aws-p5.48xlarge-us-east-1-on-demand,98.32,2025-05-01,true,OLD SNAPSHOT,false,pre-cut\n"
        "aws-p5.48xlarge-us-east-1-on-demand,55.04,2026-11-09,false,PRICE API,true,post-cut\n"
        "aws-p5.48xlarge-us-east-1-on-demand,40.00,2026-11-20,false,RUMOUR,false,unverified\n"
        "aws-p5.48xlarge-us-east-1-spot,20.9934,2025-05-01,true,OLD SNAPSHOT,false,\n"
        "lambda-gpu_1x_h100-us-on-demand,4.29,2026-09-25,false,LAMBDA PAGE,true,\n"
        "gcp-tpu-v5e-us-central1-on-demand,1.2,2025-06-01,true,RECALL,false,recalled\n";
    csv.origin = "test";
    return csv;
}

// Planner reference data for the sample catalog: AWS sells up to 8 instances as one cluster
// (capacity blocks: 4, one day to 182 days), GCP 64, Lambda 4 independent hosts; storage and
// egress prices for AWS only; the AWS and Lambda regions in the US.
inline pricing::PlanReferenceCsv SamplePlanReferenceCsv() {
    pricing::PlanReferenceCsv csv;
    csv.capacity_csv =
        "provider,instance_family,price_type,max_instances,cluster,min_block_hours,"
        "max_block_hours,source,notes\n"
        "aws,*,*,8,true,,,TEST AWS,\n"
        "aws,*,capacity_block,4,true,24,4368,TEST BLOCKS,\n"
        "gcp,*,*,64,true,,,TEST GCP,\n"
        "lambda,*,*,4,false,,,TEST LAMBDA,\n";
    csv.data_prices_csv =
        "provider,object_storage_usd_per_gb_month,internet_egress_usd_per_gb,as_of,"
        "as_of_estimated,source,verified,notes\n"
        "aws,0.023,0.09,2026-11-01,false,TEST S3,true,\n";
    // Where the regions are; us-central1 has no row, so no geography filter keeps it.
    csv.regions_csv =
        "provider,region,countries,continents,source,notes\n"
        "aws,us-east-1,US,north-america,TEST AWS REGIONS,\n"
        "lambda,us,US,north-america,TEST LAMBDA,\n"
        "aws,eu-central-1,DE,europe,TEST AWS REGIONS,no offering here\n";
    return csv;
}

// SamplePlanReferenceCsv() loaded once (the accelerators' own workloads apply).
inline const pricing::PlanReference& SamplePlanReference() {
    static const pricing::PlanReference reference = [] {
        auto loaded = pricing::LoadPlanReference(SamplePlanReferenceCsv());
        REQUIRE(loaded.ok());
        return loaded.value();
    }();
    return reference;
}

}  // namespace gpucost::testing
