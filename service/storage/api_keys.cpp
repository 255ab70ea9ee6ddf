#include "service/storage/api_keys.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <stdexcept>

#include "service/storage/history_loader.hpp"

namespace gpucost::storage {
namespace {

std::string RandomBytes(std::size_t n) {
    std::string out(n, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
        throw std::runtime_error("RAND_bytes failed");
    }
    return out;
}

std::string Hex(std::string_view bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (char c : bytes) {
        auto u = static_cast<unsigned char>(c);
        out += kHex[u >> 4];
        out += kHex[u & 0xF];
    }
    return out;
}

bool IsHex(std::string_view s) {
    for (char c : s) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

// kInvalidArgument unless `book` is a stored book not deleted that a key of `team` and `scope`
// may plan with (its team's, shared with its team, or any for an org key); the row is
// share-locked, so a DELETE of that book waits for this transaction and then sees the key
// naming it.
pricing::Status CheckLiveBook(pqxx::work& tx, const std::string& book, const std::string& team,
                              const std::string& scope) {
    auto rows = tx.exec_params(
        "SELECT 1 FROM price_books b WHERE b.id = $1 AND b.deleted_at IS NULL AND ($3 = 'org'"
        " OR b.team = $2 OR EXISTS (SELECT 1 FROM price_book_shares s WHERE s.book_id = b.id"
        " AND s.team = $2)) FOR SHARE OF b",
        book, team, scope);
    if (rows.empty()) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  "no price book with id '" + book + "' that team '" + team +
                                      "' may plan with (GET /v1/price-books lists them)",
                                  "--price-book");
    }
    return pricing::Ok{};
}

bool IsTeamId(const std::string& team) {
    return !team.empty() && team.size() <= 64 && std::all_of(team.begin(), team.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
    });
}

}  // namespace

std::optional<std::string> KeyPrefix(std::string_view key) {
    constexpr std::size_t kPrefixHex = kKeyPrefixBytes * 2;
    constexpr std::size_t kSecretHex = kKeySecretBytes * 2;
    if (key.size() != 4 + kPrefixHex + 1 + kSecretHex || key.substr(0, 4) != "gpc_" ||
        key[4 + kPrefixHex] != '_') {
        return std::nullopt;
    }
    std::string_view prefix = key.substr(4, kPrefixHex);
    if (!IsHex(prefix) || !IsHex(key.substr(5 + kPrefixHex))) {
        return std::nullopt;
    }
    return std::string(prefix);
}

std::string HashKey(std::string_view salt, std::string_view key) {
    std::string input(salt);
    input += key;
    std::string digest(SHA256_DIGEST_LENGTH, '\0');
    SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(),
           reinterpret_cast<unsigned char*>(digest.data()));
    OPENSSL_cleanse(input.data(), input.size());
    return digest;
}

std::optional<ports::Principal> VerifyKey(const std::vector<KeyRecord>& records,
                                          std::string_view key) {
    auto prefix = KeyPrefix(key);
    if (!prefix) {
        return std::nullopt;
    }
    for (const KeyRecord& r : records) {
        if (r.prefix != *prefix) {
            continue;
        }
        std::string digest = HashKey(r.salt, key);
        bool equal = digest.size() == r.key_hash.size() &&
                     CRYPTO_memcmp(digest.data(), r.key_hash.data(), digest.size()) == 0;
        if (!equal || r.revoked) {
            return std::nullopt;
        }
        return ports::Principal{r.id, r.name, r.prefix, r.scope, r.default_price_book, r.team};
    }
    return std::nullopt;
}

pricing::Result<IssuedKey> CreateApiKey(pqxx::connection& conn, const std::string& scope,
                                        const std::string& name,
                                        const std::string& default_price_book,
                                        const std::string& team) {
    if (scope != "admin" && scope != "read" && scope != "org") {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  "scope must be admin, read or org", "--scope");
    }
    if (!IsTeamId(team)) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  "team must be 1-64 characters of a-z, 0-9, '.', '-' and '_'",
                                  "--team");
    }
    if (name.empty() || name.size() > 200) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  "name must be 1-200 characters", "--name");
    }
    IssuedKey issued;
    issued.prefix = Hex(RandomBytes(kKeyPrefixBytes));
    std::string secret = Hex(RandomBytes(kKeySecretBytes));
    issued.key = "gpc_" + issued.prefix + "_" + secret;
    OPENSSL_cleanse(secret.data(), secret.size());
    std::string salt = RandomBytes(kKeySaltBytes);
    std::string hash = HashKey(salt, issued.key);
    pqxx::work tx(conn);
    // A key of a new team creates the team (named by its id until someone renames it).
    tx.exec_params("INSERT INTO teams (id, name) VALUES ($1, $1) ON CONFLICT (id) DO NOTHING",
                   team);
    if (!default_price_book.empty()) {
        if (auto live = CheckLiveBook(tx, default_price_book, team, scope); !live.ok()) {
            return live.error();
        }
    }
    BumpRevision(tx, CatalogChange{{}, /*keys=*/true, false});
    issued.id = tx.exec_params(
                      "INSERT INTO api_keys (prefix, salt, key_hash, scope, name, "
                      "default_price_book, team) VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''), $7)"
                      " RETURNING id",
                      issued.prefix, pqxx::binarystring(salt), pqxx::binarystring(hash), scope,
                      name, default_price_book, team)[0][0]
                    .as<std::int64_t>();
    tx.commit();
    return issued;
}

pricing::Status RevokeApiKey(pqxx::connection& conn, const std::string& which) {
    pqxx::work tx(conn);
    BumpRevision(tx, CatalogChange{{}, /*keys=*/true, false});
    auto rows = tx.exec_params(
        "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())"
        " WHERE prefix = $1 OR id::text = $1 RETURNING id",
        which);
    if (rows.empty()) {
        return pricing::MakeError(pricing::ErrorCode::kNotFound,
                                  "no API key with prefix or id '" + which + "'");
    }
    tx.commit();
    return pricing::Ok{};
}

pricing::Status SetKeyPriceBook(pqxx::connection& conn, const std::string& which,
                                const std::string& book) {
    pqxx::work tx(conn);
    if (!book.empty()) {
        auto key = tx.exec_params(
            "SELECT team, scope FROM api_keys WHERE prefix = $1 OR id::text = $1", which);
        if (key.empty()) {
            return pricing::MakeError(pricing::ErrorCode::kNotFound,
                                      "no API key with prefix or id '" + which + "'");
        }
        auto live = CheckLiveBook(tx, book, key[0]["team"].as<std::string>(),
                                  key[0]["scope"].as<std::string>());
        if (!live.ok()) return live;
    }
    BumpRevision(tx, CatalogChange{{}, /*keys=*/true, false});
    auto rows = tx.exec_params(
        "UPDATE api_keys SET default_price_book = NULLIF($2, '')"
        " WHERE prefix = $1 OR id::text = $1 RETURNING id",
        which, book);
    if (rows.empty()) {
        return pricing::MakeError(pricing::ErrorCode::kNotFound,
                                  "no API key with prefix or id '" + which + "'");
    }
    tx.commit();
    return pricing::Ok{};
}

std::vector<KeyInfo> ListApiKeys(pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<KeyInfo> out;
    for (const auto& r :
         tx.exec_params("SELECT id, prefix, scope, name,"
                        " to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
                        " AS created_at, coalesce(to_char(revoked_at AT TIME ZONE 'UTC', "
                        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '') AS revoked_at,"
                        " coalesce(default_price_book, '') AS default_price_book, team"
                        " FROM api_keys ORDER BY id")) {
        out.push_back({r["id"].as<std::int64_t>(), r["prefix"].as<std::string>(),
                       r["scope"].as<std::string>(), r["name"].as<std::string>(),
                       r["created_at"].as<std::string>(), r["revoked_at"].as<std::string>(),
                       r["default_price_book"].as<std::string>(), r["team"].as<std::string>()});
    }
    return out;
}

}  // namespace gpucost::storage
