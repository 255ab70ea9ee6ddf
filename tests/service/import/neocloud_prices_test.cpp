// The neoclouds' answers (service/import/neocloud_prices.cpp) read from the recorded fixtures
// in tests/data/import: the offerings each yields, the rows it passes over, and a changed or
// cut-short answer refused whole.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "import_test_support.hpp"
#include "service/import/price_file.hpp"

namespace gpucost::import {
namespace {

using testing::EmbeddedMappings;
using testing::Fixture;

ParseOptions Dated() {
    ParseOptions options;
    options.as_of = "2026-12-06";
    return options;
}

FileResult Read(Format format, const std::string& fixture) {
    auto read = ReadPriceBuffer(format, Fixture(fixture), fixture, EmbeddedMappings(), Dated());
    REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.error().message));
    return std::move(read).value();
}

const pricing::Offering& Get(const FileResult& r, const std::string& id) {
    for (const auto& o : r.offerings) {
        if (o.id == id) return o;
    }
    FAIL("no offering " << id);
    return r.offerings.front();
}

std::string Refusal(Format format, const std::string& text) {
    auto read = ReadPriceBuffer(format, text, "answer", EmbeddedMappings(), Dated());
    return read.ok() ? std::string("(read)") : read.error().message;
}

TEST_CASE("Lambda: each GPU instance type at its price in cents, one 'us' row") {
    FileResult r = Read(Format::kLambdaInstanceTypes, "lambda-instance-types.json");
    CHECK(r.records_read == 6);
    CHECK(r.offerings.size() == 4);
    const auto& h100 = Get(r, "lambda-gpu_8x_h100_sxm5-us-on-demand");
    CHECK(h100.price.usd_per_hour == doctest::Approx(23.92));
    CHECK(h100.accelerator == "h100-sxm");
    CHECK(h100.accelerator_count == 8);
    CHECK(h100.vcpus == 208);
    CHECK(h100.price.as_of == "2026-12-06");
    CHECK(r.skipped.at("gpu_not_mapped") == 1);  // A6000: no such accelerator in the catalog
    CHECK(r.skipped.at("no_gpu") == 1);
    CHECK(Refusal(Format::kLambdaInstanceTypes, R"({"error":{"code":"x"}})").find("data") !=
          std::string::npos);
}

TEST_CASE("RunPod: secure and community clouds, on-demand and spot, per GPU") {
    FileResult r = Read(Format::kRunpodGpuTypes, "runpod-gpu-types.json");
    CHECK(Get(r, "runpod-h100-sxm-secure-global-on-demand").price.usd_per_hour ==
          doctest::Approx(2.99));
    CHECK(Get(r, "runpod-h100-sxm-community-global-on-demand").price.usd_per_hour ==
          doctest::Approx(2.69));
    CHECK(Get(r, "runpod-h100-sxm-secure-global-spot").price.usd_per_hour == doctest::Approx(1.75));
    CHECK(Get(r, "runpod-mi300x-secure-global-on-demand").accelerator == "mi300x");
    CHECK(r.offerings.size() == 6);
    CHECK(Refusal(Format::kRunpodGpuTypes, R"({"errors":[{"message":"Cannot query field"}]})")
              .find("GraphQL errors") != std::string::npos);
}

TEST_CASE("Vast.ai: the search's pages read as one answer, the cheapest over all of them") {
    // The two Texas H100 offers on different pages (sync follows the search page by page).
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpucost-vastai-pages-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto offers = nlohmann::json::parse(Fixture("vastai-bundles.json"))["offers"];
    std::vector<std::string> paths;
    for (const auto& [page, ids] : {std::pair{0, std::vector<int>{10011, 10021}},
                                    std::pair{1, std::vector<int>{10012, 10031, 10041, 10051}}}) {
        nlohmann::json kept = nlohmann::json::array();
        for (const auto& offer : offers) {
            if (std::find(ids.begin(), ids.end(), offer["id"].get<int>()) != ids.end()) {
                kept.push_back(offer);
            }
        }
        paths.push_back((dir / ("page-" + std::to_string(page) + ".json")).string());
        std::ofstream(paths.back()) << nlohmann::json{{"offers", kept}}.dump();
    }
    auto read = ReadPriceFiles(Format::kVastaiBundles, paths, EmbeddedMappings(), Dated());
    std::filesystem::remove_all(dir);
    REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.error().message));
    REQUIRE(read.value().size() == 1);
    const FileResult& r = read.value().front();
    CHECK(r.records_read == 6);
    const auto& texas = Get(r, "vastai-1x-h100_sxm-texas-us-on-demand");
    CHECK(texas.price.usd_per_hour == doctest::Approx(1.87));  // page 1, not page 2's 2.10
    CHECK(texas.price.notes == "cheapest dph_total of 2 offer(s)");
    CHECK(Get(r, "vastai-1x-h100_sxm-texas-us-spot").price.usd_per_hour ==
          doctest::Approx(1.05));  // page 2's lower bid
    CHECK(Get(r, "vastai-1x-rtx_4090-quebec-ca-on-demand").price.usd_per_hour ==
          doctest::Approx(0.35));
}

TEST_CASE("Vast.ai: the cheapest rentable offer per GPU, count and location") {
    FileResult r = Read(Format::kVastaiBundles, "vastai-bundles.json");
    const auto& texas = Get(r, "vastai-1x-h100_sxm-texas-us-on-demand");
    CHECK(texas.price.usd_per_hour == doctest::Approx(1.87));  // not the 2.10 offer
    CHECK(texas.price.notes == "cheapest dph_total of 2 offer(s)");
    CHECK(Get(r, "vastai-1x-h100_sxm-texas-us-spot").price.usd_per_hour ==
          doctest::Approx(1.05));  // the other offer's lower bid
    CHECK(Get(r, "vastai-8x-h100_sxm-vietnam-on-demand").accelerator_count == 8);
    CHECK(r.skipped.at("not_rentable") == 1);
    CHECK(Refusal(Format::kVastaiBundles, R"({"bundles":[]})").find("offers") != std::string::npos);
}

TEST_CASE("CoreWeave: the pricing page's GPU table, headings and other tables passed over") {
    FileResult r = Read(Format::kCoreweavePricing, "coreweave-pricing.html");
    CHECK(r.offerings.size() == 4);
    const auto& h100 = Get(r, "coreweave-nvidia-hgx-h100-8x-north-america-on-demand");
    CHECK(h100.price.usd_per_hour == doctest::Approx(49.24));
    CHECK(h100.accelerator_count == 8);
    CHECK(Get(r, "coreweave-nvidia-gb200-nvl72-4x-north-america-on-demand").accelerator == "gb200");
    CHECK(r.skipped.at("gpu_not_mapped") == 1);  // L40: not in the catalog
    std::string page = Fixture("coreweave-pricing.html");
    CHECK(Refusal(Format::kCoreweavePricing, page.substr(0, page.size() / 2)).find("cut short") !=
          std::string::npos);
    page.replace(page.find("Instance Price"), 14, "Price / Hour");
    CHECK(Refusal(Format::kCoreweavePricing, page).find("changed") != std::string::npos);
}

}  // namespace
}  // namespace gpucost::import
