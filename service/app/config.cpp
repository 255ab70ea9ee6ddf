#include "service/app/config.hpp"

#include <algorithm>
#include <charconv>

namespace gpucost::app {
namespace {

struct Option {
    const char* flag;
    const char* env;
    const char* default_text;
    const char* meaning;
};

constexpr Option kOptions[] = {
    {"--bind", "GPUCOST_BIND", "127.0.0.1", "address to listen on (0.0.0.0 in containers)"},
    {"--port", "GPUCOST_PORT", "8080", "TCP port; 0 picks a free one"},
    {"--threads", "GPUCOST_THREADS", "2 x usable CPUs; database: at least 16; TLS: 16",
     "HTTP worker threads (1-256)"},
    {"--catalog-dir", "GPUCOST_CATALOG_DIR", "(embedded)",
     "directory with accelerators.csv, offerings.csv, prices.csv; default: the catalog built "
     "into the binary"},
    {"--log-level", "GPUCOST_LOG_LEVEL", "info", "debug | info | warn | error"},
    {"--max-body-bytes", "GPUCOST_MAX_BODY_BYTES", "65536", "largest request body accepted"},
    {"--listen-backlog", "GPUCOST_LISTEN_BACKLOG", "1024", "TCP accept queue length"},
    {"--access-log", "GPUCOST_ACCESS_LOG", "true", "log one line per request (true|false)"},
    {"--max-connections", "GPUCOST_MAX_CONNECTIONS", "900",
     "open connections at most; more get 503 (16-1000)"},
    {"--max-connections-per-address", "GPUCOST_MAX_CONNECTIONS_PER_ADDRESS", "64",
     "open connections from one client address at most; more get 503 (1-1000; behind a proxy "
     "raise it to --max-connections and limit per client in the proxy)"},
    {"--request-timeout-s", "GPUCOST_REQUEST_TIMEOUT_S", "10",
     "a request's headers and body must arrive within this time of its first byte (1-300)"},
    {"--keep-alive-timeout-s", "GPUCOST_KEEP_ALIVE_TIMEOUT_S", "5",
     "idle keep-alive connections are closed after this (1-300)"},
    {"--shutdown-grace-s", "GPUCOST_SHUTDOWN_GRACE_S", "10",
     "on SIGTERM, how long requests already received may take to finish (0-300)"},
    {"--rate-limit-rps", "GPUCOST_RATE_LIMIT_RPS", "0 (off)",
     "requests per second per API key, else per client address; 429 beyond (0-1000000)"},
    {"--rate-limit-burst", "GPUCOST_RATE_LIMIT_BURST", "(= rps)",
     "requests a caller may send at once (1-1000000)"},
    {"--tls-cert", "GPUCOST_TLS_CERT", "(none: plain HTTP)",
     "PEM certificate chain; with --tls-key serves HTTPS (TLS 1.2+, AEAD ciphers only)"},
    {"--tls-key", "GPUCOST_TLS_KEY", "(none)", "PEM private key for --tls-cert"},
    {"--database-url", "DATABASE_URL", "(none: embedded catalog)",
     "PostgreSQL URL (postgresql://user@host:port/db); enables writes, history, as_of, "
     "scenarios and API keys"},
    {"--snapshot-refresh-ms", "GPUCOST_SNAPSHOT_REFRESH_MS", "1000",
     "periodic check for catalog changes behind LISTEN/NOTIFY (50-600000)"},
    {"--max-snapshot-age-s", "GPUCOST_MAX_SNAPSHOT_AGE_S", "300",
     "/readyz fails when the snapshot was not confirmed current for this long (1-86400)"},
    {"--require-read-key", "GPUCOST_REQUIRE_READ_KEY", "false",
     "reads under /v1/ need an API key with read or admin scope (true|false)"},
    {"--db-pool-size", "GPUCOST_DB_POOL_SIZE", "4", "database connections for writes (1-64)"},
    {"--cors-origins", "GPUCOST_CORS_ORIGINS", "(none)",
     "browser origins allowed to call the API (CORS), comma-separated: * or "
     "scheme://host[:port]"},
    {"--scope", "GPUCOST_APIKEY_SCOPE", "read", "apikey create: admin | read"},
    {"--name", "GPUCOST_APIKEY_NAME", "", "apikey create: who or what the key is for"},
    {"--out", "GPUCOST_IMPORT_OUT", "(none: DATABASE_URL)",
     "import: directory to write the merged catalog to"},
    {"--as-of", "GPUCOST_IMPORT_AS_OF", "(the file's publication date)",
     "import: date of the prices (YYYY-MM-DD); required for Azure and GCP files"},
    {"--region", "GPUCOST_IMPORT_REGIONS", "(all)",
     "import: comma-separated regions to import; rows of other regions are skipped"},
};

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
        std::string item = Trim(text.substr(start, comma == std::string::npos ? std::string::npos
                                                                               : comma - start));
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
            return "'" + o + "' is not an origin: use * or scheme://host[:port] (http or https, "
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
        "                 azure-retail-prices | gcp-billing-catalog) into --out DIR or DATABASE_URL\n"
        "  sync aws|azure...  download those price files (needs network) and import them\n"
        "  migrate        apply the missing schema/migrations to DATABASE_URL\n"
        "  seed           load the shipped catalog into DATABASE_URL (idempotent)\n"
        "  apikey create --scope admin|read --name N   print a new API key (shown once)\n"
        "  apikey revoke PREFIX|ID    apikey list\n"
        "  version        print the version\n\n"
        "options (flag / environment variable / default):\n";
    for (const Option& o : kOptions) {
        text += "  " + std::string(o.flag) + "  " + o.env + "  [" + o.default_text + "]\n      " +
                o.meaning + "\n";
    }
    return text;
}

pricing::Result<ServiceConfig> ParseConfig(const std::vector<std::string>& args,
                                           const EnvLookup& env) {
    ServiceConfig config;
    pricing::Error error{pricing::ErrorCode::kInvalidArgument, "invalid configuration", "", {}};
    auto fail = [&](const std::string& where, const std::string& detail) {
        error.errors.push_back({where, detail});
    };

    // Raw values: environment first, then flags override.
    std::vector<std::pair<std::string, std::string>> values;  // (flag, value)
    std::vector<std::string> sources;                         // where each value came from
    for (const Option& o : kOptions) {
        if (auto v = env(o.env)) {
            values.emplace_back(o.flag, *v);
            sources.emplace_back(o.env);
        }
    }
    std::size_t i = 0;
    if (i < args.size() && !args[i].empty() && args[i][0] != '-') {
        config.command = args[i];
        ++i;
        if (config.command != "serve" && config.command != "check-catalog" &&
            config.command != "version" && config.command != "help" &&
            config.command != "migrate" && config.command != "seed" &&
            config.command != "apikey" && config.command != "import" &&
            config.command != "sync") {
            fail("command", "unknown command '" + config.command + "'");
        }
        // apikey takes positional arguments: create | revoke PREFIX|ID | list.
        while ((config.command == "apikey" || config.command == "import" ||
                config.command == "sync") &&
               i < args.size() &&
               !args[i].empty() && args[i][0] != '-') {
            config.command_args.push_back(args[i++]);
        }
    }
    for (; i < args.size(); ++i) {
        std::string arg = args[i];
        if (arg == "--help" || arg == "-h") {
            config.command = "help";
            continue;
        }
        if (arg == "--version") {
            config.command = "version";
            continue;
        }
        std::string value;
        bool has_value = false;
        if (auto eq = arg.find('='); eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_value = true;
        }
        bool known = false;
        for (const Option& o : kOptions) {
            if (arg == o.flag) {
                known = true;
                if (!has_value) {
                    if (i + 1 >= args.size()) {
                        fail(arg, "needs a value");
                        break;
                    }
                    value = args[++i];
                }
                values.emplace_back(arg, value);
                sources.emplace_back(arg);
            }
        }
        if (!known) {
            fail(arg, "unknown option; see --help");
        }
    }

    for (std::size_t k = 0; k < values.size(); ++k) {
        const auto& [flag, value] = values[k];
        const std::string& where = sources[k];
        long long n = 0;
        if (flag == "--bind") {
            if (value.empty()) {
                fail(where, "must not be empty");
            }
            config.bind = value;
        } else if (flag == "--port") {
            if (!ParseInt(value, 0, 65535, n)) {
                fail(where, "must be an integer from 0 to 65535");
            }
            config.port = static_cast<int>(n);
        } else if (flag == "--threads") {
            if (!ParseInt(value, 1, 256, n)) {
                fail(where, "must be an integer from 1 to 256");
            }
            config.threads = static_cast<std::size_t>(n);
        } else if (flag == "--catalog-dir") {
            config.catalog_dir = value;
        } else if (flag == "--log-level") {
            auto level = log::ParseLevel(value);
            if (!level) {
                fail(where, "must be debug, info, warn or error");
            } else {
                config.log_level = *level;
            }
        } else if (flag == "--max-body-bytes") {
            if (!ParseInt(value, 1024, 16 * 1024 * 1024, n)) {
                fail(where, "must be an integer from 1024 to 16777216");
            }
            config.max_body_bytes = static_cast<std::size_t>(n);
        } else if (flag == "--listen-backlog") {
            if (!ParseInt(value, 1, 65535, n)) {
                fail(where, "must be an integer from 1 to 65535");
            }
            config.listen_backlog = static_cast<int>(n);
        } else if (flag == "--access-log") {
            if (value != "true" && value != "false") {
                fail(where, "must be true or false");
            }
            config.access_log = value == "true";
        } else if (flag == "--max-connections") {
            if (!ParseInt(value, 16, 1000, n)) {
                fail(where, "must be an integer from 16 to 1000");
            }
            config.max_connections = static_cast<std::size_t>(n);
        } else if (flag == "--max-connections-per-address") {
            if (!ParseInt(value, 1, 1000, n)) {
                fail(where, "must be an integer from 1 to 1000");
            }
            config.max_connections_per_address = static_cast<std::size_t>(n);
        } else if (flag == "--request-timeout-s" || flag == "--keep-alive-timeout-s") {
            if (!ParseInt(value, 1, 300, n)) {
                fail(where, "must be an integer from 1 to 300");
            }
            (flag == "--request-timeout-s" ? config.request_timeout_s
                                           : config.keep_alive_timeout_s) = static_cast<int>(n);
        } else if (flag == "--shutdown-grace-s") {
            if (!ParseInt(value, 0, 300, n)) {
                fail(where, "must be an integer from 0 to 300");
            }
            config.shutdown_grace_s = static_cast<int>(n);
        } else if (flag == "--rate-limit-rps" || flag == "--rate-limit-burst") {
            long long min = flag == "--rate-limit-rps" ? 0 : 1;
            if (!ParseInt(value, min, 1000000, n)) {
                fail(where, "must be an integer from " + std::to_string(min) + " to 1000000");
            }
            (flag == "--rate-limit-rps" ? config.rate_limit_rps : config.rate_limit_burst) =
                static_cast<double>(n);
        } else if (flag == "--tls-cert") {
            config.tls_cert = value;
        } else if (flag == "--tls-key") {
            config.tls_key = value;
        } else if (flag == "--database-url") {
            config.database_url = value;
        } else if (flag == "--snapshot-refresh-ms") {
            if (!ParseInt(value, 50, 600000, n)) {
                fail(where, "must be an integer from 50 to 600000");
            }
            config.snapshot_refresh_ms = static_cast<int>(n);
        } else if (flag == "--max-snapshot-age-s") {
            if (!ParseInt(value, 1, 86400, n)) {
                fail(where, "must be an integer from 1 to 86400");
            }
            config.max_snapshot_age_s = static_cast<double>(n);
        } else if (flag == "--require-read-key") {
            if (value != "true" && value != "false") {
                fail(where, "must be true or false");
            }
            config.require_read_key = value == "true";
        } else if (flag == "--db-pool-size") {
            if (!ParseInt(value, 1, 64, n)) {
                fail(where, "must be an integer from 1 to 64");
            }
            config.db_pool_size = static_cast<std::size_t>(n);
        } else if (flag == "--cors-origins") {
            config.cors_origins = SplitCorsOrigins(value);
            if (auto problem = ValidateCorsOrigins(config.cors_origins); !problem.empty()) {
                fail(where, problem);
            }
        } else if (flag == "--scope") {
            if (value != "admin" && value != "read") {
                fail(where, "must be admin or read");
            }
            config.key_scope = value;
        } else if (flag == "--name") {
            config.key_name = value;
        } else if (flag == "--out") {
            config.import_out = value;
        } else if (flag == "--as-of") {
            config.import_as_of = value;
        } else if (flag == "--region") {
            config.import_regions = value;
        }
    }
    if ((config.command == "migrate" || config.command == "seed" || config.command == "apikey" ||
         config.require_read_key) &&
        config.database_url.empty()) {
        fail("DATABASE_URL", "is required for " +
                                 std::string(config.command == "serve" ? "--require-read-key"
                                                                       : config.command));
    }
    if (config.tls_cert.empty() != config.tls_key.empty()) {
        fail(config.tls_cert.empty() ? "--tls-cert" : "--tls-key",
             "--tls-cert and --tls-key go together");
    }
    if (config.command == "apikey") {
        const auto& a = config.command_args;
        bool ok = (a.size() == 1 && (a[0] == "create" || a[0] == "list")) ||
                  (a.size() == 2 && a[0] == "revoke");
        if (!ok) {
            fail("apikey", "use: apikey create --scope admin|read --name N | apikey revoke "
                           "PREFIX|ID | apikey list");
        } else if (a[0] == "create" && (config.key_name.empty() || config.key_name.size() > 200)) {
            fail("--name", "apikey create needs --name (1-200 characters)");
        }
    }
    if (config.command == "sync" && (config.command_args.empty() || config.import_out.empty())) {
        fail("sync", "use: sync aws|azure... --region R,... --out DIR");
    }
    if (config.command == "import") {
        if (config.command_args.size() < 2) {
            fail("import", "use: import FORMAT FILE... (--out DIR | DATABASE_URL)");
        } else if (config.import_out.empty() && config.database_url.empty()) {
            fail("--out", "import needs --out DIR, or DATABASE_URL to record in the database");
        }
    }
    if (!error.errors.empty()) {
        error.field = error.errors.front().field;
        error.message.clear();
        for (const auto& e : error.errors) {
            error.message += (error.message.empty() ? "" : "; ") + e.field + ": " + e.detail;
        }
        return error;
    }
    return config;
}

}  // namespace gpucost::app
