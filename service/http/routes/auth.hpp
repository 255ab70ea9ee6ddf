#pragma once

#include <optional>
#include <string>

#include <httplib.h>

#include "service/http/catalog_store.hpp"
#include "service/http/router.hpp"

namespace gpucost::http {

// The key of an "Authorization: Bearer <key>" header, or nullopt when absent/other scheme.
std::optional<std::string> BearerKey(const httplib::Request& req);

// Authenticates the request against deps.store and checks its scope (admin satisfies read).
// On failure writes the problem and returns nullopt: 401 (+ WWW-Authenticate) for a
// missing, malformed, unknown or revoked key, 403 for a read key on an admin route, 503
// without a database. Failures are logged with the key's non-secret prefix only.
std::optional<Principal> RequireKey(const Deps& deps, const httplib::Request& req,
                                    httplib::Response& res, KeyScope needed);

}  // namespace gpucost::http
