#include "service/app/config.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <string_view>
#include <type_traits>

namespace gpucost::app {
namespace {

std::string Trim(const std::string& text) {
    auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) {
        return "";
    }
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// The --cors-origins value: comma-separated, blanks around entries ignored.
std::vector<std::string> SplitCorsOrigins(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        std::string item = Trim(
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!item.empty()) {
            out.push_back(item);
        }
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return out;
}

// Each entry is "*" or scheme://host[:port] (http or https, no path); the first bad one.
std::string ValidateCorsOrigins(const std::vector<std::string>& origins) {
    for (const auto& o : origins) {
        if (o == "*") {
            continue;
        }
        std::size_t scheme_end = o.find("://");
        std::string scheme = scheme_end == std::string::npos ? "" : o.substr(0, scheme_end);
        std::string host = scheme_end == std::string::npos ? "" : o.substr(scheme_end + 3);
        bool host_ok = !host.empty() && host.find_first_of("/?#* ") == std::string::npos;
        if ((scheme != "http" && scheme != "https") || !host_ok) {
            return "'" + o +
                   "' is not an origin: use * or scheme://host[:port] (http or https, "
                   "no path)";
        }
    }
    return "";
}

bool ParseInt(const std::string& text, long long min, long long max, long long& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size() && out >= min &&
           out <= max;
}

// --- One row per setting: its flag, variable, default, meaning and how it is read. --------
// A setter parses `value` into the config and returns "" or what is wrong with it (shown with
// the flag or variable that gave it). The table is the one list of settings: --help prints
// it, parsing reads it, and config_test.cpp checks it against docs/api.md's table and against
// the defaults ServiceConfig, ServerOptions and TransportOptions start from.
using Setter = std::string (*)(ServiceConfig& config, const std::string& value);

template <auto Member, long long Min, long long Max>
std::string SetInteger(ServiceConfig& config, const std::string& value) {
    long long n = 0;
    if (!ParseInt(value, Min, Max, n)) {
        return "must be an integer from " + std::to_string(Min) + " to " + std::to_string(Max);
    }
    using Field = std::remove_reference_t<decltype(config.*Member)>;
    config.*Member = static_cast<Field>(n);
    return "";
}

template <auto Member>
std::string SetBool(ServiceConfig& config, const std::string& value) {
    if (value != "true" && value != "false") return "must be true or false";
    config.*Member = value == "true";
    return "";
}

template <auto Member>
std::string SetText(ServiceConfig& config, const std::string& value) {
    config.*Member = value;
    return "";
}

std::string SetBind(ServiceConfig& config, const std::string& value) {
    if (value.empty()) return "must not be empty";
    config.bind = value;
    return "";
}

std::string SetLogLevel(ServiceConfig& config, const std::string& value) {
    auto level = log::ParseLevel(value);
    if (!level) return "must be debug, info, warn or error";
    config.log_level = *level;
    return "";
}

std::string SetCorsOrigins(ServiceConfig& config, const std::string& value) {
    config.cors_origins = SplitCorsOrigins(value);
    return ValidateCorsOrigins(config.cors_origins);
}

std::string SetKeyScope(ServiceConfig& config, const std::string& value) {
    if (value != "admin" && value != "read" && value != "org") return "must be admin, read or org";
    config.key_scope = value;
    return "";
}

struct Setting {
    const char* flag;
    const char* env;
    const char* default_text;  // as --help and docs/api.md show it
    const char* meaning;
    Setter set;
};

constexpr Setting kSettings[] = {
    {"--bind", "GPUCOST_BIND", "127.0.0.1", "address to listen on (0.0.0.0 in containers)",
     SetBind},
    {"--port", "GPUCOST_PORT", "8080", "TCP port; 0 picks a free one",
     SetInteger<&ServiceConfig::port, 0, 65535>},
    {"--threads", "GPUCOST_THREADS", "2 x usable CPUs; database: at least 16; TLS: 16",
     "HTTP worker threads (1-256)", SetInteger<&ServiceConfig::threads, 1, 256>},
    {"--catalog-dir", "GPUCOST_CATALOG_DIR", "(embedded)",
     "directory with accelerators.csv, offerings.csv, prices.csv; default: the catalog built "
     "into the binary",
     SetText<&ServiceConfig::catalog_dir>},
    {"--log-level", "GPUCOST_LOG_LEVEL", "info", "debug | info | warn | error", SetLogLevel},
    {"--max-body-bytes", "GPUCOST_MAX_BODY_BYTES", "65536",
     "largest request body accepted (1024-16777216)",
     SetInteger<&ServiceConfig::max_body_bytes, 1024, 16 * 1024 * 1024>},
    {"--max-actuals-body-bytes", "GPUCOST_MAX_ACTUALS_BODY_BYTES", "8388608",
     "largest FOCUS export POST /v1/actuals accepts (65536-268435456)",
     SetInteger<&ServiceConfig::max_actuals_body_bytes, 64 * 1024, 256 * 1024 * 1024>},
    {"--max-buffered-body-bytes", "GPUCOST_MAX_BUFFERED_BODY_BYTES", "134217728",
     "request body bytes held across all connections at most; a body beyond gets 503 + "
     "Retry-After before it is read (1048576-68719476736; at least each body limit)",
     SetInteger<&ServiceConfig::max_buffered_body_bytes, 1024 * 1024, 64LL * 1024 * 1024 * 1024>},
    {"--listen-backlog", "GPUCOST_LISTEN_BACKLOG", "1024", "TCP accept queue length (1-65535)",
     SetInteger<&ServiceConfig::listen_backlog, 1, 65535>},
    {"--access-log", "GPUCOST_ACCESS_LOG", "true", "log one line per request (true|false)",
     SetBool<&ServiceConfig::access_log>},
    {"--max-connections", "GPUCOST_MAX_CONNECTIONS", "900",
     "open connections at most; more get 503 (16-1000)",
     SetInteger<&ServiceConfig::max_connections, 16, 1000>},
    {"--max-connections-per-address", "GPUCOST_MAX_CONNECTIONS_PER_ADDRESS", "64",
     "open connections from one client address at most; more get 503 (1-1000; behind a proxy "
     "raise it to --max-connections and limit per client in the proxy)",
     SetInteger<&ServiceConfig::max_connections_per_address, 1, 1000>},
    {"--request-timeout-s", "GPUCOST_REQUEST_TIMEOUT_S", "10",
     "a request's headers and body must arrive within this time of its first byte (1-300)",
     SetInteger<&ServiceConfig::request_timeout_s, 1, 300>},
    {"--keep-alive-timeout-s", "GPUCOST_KEEP_ALIVE_TIMEOUT_S", "5",
     "idle keep-alive connections are closed after this (1-300)",
     SetInteger<&ServiceConfig::keep_alive_timeout_s, 1, 300>},
    {"--shutdown-grace-s", "GPUCOST_SHUTDOWN_GRACE_S", "10",
     "on SIGTERM, how long requests already received may take to finish (0-300)",
     SetInteger<&ServiceConfig::shutdown_grace_s, 0, 300>},
    {"--request-budget-ms", "GPUCOST_REQUEST_BUDGET_MS", "10000",
     "how long one plan or estimate may compute; past it 503 request_budget_exceeded with "
     "Retry-After, never a partial answer (1-600000)",
     SetInteger<&ServiceConfig::request_budget_ms, 1, 600000>},
    {"--rate-limit-rps", "GPUCOST_RATE_LIMIT_RPS", "0 (off)",
     "requests per second per API key, else per client address; 429 beyond (0-1000000)",
     SetInteger<&ServiceConfig::rate_limit_rps, 0, 1000000>},
    {"--rate-limit-burst", "GPUCOST_RATE_LIMIT_BURST", "(= rps)",
     "requests a caller may send at once (1-1000000)",
     SetInteger<&ServiceConfig::rate_limit_burst, 1, 1000000>},
    {"--tls-cert", "GPUCOST_TLS_CERT", "(none: plain HTTP)",
     "PEM certificate chain; with --tls-key serves HTTPS (TLS 1.2+, AEAD ciphers only)",
     SetText<&ServiceConfig::tls_cert>},
    {"--tls-key", "GPUCOST_TLS_KEY", "(none)", "PEM private key for --tls-cert",
     SetText<&ServiceConfig::tls_key>},
    {"--database-url", "DATABASE_URL", "(none: embedded catalog)",
     "PostgreSQL URL (postgresql://user@host:port/db); enables writes, history, as_of, "
     "scenarios and API keys",
     SetText<&ServiceConfig::database_url>},
    {"--snapshot-refresh-ms", "GPUCOST_SNAPSHOT_REFRESH_MS", "1000",
     "periodic check for catalog changes behind LISTEN/NOTIFY (50-600000)",
     SetInteger<&ServiceConfig::snapshot_refresh_ms, 50, 600000>},
    {"--max-snapshot-age-s", "GPUCOST_MAX_SNAPSHOT_AGE_S", "300",
     "/readyz fails when the snapshot was not confirmed current for this long (1-86400)",
     SetInteger<&ServiceConfig::max_snapshot_age_s, 1, 86400>},
    {"--require-read-key", "GPUCOST_REQUIRE_READ_KEY", "false",
     "reads under /v1/ need an API key with read or admin scope (true|false)",
     SetBool<&ServiceConfig::require_read_key>},
    {"--db-pool-size", "GPUCOST_DB_POOL_SIZE", "4", "database connections for writes (1-64)",
     SetInteger<&ServiceConfig::db_pool_size, 1, 64>},
    {"--cors-origins", "GPUCOST_CORS_ORIGINS", "(none)",
     "browser origins allowed to call the API (CORS), comma-separated: * or "
     "scheme://host[:port]",
     SetCorsOrigins},
    {"--scope", "GPUCOST_APIKEY_SCOPE", "read",
     "apikey create: admin | read | org (reads every team's, writes nothing)", SetKeyScope},
    {"--team", "GPUCOST_APIKEY_TEAM", "default",
     "apikey create: the key's team (a-z 0-9 . - _; created when new)",
     SetText<&ServiceConfig::key_team>},
    {"--name", "GPUCOST_APIKEY_NAME", "", "apikey create: who or what the key is for",
     SetText<&ServiceConfig::key_name>},
    {"--price-book", "GPUCOST_APIKEY_PRICE_BOOK", "(none: list prices)",
     "apikey create: the stored price book the key's plans get when they name none",
     SetText<&ServiceConfig::key_price_book>},
    {"--out", "GPUCOST_IMPORT_OUT", "(none: DATABASE_URL)",
     "import: directory to write the merged catalog to", SetText<&ServiceConfig::import_out>},
    {"--as-of", "GPUCOST_IMPORT_AS_OF", "(the file's publication date)",
     "import: date of the prices (YYYY-MM-DD); required for Azure and GCP files",
     SetText<&ServiceConfig::import_as_of>},
    {"--history", "GPUCOST_SYNC_HISTORY", "0 (sync)",
     "sync: print the latest N recorded sync runs (DATABASE_URL, or --out DIR's sync-runs.jsonl) "
     "as JSON instead of syncing (1-1000)",
     SetInteger<&ServiceConfig::sync_history, 1, 1000>},
    {"--region", "GPUCOST_IMPORT_REGIONS", "(all)",
     "import: comma-separated regions to import; rows of other regions are skipped",
     SetText<&ServiceConfig::import_regions>},
};

const Setting* FindSetting(std::string_view flag) {
    for (const Setting& s : kSettings) {
        if (flag == s.flag) return &s;
    }
    return nullptr;
}

}  // namespace

std::size_t DefaultThreads(const ServiceConfig& config, unsigned cpus) {
    if (!config.tls_cert.empty()) {
        return kTlsDefaultThreads;
    }
    const std::size_t per_cpu = std::max<std::size_t>(2, kWorkersPerCpu * std::max(1u, cpus));
    return config.database_url.empty() ? per_cpu : std::max(per_cpu, kDatabaseMinThreads);
}

std::string HelpText() {
    std::string text =
        "usage: gpucost [serve|check-catalog|import|migrate|seed|apikey|version|help] [options]\n\n"
        "  serve          run the HTTP API (default)\n"
        "  check-catalog  load and validate the catalog, print its summary, exit\n"
        "  import FORMAT FILE...  read provider price files (aws-price-list |\n"
        "                 azure-retail-prices | gcp-billing-catalog | lambda-instance-types |\n"
        "                 runpod-gpu-types | vastai-bundles | coreweave-pricing) into --out DIR\n"
        "                 or DATABASE_URL\n"
        "  sync PROVIDER...  download those providers' prices (aws azure gcp lambda runpod\n"
        "                 vastai coreweave; needs network) and import them\n"
        "  migrate        apply the missing schema/migrations to DATABASE_URL\n"
        "  seed           load the shipped catalog into DATABASE_URL (idempotent)\n"
        "  apikey create --scope admin|read|org --name N [--team T] [--price-book ID]\n"
        "                 print a new API key (shown once); a new --team is created\n"
        "  apikey revoke PREFIX|ID    apikey list\n"
        "  apikey price-book PREFIX|ID BOOK|none   set or clear a key's default price book\n"
        "  version        print the version\n\n"
        "options (flag / environment variable / default):\n";
    for (const Setting& s : kSettings) {
        text += "  " + std::string(s.flag) + "  " + s.env + "  [" + s.default_text + "]\n      " +
                s.meaning + "\n";
    }
    return text;
}

namespace {

// Collects every problem, to report them all at once.
struct Problems {
    std::vector<pricing::FieldError> errors;
    void Fail(const std::string& where, const std::string& detail) {
        errors.push_back({where, detail});
    }
};

// One value for a setting, and where it came from (the flag or the variable), for messages.
struct GivenValue {
    const Setting* setting;
    std::string value;
    std::string source;
};

constexpr const char* kCommands[] = {"serve", "check-catalog", "version", "help", "migrate",
                                     "seed",  "apikey",        "import",  "sync"};

// The command and its positional arguments (apikey, import and sync take some); returns the
// index of the first option.
std::size_t ReadCommand(const std::vector<std::string>& args, ServiceConfig& config,
                        Problems& problems) {
    std::size_t i = 0;
    if (i < args.size() && !args[i].empty() && args[i][0] != '-') {
        config.command = args[i++];
        if (std::find(std::begin(kCommands), std::end(kCommands), config.command) ==
            std::end(kCommands)) {
            problems.Fail("command", "unknown command '" + config.command + "'");
        }
        const bool takes_arguments =
            config.command == "apikey" || config.command == "import" || config.command == "sync";
        while (takes_arguments && i < args.size() && !args[i].empty() && args[i][0] != '-') {
            config.command_args.push_back(args[i++]);
        }
    }
    return i;
}

// Environment first, then flags, so that a flag given later overrides the variable.
std::vector<GivenValue> GivenValues(const std::vector<std::string>& args, std::size_t first,
                                    const EnvLookup& env, ServiceConfig& config,
                                    Problems& problems) {
    std::vector<GivenValue> given;
    for (const Setting& s : kSettings) {
        if (auto v = env(s.env)) given.push_back({&s, *v, s.env});
    }
    for (std::size_t i = first; i < args.size(); ++i) {
        std::string arg = args[i];
        if (arg == "--help" || arg == "-h") {
            config.command = "help";
            continue;
        }
        if (arg == "--version") {
            config.command = "version";
            continue;
        }
        std::optional<std::string> value;
        if (auto eq = arg.find('='); eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        }
        const Setting* setting = FindSetting(arg);
        if (setting == nullptr) {
            problems.Fail(arg, "unknown option; see --help");
            continue;
        }
        if (!value) {
            if (i + 1 >= args.size()) {
                problems.Fail(arg, "needs a value");
                continue;
            }
            value = args[++i];
        }
        given.push_back({setting, *value, arg});
    }
    return given;
}

// What must hold between settings and the command.
void CheckCombinations(const ServiceConfig& config, Problems& problems) {
    if ((config.command == "migrate" || config.command == "seed" || config.command == "apikey" ||
         config.require_read_key) &&
        config.database_url.empty()) {
        problems.Fail("DATABASE_URL", "is required for " + std::string(config.command == "serve"
                                                                           ? "--require-read-key"
                                                                           : config.command));
    }
    if (config.max_buffered_body_bytes <
        std::max(config.max_body_bytes, config.max_actuals_body_bytes)) {
        problems.Fail("--max-buffered-body-bytes",
                      "must be at least --max-body-bytes and --max-actuals-body-bytes, or a body "
                      "within its limit could never be received");
    }
    if (config.tls_cert.empty() != config.tls_key.empty()) {
        problems.Fail(config.tls_cert.empty() ? "--tls-cert" : "--tls-key",
                      "--tls-cert and --tls-key go together");
    }
    if (config.command == "apikey") {
        const auto& a = config.command_args;
        bool ok = (a.size() == 1 && (a[0] == "create" || a[0] == "list")) ||
                  (a.size() == 2 && a[0] == "revoke") || (a.size() == 3 && a[0] == "price-book");
        if (!ok) {
            problems.Fail("apikey",
                          "use: apikey create --scope admin|read|org --name N [--team T] "
                          "[--price-book ID] | "
                          "apikey revoke PREFIX|ID | apikey price-book PREFIX|ID BOOK|none | "
                          "apikey list");
        } else if (a[0] == "create" && (config.key_name.empty() || config.key_name.size() > 200)) {
            problems.Fail("--name", "apikey create needs --name (1-200 characters)");
        }
    }
    if (!config.key_price_book.empty() &&
        (config.command != "apikey" || config.command_args.empty() ||
         config.command_args[0] != "create")) {
        problems.Fail("--price-book",
                      "is for apikey create; apikey price-book PREFIX|ID BOOK changes a key's");
    }
    if (config.command == "sync" && ((config.command_args.empty() && config.sync_history == 0) ||
                                     (config.import_out.empty() && config.database_url.empty()))) {
        problems.Fail("sync",
                      "use: sync aws|azure|gcp|lambda|runpod|vastai|coreweave... "
                      "[--region R,...] (--out DIR | DATABASE_URL); sync --history N "
                      "(--out DIR | DATABASE_URL)");
    }
    if (config.command == "import") {
        if (config.command_args.size() < 2) {
            problems.Fail("import", "use: import FORMAT FILE... (--out DIR | DATABASE_URL)");
        } else if (config.import_out.empty() && config.database_url.empty()) {
            problems.Fail("--out",
                          "import needs --out DIR, or DATABASE_URL to record in the database");
        }
    }
}

}  // namespace

pricing::Result<ServiceConfig> ParseConfig(const std::vector<std::string>& args,
                                           const EnvLookup& env) {
    ServiceConfig config;
    Problems problems;
    const std::size_t first_option = ReadCommand(args, config, problems);
    for (const GivenValue& given : GivenValues(args, first_option, env, config, problems)) {
        if (std::string problem = given.setting->set(config, given.value); !problem.empty()) {
            problems.Fail(given.source, problem);
        }
    }
    CheckCombinations(config, problems);
    if (problems.errors.empty()) {
        return config;
    }
    pricing::Error error{pricing::ErrorCode::kInvalidArgument, "", problems.errors.front().field,
                         problems.errors};
    for (const auto& e : error.errors) {
        error.message += (error.message.empty() ? "" : "; ") + e.field + ": " + e.detail;
    }
    return error;
}

std::vector<SettingRow> SettingRows() {
    std::vector<SettingRow> rows;
    for (const Setting& s : kSettings) rows.push_back({s.flag, s.env, s.default_text});
    return rows;
}

pricing::Status ApplySetting(ServiceConfig& config, const std::string& flag,
                             const std::string& value) {
    const Setting* setting = FindSetting(flag);
    if (setting == nullptr) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument, "unknown option", flag);
    }
    if (std::string problem = setting->set(config, value); !problem.empty()) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument, problem, flag);
    }
    return pricing::Ok{};
}

}  // namespace gpucost::app
