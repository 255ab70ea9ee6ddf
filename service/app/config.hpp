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
// variable > default. See HelpText() and README "Configuration".
struct ServiceConfig {
    std::string command = "serve";  // serve | check-catalog | version | help
    std::string bind = "127.0.0.1";
    int port = 8080;                // 0 picks a free port (printed at start-up)
    std::size_t threads = 16;
    std::string catalog_dir;        // empty: the catalog embedded in the binary
    log::Level log_level = log::Level::kInfo;
    std::size_t max_body_bytes = 64 * 1024;
    int listen_backlog = 1024;
    bool access_log = true;
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Parses argv (without the program name) and the environment. Pure: the environment comes
// through `env`. Reports every problem at once: kInvalidArgument whose `errors` name each
// flag or variable.
[[nodiscard]] pricing::Result<ServiceConfig> ParseConfig(const std::vector<std::string>& args,
                                                         const EnvLookup& env);

// The --help text (the same table as README "Configuration").
std::string HelpText();

}  // namespace gpucost::app
