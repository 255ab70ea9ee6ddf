#include "tests/service/ports/memory_stores.hpp"
#include "tests/service/ports/store_contract.hpp"

namespace gpucost::testing::contract {

// The store contract against the in-memory twins: no database.
TEST_CASE_TEMPLATE_INVOKE(scenario_saved, MemoryStores);
TEST_CASE_TEMPLATE_INVOKE(scenario_idempotent, MemoryStores);
TEST_CASE_TEMPLATE_INVOKE(scenario_change, MemoryStores);
TEST_CASE_TEMPLATE_INVOKE(scenario_delete, MemoryStores);
TEST_CASE_TEMPLATE_INVOKE(scenario_find, MemoryStores);
TEST_CASE_TEMPLATE_INVOKE(catalog_put_price, MemoryStores);
TEST_CASE_TEMPLATE_INVOKE(catalog_retire, MemoryStores);
TEST_CASE_TEMPLATE_INVOKE(catalog_create, MemoryStores);
TEST_CASE_TEMPLATE_INVOKE(price_books, MemoryStores);
TEST_CASE_TEMPLATE_INVOKE(actuals, MemoryStores);

}  // namespace gpucost::testing::contract
