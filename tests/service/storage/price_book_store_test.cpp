#include <doctest/doctest.h>

#include <string>

#include "service/storage/pg_price_book_store.hpp"
#include "tests/service/storage/pg_test_db.hpp"

using namespace gpucost;
using gpucost::testing::TestDatabase;

namespace {

constexpr char kRulesV1[] = R"([{"provider": "aws", "discount_fraction": 0.18}])";
constexpr char kRulesV2[] = R"([{"provider": "aws", "discount_fraction": 0.25}])";

ports::StoredPriceBook Draft(const std::string& id, const std::string& name,
                             const std::string& rules) {
    ports::StoredPriceBook b;
    b.id = id;
    b.name = name;
    b.rules_json = rules;
    return b;
}

// An answer encoder that keeps the version written in `into` (the HTTP handlers encode it).
ports::PriceBookStore::BookEncoder Keep(ports::StoredPriceBook& into) {
    return [&into](const ports::StoredPriceBook& b) {
        into = b;
        return ports::StoredResponse{};
    };
}

// An answer encoder for a write whose version the test does not look at.
ports::StoredResponse Ignore(const ports::StoredPriceBook&) {
    return {};
}

// A write by the admin key named "ops".
ports::WriteRequest ByOps(const TestDatabase& db) {
    ports::WriteRequest w;
    w.principal.key_id = std::stoll(db.Scalar("SELECT id FROM api_keys WHERE name = 'ops'"));
    w.principal.name = "ops";
    w.principal.scope = ports::KeyScope::kAdmin;
    return w;
}

}  // namespace

TEST_SUITE("price_book_store") {
    TEST_CASE("every version is kept: PUT adds one, GET reads the latest or any") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        db.CreateKey("admin", "ops");
        storage::PgPriceBookStore store(db.url());
        ports::StoredPriceBook created;
        REQUIRE(
            store.Create(ByOps(db), Draft("acme-2026", "acme EDP", kRulesV1), Keep(created)).ok());
        CHECK(created.version == 1);
        CHECK(created.latest_version == 1);
        CHECK(created.written_by == "ops");
        ports::StoredPriceBook replaced;
        REQUIRE(store
                    .Replace(ByOps(db), "acme-2026", Draft("", "acme EDP 2027", kRulesV2),
                             Keep(replaced))
                    .ok());
        CHECK(replaced.version == 2);
        CHECK(replaced.name == "acme EDP 2027");

        auto latest = store.Get("acme-2026", std::nullopt);
        REQUIRE(latest.ok());
        CHECK(latest.value().version == 2);
        CHECK(latest.value().rules_json.find("0.25") != std::string::npos);
        auto first = store.Get("acme-2026", 1);
        REQUIRE(first.ok());
        CHECK(first.value().name == "acme EDP");
        CHECK(first.value().latest_version == 2);
        CHECK(first.value().rules_json.find("0.18") != std::string::npos);
        CHECK(first.value().created_at_us == latest.value().created_at_us);

        auto missing = store.Get("acme-2026", 3);
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().code == pricing::ErrorCode::kNotFound);
        CHECK(missing.error().field == "version");
        CHECK(db.Scalar("SELECT count(*) FROM price_book_versions") == "2");
    }

    TEST_CASE("ids are unique, also after a delete; a deleted book is gone but its rows stay") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        db.CreateKey("admin", "ops");
        storage::PgPriceBookStore store(db.url());
        REQUIRE(store.Create(ByOps(db), Draft("b", "B", kRulesV1), &Ignore).ok());
        REQUIRE(store.Create(ByOps(db), Draft("a", "A", kRulesV1), &Ignore).ok());
        auto again = store.Create(ByOps(db), Draft("b", "B again", kRulesV1), &Ignore);
        REQUIRE_FALSE(again.ok());
        CHECK(again.error().code == pricing::ErrorCode::kFailedPrecondition);
        CHECK(again.error().field == "/id");

        auto listed = store.List();
        REQUIRE(listed.ok());
        REQUIRE(listed.value().size() == 2);
        CHECK(listed.value()[0].id == "a");

        REQUIRE(store.Delete(ByOps(db), "b").ok());
        auto gone = store.Get("b", std::nullopt);
        REQUIRE_FALSE(gone.ok());
        CHECK(gone.error().code == pricing::ErrorCode::kNotFound);
        CHECK(gone.error().field == "id");
        CHECK(store.List().value().size() == 1);
        CHECK_FALSE(store.Create(ByOps(db), Draft("b", "B reborn", kRulesV1), &Ignore).ok());
        CHECK_FALSE(store.Replace(ByOps(db), "b", Draft("", "B", kRulesV2), &Ignore).ok());
        CHECK(db.Scalar("SELECT count(*) FROM price_book_versions WHERE book_id = 'b'") == "1");
    }

    TEST_CASE("If-Match guards a change against a version written since it was read") {
        TestDatabase db;
        db.MigrateAndSeedSample();
        db.CreateKey("admin", "ops");
        storage::PgPriceBookStore store(db.url());
        REQUIRE(store.Create(ByOps(db), Draft("acme", "acme", kRulesV1), &Ignore).ok());
        ports::WriteRequest stale = ByOps(db);
        stale.if_match = ports::PriceBookEtag(1);
        REQUIRE(store.Replace(stale, "acme", Draft("", "acme", kRulesV2), &Ignore).ok());
        auto lost = store.Replace(stale, "acme", Draft("", "acme", kRulesV1), &Ignore);
        REQUIRE_FALSE(lost.ok());
        CHECK(lost.error().field == ports::kIfMatchField);
        auto not_deleted = store.Delete(stale, "acme");
        REQUIRE_FALSE(not_deleted.ok());
        CHECK(not_deleted.error().field == ports::kIfMatchField);
        ports::WriteRequest current = ByOps(db);
        current.if_match = ports::PriceBookEtag(2);
        CHECK(store.Delete(current, "acme").ok());
    }

    TEST_CASE("an unreachable database is kUnavailable, not a crash") {
        storage::PgPriceBookStore store("postgresql://gpucost@127.0.0.1:1/none");
        auto got = store.Get("acme", std::nullopt);
        REQUIRE_FALSE(got.ok());
        CHECK(got.error().code == pricing::ErrorCode::kUnavailable);
    }
}
