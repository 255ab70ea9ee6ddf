#include "service/app/config.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>

using gpucost::app::ParseConfig;

namespace {

gpucost::app::EnvLookup Env(std::map<std::string, std::string> values) {
    return [values](const std::string& name) -> std::optional<std::string> {
        auto it = values.find(name);
        return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
}

}  // namespace

TEST_SUITE("config") {
    TEST_CASE("defaults serve the embedded catalog on 127.0.0.1:8080") {
        auto r = ParseConfig({}, Env({}));
        REQUIRE(r.ok());
        CHECK(r.value().command == "serve");
        CHECK(r.value().bind == "127.0.0.1");
        CHECK(r.value().port == 8080);
        CHECK(r.value().threads == 0);  // chosen at start for the transport
        CHECK(r.value().catalog_dir.empty());
        CHECK(r.value().max_body_bytes == 65536);
        CHECK(r.value().max_actuals_body_bytes == 8388608);
    }

    TEST_CASE("POST /v1/actuals' body limit is a setting of its own, 64 KiB to 256 MiB") {
        auto r = ParseConfig({"--max-actuals-body-bytes", "33554432"}, Env({}));
        REQUIRE(r.ok());
        CHECK(r.value().max_actuals_body_bytes == 33554432);
        auto env = ParseConfig({}, Env({{"GPUCOST_MAX_ACTUALS_BODY_BYTES", "65536"}}));
        REQUIRE(env.ok());
        CHECK(env.value().max_actuals_body_bytes == 65536);
        for (const char* bad : {"65535", "268435457", "8M", ""}) {
            INFO(bad);
            auto refused = ParseConfig({"--max-actuals-body-bytes", bad}, Env({}));
            REQUIRE_FALSE(refused.ok());
            CHECK(refused.error().errors.front().field == "--max-actuals-body-bytes");
        }
    }

    TEST_CASE("the bodies held across connections have a budget of their own, 128 MiB by default") {
        auto defaults = ParseConfig({}, Env({}));
        REQUIRE(defaults.ok());
        CHECK(defaults.value().max_buffered_body_bytes == 134217728);
        auto r = ParseConfig({"--max-buffered-body-bytes", "16777216"}, Env({}));
        REQUIRE(r.ok());
        CHECK(r.value().max_buffered_body_bytes == 16777216);
        auto env = ParseConfig({}, Env({{"GPUCOST_MAX_BUFFERED_BODY_BYTES", "1073741824"}}));
        REQUIRE(env.ok());
        CHECK(env.value().max_buffered_body_bytes == 1073741824);
        for (const char* bad : {"1048575", "68719476737", "1G", ""}) {
            INFO(bad);
            auto refused = ParseConfig({"--max-buffered-body-bytes", bad}, Env({}));
            REQUIRE_FALSE(refused.ok());
            CHECK(refused.error().errors.front().field == "--max-buffered-body-bytes");
        }
        // A budget smaller than one body within its limit could never let that body in.
        auto smaller = ParseConfig(
            {"--max-buffered-body-bytes", "4194304", "--max-actuals-body-bytes", "8388608"},
            Env({}));
        REQUIRE_FALSE(smaller.ok());
        CHECK(smaller.error().errors.front().field == "--max-buffered-body-bytes");
    }

    TEST_CASE("default workers: two per CPU, at least 16 with a database, 16 for TLS") {
        using gpucost::app::DefaultThreads;
        gpucost::app::ServiceConfig plain;
        CHECK(DefaultThreads(plain, 2) == 4);
        CHECK(DefaultThreads(plain, 16) == 32);
        CHECK(DefaultThreads(plain, 0) == 2);  // the CPU count unknown
        gpucost::app::ServiceConfig database;
        database.database_url = "postgresql://db/gpucost";
        CHECK(DefaultThreads(database, 2) == 16);
        CHECK(DefaultThreads(database, 16) == 32);
        gpucost::app::ServiceConfig tls;
        tls.tls_cert = "cert.pem";
        CHECK(DefaultThreads(tls, 2) == 16);
        CHECK(DefaultThreads(tls, 64) == 16);
    }

    TEST_CASE("a flag beats the environment, which beats the default") {
        auto r = ParseConfig({"--port", "9000"},
                             Env({{"GPUCOST_PORT", "7000"}, {"GPUCOST_BIND", "0.0.0.0"}}));
        REQUIRE(r.ok());
        CHECK(r.value().port == 9000);
        CHECK(r.value().bind == "0.0.0.0");
        auto eq = ParseConfig({"--threads=4", "--log-level=debug"}, Env({}));
        REQUIRE(eq.ok());
        CHECK(eq.value().threads == 4);
        CHECK(eq.value().log_level == gpucost::log::Level::kDebug);
    }

    TEST_CASE("subcommands and --help are recognised") {
        CHECK(ParseConfig({"check-catalog"}, Env({})).value().command == "check-catalog");
        CHECK(ParseConfig({"--help"}, Env({})).value().command == "help");
        CHECK(ParseConfig({"version"}, Env({})).value().command == "version");
        CHECK_FALSE(ParseConfig({"launch"}, Env({})).ok());
    }

    TEST_CASE("import takes a format, files and --out (or a database)") {
        auto r = ParseConfig({"import", "aws-price-list", "a.json", "b.json", "--out", "cat",
                              "--as-of", "2026-11-20", "--region", "us-east-1,us-east-2"},
                             Env({}));
        REQUIRE(r.ok());
        CHECK(r.value().command == "import");
        CHECK(r.value().command_args ==
              std::vector<std::string>{"aws-price-list", "a.json", "b.json"});
        CHECK(r.value().import_out == "cat");
        CHECK(r.value().import_as_of == "2026-11-20");
        CHECK(r.value().import_regions == "us-east-1,us-east-2");
        auto no_out = ParseConfig({"import", "aws-price-list", "a.json"}, Env({}));
        REQUIRE_FALSE(no_out.ok());
        CHECK(no_out.error().field == "--out");
        CHECK(ParseConfig({"import", "aws-price-list", "a.json"},
                          Env({{"DATABASE_URL", "postgresql://x@h/db"}}))
                  .ok());
        CHECK_FALSE(ParseConfig({"import", "aws-price-list", "--out", "cat"}, Env({})).ok());
    }

    TEST_CASE("sync takes providers and needs --out") {
        auto r =
            ParseConfig({"sync", "aws", "azure", "--region", "us-east-1", "--out", "cat"}, Env({}));
        REQUIRE(r.ok());
        CHECK(r.value().command_args == std::vector<std::string>{"aws", "azure"});
        CHECK_FALSE(ParseConfig({"sync", "aws", "--region", "us-east-1"}, Env({})).ok());
        CHECK_FALSE(ParseConfig({"sync", "--out", "cat"}, Env({})).ok());
    }

    TEST_CASE("sync --history N reads the recorded runs: no provider, --out or DATABASE_URL") {
        auto r = ParseConfig({"sync", "--history", "20", "--out", "cat"}, Env({}));
        REQUIRE(r.ok());
        CHECK(r.value().sync_history == 20);
        CHECK(
            ParseConfig({"sync", "--history", "5"}, Env({{"DATABASE_URL", "postgresql://x@h/db"}}))
                .ok());
        CHECK_FALSE(ParseConfig({"sync", "--history", "5"}, Env({})).ok());
        CHECK_FALSE(ParseConfig({"sync", "--history", "0", "--out", "cat"}, Env({})).ok());
    }

    TEST_CASE("every invalid value is reported at once, naming flag or variable") {
        auto r = ParseConfig({"--port", "99999", "--bogus", "--threads", "0"},
                             Env({{"GPUCOST_LOG_LEVEL", "loud"}}));
        REQUIRE_FALSE(r.ok());
        std::set<std::string> where;
        for (const auto& e : r.error().errors) {
            where.insert(e.field);
        }
        CHECK(where ==
              std::set<std::string>{"--port", "--bogus", "--threads", "GPUCOST_LOG_LEVEL"});
        CHECK(r.error().message.find("GPUCOST_LOG_LEVEL: must be debug") != std::string::npos);
    }

    TEST_CASE("CORS origins come from --cors-origins or GPUCOST_CORS_ORIGINS; none by default") {
        auto none = ParseConfig({}, Env({}));
        REQUIRE(none.ok());
        CHECK(none.value().cors_origins.empty());
        auto env = ParseConfig(
            {}, Env({{"GPUCOST_CORS_ORIGINS", "https://a.example, http://localhost:3000"}}));
        REQUIRE(env.ok());
        CHECK(env.value().cors_origins ==
              std::vector<std::string>{"https://a.example", "http://localhost:3000"});
        auto any = ParseConfig({"--cors-origins", "*"}, Env({}));
        REQUIRE(any.ok());
        CHECK(any.value().cors_origins == std::vector<std::string>{"*"});
        for (const char* bad : {"a.example", "https://a.example/app", "ftp://a.example"}) {
            CAPTURE(bad);
            auto r = ParseConfig({"--cors-origins", bad}, Env({}));
            REQUIRE_FALSE(r.ok());
            CHECK(r.error().errors.front().field == "--cors-origins");
        }
    }

    TEST_CASE("a flag without its value is an error") {
        auto r = ParseConfig({"--port"}, Env({}));
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().errors.front().field == "--port");
    }

    TEST_CASE("the help text lists every option with its variable") {
        std::string help = gpucost::app::HelpText();
        for (const char* name : {"--bind", "GPUCOST_BIND", "--port", "GPUCOST_PORT", "--threads",
                                 "--catalog-dir", "GPUCOST_CATALOG_DIR", "--log-level",
                                 "--max-body-bytes", "--listen-backlog", "--access-log"}) {
            CHECK(help.find(name) != std::string::npos);
        }
    }
}
