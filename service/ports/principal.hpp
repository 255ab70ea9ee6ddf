#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "service/ports/timestamp_us.hpp"

namespace gpucost::ports {

// The ports between the HTTP handlers and what is stored (PostgreSQL mode, or the in-memory
// twins in service/ports/memory/). They name only pricing/ and the standard library, so that
// an adapter (service/storage/) or a command (service/import/) builds without the HTTP layer.

// read: the key's team's things; admin: also writes them (and the shared catalog); org
// (finance): reads every team's books, scenarios and actual spend, writes nothing.
enum class KeyScope { kRead, kAdmin, kOrg };
std::string_view KeyScopeName(KeyScope scope);  // "read" | "admin" | "org"

// Every key belongs to a team (schema/migrations/008_teams.sql); keys issued before teams, and
// keys issued without --team, belong to this one.
inline constexpr char kDefaultTeam[] = "default";

// Who is calling: the API key that authenticated the request.
struct Principal {
    std::int64_t key_id = 0;
    std::string name;
    std::string prefix;  // the non-secret part of the key, safe to log
    KeyScope scope = KeyScope::kRead;
    // The stored price book a plan made with this key is priced with when it names none
    // (docs/database.md, "A team key's default book"); empty: list prices.
    std::string default_price_book;
    std::string team = kDefaultTeam;  // the team that owns what this key writes
};

// Whether `caller` (none: no key sent) reads what team `owner` owns: a key of that team, or an
// org key (docs/database.md, "Teams and who reads what").
inline bool ReadsTeam(const std::optional<Principal>& caller, std::string_view owner) {
    return caller && (caller->scope == KeyScope::kOrg || caller->team == owner);
}

// The auth port: who an API key is. Answered from memory (the snapshot's keys), so it keeps
// working while the database is down.
class KeyAuthenticator {
public:
    KeyAuthenticator() = default;
    virtual ~KeyAuthenticator() = default;
    KeyAuthenticator(const KeyAuthenticator&) = delete;
    KeyAuthenticator& operator=(const KeyAuthenticator&) = delete;
    KeyAuthenticator(KeyAuthenticator&&) = delete;
    KeyAuthenticator& operator=(KeyAuthenticator&&) = delete;

    // The key's principal, or nullopt for an unknown, malformed or revoked key.
    virtual std::optional<Principal> Authenticate(std::string_view key) const = 0;
};

}  // namespace gpucost::ports
