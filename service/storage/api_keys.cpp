#include "service/storage/api_keys.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

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

// kInvalidArgument unless `book` is a stored book not deleted; the row is share-locked, so a
// DELETE of that book waits for this transaction and then sees the key naming it.
pricing::Status CheckLiveBook(pqxx::work& tx, const std::string& book) {
    auto rows = tx.exec_params(
        "SELECT 1 FROM price_books WHERE id = $1 AND deleted_at IS NULL FOR SHARE", book);
    if (rows.empty()) {
        return pricing::MakeError(
            pricing::ErrorCode::kInvalidArgument,
            "no price book with id '" + book + "' (GET /v1/price-books lists them)",
            "--price-book");
    }
    return pricing::Ok{};
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

std::optional<http::Principal> VerifyKey(const std::vector<KeyRecord>& records,
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
        return http::Principal{r.id, r.name, r.prefix, r.scope, r.default_price_book};
    }
    return std::nullopt;
}

pricing::Result<IssuedKey> CreateApiKey(pqxx::connection& conn, const std::string& scope,
                                        const std::string& name,
                                        const std::string& default_price_book) {
    if (scope != "admin" && scope != "read") {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  "scope must be admin or read", "--scope");
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
    if (!default_price_book.empty()) {
        if (auto live = CheckLiveBook(tx, default_price_book); !live.ok()) return live.error();
    }
    BumpRevision(tx, CatalogChange{{}, /*keys=*/true, false});
    issued.id =
        tx.exec_params(
              "INSERT INTO api_keys (prefix, salt, key_hash, scope, name, "
              "default_price_book) VALUES ($1, $2, $3, $4, $5, NULLIF($6, '')) RETURNING id",
              issued.prefix, pqxx::binarystring(salt), pqxx::binarystring(hash), scope, name,
              default_price_book)[0][0]
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
        if (auto live = CheckLiveBook(tx, book); !live.ok()) return live;
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
                        " to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
                        " coalesce(to_char(revoked_at AT TIME ZONE 'UTC', "
                        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), coalesce(default_price_book, '')"
                        " FROM api_keys ORDER BY id")) {
        out.push_back({r[0].as<std::int64_t>(), r[1].as<std::string>(), r[2].as<std::string>(),
                       r[3].as<std::string>(), r[4].as<std::string>(), r[5].as<std::string>(),
                       r[6].as<std::string>()});
    }
    return out;
}

}  // namespace gpucost::storage
