#include "service/app/config.hpp"

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
    {"--threads", "GPUCOST_THREADS", "16", "HTTP worker threads (1-256)"},
    {"--catalog-dir", "GPUCOST_CATALOG_DIR", "(embedded)",
     "directory with accelerators.csv, offerings.csv, prices.csv; default: the catalog built "
     "into the binary"},
    {"--log-level", "GPUCOST_LOG_LEVEL", "info", "debug | info | warn | error"},
    {"--max-body-bytes", "GPUCOST_MAX_BODY_BYTES", "65536", "largest request body accepted"},
    {"--listen-backlog", "GPUCOST_LISTEN_BACKLOG", "1024", "TCP accept queue length"},
    {"--access-log", "GPUCOST_ACCESS_LOG", "true", "log one line per request (true|false)"},
};

bool ParseInt(const std::string& text, long long min, long long max, long long& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size() && out >= min &&
           out <= max;
}

}  // namespace

std::string HelpText() {
    std::string text =
        "usage: gpucost [serve|check-catalog|version|help] [options]\n\n"
        "  serve          run the HTTP API (default)\n"
        "  check-catalog  load and validate the catalog, print its summary, exit\n"
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
            config.command != "version" && config.command != "help") {
            fail("command", "unknown command '" + config.command + "'");
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
