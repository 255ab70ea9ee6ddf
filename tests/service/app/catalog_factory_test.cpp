#include "service/app/catalog_factory.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "pricing/accelerator_facts.hpp"
#include "pricing/estimate/cluster.hpp"
#include "pricing/offering_query.hpp"
#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/training_plan.hpp"

using namespace gpucost;

namespace {

std::shared_ptr<const pricing::InMemoryCatalog> Embedded() {
    auto r = app::LoadEmbeddedCatalog();
    if (!r.ok()) {
        FAIL(r.error().message);
    }
    return r.value();
}

const pricing::Offering* FindBy(const pricing::Catalog& c, const std::string& provider,
                                const std::string& instance_prefix) {
    for (const auto& o : c.Offerings()) {
        if (o.provider == provider && o.instance_type.rfind(instance_prefix, 0) == 0) {
            return &o;
        }
    }
    return nullptr;
}

}  // namespace

TEST_SUITE("catalog_factory") {
    TEST_CASE("the embedded catalog loads and validates") {
        auto catalog = Embedded();
        auto info = catalog->Describe();
        CHECK(info.origin == "embedded");
        CHECK(info.accelerator_count >= 30);
        CHECK(info.offering_count >= 150);
        MESSAGE("embedded catalog: " << info.accelerator_count << " accelerators, "
                                     << info.offering_count << " offerings, "
                                     << info.price_observation_count << " price observations");
    }

    TEST_CASE("every accelerator of the shared hardware data is present, plus h800") {
        auto catalog = Embedded();
        for (const char* id : {"v100-sxm2-32gb",
                               "a100-sxm4-40gb",
                               "a100-sxm4-80gb",
                               "a100-pcie-80gb",
                               "h100-sxm",
                               "h100-pcie",
                               "h100-nvl",
                               "h200-sxm",
                               "b200",
                               "gb200",
                               "l40s",
                               "l4",
                               "a10g",
                               "a10",
                               "t4",
                               "rtx-3090",
                               "rtx-4090",
                               "rtx-5090",
                               "mi250x",
                               "mi300x",
                               "mi325x",
                               "tpu-v4",
                               "tpu-v5e",
                               "tpu-v5p",
                               "tpu-v6e",
                               "trainium1",
                               "trainium2",
                               "inferentia2",
                               "gaudi2",
                               "gaudi3",
                               "h800"}) {
            CAPTURE(id);
            CHECK(catalog->FindAccelerator(id).ok());
        }
        auto h100 = catalog->FindAccelerator("h100-sxm").value();
        CHECK(h100.PeakTflops(pricing::Precision::kBf16) == 989);
        CHECK(h100.memory_gb_per_s == 3350);
        auto h800 = catalog->FindAccelerator("h800").value();
        CHECK(h800.scale_up_gb_per_s == 400);
    }

    TEST_CASE("the 2026 accelerators carry their dense datasheet peaks and scale-up domains") {
        auto catalog = Embedded();
        using pricing::Precision;
        struct Part {
            const char* id;
            double bf16, fp8, fp4, memory_gb, memory_gb_per_s, scale_up_gb_per_s;
            int domain;
        };
        // schema/seed/build_seed.py NEW_PARTS_2026 with its sources; 0 = not sold or published.
        for (const Part& p : {Part{"b300", 2250, 4500, 13125, 288, 8000, 1800, 8},
                              Part{"gb300", 2500, 5000, 15000, 288, 8000, 1800, 72},
                              Part{"mi355x", 2516.6, 5033.2, 10066.3, 288, 8000, 1075, 8},
                              Part{"tpu7x", 2307, 4614, 0, 192, 7370, 1200, 9216},
                              Part{"trainium3", 671, 2517, 2517, 144, 4900, 2560, 144},
                              Part{"h20", 148, 296, 0, 96, 4000, 900, 8}}) {
            CAPTURE(p.id);
            auto found = catalog->FindAccelerator(p.id);
            REQUIRE(found.ok());
            const auto& a = found.value();
            CHECK(a.PeakTflops(Precision::kBf16).value_or(0) == doctest::Approx(p.bf16));
            CHECK(a.PeakTflops(Precision::kFp8).value_or(0) == doctest::Approx(p.fp8));
            CHECK(a.PeakTflops(Precision::kFp4).value_or(0) == doctest::Approx(p.fp4));
            CHECK(a.memory_gb == p.memory_gb);
            CHECK(a.memory_gb_per_s == p.memory_gb_per_s);
            CHECK(a.scale_up_gb_per_s.value_or(0) == p.scale_up_gb_per_s);
            CHECK_FALSE(a.spec_source.empty());
            REQUIRE(pricing::FindAcceleratorFacts(p.id) != nullptr);
            CHECK(pricing::estimate::DefaultScaleUpDomain(
                      a, pricing::estimate::DefaultAcceleratorsPerNode(a)) == p.domain);
        }
        // The h20 row must not take the h200's measured efficiency (prefix order).
        CHECK(pricing::FindAcceleratorFacts("h20")->mamf_bf16 == 0);
        CHECK(pricing::FindAcceleratorFacts("h200-sxm")->mamf_bf16 == doctest::Approx(0.803));
        CHECK(catalog->FindAccelerator("tpu-v5p").value().PeakTflops(Precision::kFp8) == 459);
        CHECK(catalog->FindAccelerator("tpu-v6e").value().PeakTflops(Precision::kFp8) == 918);
    }

    TEST_CASE("every accelerator has a 16-bit tensor peak, the A10G at the A10's rates") {
        auto catalog = Embedded();
        for (const auto& a : catalog->Accelerators()) {
            CAPTURE(a.id);
            CHECK((a.PeakTflops(pricing::Precision::kBf16) ||
                   a.PeakTflops(pricing::Precision::kFp16)));
        }
        // NVIDIA publishes no A10G datasheet; schema/seed/build_seed.py PEAK_SUPPLEMENTS.
        auto a10g = catalog->FindAccelerator("a10g").value();
        CHECK(a10g.PeakTflops(pricing::Precision::kBf16) == 125);
        CHECK(a10g.PeakTflops(pricing::Precision::kFp16) == 125);
        CHECK(a10g.PeakTflops(pricing::Precision::kTf32) == 62.5);
        CHECK(a10g.PeakTflops(pricing::Precision::kInt8) == 250);
        CHECK_FALSE(a10g.PeakTflops(pricing::Precision::kFp8));
    }

    TEST_CASE("AWS g5 (A10G) offerings are planned in bf16 for training and serving") {
        auto catalog = Embedded();
        auto count = [](const auto& skipped, const std::string& reason) {
            std::size_t n = 0;
            for (const auto& [name, c] : skipped) n += name == reason ? c : 0;
            return n;
        };
        pricing::plan::TrainingPlanRequest train;
        train.workload.model.params_b = 1;
        train.workload.tokens_b = 1;
        train.workload.precision = pricing::Precision::kBf16;
        train.constraints.accelerators = {"a10g"};
        train.constraints.max_total_accelerators = 16;
        auto trained = pricing::plan::PlanTraining(train, *catalog);
        REQUIRE(trained.ok());
        CHECK(count(trained.value().skipped, "precision_unsupported") == 0);
        REQUIRE_FALSE(trained.value().options.empty());
        CHECK(trained.value().options.front().offering->accelerator == "a10g");

        pricing::plan::InferencePlanRequest serve;
        serve.workload.model.params_b = 7;
        serve.workload.precision = pricing::Precision::kBf16;
        serve.workload.input_tokens = 1000;
        serve.workload.output_tokens = 250;
        serve.traffic.requests_per_second = 1;
        serve.accelerators = {"a10g"};
        auto served = pricing::plan::PlanInference(serve, *catalog, pricing::PlanReference{});
        REQUIRE(served.ok());
        CHECK(count(served.value().skipped, "precision_unsupported") == 0);
        REQUIRE_FALSE(served.value().options.empty());
        CHECK(served.value().options.front().offering->accelerator == "a10g");
    }

    TEST_CASE("every provider and instance family the issue names has offerings") {
        auto catalog = Embedded();
        std::map<std::string, std::vector<std::string>> families = {
            {"aws",
             {"p3.", "p4d.", "p4de.", "p5.", "p5e.", "p5en.", "g5.", "g6e.", "trn1.", "trn1n.",
              "trn2.", "inf2."}},
            {"gcp",
             {"a2-highgpu", "a2-ultragpu", "a2-megagpu", "a3-highgpu", "a3-megagpu", "a3-ultragpu",
              "g2-", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e"}},
            {"azure",
             {"Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5",
              "Standard_NC24ads_A100_v4", "Standard_NC40ads_H100_v5", "Standard_NC64as_T4_v3",
              "Standard_NV36ads_A10_v5"}},
            {"lambda", {""}},
            {"coreweave", {""}},
            {"vastai", {""}},
            {"runpod", {""}}};
        for (const auto& [provider, prefixes] : families) {
            for (const auto& prefix : prefixes) {
                CAPTURE(provider);
                CAPTURE(prefix);
                CHECK(FindBy(*catalog, provider, prefix) != nullptr);
            }
        }
    }

    TEST_CASE("stale pre-cut AWS prices are not served as current") {
        auto catalog = Embedded();
        auto p5 = catalog->FindOffering("aws-p5.48xlarge-us-east-1-on-demand");
        REQUIRE(p5.ok());
        // AWS cut P5 prices in June 2025: 98.32 (seed, SkyPilot snapshot) -> 55.04 (2026-11-09).
        CHECK(p5.value().price.usd_per_hour == 55.04);
        bool old_kept = false;
        for (const auto& p : p5.value().superseded_prices) {
            old_kept = old_kept || p.usd_per_hour == 98.32;
        }
        CHECK(old_kept);
    }

    TEST_CASE("the rows a dated check found wrong are corrected or retired") {
        auto catalog = Embedded();
        auto price = [&](const std::string& id) {
            auto o = catalog->FindOffering(id);
            REQUIRE_MESSAGE(o.ok(), id);
            return o.value().price;
        };
        // P5en after AWS's June-2025 cut (AWS price list via instances.vantage.sh), not 84.80.
        CHECK(price("aws-p5en.48xlarge-us-east-1-on-demand").usd_per_hour == 63.296);
        CHECK(price("aws-p5en.48xlarge-us-east-1-on-demand").as_of >= "2025-06-05");
        // GCP A4: 8 x the 16.11 B200 slice SKU, not a GPU-only 90.22 from an old snapshot.
        CHECK(price("gcp-a4-highgpu-8g-us-central1-on-demand").usd_per_hour == 128.88);
        // Trn2: the last on-demand price AWS's list gave (2025-11), not 85.96.
        CHECK(price("aws-trn2.48xlarge-us-east-2-on-demand").usd_per_hour == 35.76);
        // TPU spot per Google's TPU page (via gpuhunt), not 66-82 % below on-demand.
        CHECK(price("gcp-tpu-v5e-chip-us-central1-spot").usd_per_hour == 0.63);
        CHECK(price("gcp-tpu-v6e-chip-us-east1-spot").usd_per_hour == 1.89);
        CHECK(price("gcp-tpu-v5p-chip-us-east5-spot").usd_per_hour == 2.415);
        std::map<std::string, double> on_demand;  // (instance, region) -> usd/h
        for (const auto& o : catalog->Offerings()) {
            if (o.provider == "gcp" && o.price_type == pricing::PriceType::kOnDemand) {
                on_demand[o.instance_type + "/" + o.region] = o.price.usd_per_hour;
            }
        }
        for (const auto& o : catalog->Offerings()) {
            // Capacity-block rates that expired on 2025-01-01 are not served.
            if (o.price_type == pricing::PriceType::kCapacityBlock) {
                CHECK_MESSAGE(o.price.as_of >= "2025-01-01", o.id);
            }
            auto od = on_demand.find(o.instance_type + "/" + o.region);
            if (o.provider == "gcp" && o.accelerator.rfind("tpu-", 0) == 0 &&
                o.price_type == pricing::PriceType::kSpot && od != on_demand.end()) {
                CHECK_MESSAGE(o.price.usd_per_hour >= 0.4 * od->second, o.id);
            }
        }
    }

    TEST_CASE("AMD and the mapped AWS families are priced, over regions and purchase options") {
        auto catalog = Embedded();
        for (const auto& [provider, prefix] : std::vector<std::pair<std::string, std::string>>{
                 {"azure", "Standard_ND96isr_MI300X_v5"},
                 {"aws", "p6-b200.48xlarge"},
                 {"aws", "p6-b300.48xlarge"},
                 {"aws", "p5.4xlarge"},
                 {"aws", "g6."},
                 {"aws", "g4dn."}}) {
            CAPTURE(prefix);
            CHECK(FindBy(*catalog, provider, prefix) != nullptr);
        }
        std::set<std::string> p5_regions;
        for (const auto& o : catalog->Offerings()) {
            if (o.instance_type == "p5.48xlarge" && o.price_type == pricing::PriceType::kOnDemand) {
                p5_regions.insert(o.region);
            }
        }
        CHECK(p5_regions.size() >= 10);
        // AWS Reserved Instances are carried as commitments, below the on-demand rate.
        auto reserved = catalog->FindOffering("aws-p4d.24xlarge-us-east-1-commit-1y");
        auto on_demand = catalog->FindOffering("aws-p4d.24xlarge-us-east-1-on-demand");
        REQUIRE(reserved.ok());
        REQUIRE(on_demand.ok());
        CHECK(reserved.value().price.usd_per_hour < on_demand.value().price.usd_per_hour);
    }

    TEST_CASE("AWS spot and Reserved terms are dated per region, Azure beyond eastus") {
        auto catalog = Embedded();
        auto offering = [&](const std::string& id) {
            auto o = catalog->FindOffering(id);
            REQUIRE_MESSAGE(o.ok(), id);
            return o.value();
        };
        // AWS spot from the 2025-11-30 copy of AWS's prices (cheapest zone), with its Spot
        // Advisor bucket, not the undated 2025-05 snapshot's 20.9934 and >20 %.
        const pricing::Offering p5_spot = offering("aws-p5.48xlarge-us-east-1-spot");
        CHECK(p5_spot.price.usd_per_hour == 13.2182);
        CHECK(p5_spot.price.as_of == "2025-11-30");
        CHECK(p5_spot.price.verified);
        REQUIRE(p5_spot.spot_interruption.has_value());
        CHECK(p5_spot.spot_interruption->label == "5-10%");
        // A commitment's price is its lowest purchase option (All Upfront here), as the AWS
        // importer serves it, not the No Upfront 13.9211.
        CHECK(offering("aws-p4d.24xlarge-us-east-1-commit-1y").price.usd_per_hour == 12.993037);
        CHECK(offering("aws-p5.48xlarge-us-east-1-commit-3y").price.usd_per_hour == 20.695053);
        std::set<std::string> p5_spot_regions;
        std::set<std::string> azure_a100_regions;
        for (const auto& o : catalog->Offerings()) {
            if (o.instance_type == "p5.48xlarge" && o.price_type == pricing::PriceType::kSpot) {
                p5_spot_regions.insert(o.region);
            }
            if (o.instance_type == "Standard_NC24ads_A100_v4") {
                azure_a100_regions.insert(o.region);
            }
        }
        CHECK(p5_spot_regions.size() >= 10);
        CHECK(azure_a100_regions.size() >= 7);
    }

    TEST_CASE("every spot offering's interruption bucket, where present, is a spot one") {
        auto catalog = Embedded();
        for (const auto& o : catalog->Offerings()) {
            if (o.spot_interruption) {
                CHECK(o.price_type == pricing::PriceType::kSpot);
            }
            CHECK(o.price.usd_per_hour >= 0);
            CHECK_FALSE(o.price.source.empty());
        }
    }

    TEST_CASE("loading from a directory reports an unreadable file and bad rows") {
        auto dir = std::filesystem::temp_directory_path() / "gpucost-catalog-test";
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        auto missing = app::LoadCatalogFromDir(dir.string());
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().code == pricing::ErrorCode::kNotFound);

        // Copy the embedded catalog's source files, then corrupt one row.
        const std::filesystem::path seed = GPUCOST_SOURCE_DIR "/schema/seed";
        for (const char* f : {"accelerators.csv", "offerings.csv", "prices.csv"}) {
            std::filesystem::copy_file(seed / f, dir / f);
        }
        auto good = app::LoadCatalogFromDir(dir.string());
        REQUIRE(good.ok());
        CHECK(good.value()->Describe().version == Embedded()->Describe().version);
        {
            std::ofstream out(dir / "prices.csv", std::ios::app);
            out << "aws-p5.48xlarge-us-east-1-on-demand,-1,2026-11-21,false,TEST,true,\n";
        }
        auto bad = app::LoadCatalogFromDir(dir.string());
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().message.find("prices.csv line") != std::string::npos);
        CHECK(bad.error().message.find("must not be negative") != std::string::npos);
        std::filesystem::remove_all(dir);
    }

    TEST_CASE("a catalog directory may carry its own model library, checked like the seed") {
        auto dir = std::filesystem::temp_directory_path() / "gpucost-models-test";
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        auto none = app::LoadModelLibraryFromDir(dir.string());
        REQUIRE(none.ok());
        CHECK(none.value() == nullptr);
        std::filesystem::copy_file(GPUCOST_SOURCE_DIR "/schema/seed/models.csv",
                                   dir / "models.csv");
        auto seed = app::LoadModelLibraryFromDir(dir.string());
        REQUIRE(seed.ok());
        REQUIRE(seed.value() != nullptr);
        CHECK(seed.value()->Find("llama-3.1-70b") != nullptr);
        {
            std::ofstream out(dir / "models.csv", std::ios::app);
            out << "llama-3.1-70b,dup,llama,70,,80,8192,64,8,,28672,,,128256,8192,8192,true,false,"
                   "1,1,,,,,,,,,,,,,src\n";
        }
        auto dup = app::LoadModelLibraryFromDir(dir.string());
        REQUIRE(!dup.ok());
        CHECK(dup.error().message.find("models.csv line") != std::string::npos);
        CHECK(dup.error().message.find("duplicate id") != std::string::npos);
        std::filesystem::remove_all(dir);
    }

    TEST_CASE("a catalog directory may bring its own capacity and storage tables") {
        auto dir = std::filesystem::temp_directory_path() / "gpucost-reference-test";
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        auto catalog = Embedded();
        auto fallback = app::LoadPlanReferenceFromDir(dir.string(), *catalog);
        REQUIRE(fallback.ok());  // neither file: the embedded tables
        auto embedded = app::LoadEmbeddedPlanReference(*catalog);
        REQUIRE(embedded.ok());
        CHECK(fallback.value().version == embedded.value().version);
        {
            std::ofstream out(dir / "capacity.csv");
            out << "provider,instance_family,price_type,max_instances,cluster,min_block_hours,"
                   "max_block_hours,source,notes\n"
                   "vastai,*,*,2,false,,,MY CONTRACT,\n";
        }
        auto own = app::LoadPlanReferenceFromDir(dir.string(), *catalog);
        REQUIRE(own.ok());
        const pricing::Offering* vast = FindBy(*catalog, "vastai", "8x");
        REQUIRE(vast != nullptr);
        CHECK(own.value().CapacityOf(*vast).max_instances == 2);
        CHECK(own.value().CapacityOf(*vast).source == "MY CONTRACT");
        {
            std::ofstream out(dir / "capacity.csv", std::ios::app);
            out << "vastai,*,*,zero,false,,,X,\n";
        }
        auto bad = app::LoadPlanReferenceFromDir(dir.string(), *catalog);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().message.find("capacity.csv line 3") != std::string::npos);
        std::filesystem::remove_all(dir);
    }

    TEST_CASE("the embedded plan reference covers every offering, with sources") {
        auto catalog = Embedded();
        auto reference = app::LoadEmbeddedPlanReference(*catalog);
        REQUIRE(reference.ok());
        const pricing::PlanReference& r = reference.value();
        for (const auto& o : catalog->Offerings()) {
            const pricing::OfferingCapacity c = r.CapacityOf(o);
            CHECK_MESSAGE(!c.defaulted, o.id);
            CHECK_FALSE(c.source.empty());
            CHECK(c.max_instances >= 1);
            if (o.provider == "vastai" || o.provider == "runpod") {
                CHECK_FALSE(c.cluster);  // marketplaces: independent hosts
            }
            if (o.price_type == pricing::PriceType::kCapacityBlock) {
                CHECK(c.min_block_hours.has_value());
                CHECK(c.max_block_hours.has_value());
            }
            const pricing::DataPrice* price = r.DataPriceOf(o.provider);
            REQUIRE_MESSAGE(price != nullptr, o.provider);
            CHECK_FALSE(price->source.empty());
        }
        for (const auto& a : catalog->Accelerators()) {
            CHECK_MESSAGE(!a.workloads.source.empty(), a.id);
            CHECK(r.WorkloadsOf(a).inference);
            CHECK(r.WorkloadsOf(a).training == (a.id != "inferentia2"));
        }
    }

    TEST_CASE("the embedded OpenAPI document is the repository's") {
        CHECK(app::EmbeddedOpenApiYaml().rfind("openapi: 3.1", 0) == 0);
    }

    TEST_CASE("the region table places every region of the embedded catalog, with its source") {
        auto catalog = Embedded();
        auto reference = app::LoadEmbeddedPlanReference(*catalog);
        REQUIRE(reference.ok());
        const pricing::RegionTable& regions = reference.value().regions;
        std::set<std::pair<std::string, std::string>> seen;
        for (const auto& o : catalog->Offerings()) {
            if (!seen.emplace(o.provider, o.region).second) continue;
            const pricing::RegionPlace* place = regions.Find(o.provider, o.region);
            const std::string missing =
                o.provider + " region " + o.region + " has no row in schema/seed/regions.csv";
            CHECK_MESSAGE(place != nullptr, missing);
            if (place != nullptr) {
                CHECK_MESSAGE(place->source.rfind("https://", 0) == 0, o.region);
            }
        }
        CHECK(seen.size() >= 20);
        // "In the US": the big clouds' US regions are, a marketplace median is not.
        CHECK(regions.Within("aws", "us-east-1", {{"US"}, {}}));
        CHECK(regions.Within("gcp", "us-central1", {{"US"}, {}}));
        CHECK_FALSE(regions.Within("vastai", "marketplace", {{"US"}, {}}));
        CHECK_FALSE(regions.Within("aws", "ap-southeast-4", {{"US"}, {}}));
    }
}
