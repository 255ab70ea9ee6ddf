#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "service/storage/pg_actuals_store.hpp"
#include "service/storage/pg_price_book_store.hpp"
#include "service/storage/pg_store.hpp"
#include "tests/service/storage/pg_test_db.hpp"
#include "tests/support/route_fixture.hpp"

namespace gpucost::testing {

// A seeded database, a PgStore over it and the API in front, with one key of each scope.
struct Fixture : RouteFixture {
    TestDatabase db;
    std::string admin;
    std::string reader;
    std::shared_ptr<storage::PgStore> store;

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
        deps.UseStore(store);
        deps.price_books = std::make_shared<storage::PgPriceBookStore>(db.url());
        deps.actuals = std::make_shared<storage::PgActualsStore>(db.url());
        deps.read_focus = FocusReader(deps.catalog);
        deps.require_read_key = require_read_key;
        deps.openapi_yaml = "openapi: 3.1.0\n";
        deps.service_version = "test";
        server = std::make_unique<TestServer>(deps);
    }
    // The server stops before the stores it calls go.
    ~Fixture() { server.reset(); }
    Fixture(const Fixture&) = delete;
    Fixture& operator=(const Fixture&) = delete;
    Fixture(Fixture&&) = delete;
    Fixture& operator=(Fixture&&) = delete;
};

}  // namespace gpucost::testing
