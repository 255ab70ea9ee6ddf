#pragma once

#include <memory>
#include <string>

#include <doctest/doctest.h>

#include "service/http/router.hpp"
#include "tests/service/ports/memory_stores.hpp"
#include "tests/support/route_fixture.hpp"

namespace gpucost::testing {

// Keys made in the in-memory twins, as TestDatabase::CreateKey makes them in PostgreSQL.
struct MemoryKeys {
    MemoryStores* stores = nullptr;
    std::string CreateKey(const std::string& scope, const std::string& name = "test",
                          const std::string& team = "default",
                          const std::string& price_book = "") const {
        const ports::KeyScope s = scope == "admin" ? ports::KeyScope::kAdmin
                                  : scope == "org" ? ports::KeyScope::kOrg
                                                   : ports::KeyScope::kRead;
        return "key-" + stores->Key(s, name, team, price_book).name;
    }
};

// The API over the in-memory twins of every store (service/ports/memory/) and the sample
// catalog, with one key of each scope: the database mode's routes without a database, as
// tests/service/storage/pg_fixture.hpp serves them over PostgreSQL.
struct MemoryFixture : RouteFixture {
    MemoryStores stores;
    MemoryKeys db{&stores};
    std::string admin = db.CreateKey("admin", "ops");
    std::string reader = db.CreateKey("read", "dashboard");
    std::shared_ptr<ports::MemoryCatalogStore> store = stores.catalog;

    explicit MemoryFixture(bool require_read_key = false) {
        http::Deps deps;
        auto s = store;
        deps.catalog = [s] { return s->Current(); };
        deps.UseStore(store);
        deps.price_books = stores.books;
        deps.actuals = stores.actuals;
        deps.read_focus = FocusReader(deps.catalog);
        deps.require_read_key = require_read_key;
        deps.openapi_yaml = "openapi: 3.1.0\n";
        deps.service_version = "test";
        server = std::make_unique<TestServer>(deps);
    }
    // The server stops before the stores it calls go.
    ~MemoryFixture() { server.reset(); }
    MemoryFixture(const MemoryFixture&) = delete;
    MemoryFixture& operator=(const MemoryFixture&) = delete;
    MemoryFixture(MemoryFixture&&) = delete;
    MemoryFixture& operator=(MemoryFixture&&) = delete;

    // How many scenarios are saved, whoever may read them.
    std::int64_t ScenarioCount() const {
        ports::Principal org;
        org.scope = ports::KeyScope::kOrg;
        return store->FindScenarios({"", "", "", org}, 1, 0).value().total_count;
    }
};

}  // namespace gpucost::testing
