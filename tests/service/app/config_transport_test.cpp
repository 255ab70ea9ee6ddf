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

}  // namespace

TEST_SUITE("config transport") {
    TEST_CASE("transport defaults: 900 connections, 10 s requests, 5 s keep-alive, no rate limit") {
        auto r = ParseConfig({}, Env({}));
        REQUIRE(r.ok());
        CHECK(r.value().max_connections == 900);
        CHECK(r.value().max_connections_per_address == 64);
        CHECK(r.value().request_timeout_s == 10);
        CHECK(r.value().keep_alive_timeout_s == 5);
        CHECK(r.value().shutdown_grace_s == 10);
        CHECK(r.value().rate_limit_rps == 0);
        CHECK(r.value().tls_cert.empty());
    }

    TEST_CASE("transport flags and their environment variables are read") {
        auto r = ParseConfig({"--rate-limit-rps", "50", "--max-connections=100", "--tls-cert",
                              "c.pem", "--tls-key", "k.pem"},
                             Env({{"GPUCOST_RATE_LIMIT_BURST", "80"},
                                  {"GPUCOST_REQUEST_TIMEOUT_S", "3"},
                                  {"GPUCOST_KEEP_ALIVE_TIMEOUT_S", "2"},
                                  {"GPUCOST_SHUTDOWN_GRACE_S", "0"}}));
        REQUIRE(r.ok());
        CHECK(r.value().rate_limit_rps == 50);
        CHECK(r.value().rate_limit_burst == 80);
        CHECK(r.value().max_connections == 100);
        CHECK(r.value().request_timeout_s == 3);
        CHECK(r.value().keep_alive_timeout_s == 2);
        CHECK(r.value().shutdown_grace_s == 0);
        CHECK(r.value().tls_cert == "c.pem");
        CHECK(r.value().tls_key == "k.pem");
    }

    TEST_CASE("the per-address connection share is read from its flag or variable, 1-1000") {
        auto flag = ParseConfig({"--max-connections-per-address", "900"}, Env({}));
        REQUIRE(flag.ok());
        CHECK(flag.value().max_connections_per_address == 900);
        auto env = ParseConfig({}, Env({{"GPUCOST_MAX_CONNECTIONS_PER_ADDRESS", "8"}}));
        REQUIRE(env.ok());
        CHECK(env.value().max_connections_per_address == 8);
        for (const char* bad : {"0", "1001", "many"}) {
            auto r = ParseConfig({"--max-connections-per-address", bad}, Env({}));
            REQUIRE_FALSE(r.ok());
            CHECK(r.error().message.find("--max-connections-per-address") != std::string::npos);
        }
    }

    TEST_CASE("out-of-range transport values and a lone TLS file are all reported") {
        auto r = ParseConfig({"--max-connections", "5000", "--request-timeout-s", "0",
                              "--rate-limit-rps", "-1", "--tls-key", "k.pem"},
                             Env({}));
        REQUIRE_FALSE(r.ok());
        std::string message = r.error().message;
        CHECK(message.find("--max-connections") != std::string::npos);
        CHECK(message.find("--request-timeout-s") != std::string::npos);
        CHECK(message.find("--rate-limit-rps") != std::string::npos);
        CHECK(message.find("--tls-cert and --tls-key go together") != std::string::npos);
    }

    TEST_CASE("the request budget is 10 s by default, read from its flag or variable, 1-600000") {
        auto defaults = ParseConfig({}, Env({}));
        REQUIRE(defaults.ok());
        CHECK(defaults.value().request_budget_ms == 10000);
        auto flag = ParseConfig({"--request-budget-ms", "250"}, Env({}));
        REQUIRE(flag.ok());
        CHECK(flag.value().request_budget_ms == 250);
        auto env = ParseConfig({}, Env({{"GPUCOST_REQUEST_BUDGET_MS", "2000"}}));
        REQUIRE(env.ok());
        CHECK(env.value().request_budget_ms == 2000);
        for (const char* bad : {"0", "600001", "-5", "10s"}) {
            auto r = ParseConfig({"--request-budget-ms", bad}, Env({}));
            REQUIRE_FALSE(r.ok());
            CHECK(r.error().message.find("--request-budget-ms") != std::string::npos);
        }
    }
}
