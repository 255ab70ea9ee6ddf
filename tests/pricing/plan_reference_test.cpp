#include "pricing/plan_reference.hpp"

#include <doctest/doctest.h>

#include "pricing/calendar.hpp"
#include "pricing/catalog_loader.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;

namespace {

Offering Offer(std::string provider, std::string instance_type, PriceType type) {
    Offering o;
    o.provider = std::move(provider);
    o.instance_type = std::move(instance_type);
    o.price_type = type;
    return o;
}

}  // namespace

TEST_SUITE("plan_reference") {
    TEST_CASE("the most specific capacity rule applies: family prefix, then a named price type") {
        PlanReferenceCsv csv = gpucost::testing::SamplePlanReferenceCsv();
        csv.capacity_csv +=
            "aws,P5,on_demand,2,true,,,TEST P5 ON DEMAND,\n"
            "aws,p5,*,3,true,,,TEST P5,\n";
        auto loaded = LoadPlanReference(csv);
        REQUIRE(loaded.ok());
        const PlanReference& r = loaded.value();
        CHECK(r.CapacityOf(Offer("aws", "p5.48xlarge", PriceType::kOnDemand)).max_instances == 2);
        CHECK(r.CapacityOf(Offer("aws", "p5.48xlarge", PriceType::kSpot)).max_instances == 3);
        CHECK(r.CapacityOf(Offer("aws", "p4d.24xlarge", PriceType::kSpot)).max_instances == 8);
        const OfferingCapacity block =
            r.CapacityOf(Offer("AWS", "p4d.24xlarge", PriceType::kCapacityBlock));
        CHECK(block.max_instances == 4);
        CHECK(*block.min_block_hours == 24);
        CHECK(*block.max_block_hours == 4368);
        CHECK_FALSE(r.CapacityOf(Offer("lambda", "gpu_1x_h100", PriceType::kOnDemand)).cluster);
        const OfferingCapacity unknown =
            r.CapacityOf(Offer("runpod", "H100 SXM", PriceType::kOnDemand));
        CHECK(unknown.defaulted);
        CHECK(unknown.max_instances == kDefaultMaxInstances);
        CHECK(unknown.cluster == kDefaultCluster);
        REQUIRE(r.DataPriceOf("AWS") != nullptr);
        CHECK(r.DataPriceOf("aws")->internet_egress_usd_per_gb == 0.09);
        CHECK(r.DataPriceOf("gcp") == nullptr);
    }

    TEST_CASE("bad reference rows are rejected naming the file and line") {
        PlanReferenceCsv csv = gpucost::testing::SamplePlanReferenceCsv();
        csv.capacity_csv += "ibm,*,*,2,true,,,X,\n";
        auto bad = LoadPlanReference(csv);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().message.find("capacity.csv line 6") != std::string::npos);

        csv = gpucost::testing::SamplePlanReferenceCsv();
        csv.capacity_csv += "aws,*,*,2,maybe,,,X,\n";
        CHECK_FALSE(LoadPlanReference(csv).ok());
        csv = gpucost::testing::SamplePlanReferenceCsv();
        csv.capacity_csv += "aws,*,*,2,true,,,,\n";  // no source
        CHECK_FALSE(LoadPlanReference(csv).ok());
        csv = gpucost::testing::SamplePlanReferenceCsv();
        csv.data_prices_csv += "aws,0.02,0.09,2026-11-01,false,X,true,\n";  // duplicate
        CHECK_FALSE(LoadPlanReference(csv).ok());
    }

    TEST_CASE("accelerator workloads come from the catalog file and the reference overrides") {
        CatalogCsv csv = gpucost::testing::SampleCatalogCsv();
        auto plain = LoadCatalog(csv);
        REQUIRE(plain.ok());
        const Accelerator h100 = plain.value()->FindAccelerator("h100-sxm").value();
        CHECK(h100.workloads.training);  // no column: both
        CHECK(h100.workloads.inference);

        // Append the two columns: header, h100-sxm row, tpu-v5e row.
        const std::vector<std::string> extra = {
            ",workloads,workloads_source", ",training;inference,TEST H100", ",inference,TEST V5E"};
        std::string text;
        std::size_t start = 0;
        for (const std::string& suffix : extra) {
            const std::size_t end = csv.accelerators_csv.find('\n', start);
            text += csv.accelerators_csv.substr(start, end - start) + suffix + "\n";
            start = end + 1;
        }
        csv.accelerators_csv = text;
        auto loaded = LoadCatalog(csv);
        if (!loaded.ok()) {
            MESSAGE(loaded.error().message);
        }
        REQUIRE(loaded.ok());
        const Accelerator v5e = loaded.value()->FindAccelerator("tpu-v5e").value();
        CHECK_FALSE(v5e.workloads.training);
        CHECK(v5e.workloads.inference);
        CHECK(v5e.workloads.source == "TEST V5E");
        CHECK(WorkloadsText(v5e.workloads) == "inference");

        PlanReferenceCsv ref = gpucost::testing::SamplePlanReferenceCsv();
        ref.catalog = loaded.value().get();
        auto reference = LoadPlanReference(ref);
        REQUIRE(reference.ok());
        // A snapshot without the column (a database) still learns it from the reference.
        CHECK_FALSE(reference.value()
                        .WorkloadsOf(plain.value()->FindAccelerator("tpu-v5e").value())
                        .training);

        CatalogCsv wrong = csv;
        const std::size_t at = wrong.accelerators_csv.find(",inference,TEST V5E");
        wrong.accelerators_csv.replace(at, std::string(",inference").size(), ",serving");
        CHECK_FALSE(LoadCatalog(wrong).ok());
    }

    TEST_CASE("calendar months split hours from a start day") {
        const auto start = DaysFromIsoDate("2026-01-31");
        REQUIRE(start.has_value());
        CHECK(IsoDateFromDays(*start) == "2026-01-31");
        CHECK_FALSE(DaysFromIsoDate("2026-02-29").has_value());
        CHECK(DaysFromIsoDate("2028-02-29").has_value());
        const auto months = SplitHoursByMonth(*start, 24 + 28 * 24 + 5);
        REQUIRE(months.size() == 3);
        CHECK(months[0].month == "2026-01");
        CHECK(months[0].hours == 24);
        CHECK(months[1].hours == 28 * 24);
        CHECK(months[2].month == "2026-03");
        CHECK(months[2].hours == 5);
    }
}
