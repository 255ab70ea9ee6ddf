#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <memory>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/catalog_loader.hpp"
#include "tests/support/http_checks.hpp"
#include "tests/support/sample_catalog.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {}  // namespace

TEST_SUITE("catalog_routes") {
    TEST_CASE("GET /v1/accelerators lists every accelerator with dense peaks per precision") {
        TestServer server(SampleDeps());
        auto r = server.Client().Get("/v1/accelerators");
        REQUIRE(r);
        CHECK(r->status == 200);
        CHECK(r->get_header_value("Content-Type") == "application/json");
        json body = Body(r);
        CHECK(body["total_count"] == 2);
        json h100 = body["items"][0];
        CHECK(h100["id"] == "h100-sxm");
        CHECK(h100["dense_peak_tflops"]["bf16"] == 989);
        CHECK(h100["dense_peak_tflops"]["fp8"] == 1979);
        CHECK_FALSE(h100["dense_peak_tflops"].contains("fp4"));
        CHECK(h100["memory_gb_per_s"] == 3350);
        CHECK(h100["purchase_price_usd"] == 27500);
        CHECK(body["items"][1]["purchase_price_usd"].is_null());
    }

    TEST_CASE("GET /v1/accelerators filters by vendor and precision") {
        TestServer server(SampleDeps());
        CHECK(Body(server.Client().Get("/v1/accelerators?vendor=google"))["total_count"] == 1);
        CHECK(Body(server.Client().Get("/v1/accelerators?precision=fp8"))["total_count"] == 1);
        CheckProblem(server.Client().Get("/v1/accelerators?precision=fp7"), 422, "invalid_argument",
                     "precision");
    }

    TEST_CASE("GET /v1/accelerators/{id} returns one or a 404 problem") {
        TestServer server(SampleDeps());
        auto r = server.Client().Get("/v1/accelerators/tpu-v5e");
        CHECK(Body(r)["vendor"] == "Google");
        CheckProblem(server.Client().Get("/v1/accelerators/h100"), 404, "not_found", "id");
    }

    TEST_CASE("GET /v1/providers counts offerings and the as-of range per provider") {
        TestServer server(SampleDeps());
        json body = Body(server.Client().Get("/v1/providers"));
        REQUIRE(body["items"].size() == 3);
        json aws = body["items"][0];
        CHECK(aws["id"] == "aws");
        CHECK(aws["offering_count"] == 2);
        CHECK(aws["offerings_by_price_type"]["spot"] == 1);
        CHECK(aws["oldest_as_of"] == "2025-05-01");
        CHECK(aws["newest_as_of"] == "2026-11-09");
    }

    TEST_CASE("GET /v1/offerings filters by country, continent and accelerator family") {
        TestServer server(SampleDeps());
        auto ids = [&](const std::string& query) {
            json body = Body(server.Client().Get(("/v1/offerings?sort=id&" + query).c_str()));
            std::vector<std::string> out;
            for (const auto& o : body["items"]) out.push_back(o["id"].get<std::string>());
            return out;
        };
        const std::vector<std::string> us = {"aws-p5.48xlarge-us-east-1-on-demand",
                                             "aws-p5.48xlarge-us-east-1-spot",
                                             "lambda-gpu_1x_h100-us-on-demand"};
        // The TPU's region (us-central1) has no row in the region table: in no country.
        CHECK(ids("country=US") == us);
        CHECK(ids("country=us&continent=north-america") == us);
        CHECK(ids("continent=europe").empty());
        CHECK(ids("country=DE,US") == us);
        CHECK(ids("accelerator_family=H100") == us);
        CHECK(ids("accelerator_family=tpu") ==
              std::vector<std::string>{"gcp-tpu-v5e-us-central1-on-demand"});
        CHECK(ids("accelerator_family=tpu&country=US").empty());
        for (const auto& [query, field] : std::vector<std::pair<std::string, std::string>>{
                 {"country=XX", "country"},
                 {"continent=atlantis", "continent"},
                 {"accelerator_family=b300", "accelerator_family"}}) {
            CAPTURE(query);
            auto r = server.Client().Get(("/v1/offerings?" + query).c_str());
            CheckProblem(r, 422, "invalid_argument", field);
        }
        auto r = server.Client().Get("/v1/offerings?country=JP");
        CHECK(Body(r)["detail"].get<std::string>().find("known: DE, US") != std::string::npos);
        // A cursor is for its filters: the geography is part of the query it was made for.
        json first = Body(server.Client().Get("/v1/offerings?country=US&limit=1"));
        REQUIRE(first["next_cursor"].is_string());
        auto other = server.Client().Get(("/v1/offerings?country=DE,US&limit=1&cursor=" +
                                          first["next_cursor"].get<std::string>())
                                             .c_str());
        REQUIRE(other);
        CHECK(other->status == 400);
    }

    TEST_CASE("GET /v1/offerings serves current prices with provenance") {
        TestServer server(SampleDeps());
        json body = Body(server.Client().Get("/v1/offerings?provider=aws&price_type=on_demand"));
        REQUIRE(body["items"].size() == 1);
        json p5 = body["items"][0];
        CHECK(p5["usd_per_hour"] == 55.04);
        CHECK(p5["usd_per_accelerator_hour"] == 6.88);
        CHECK(p5["as_of"] == "2026-11-09");
        CHECK(p5["source"] == "PRICE API");
        CHECK(p5["verified"] == true);
        CHECK(p5["superseded_price_count"] == 2);
        CHECK_FALSE(p5.contains("superseded_prices"));
        CHECK(body["total_count"] == 1);
        CHECK(body["next_cursor"].is_null());
    }

    TEST_CASE("GET /v1/offerings pages with a cursor until next_cursor is null") {
        TestServer server(SampleDeps());
        std::string path = "/v1/offerings?limit=3&sort=-usd_per_hour";
        json first = Body(server.Client().Get(path));
        CHECK(first["items"].size() == 3);
        REQUIRE(first["next_cursor"].is_string());
        json second =
            Body(server.Client().Get(path + "&cursor=" + first["next_cursor"].get<std::string>()));
        CHECK(second["items"].size() == 1);
        CHECK(second["next_cursor"].is_null());
        CHECK(second["items"][0]["id"] == "gcp-tpu-v5e-us-central1-on-demand");
    }

    TEST_CASE("GET /v1/offerings rejects unknown parameters and bad values by name") {
        TestServer server(SampleDeps());
        auto client = server.Client();
        CheckProblem(client.Get("/v1/offerings?gpu=h100"), 400, "malformed_request", "gpu");
        CheckProblem(client.Get("/v1/offerings?limit=ten"), 400, "malformed_request", "limit");
        CheckProblem(client.Get("/v1/offerings?limit=0"), 422, "invalid_argument", "limit");
        CheckProblem(client.Get("/v1/offerings?limit=99999999999"), 422, "invalid_argument",
                     "limit");  // well-formed but out of range: 422 like limit=501, not 400
        CheckProblem(client.Get("/v1/offerings?limit=1.5"), 400, "malformed_request", "limit");
        CheckProblem(client.Get("/v1/offerings?limit=1&limit=2"), 400, "malformed_request",
                     "limit");
        CheckProblem(client.Get("/v1/offerings?price_type=reserved"), 422, "invalid_argument",
                     "price_type");
        CheckProblem(client.Get("/v1/offerings?sort=cheapest"), 422, "invalid_argument", "sort");
        CheckProblem(client.Get("/v1/offerings?max_usd_per_accelerator_hour=-1"), 422,
                     "invalid_argument", "max_usd_per_accelerator_hour");
        CheckProblem(client.Get("/v1/offerings?min_accelerator_memory_gb=NaN"), 400,
                     "malformed_request", "min_accelerator_memory_gb");
        CheckProblem(client.Get("/v1/offerings?cursor=garbage"), 422, "invalid_argument", "cursor");
    }

    TEST_CASE("a cursor is accepted only by the query that issued it") {
        TestServer server(SampleDeps());
        auto client = server.Client();
        auto first = client.Get("/v1/offerings?limit=1&sort=id&price_type=on_demand");
        REQUIRE(first);
        auto cursor = json::parse(first->body)["next_cursor"];
        REQUIRE(cursor.is_string());
        const std::string c = "&cursor=" + cursor.get<std::string>();
        // Same filters and sort: the next page, whatever the page size.
        auto next = client.Get("/v1/offerings?limit=2&sort=id&price_type=on_demand" + c);
        REQUIRE(next);
        CHECK(next->status == 200);
        // Another filter, another sort, or no filter at all: 400 naming the cursor.
        CheckProblem(client.Get("/v1/offerings?limit=1&sort=id&price_type=spot" + c), 400,
                     "malformed_request", "cursor");
        CheckProblem(client.Get("/v1/offerings?limit=1&sort=-id&price_type=on_demand" + c), 400,
                     "malformed_request", "cursor");
        CheckProblem(client.Get("/v1/offerings?limit=1&sort=id" + c), 400, "malformed_request",
                     "cursor");
        CheckProblem(client.Get("/v1/offerings?verified=yes"), 400, "malformed_request",
                     "verified");
    }

    TEST_CASE("a filter that matches nothing is an empty list, not an error") {
        TestServer server(SampleDeps());
        auto r = server.Client().Get("/v1/offerings?accelerator=b200&region=mars");
        REQUIRE(r);
        CHECK(r->status == 200);
        CHECK(Body(r)["items"].empty());
    }

    TEST_CASE("GET /v1/offerings/{id} includes superseded prices, newest first") {
        TestServer server(SampleDeps());
        json body = Body(server.Client().Get("/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand"));
        REQUIRE(body["superseded_prices"].size() == 2);
        CHECK(body["superseded_prices"][0]["usd_per_hour"] == 40.0);
        CHECK(body["superseded_prices"][0]["verified"] == false);
        CHECK(body["superseded_prices"][1]["usd_per_hour"] == 98.32);
        json spot = Body(server.Client().Get("/v1/offerings/aws-p5.48xlarge-us-east-1-spot"));
        CHECK(spot["spot_interruption"]["bucket"] == ">20%");
        CheckProblem(server.Client().Get("/v1/offerings/nope"), 404, "not_found");
    }

    TEST_CASE("GET /v1/catalog describes version, counts and as-of range") {
        TestServer server(SampleDeps());
        json body = Body(server.Client().Get("/v1/catalog"));
        CHECK(body["offering_count"] == 4);
        CHECK(body["accelerator_count"] == 2);
        CHECK(body["oldest_as_of"] == "2025-05-01");
        CHECK(body["newest_as_of"] == "2026-11-09");
        CHECK(body["version"].get<std::string>().size() == 16);
        CHECK(body["providers"].size() == 3);
        // Price ages count to today; the sample's 2025 and 2026 dates are all past.
        const json& ages = body["price_ages"];
        CHECK(ages["current_price_count"] == 4);
        CHECK(ages["estimated_date_count"] == 2);
        CHECK(ages["unverified_count"] == 2);
        CHECK(ages["older_than_180_days"].get<int>() >= 2);  // the two 2025 prices
        CHECK(ages["older_than_90_days"].get<int>() >= ages["older_than_180_days"].get<int>());
    }

    TEST_CASE("stale prices are counted per provider and each offering says its price state") {
        // Today is at least 2026-12-06 (the day this was written): the sample's 2025 prices
        // and Lambda's 2026-09-25 are past their provider's bound whatever day it is.
        TestServer server(SampleDeps());
        json ages = Body(server.Client().Get("/v1/catalog"))["price_ages"];
        CHECK(ages["stale_count"].get<int>() >= 3);
        REQUIRE(ages["stale_by_provider"].is_array());
        REQUIRE(ages["stale_by_provider"].size() == 3);
        json aws = ages["stale_by_provider"][0];
        CHECK(aws["provider"] == "aws");
        CHECK(aws["stale_after_days"] == 30);
        CHECK(aws["current_price_count"] == 2);
        CHECK(aws["oldest_age_days"].get<int>() >= 584);  // 2025-05-01 to 2026-12-06
        json lambda = Body(server.Client().Get("/v1/offerings/lambda-gpu_1x_h100-us-on-demand"));
        CHECK(lambda["price_state"] == "stale");
        CHECK(lambda["price_age_days"].get<int>() >= 72);  // 2026-09-25 to 2026-12-06
        json listed = Body(server.Client().Get("/v1/offerings"));
        REQUIRE(listed["items"].size() == 4);
        for (const json& item : listed["items"]) {
            CAPTURE(item["id"]);
            CHECK(item["price_age_days"].is_number_integer());
            const bool spot = item["id"] == "aws-p5.48xlarge-us-east-1-spot";
            if (spot || item["provider"] != "aws") CHECK(item["price_state"] == "stale");
        }
    }

    TEST_CASE("GET /v1/catalog reads the offerings once per snapshot, not once per request") {
        // Counts the snapshot's Offerings() calls: the price-age summary is a scan of every
        // price, which at 20,000 offerings was most of the answer's cost.
        class CountingCatalog final : public gpucost::pricing::Catalog {
        public:
            explicit CountingCatalog(std::shared_ptr<const gpucost::pricing::Catalog> inner)
                : inner_(std::move(inner)) {}
            const std::vector<gpucost::pricing::Accelerator>& Accelerators() const override {
                return inner_->Accelerators();
            }
            const gpucost::pricing::OfferingList& Offerings() const override {
                ++offering_reads;
                return inner_->Offerings();
            }
            gpucost::pricing::Result<gpucost::pricing::Accelerator> FindAccelerator(
                std::string_view id) const override {
                return inner_->FindAccelerator(id);
            }
            gpucost::pricing::Result<gpucost::pricing::Offering> FindOffering(
                std::string_view id) const override {
                return inner_->FindOffering(id);
            }
            gpucost::pricing::CatalogInfo Describe() const override { return inner_->Describe(); }
            std::vector<gpucost::pricing::ProviderSummary> Providers() const override {
                return inner_->Providers();
            }
            mutable std::atomic<int> offering_reads{0};

        private:
            std::shared_ptr<const gpucost::pricing::Catalog> inner_;
        };
        auto deps = SampleDeps();
        auto counting = std::make_shared<const CountingCatalog>(deps.catalog());
        deps.catalog = [counting] { return counting; };
        TestServer server(deps);
        const std::string first = server.Client().Get("/v1/catalog")->body;
        for (int i = 0; i < 3; ++i) {
            auto again = server.Client().Get("/v1/catalog");
            REQUIRE(again);
            CHECK(again->body == first);
        }
        CHECK(counting->offering_reads.load() == 1);
        // A new snapshot is summarised afresh.
        auto replaced = std::make_shared<const CountingCatalog>(SampleDeps().catalog());
        deps.catalog = [replaced] { return replaced; };
        TestServer second(deps);
        CHECK(Body(second.Client().Get("/v1/catalog"))["price_ages"]["current_price_count"] == 4);
        CHECK(replaced->offering_reads.load() == 1);
    }

    TEST_CASE("health, readiness and the OpenAPI document are served") {
        TestServer server(SampleDeps());
        auto client = server.Client();
        json health = Body(client.Get("/healthz"));
        CHECK(health["status"] == "ok");
        CHECK(health["catalog"]["offering_count"] == 4);
        json ready = Body(client.Get("/readyz"));
        CHECK(ready["ready"] == true);
        // Per provider, by id: how long since a source confirmed its oldest price.
        REQUIRE(ready["price_staleness"].size() == 3);
        CHECK(ready["price_staleness"][0]["provider"] == "aws");
        CHECK(ready["price_staleness"][0]["stale_after_days"] == 30);
        CHECK(ready["price_staleness"][0]["oldest_age_days"].get<int>() >= 584);
        auto spec = client.Get("/openapi.yaml");
        REQUIRE(spec);
        CHECK(spec->get_header_value("Content-Type") == "application/yaml");
        CHECK(spec->body == "openapi: 3.1.0\n");
    }

    TEST_CASE("readiness fails with 503 once shutdown has begun") {
        auto deps = SampleDeps();
        deps.shutting_down = [] { return true; };
        TestServer server(deps);
        auto r = server.Client().Get("/readyz");
        CheckProblem(r, 503, "shutting_down");
        CHECK(r->get_header_value("Retry-After") == "5");
    }

    TEST_CASE("ids compare case-insensitively in paths and filters") {
        TestServer server(SampleDeps());
        auto one = server.Client().Get("/v1/accelerators/TPU-V5E");
        REQUIRE(one);
        CHECK(one->status == 200);
        CHECK(Body(one)["id"] == "tpu-v5e");
        json lower = Body(server.Client().Get("/v1/offerings?provider=aws&accelerator=h100-sxm"));
        json upper = Body(server.Client().Get("/v1/offerings?provider=AWS&accelerator=H100-SXM"));
        CHECK(lower["total_count"].get<int>() > 0);
        CHECK(upper["items"] == lower["items"]);
        std::string id = lower["items"][0]["id"].get<std::string>();
        std::transform(id.begin(), id.end(), id.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        auto shouted = server.Client().Get(("/v1/offerings/" + id).c_str());
        REQUIRE(shouted);
        CHECK(shouted->status == 200);
    }

    TEST_CASE("a filter value that matches nothing is an empty list, an unknown provider too") {
        TestServer server(SampleDeps());
        for (const char* path : {"/v1/offerings?provider=nope", "/v1/offerings?accelerator=nope",
                                 "/v1/offerings?region=nope"}) {
            auto r = server.Client().Get(path);
            REQUIRE(r);
            CHECK_MESSAGE(r->status == 200, path);
            CHECK(Body(r)["total_count"] == 0);
        }
    }

    TEST_CASE("catalog reads carry a strong ETag and answer 304 to a matching If-None-Match") {
        TestServer server(SampleDeps());
        auto c = server.Client();
        for (const char* path :
             {"/v1/offerings?provider=aws&limit=5", "/v1/accelerators", "/v1/accelerators/h100-sxm",
              "/v1/providers", "/v1/catalog", "/v1/models"}) {
            INFO(path);
            auto first = c.Get(path);
            REQUIRE(first);
            REQUIRE(first->status == 200);
            const std::string etag = first->get_header_value("ETag");
            CHECK(etag.size() > 4);
            CHECK(etag.front() == '"');
            CHECK(first->get_header_value("Cache-Control") == "no-cache");
            CHECK(first->get_header_value("Vary") == "Accept, Accept-Encoding");
            auto again = c.Get(path, {{"If-None-Match", etag}});
            REQUIRE(again);
            CHECK(again->status == 304);
            CHECK(again->body.empty());
            CHECK(again->get_header_value("ETag") == etag);
            auto listed = c.Get(path, {{"If-None-Match", "\"other\", W/" + etag}});
            REQUIRE(listed);
            CHECK(listed->status == 304);
            auto stale = c.Get(path, {{"If-None-Match", "\"c0000000000000000\""}});
            REQUIRE(stale);
            CHECK(stale->status == 200);
            CHECK(stale->body == first->body);
        }
        // Another query or another representation is another validator.
        auto aws = c.Get("/v1/offerings?provider=aws&limit=5");
        auto gcp = c.Get("/v1/offerings?provider=gcp&limit=5");
        REQUIRE(aws);
        REQUIRE(gcp);
        CHECK(aws->get_header_value("ETag") != gcp->get_header_value("ETag"));
        // Errors are not cached.
        auto missing = c.Get("/v1/accelerators/nope");
        REQUIRE(missing);
        CHECK(missing->status == 404);
        CHECK_FALSE(missing->has_header("ETag"));
    }

    TEST_CASE("GET /v1/offerings/{id} names the catalog version it was read from") {
        TestServer server(SampleDeps());
        auto c = server.Client();
        const json catalog = Body(c.Get("/v1/catalog"));
        const json page = Body(c.Get("/v1/offerings?limit=1"));
        REQUIRE(page["items"].size() == 1);
        const std::string id = page["items"][0]["id"];
        CHECK(Body(c.Get(("/v1/offerings/" + id).c_str()))["catalog_version"] ==
              catalog["version"]);
    }
}
