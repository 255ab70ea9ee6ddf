#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "service/app/config.hpp"
#include "service/http/router.hpp"
#include "service/http/transport/transport.hpp"

// The settings table (service/app/config.cpp) is the one list of settings: these tests hold
// docs/api.md's table, the defaults it shows, and the defaults the HTTP components start from
// to it, so that a setting added, renamed or re-defaulted in one place and not the others fails.
namespace {

using gpucost::app::ServiceConfig;

std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The `--flag` and `GPUCOST_*` names of docs/api.md's configuration table rows.
std::set<std::string> DocumentedNames() {
    std::set<std::string> names;
    std::istringstream doc(ReadFile(std::string(GPUCOST_SOURCE_DIR) + "/docs/api.md"));
    std::string line;
    while (std::getline(doc, line)) {
        if (line.rfind("| `--", 0) != 0) continue;
        for (std::size_t at = line.find('`'); at != std::string::npos;) {
            std::size_t end = line.find('`', at + 1);
            if (end == std::string::npos) break;
            std::string name = line.substr(at + 1, end - at - 1);
            if (name.rfind("--", 0) == 0 || name.rfind("GPUCOST_", 0) == 0 ||
                name == "DATABASE_URL") {
                names.insert(name);
            }
            at = line.find('`', end + 1);
        }
    }
    return names;
}

}  // namespace

TEST_SUITE("settings table") {
    TEST_CASE("docs/api.md's configuration table lists exactly the settings, flag and variable") {
        const std::set<std::string> documented = DocumentedNames();
        std::set<std::string> table;
        for (const auto& row : gpucost::app::SettingRows()) {
            table.insert(row.flag);
            table.insert(row.env);
        }
        for (const auto& name : table) CHECK_MESSAGE(documented.count(name) == 1, name);
        for (const auto& name : documented) CHECK_MESSAGE(table.count(name) == 1, name);
    }

    TEST_CASE("a default the table shows as a value is the default the config starts with") {
        const ServiceConfig defaults;
        std::size_t checked = 0;
        for (const auto& row : gpucost::app::SettingRows()) {
            // Rows whose default is prose ("(embedded)", "2 x usable CPUs ...") are decided at
            // start-up and documented as such; values are applied and must change nothing.
            if (row.default_text.empty() || row.default_text.front() == '(' ||
                row.default_text.find(' ') != std::string::npos) {
                continue;
            }
            ServiceConfig applied;
            REQUIRE_MESSAGE(gpucost::app::ApplySetting(applied, row.flag, row.default_text).ok(),
                            row.flag);
            CHECK_MESSAGE(gpucost::app::HelpText().find(row.default_text) != std::string::npos,
                          row.flag);
            CHECK_MESSAGE(applied.bind == defaults.bind, row.flag);
            CHECK_MESSAGE(applied.port == defaults.port, row.flag);
            CHECK_MESSAGE(applied.log_level == defaults.log_level, row.flag);
            CHECK_MESSAGE(applied.max_body_bytes == defaults.max_body_bytes, row.flag);
            CHECK_MESSAGE(applied.max_actuals_body_bytes == defaults.max_actuals_body_bytes,
                          row.flag);
            CHECK_MESSAGE(applied.max_buffered_body_bytes == defaults.max_buffered_body_bytes,
                          row.flag);
            CHECK_MESSAGE(applied.listen_backlog == defaults.listen_backlog, row.flag);
            CHECK_MESSAGE(applied.access_log == defaults.access_log, row.flag);
            CHECK_MESSAGE(applied.max_connections == defaults.max_connections, row.flag);
            CHECK_MESSAGE(
                applied.max_connections_per_address == defaults.max_connections_per_address,
                row.flag);
            CHECK_MESSAGE(applied.request_timeout_s == defaults.request_timeout_s, row.flag);
            CHECK_MESSAGE(applied.keep_alive_timeout_s == defaults.keep_alive_timeout_s, row.flag);
            CHECK_MESSAGE(applied.shutdown_grace_s == defaults.shutdown_grace_s, row.flag);
            CHECK_MESSAGE(applied.request_budget_ms == defaults.request_budget_ms, row.flag);
            CHECK_MESSAGE(applied.snapshot_refresh_ms == defaults.snapshot_refresh_ms, row.flag);
            CHECK_MESSAGE(applied.max_snapshot_age_s == defaults.max_snapshot_age_s, row.flag);
            CHECK_MESSAGE(applied.require_read_key == defaults.require_read_key, row.flag);
            CHECK_MESSAGE(applied.db_pool_size == defaults.db_pool_size, row.flag);
            CHECK_MESSAGE(applied.key_scope == defaults.key_scope, row.flag);
            ++checked;
        }
        CHECK(checked >= 15);
    }

    TEST_CASE("the HTTP components start from the defaults the settings table gives") {
        const ServiceConfig config;
        const gpucost::http::ServerOptions server;
        const gpucost::http::TransportOptions transport;
        CHECK(server.max_body_bytes == config.max_body_bytes);
        CHECK(transport.max_body_bytes == config.max_body_bytes);
        CHECK(server.max_actuals_body_bytes == config.max_actuals_body_bytes);
        bool actuals_limit = false;
        for (const gpucost::http::BulkPost& bulk : gpucost::http::TransportFor(server).bulk_posts) {
            actuals_limit = actuals_limit || (bulk.path == gpucost::http::kActualsPath &&
                                              bulk.max_body_bytes == config.max_actuals_body_bytes);
        }
        CHECK(actuals_limit);
        CHECK(server.max_buffered_body_bytes == config.max_buffered_body_bytes);
        CHECK(transport.max_buffered_body_bytes == config.max_buffered_body_bytes);
        CHECK(gpucost::http::TransportFor(server).max_buffered_body_bytes ==
              config.max_buffered_body_bytes);
        CHECK(server.request_timeout_s == config.request_timeout_s);
        CHECK(transport.request_timeout == std::chrono::seconds(config.request_timeout_s));
        CHECK(server.keep_alive_timeout_s == config.keep_alive_timeout_s);
        CHECK(transport.keep_alive_timeout == std::chrono::seconds(config.keep_alive_timeout_s));
        CHECK(server.max_connections == config.max_connections);
        CHECK(transport.max_connections == config.max_connections);
        CHECK(server.max_connections_per_address == config.max_connections_per_address);
        CHECK(transport.max_connections_per_address == config.max_connections_per_address);
        const gpucost::http::Deps deps;
        CHECK(deps.request_budget == std::chrono::milliseconds(config.request_budget_ms));
    }
}
