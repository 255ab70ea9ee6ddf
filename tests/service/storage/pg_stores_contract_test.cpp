#include <memory>
#include <string>

#include "service/storage/api_keys.hpp"
#include "service/storage/pg_actuals_store.hpp"
#include "service/storage/pg_price_book_store.hpp"
#include "service/storage/pg_store.hpp"
#include "tests/service/ports/store_contract.hpp"
#include "tests/service/storage/pg_test_db.hpp"

namespace gpucost::testing::contract {

// The PostgreSQL adapters over a seeded sample database (what MemoryStores holds in memory).
struct PgStores {
    TestDatabase db;
    std::shared_ptr<storage::PgStore> catalog;
    std::shared_ptr<storage::PgPriceBookStore> books;
    std::shared_ptr<storage::PgActualsStore> actuals;

    PgStores() {
        db.MigrateAndSeedSample();
        storage::PgStoreOptions options;
        options.database_url = db.url();
        auto opened = storage::PgStore::Open(options);
        REQUIRE(opened.ok());
        catalog = std::move(opened).value();
        books = std::make_shared<storage::PgPriceBookStore>(db.url());
        actuals = std::make_shared<storage::PgActualsStore>(db.url());
    }

    ports::CatalogStore& Catalog() { return *catalog; }
    ports::PriceBookStore& Books() { return *books; }
    ports::ActualsStore& Actuals() { return *actuals; }

    ports::Principal Key(ports::KeyScope scope, const std::string& name, const std::string& team) {
        auto conn = db.Connect();
        auto issued =
            storage::CreateApiKey(*conn, std::string(ports::KeyScopeName(scope)), name, "", team);
        REQUIRE(issued.ok());
        ports::Principal who;
        who.key_id = issued.value().id;
        who.name = name;
        who.prefix = issued.value().prefix;
        who.scope = scope;
        who.team = team;
        return who;
    }
};

// The store contract (tests/service/ports/store_contract.hpp) against PostgreSQL.
TEST_CASE_TEMPLATE_INVOKE(scenario_saved, PgStores);
TEST_CASE_TEMPLATE_INVOKE(scenario_idempotent, PgStores);
TEST_CASE_TEMPLATE_INVOKE(scenario_change, PgStores);
TEST_CASE_TEMPLATE_INVOKE(scenario_delete, PgStores);
TEST_CASE_TEMPLATE_INVOKE(scenario_find, PgStores);
TEST_CASE_TEMPLATE_INVOKE(catalog_put_price, PgStores);
TEST_CASE_TEMPLATE_INVOKE(catalog_retire, PgStores);
TEST_CASE_TEMPLATE_INVOKE(catalog_create, PgStores);
TEST_CASE_TEMPLATE_INVOKE(price_books, PgStores);
TEST_CASE_TEMPLATE_INVOKE(actuals, PgStores);

}  // namespace gpucost::testing::contract
