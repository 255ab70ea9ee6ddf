#pragma once

#include <string>
#include <vector>

#include "pricing/catalog.hpp"

namespace gpucost::storage {

// The database subcommands of the gpucost binary. Each prints its result on stdout (a key
// only once, at creation), problems on stderr, and returns the process exit status
// (0 ok, 1 failed, 3 database unreachable).
int RunMigrate(const std::string& database_url);
int RunSeed(const std::string& database_url, const pricing::Catalog& shipped);
int RunApiKey(const std::string& database_url, const std::vector<std::string>& args,
              const std::string& scope, const std::string& name);

}  // namespace gpucost::storage
