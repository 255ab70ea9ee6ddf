#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "pricing/catalog_loader.hpp"
#include "service/ports/memory/memory_actuals_store.hpp"
#include "service/ports/memory/memory_catalog_store.hpp"
#include "service/ports/memory/memory_price_book_store.hpp"
#include "service/text/timestamp.hpp"
#include "tests/support/sample_catalog.hpp"

namespace gpucost::testing {

// The in-memory twins over the sample catalog (tests/support/sample_catalog.hpp): what the
// PostgreSQL tests seed, without a database.
struct MemoryStores {
    std::shared_ptr<ports::MemoryCatalogStore> catalog;
    std::shared_ptr<ports::MemoryPriceBookStore> books;
    std::shared_ptr<ports::MemoryActualsStore> actuals;

    MemoryStores() {
        auto sample = pricing::LoadCatalog(SampleCatalogCsv());
        REQUIRE(sample.ok());
        const std::vector<pricing::Offering> offerings(sample.value()->Offerings().begin(),
                                                       sample.value()->Offerings().end());
        const ports::TimestampUs now = text::NowUs();
        catalog = std::make_shared<ports::MemoryCatalogStore>(sample.value()->Accelerators(),
                                                              offerings, now);
        books = std::make_shared<ports::MemoryPriceBookStore>(now);
        actuals = std::make_shared<ports::MemoryActualsStore>(now);
    }

    ports::CatalogStore& Catalog() { return *catalog; }
    ports::PriceBookStore& Books() { return *books; }
    ports::ActualsStore& Actuals() { return *actuals; }

    // A key "key-<name>" of `scope` in `team` (made when new), as Authenticate answers it.
    ports::Principal Key(ports::KeyScope scope, const std::string& name, const std::string& team,
                         const std::string& default_price_book = "") {
        ports::Principal who;
        who.name = name;
        who.prefix = name;
        who.scope = scope;
        who.team = team;
        who.default_price_book = default_price_book;
        catalog->AddKey("key-" + name, who);
        books->AddTeam(team);
        actuals->AddTeam(team);
        if (!default_price_book.empty()) books->AddKeyDefault(who, default_price_book);
        return *catalog->Authenticate("key-" + name);
    }
};

}  // namespace gpucost::testing
