#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "pricing/error.hpp"
#include "service/storage/catalog_history.hpp"

namespace gpucost::storage {

// Keys look like "gpc_<prefix>_<secret>": 6 random bytes of prefix (12 hex digits, stored
// in clear to find the record) and 24 random bytes of secret (48 hex digits, 192 bits),
// from OpenSSL's RAND_bytes. Only SHA-256(salt || key) with a 16-byte random salt per key
// is stored; verification recomputes it and compares with CRYPTO_memcmp (constant time).
inline constexpr std::size_t kKeyPrefixBytes = 6;
inline constexpr std::size_t kKeySecretBytes = 24;
inline constexpr std::size_t kKeySaltBytes = 16;

struct IssuedKey {
    std::int64_t id = 0;
    std::string key;  // shown once, never stored
    std::string prefix;
};

struct KeyInfo {
    std::int64_t id = 0;
    std::string prefix;
    std::string scope;
    std::string name;
    std::string created_at;
    std::string revoked_at;          // empty: active
    std::string default_price_book;  // empty: none (list prices)
    std::string team;
};

// The prefix of a well-formed key, nullopt otherwise.
std::optional<std::string> KeyPrefix(std::string_view key);

// SHA-256(salt || key), 32 raw bytes.
std::string HashKey(std::string_view salt, std::string_view key);

// The principal of `key` among `records`: nullopt when malformed, unknown or revoked.
std::optional<ports::Principal> VerifyKey(const std::vector<KeyRecord>& records,
                                          std::string_view key);

// Creates a key of `team` (created when new; kInvalidArgument for a bad scope, name or team, or
// a `default_price_book` that is not a live stored book the team may plan with: field
// --price-book) and bumps the catalog revision so that running servers learn about it. An empty
// `default_price_book`: the key plans at list prices.
[[nodiscard]] pricing::Result<IssuedKey> CreateApiKey(
    pqxx::connection& conn, const std::string& scope, const std::string& name,
    const std::string& default_price_book = "", const std::string& team = ports::kDefaultTeam);
// Sets (or, with an empty `book`, clears) the default price book of the key with this prefix
// or numeric id: kNotFound for no such key, kInvalidArgument (field --price-book) for a book
// that is not live or that the key's team may not plan with. Bumps the revision like a create.
[[nodiscard]] pricing::Status SetKeyPriceBook(pqxx::connection& conn, const std::string& which,
                                              const std::string& book);
// Revokes by prefix or numeric id; kNotFound when nothing matches.
[[nodiscard]] pricing::Status RevokeApiKey(pqxx::connection& conn, const std::string& which);
std::vector<KeyInfo> ListApiKeys(pqxx::connection& conn);

}  // namespace gpucost::storage
