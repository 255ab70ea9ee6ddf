#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "service/http/router.hpp"
#include "service/import/focus_actuals.hpp"
#include "service/import/mappings.hpp"
#include "tests/support/test_server.hpp"

namespace gpucost::testing {

// A training plan pinned to AWS H100 on demand (p5.48xlarge, 8 per instance) starting on
// 2026-01-01, short enough to end in January; progress is recorded for training scenarios.
inline const nlohmann::json kTrainingScenario = {
    {"name", "7b pretraining"},
    {"plan", "training"},
    {"request",
     {{"model", {{"params_b", 7}}},
      {"tokens_b", 10},
      {"start_date", "2026-01-01"},
      {"constraints",
       {{"accelerators", {"h100-sxm"}}, {"providers", {"aws"}}, {"price_types", {"on_demand"}}}}}}};

// What the route tests share, whichever stores are behind the server: the in-memory twins
// (tests/service/http/routes/memory_fixture.hpp) or PostgreSQL (tests/service/storage/
// pg_fixture.hpp).
struct RouteFixture {
    std::unique_ptr<TestServer> server;

    // POST /v1/actuals' reader as service/main.cpp wires it: the served catalog, the embedded
    // mapping tables, the request's tag key.
    static http::FocusTextReader FocusReader(
        std::function<std::shared_ptr<const pricing::Catalog>()> catalog) {
        auto mappings = import::LoadEmbeddedMappings();
        REQUIRE(mappings.ok());
        auto shared = std::make_shared<const import::Mappings>(std::move(mappings).value());
        return [catalog, shared](std::string_view csv, const ports::FocusTagKeys& keys,
                                 pricing::ActualsReport& report,
                                 const std::function<void(const pricing::ActualCharge&)>& on) {
            import::FocusReadOptions options;
            options.tag_key = keys.tag_key;
            options.group_by = keys.group_by;
            return import::ReadFocusText(csv, options, *catalog(), *shared, report, on);
        };
    }

    httplib::Headers Auth(const std::string& key, httplib::Headers extra = {}) const {
        extra.emplace("Authorization", "Bearer " + key);
        return extra;
    }

    // POST /v1/scenarios of `body` with `key`: the saved scenario, which must be created (201).
    nlohmann::json SaveScenario(const nlohmann::json& body, const std::string& key) const {
        auto saved =
            server->Client().Post("/v1/scenarios", Auth(key), body.dump(), "application/json");
        REQUIRE(saved);
        REQUIRE(saved->status == 201);
        return nlohmann::json::parse(saved->body);
    }
};

}  // namespace gpucost::testing
