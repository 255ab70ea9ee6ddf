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
// `apikey create` (with `price_book` the key's default book, empty: none), `revoke`,
// `price-book PREFIX|ID BOOK|none` and `list`.
int RunApiKey(const std::string& database_url, const std::vector<std::string>& args,
              const std::string& scope, const std::string& name, const std::string& price_book,
              const std::string& team = "default");

}  // namespace gpucost::storage
