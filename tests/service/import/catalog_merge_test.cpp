#include "service/import/catalog_merge.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "import_test_support.hpp"

namespace gpucost::import {
namespace {

// A one-offering catalog: aws-p5.48xlarge-us-east-1-on-demand at 98.32.
pricing::CatalogCsv SmallCatalog() {
    pricing::CatalogCsv csv;
    csv.accelerators_csv =
        "id,name,vendor,form_factor,launch_year,fp32_tflops,tf32_tflops,fp16_tflops,bf16_tflops,"
        "fp8_tflops,int8_tops,fp4_tflops,memory_gb,memory_type,memory_gb_per_s,cache_mb,"
        "scale_up_interconnect,scale_up_gb_per_s,host_pcie_gen,tdp_w,purchase_price_usd,"
        "purchase_price_as_of,purchase_price_source,spec_source,confidence,notes\n"
        "h100-sxm,H100 SXM,NVIDIA,SXM5,2022,67,495,989,989,1979,1979,,80,HBM3,3350,50,NVLink 4,"
        "900,Gen5,700,,,,spec,high,\n";
    csv.offerings_csv =
        "id,provider,instance_type,accelerator,accelerator_count,accelerator_memory_gb,vcpus,"
        "ram_gib,interconnect,scale_out_gbit_per_s,region,price_type,spot_interruption_bucket,"
        "notes\n"
        "aws-p5.48xlarge-us-east-1-on-demand,aws,p5.48xlarge,h100-sxm,8,80,192,2048,,3200,"
        "us-east-1,on_demand,,\n";
    csv.prices_csv =
        "offering_id,usd_per_hour,as_of,as_of_estimated,source,verified,notes\n"
        "aws-p5.48xlarge-us-east-1-on-demand,98.32,2025-05-01,false,old list,true,\n";
    return csv;
}

pricing::Offering Imported(const std::string& instance, double usd, const std::string& as_of,
                           const std::string& accelerator = "h100-sxm") {
    pricing::Offering o;
    o.id = OfferingId("aws", instance, "us-east-1", pricing::PriceType::kOnDemand);
    o.provider = "aws";
    o.instance_type = instance;
    o.accelerator = accelerator;
    o.accelerator_count = 8;
    o.region = "us-east-1";
    o.notes = "shape, with a comma";
    o.price = {usd, as_of, false, "AWS Price List", true, "note \"quoted\""};
    return o;
}

TEST_CASE("a known offering gains an observation; a new one is appended; repeats are skipped") {
    auto base = pricing::LoadCatalog(SmallCatalog());
    REQUIRE(base.ok());
    FileResult file;
    file.offerings = {Imported("p5.48xlarge", 55.04, "2026-11-20"),
                      Imported("p5.4xlarge", 6.88, "2026-11-20"),
                      Imported("p5.48xlarge", 55.04, "2026-11-20"),
                      Imported("p6-b200.48xlarge", 100, "2026-11-20", "b200")};
    file.skipped = {{"not_linux", 3}};
    ImportPlan plan = PlanImport(*base.value(), {file});
    CHECK(plan.offerings_added == 1);
    CHECK(plan.prices_added == 2);
    CHECK(plan.prices_changed == 1);
    CHECK(plan.skipped.at("already_recorded") == 1);
    CHECK(plan.skipped.at("accelerator_not_in_catalog") == 1);
    CHECK(plan.skipped.at("not_linux") == 3);
    CHECK(plan.by_provider.at("aws").offerings_added == 1);

    pricing::CatalogCsv merged = AppendToCatalog(SmallCatalog(), plan);
    CHECK(merged.accelerators_csv == SmallCatalog().accelerators_csv);
    auto loaded = pricing::LoadCatalog(merged);
    REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
    auto p5 = loaded.value()->FindOffering("aws-p5.48xlarge-us-east-1-on-demand");
    REQUIRE(p5.ok());
    CHECK(p5.value().price.usd_per_hour == doctest::Approx(55.04));
    CHECK(p5.value().price.notes == "note \"quoted\"");
    auto small = loaded.value()->FindOffering("aws-p5.4xlarge-us-east-1-on-demand");
    REQUIRE(small.ok());
    CHECK(small.value().notes == "shape, with a comma");
}

TEST_CASE("an imported row that disagrees with the catalog's offering is skipped") {
    auto base = pricing::LoadCatalog(SmallCatalog());
    REQUIRE(base.ok());
    FileResult file;
    pricing::Offering wrong = Imported("p5.48xlarge", 55.04, "2026-11-20");
    wrong.accelerator_count = 4;
    file.offerings = {wrong};
    ImportPlan plan = PlanImport(*base.value(), {file});
    CHECK(plan.prices_added == 0);
    CHECK(plan.skipped.at("conflicts_with_catalog_offering") == 1);
}

TEST_CASE("appended rows follow the base file's own column order, unknown columns empty") {
    pricing::CatalogCsv base = SmallCatalog();
    base.offerings_csv.replace(base.offerings_csv.find("notes\n"), 6, "notes,extra\n");
    base.offerings_csv.back() = ',';
    base.offerings_csv += "x\n";
    ImportPlan plan;
    plan.new_offerings = {Imported("p5.4xlarge", 6.88, "2026-11-20")};
    pricing::CatalogCsv merged = AppendToCatalog(base, plan);
    CHECK(merged.offerings_csv.find("\"shape, with a comma\",\n") != std::string::npos);
}

TEST_CASE("the catalog directory is written whole") {
    auto dir = std::filesystem::temp_directory_path() / "gpucost-merge-test";
    std::filesystem::remove_all(dir);
    REQUIRE(WriteCatalogDir(dir.string(), SmallCatalog()).ok());
    CHECK(std::filesystem::exists(dir / "accelerators.csv"));
    CHECK(std::filesystem::exists(dir / "offerings.csv"));
    CHECK(std::filesystem::exists(dir / "prices.csv"));
    CHECK_FALSE(std::filesystem::exists(dir / ".prices.csv.import-tmp"));
    std::filesystem::remove_all(dir);
}

// What a crash leaves between the commit point and the last rename: accelerators.csv already
// the new file, offerings.csv and prices.csv still staged.
void StopAfterCommit(const std::filesystem::path& dir, const pricing::CatalogCsv& next) {
    std::ofstream(dir / "accelerators.csv") << next.accelerators_csv;
    std::ofstream(dir / ".offerings.csv.import-tmp") << next.offerings_csv;
    std::ofstream(dir / ".prices.csv.import-tmp") << next.prices_csv;
    std::ofstream(dir / ".import-commit") << "staged catalog files, to be renamed\n";
}

std::string Text(const std::filesystem::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("a write stopped after its commit point is finished, one stopped before it undone") {
    auto dir = std::filesystem::temp_directory_path() /
               ("gpucost-merge-commit-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    REQUIRE(WriteCatalogDir(dir.string(), SmallCatalog()).ok());
    pricing::CatalogCsv next = SmallCatalog();
    next.prices_csv += "p5.48xlarge-on-demand,55.04,2026-12-06,,,,\n";
    StopAfterCommit(dir, next);
    REQUIRE(FinishCatalogDirWrite(dir.string()).ok());
    CHECK(Text(dir / "prices.csv") == next.prices_csv);
    CHECK(Text(dir / "offerings.csv") == next.offerings_csv);
    CHECK_FALSE(std::filesystem::exists(dir / ".import-commit"));

    // Staged files without the marker: the old files are whole, the staged ones dropped.
    std::ofstream(dir / ".prices.csv.import-tmp") << "half a fil";
    REQUIRE(FinishCatalogDirWrite(dir.string()).ok());
    CHECK(Text(dir / "prices.csv") == next.prices_csv);
    CHECK_FALSE(std::filesystem::exists(dir / ".prices.csv.import-tmp"));
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpucost::import
