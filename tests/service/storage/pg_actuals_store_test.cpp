#include "service/storage/pg_actuals_store.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <pqxx/pqxx>
#include <string>

#include "tests/service/storage/pg_test_db.hpp"

using namespace gpucost;
using gpucost::testing::TestDatabase;

namespace {

// Charges in one batch of the store (pg_actuals_store.cpp kChargesPerBatch).
constexpr std::size_t kChargesPerBatch = 10000;

pricing::ActualCharge Charge(std::size_t n) {
    pricing::ActualCharge c;
    c.row_id = "row-" + std::to_string(n);
    c.provider = "aws";
    c.month = "2026-12";
    c.charge_period_start = "2026-12-01T00:00:00Z";
    c.billing_currency = "USD";
    c.sku = "p5.48xlarge";
    c.accelerator = "h100-sxm";
    c.region = "us-east-1";
    c.pricing_category = "Standard";
    c.accelerator_hours = 8;
    c.billed_cost = c.effective_cost = c.list_cost = 1;
    return c;
}

}  // namespace

TEST_SUITE("pg_actuals_store") {
    // The database busy with a batch does not hold up reading the export: the reader hands over
    // a full batch and goes on reading while the batch is stored. Here another transaction keeps
    // actual_charges locked until the reader has read past the first batch; were the batch
    // stored on the reader's own thread, the reader would wait on the lock until the
    // statement timeout (5 s) failed the import.
    TEST_CASE("an import reads on while its batches are stored") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        storage::PgActualsStore store(db.url());
        auto locker = db.Connect();
        pqxx::work lock(*locker);
        lock.exec("LOCK TABLE actual_charges IN SHARE MODE");  // INSERT waits for it
        bool read_past_first_batch = false;
        auto imported = store.Import(
            ports::WriteRequest{}, "gpucost-scenario",
            [&](const ports::ActualsStore::ChargeSink& sink)
                -> pricing::Result<ports::ActualsStore::ExportCounts> {
                for (std::size_t i = 0; i <= kChargesPerBatch; ++i) {
                    sink(Charge(i));
                }
                read_past_first_batch = true;
                lock.commit();  // the first batch may now be stored
                return ports::ActualsStore::ExportCounts{kChargesPerBatch + 1,
                                                         kChargesPerBatch + 1};
            },
            [](const ports::ActualsImport& i) {
                return ports::StoredResponse{201, std::to_string(i.added), "", false};
            });
        CHECK(read_past_first_batch);
        REQUIRE(imported.ok());
        CHECK(imported.value().body == std::to_string(kChargesPerBatch + 1));
    }
}
