#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pricing/error.hpp"
#include "service/log.hpp"

namespace gpucost::app {

// Effective configuration of one gpucost process. Precedence: flag > GPUCOST_* environment
// variable > default. See HelpText() and docs/api.md "Configuration".
struct ServiceConfig {
    std::string command = "serve";  // serve | check-catalog | import | sync | migrate | seed |
                                    // apikey | version | help
    std::string bind = "127.0.0.1";
    int port = 8080;          // 0 picks a free port (printed at start-up)
    std::size_t threads = 0;  // 0: not given; main picks DefaultThreads(config, CPUs)
    std::string catalog_dir;  // empty: the catalog embedded in the binary
    log::Level log_level = log::Level::kInfo;
    std::size_t max_body_bytes = std::size_t{64} * 1024;
    // POST /v1/actuals' own limit (a FOCUS export: a few hundred rows fit in
    // max_body_bytes, a month of a team's GPU charges does not).
    std::size_t max_actuals_body_bytes = std::size_t{8} * 1024 * 1024;
    // Request body bytes held across all connections (the transport's budget; 503 beyond).
    std::size_t max_buffered_body_bytes = std::size_t{128} * 1024 * 1024;
    int listen_backlog = 1024;
    bool access_log = true;
    // Transport (docs/performance.md): open connections at most, whole-request and keep-alive
    // idle timeouts, and how long SIGTERM waits for requests in flight.
    std::size_t max_connections = 900;
    std::size_t max_connections_per_address = 64;  // one client address; 503 beyond
    int request_timeout_s = 10;
    int keep_alive_timeout_s = 5;
    int shutdown_grace_s = 10;
    // How long one plan or estimate may compute before it is answered 503
    // request_budget_exceeded (http::kDefaultRequestBudgetMs says why this default).
    int request_budget_ms = 10000;
    // Token bucket per API key, else per peer address; 0 requests/s: off.
    double rate_limit_rps = 0;
    double rate_limit_burst = 0;  // 0: the same as rate_limit_rps (at least 1)
    // HTTPS when both are set (PEM files).
    std::string tls_cert;
    std::string tls_key;
    // PostgreSQL mode. An empty database_url serves the embedded catalog.
    std::string database_url;
    int snapshot_refresh_ms = 1000;   // periodic revision check behind LISTEN/NOTIFY
    double max_snapshot_age_s = 300;  // /readyz fails once the snapshot is older
    bool require_read_key = false;    // reads under /v1/ need an API key too
    std::size_t db_pool_size = 4;     // connections for writes and scenarios
    // Browser origins allowed to call the API (CORS): "*" or scheme://host[:port]; none by
    // default.
    std::vector<std::string> cors_origins;
    // `apikey create|revoke|list` arguments.
    std::vector<std::string> command_args;
    std::string key_scope = "read";
    std::string key_name;
    std::string key_price_book;        // apikey create --price-book: the key's default book
    std::string key_team = "default";  // apikey create --team: the key's team (made when new)
    // `sync --history N`: print the latest N recorded sync runs instead of syncing (0: sync).
    int sync_history = 0;
    // `import FORMAT FILE...` (format and files are in command_args) and `sync PROVIDER...`.
    std::string import_out;      // --out DIR; empty with DATABASE_URL: record in the database
    std::string import_as_of;    // --as-of YYYY-MM-DD
    std::string import_regions;  // --region r1,r2 (empty: all)
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Parses argv (without the program name) and the environment. Pure: the environment comes
// through `env`. Reports every problem at once: kInvalidArgument whose `errors` name each
// flag or variable.
[[nodiscard]] pricing::Result<ServiceConfig> ParseConfig(const std::vector<std::string>& args,
                                                         const EnvLookup& env);

// The --help text (the same table as docs/api.md "Configuration").
std::string HelpText();

// The settings table's rows as --help prints them (flag, variable, default text), for the test
// that holds docs/api.md's table to it.
struct SettingRow {
    std::string flag;
    std::string env;
    std::string default_text;
};
[[nodiscard]] std::vector<SettingRow> SettingRows();
// Applies one setting's value to `config` as a flag would (kInvalidArgument naming the flag).
[[nodiscard]] pricing::Status ApplySetting(ServiceConfig& config, const std::string& flag,
                                           const std::string& value);

// Worker threads when --threads is not given (docs/performance.md, "Worker count"). HTTPS:
// kTlsDefaultThreads (the library holds one thread per TLS connection). Plain HTTP: two per
// CPU, at least 2, so CPU-bound estimates are not time-sliced among many threads; with a
// database (database_url set) at least kDatabaseMinThreads, because writes and history reads
// hold a worker while they wait on PostgreSQL and would otherwise starve the estimates.
inline constexpr std::size_t kTlsDefaultThreads = 16;
inline constexpr std::size_t kWorkersPerCpu = 2;
inline constexpr std::size_t kDatabaseMinThreads = 16;
[[nodiscard]] std::size_t DefaultThreads(const ServiceConfig& config, unsigned cpus);

}  // namespace gpucost::app
