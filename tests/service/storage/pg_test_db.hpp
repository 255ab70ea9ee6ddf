#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include <pqxx/pqxx>

#include "pricing/catalog_loader.hpp"
#include "service/storage/api_keys.hpp"
#include "service/storage/migrations.hpp"
#include "service/storage/pg_connection.hpp"
#include "service/storage/seed.hpp"
#include "tests/support/sample_catalog.hpp"

namespace gpucost::testing {

// A fresh, empty database on the PostgreSQL that tests/pg/with_pg.sh started (DATABASE_URL
// names its "postgres" database), dropped on destruction.
class TestDatabase {
public:
    TestDatabase() {
        const char* admin = std::getenv("DATABASE_URL");  // NOLINT(concurrency-mt-unsafe)
        if (admin == nullptr || std::string(admin).find("/postgres") == std::string::npos) {
            throw std::runtime_error(
                "DATABASE_URL is not set: run these tests through tests/pg/with_pg.sh (ctest "
                "does)");
        }
        admin_url_ = admin;
        static std::atomic<int> counter{0};
        name_ = "gpucost_t" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
        url_ = admin_url_;
        url_.replace(url_.rfind("/postgres"), 9, "/" + name_);
        pqxx::connection conn(admin_url_);
        pqxx::nontransaction tx(conn);
        tx.exec("CREATE DATABASE " + tx.quote_name(name_));
    }
    ~TestDatabase() {
        try {
            pqxx::connection conn(admin_url_);
            pqxx::nontransaction tx(conn);
            tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(name_) + " WITH (FORCE)");
        } catch (...) {
        }
    }
    TestDatabase(const TestDatabase&) = delete;
    TestDatabase& operator=(const TestDatabase&) = delete;
    TestDatabase(TestDatabase&&) = delete;
    TestDatabase& operator=(TestDatabase&&) = delete;

    const std::string& url() const { return url_; }
    std::unique_ptr<pqxx::connection> Connect() const { return storage::Connect(url_); }

    // Migrated and seeded with tests/support/sample_catalog.hpp.
    void MigrateAndSeedSample() const {
        auto conn = Connect();
        auto migrated = storage::Migrate(*conn);
        if (!migrated.ok()) {
            throw std::runtime_error(migrated.error().message);
        }
        auto sample = pricing::LoadCatalog(SampleCatalogCsv());
        if (!sample.ok()) {
            throw std::runtime_error(sample.error().message);
        }
        storage::Seed(*conn, *sample.value());
    }

    std::string CreateKey(const std::string& scope, const std::string& name = "test",
                          const std::string& team = "default",
                          const std::string& price_book = "") const {
        auto conn = Connect();
        auto issued = storage::CreateApiKey(*conn, scope, name, price_book, team);
        if (!issued.ok()) {
            throw std::runtime_error(issued.error().message);
        }
        return issued.value().key;
    }

    // First column of the first row of a query, as text.
    std::string Scalar(const std::string& sql) const {
        auto conn = Connect();
        pqxx::nontransaction tx(*conn);
        auto r = tx.exec(sql);
        return r[0][0].is_null() ? "NULL" : r[0][0].as<std::string>();
    }

private:
    std::string admin_url_;
    std::string name_;
    std::string url_;
};

}  // namespace gpucost::testing
