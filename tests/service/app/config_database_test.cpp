#include <doctest/doctest.h>

#include <map>

#include "service/app/config.hpp"

using gpucost::app::ParseConfig;

namespace {

gpucost::app::EnvLookup Env(std::map<std::string, std::string> values) {
    return [values](const std::string& name) -> std::optional<std::string> {
        auto it = values.find(name);
        return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
}

bool Names(const gpucost::pricing::Error& e, const std::string& field) {
    for (const auto& fe : e.errors) {
        if (fe.field == field) {
            return true;
        }
    }
    return false;
}

}  // namespace

TEST_SUITE("config_database") {
    TEST_CASE("DATABASE_URL and the database options are read from the environment and flags") {
        auto r = ParseConfig({"--snapshot-refresh-ms", "250", "--require-read-key=true"},
                             Env({{"DATABASE_URL", "postgresql://u@h/db"},
                                  {"GPUCOST_MAX_SNAPSHOT_AGE_S", "60"},
                                  {"GPUCOST_DB_POOL_SIZE", "8"}}));
        REQUIRE(r.ok());
        CHECK(r.value().database_url == "postgresql://u@h/db");
        CHECK(r.value().snapshot_refresh_ms == 250);
        CHECK(r.value().max_snapshot_age_s == 60);
        CHECK(r.value().db_pool_size == 8);
        CHECK(r.value().require_read_key);
        auto defaults = ParseConfig({}, Env({}));
        REQUIRE(defaults.ok());
        CHECK(defaults.value().database_url.empty());
        CHECK(defaults.value().snapshot_refresh_ms == 1000);
        CHECK(defaults.value().max_snapshot_age_s == 300);
        CHECK_FALSE(defaults.value().require_read_key);
    }

    TEST_CASE("migrate, seed and apikey parse their arguments and need a database") {
        auto migrate = ParseConfig({"migrate"}, Env({{"DATABASE_URL", "postgresql://u@h/db"}}));
        REQUIRE(migrate.ok());
        CHECK(migrate.value().command == "migrate");
        auto create = ParseConfig({"apikey", "create", "--scope", "admin", "--name", "ops"},
                                  Env({{"DATABASE_URL", "x"}}));
        REQUIRE(create.ok());
        CHECK(create.value().command_args == std::vector<std::string>{"create"});
        CHECK(create.value().key_scope == "admin");
        CHECK(create.value().key_name == "ops");
        auto revoke =
            ParseConfig({"apikey", "revoke", "3f9c1a2b4d5e", "--database-url", "x"}, Env({}));
        REQUIRE(revoke.ok());
        CHECK(revoke.value().command_args.size() == 2);

        auto no_db = ParseConfig({"seed"}, Env({}));
        REQUIRE_FALSE(no_db.ok());
        CHECK(Names(no_db.error(), "DATABASE_URL"));
        auto no_name = ParseConfig({"apikey", "create"}, Env({{"DATABASE_URL", "x"}}));
        REQUIRE_FALSE(no_name.ok());
        CHECK(Names(no_name.error(), "--name"));
        auto bad_scope = ParseConfig({"apikey", "create", "--scope", "root", "--name", "n"},
                                     Env({{"DATABASE_URL", "x"}}));
        REQUIRE_FALSE(bad_scope.ok());
        CHECK(Names(bad_scope.error(), "--scope"));
        auto bad_sub = ParseConfig({"apikey", "rotate"}, Env({{"DATABASE_URL", "x"}}));
        REQUIRE_FALSE(bad_sub.ok());
        CHECK(Names(bad_sub.error(), "apikey"));
    }

    TEST_CASE("apikey create takes a default price book; apikey price-book sets or clears one") {
        auto create = ParseConfig({"apikey", "create", "--name", "ml", "--price-book", "acme-2026"},
                                  Env({{"DATABASE_URL", "x"}}));
        REQUIRE(create.ok());
        CHECK(create.value().key_price_book == "acme-2026");
        auto set = ParseConfig({"apikey", "price-book", "3f9c1a2b4d5e", "none"},
                               Env({{"DATABASE_URL", "x"}}));
        REQUIRE(set.ok());
        CHECK(set.value().command_args ==
              std::vector<std::string>{"price-book", "3f9c1a2b4d5e", "none"});
        auto no_book =
            ParseConfig({"apikey", "price-book", "3f9c1a2b4d5e"}, Env({{"DATABASE_URL", "x"}}));
        REQUIRE_FALSE(no_book.ok());
        CHECK(Names(no_book.error(), "apikey"));
        auto misplaced = ParseConfig({"apikey", "list", "--price-book", "acme-2026"},
                                     Env({{"DATABASE_URL", "x"}}));
        REQUIRE_FALSE(misplaced.ok());
        CHECK(Names(misplaced.error(), "--price-book"));
    }

    TEST_CASE("out-of-range database options are reported by name") {
        auto r = ParseConfig({"--snapshot-refresh-ms", "10", "--max-snapshot-age-s", "0",
                              "--db-pool-size", "100", "--require-read-key", "maybe"},
                             Env({{"DATABASE_URL", "x"}}));
        REQUIRE_FALSE(r.ok());
        CHECK(Names(r.error(), "--snapshot-refresh-ms"));
        CHECK(Names(r.error(), "--max-snapshot-age-s"));
        CHECK(Names(r.error(), "--db-pool-size"));
        CHECK(Names(r.error(), "--require-read-key"));
        auto read_key_alone = ParseConfig({"--require-read-key", "true"}, Env({}));
        REQUIRE_FALSE(read_key_alone.ok());
        CHECK(Names(read_key_alone.error(), "DATABASE_URL"));
    }
}
