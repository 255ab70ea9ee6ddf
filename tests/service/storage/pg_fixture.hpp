#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "service/import/focus_actuals.hpp"
#include "service/storage/actuals_store.hpp"
#include "service/storage/pg_store.hpp"
#include "service/storage/price_book_store.hpp"
#include "tests/service/storage/pg_test_db.hpp"
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

// A seeded database, a PgStore over it and the API in front, with one key of each scope.
struct Fixture {
    TestDatabase db;
    std::string admin;
    std::string reader;
    std::shared_ptr<storage::PgStore> store;
    std::unique_ptr<TestServer> server;

    explicit Fixture(bool require_read_key = false) {
        db.MigrateAndSeedSample();
        admin = db.CreateKey("admin", "ops");
        reader = db.CreateKey("read", "dashboard");
        storage::PgStoreOptions options;
        options.database_url = db.url();
        auto opened = storage::PgStore::Open(options);
        REQUIRE(opened.ok());
        store = std::move(opened).value();
        http::Deps deps;
        auto s = store;
        deps.catalog = [s] { return s->Current(); };
        deps.store = store;
        deps.price_books = std::make_shared<storage::PgPriceBookStore>(db.url());
        deps.actuals = std::make_shared<storage::PgActualsStore>(db.url());
        deps.read_focus = FocusReader(deps.catalog);
        deps.require_read_key = require_read_key;
        deps.openapi_yaml = "openapi: 3.1.0\n";
        deps.service_version = "test";
        server = std::make_unique<TestServer>(deps);
    }

    // POST /v1/actuals' reader as service/main.cpp wires it: the served catalog, the embedded
    // mapping tables, the request's tag key.
    static http::FocusTextReader FocusReader(
        std::function<std::shared_ptr<const pricing::Catalog>()> catalog) {
        auto mappings = import::LoadEmbeddedMappings();
        REQUIRE(mappings.ok());
        auto shared = std::make_shared<const import::Mappings>(std::move(mappings).value());
        return [catalog, shared](std::string_view csv, const std::string& tag_key,
                                 pricing::ActualsReport& report,
                                 const std::function<void(const pricing::ActualCharge&)>& on) {
            import::FocusReadOptions options;
            options.tag_key = tag_key;
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
