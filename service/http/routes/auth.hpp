#pragma once

#include <optional>
#include <string>

#include <httplib.h>

#include "service/http/deps.hpp"
#include "service/http/ports.hpp"

namespace gpucost::http {

// The key of an "Authorization: Bearer <key>" header, or nullopt when absent/other scheme.
std::optional<std::string> BearerKey(const httplib::Request& req);

// Authenticates the request against deps.keys and checks its scope (admin satisfies read).
// On failure writes the problem and returns nullopt: 401 (+ WWW-Authenticate) for a
// missing, malformed, unknown or revoked key, 403 for a read key on an admin route, 503
// without a database. Failures are logged with the key's non-secret prefix only.
std::optional<Principal> RequireKey(const Deps& deps, const httplib::Request& req,
                                    httplib::Response& res, KeyScope needed);

// The caller of a read that may be anonymous: the principal of the key sent, or nullopt when
// none was sent (or without a database). A key that was sent and is unknown or revoked was
// refused already by the read gate (AddReadKeyGate); here it counts as none.
std::optional<Principal> CallerOf(const Deps& deps, const httplib::Request& req);

// Writes the refusal of a read of something `caller` may not read (another team's, or
// confidential): 401 (+ WWW-Authenticate) to a caller without a key, who might have one that
// reads it; 404 `not_found` naming `field` with `not_found` as its detail to a key, as if
// it did not exist (its id says nothing to another team).
void RefuseRead(const httplib::Request& req, httplib::Response& res,
                const std::optional<Principal>& caller, const std::string& not_found,
                const std::string& field = "id");

}  // namespace gpucost::http
