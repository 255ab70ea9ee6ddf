#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "service/storage/pg_store.hpp"
#include "service/storage/price_book_store.hpp"
#include "tests/service/storage/pg_test_db.hpp"
#include "tests/support/test_server.hpp"

namespace gpucost::testing {

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
        deps.require_read_key = require_read_key;
        deps.openapi_yaml = "openapi: 3.1.0\n";
        deps.service_version = "test";
        server = std::make_unique<TestServer>(deps);
    }

    httplib::Headers Auth(const std::string& key, httplib::Headers extra = {}) const {
        extra.emplace("Authorization", "Bearer " + key);
        return extra;
    }
};

}  // namespace gpucost::testing
