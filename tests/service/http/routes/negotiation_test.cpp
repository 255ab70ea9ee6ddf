#include <doctest/doctest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "service/http/routes/negotiation.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::http::AcceptAdmits;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

// A path for a route template: ids the sample catalog has, "1" elsewhere.
std::string PathOf(std::string path) {
    std::string id = "1";
    if (path.rfind("/v1/accelerators/", 0) == 0) id = "h100-sxm";
    if (path.rfind("/v1/offerings/", 0) == 0) id = "aws-p5.48xlarge-us-east-1-on-demand";
    if (path.rfind("/v1/models/", 0) == 0) id = "deepseek-v3";
    for (auto at = path.find("{id}"); at != std::string::npos; at = path.find("{id}")) {
        path.replace(at, 4, id);
    }
    return path;
}

// Bodies that plan or estimate (200) on the sample catalog; other POSTs get {} (an error).
const std::map<std::string, std::string>& Bodies() {
    static const std::map<std::string, std::string> bodies = {
        {"/v1/plans/spot",
         R"({"job_hours": 100, "on_demand_usd_per_hour": 98.32, "spot_usd_per_hour": 30,
             "interruptions_per_hour": 0.1, "checkpoint_minutes": 3, "restart_minutes": 6})"},
        {"/v1/plans/rent-vs-buy",
         R"({"buy": {"capex_usd": 800000, "opex_usd_per_month": 5000, "total_accelerators": 80},
             "rent": {"usd_per_accelerator_hour": 2, "accelerator_hours_per_month": 10000}})"},
        {"/v1/estimates/training",
         R"({"model": {"params_b": 7}, "tokens_b": 100, "precision": "bf16",
             "hardware": {"accelerator": "h100-sxm", "total_accelerators": 64}})"}};
    return bodies;
}

httplib::Result Send(const TestServer& server, const std::string& method, const std::string& path,
                     const std::string& accept) {
    httplib::Headers headers;
    if (!accept.empty()) headers.emplace("Accept", accept);
    auto c = server.Client();
    const auto body = Bodies().find(path);
    const std::string json_body = body == Bodies().end() ? "{}" : body->second;
    if (method == "GET") return c.Get(path.c_str(), headers);
    if (method == "POST") return c.Post(path.c_str(), headers, json_body, "application/json");
    if (method == "PUT") return c.Put(path.c_str(), headers, json_body, "application/json");
    if (method == "PATCH") return c.Patch(path.c_str(), headers, json_body, "application/json");
    return c.Delete(path.c_str(), headers);
}

}  // namespace

TEST_SUITE("negotiation") {
    TEST_CASE("Accept is read by its most specific range, q=0 refusing") {
        CHECK(AcceptAdmits("application/json", "application/json"));
        CHECK(AcceptAdmits("*/*", "text/csv"));
        CHECK(AcceptAdmits("application/*", "application/json; charset=utf-8"));
        CHECK(AcceptAdmits("text/csv; profile=\"focus\"", "text/csv"));
        CHECK(AcceptAdmits("Application/JSON;q=0.5", "application/json"));
        CHECK(AcceptAdmits("", "application/json"));  // says nothing
        CHECK_FALSE(AcceptAdmits("application/xml", "application/json"));
        CHECK_FALSE(AcceptAdmits("text/*", "application/json"));
        CHECK_FALSE(AcceptAdmits("application/json;q=0, */*", "application/json"));
        CHECK(AcceptAdmits("application/json;q=0, */*", "text/csv"));
        CHECK_FALSE(AcceptAdmits("text/csv;q=0", "text/csv"));
    }

    // Every route of the table, as registered: an answer it would give (2xx) in a type Accept
    // does not admit is 406 naming Accept; an error stays an error, never a 2xx.
    TEST_CASE("on every route an Accept it cannot serve is 406 naming Accept") {
        gpucost::http::Deps deps = SampleDeps();
        TestServer server(deps);
        int refused = 0;
        for (const auto& [method, template_path] :
             gpucost::http::BuildRouteTable(deps).Describe()) {
            const std::string path = PathOf(template_path);
            INFO(method << " " << path);
            auto plain = Send(server, method, path, "");
            auto xml = Send(server, method, path, "application/xml");
            REQUIRE(plain);
            REQUIRE(xml);
            CHECK_FALSE((xml->status >= 200 && xml->status < 300));
            if (plain->status >= 200 && plain->status < 300) {
                CHECK(xml->status == 406);
                CHECK(xml->get_header_value("Content-Type") == "application/problem+json");
                const json problem = json::parse(xml->body);
                CHECK(problem["code"] == "not_acceptable");
                CHECK(problem["field"] == "Accept");
                CHECK_FALSE(xml->has_header("ETag"));
                ++refused;
            }
        }
        CHECK(refused >= 15);  // the reads, the entry points, the probes and the plans above
    }

    TEST_CASE("a route answers the types it has: CSV where it has rows, 406 where it has none") {
        TestServer server(SampleDeps());
        auto c = server.Client();
        auto csv = c.Get("/v1/offerings?limit=2", {{"Accept", "text/csv"}});
        REQUIRE(csv);
        CHECK(csv->status == 200);
        CHECK(csv->get_header_value("Content-Type").rfind("text/csv", 0) == 0);
        for (const char* path : {"/v1/catalog", "/v1/accelerators", "/v1/models", "/healthz"}) {
            INFO(path);
            auto refused = c.Get(path, {{"Accept", "text/csv"}});
            REQUIRE(refused);
            CHECK(refused->status == 406);
            auto wildcard = c.Get(path, {{"Accept", "text/csv, application/*;q=0.1"}});
            REQUIRE(wildcard);
            CHECK(wildcard->status == 200);
        }
        // A spot plan (one object, no rows) refuses CSV as it refuses XML: the same problem.
        auto spot = c.Post("/v1/plans/spot", {{"Accept", "text/csv"}},
                           Bodies().at("/v1/plans/spot"), "application/json");
        REQUIRE(spot);
        CHECK(spot->status == 406);
        CHECK(json::parse(spot->body)["field"] == "Accept");
    }
}
