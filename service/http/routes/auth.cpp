#include "service/http/routes/auth.hpp"

#include <algorithm>

#include "service/http/codec/problem.hpp"
#include "service/http/route_table.hpp"
#include "service/http/transport/request_context.hpp"
#include "service/log.hpp"

namespace gpucost::http {
namespace {

// Longest Authorization value looked at; real keys are 69 characters.
constexpr std::size_t kMaxKeyBytes = 256;

// The part of a presented key that is safe to log: "gpc_<12 hex>" when it has that shape.
std::string LoggablePrefix(const std::string& key) {
    if (key.size() >= 16 && key.rfind("gpc_", 0) == 0) {
        std::string prefix = key.substr(0, 16);
        bool hex = std::all_of(prefix.begin() + 4, prefix.end(), [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        });
        if (hex) {
            return prefix;
        }
    }
    return "(not a gpucost key)";
}

void Reject(const httplib::Request& req, httplib::Response& res, Fault fault,
            const std::string& detail, const std::string& key_prefix) {
    log::Warn("authentication failed", {{"request_id", CurrentRequestContext().request_id},
                                        {"method", req.method},
                                        {"path", req.path},
                                        {"status", HttpStatusFor(fault)},
                                        {"reason", std::string(FaultCode(fault))},
                                        {"key_prefix", key_prefix},
                                        {"remote_addr", req.remote_addr}});
    WriteFault(res, req, fault, detail);
}

}  // namespace

std::optional<std::string> BearerKey(const httplib::Request& req) {
    if (!req.has_header("Authorization")) {
        return std::nullopt;
    }
    std::string value = req.get_header_value("Authorization");
    if (value.size() > kMaxKeyBytes || value.size() < 7) {
        return std::nullopt;
    }
    std::string scheme = value.substr(0, 7);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (scheme != "bearer ") {
        return std::nullopt;
    }
    std::string key = value.substr(7);
    key.erase(0, key.find_first_not_of(' '));
    key.erase(key.find_last_not_of(' ') + 1);
    return key;
}

std::optional<Principal> RequireKey(const Deps& deps, const httplib::Request& req,
                                    httplib::Response& res, KeyScope needed) {
    if (!deps.keys) {
        WriteProblem(res, req,
                     pricing::MakeError(pricing::ErrorCode::kDatabaseRequired,
                                        "API keys, writes, history, as_of and scenarios need "
                                        "PostgreSQL mode: start gpucost with DATABASE_URL (see "
                                        "docs/database.md)"));
        return std::nullopt;
    }
    auto key = BearerKey(req);
    if (!key) {
        Reject(req, res, Fault::kUnauthenticated,
               "this endpoint needs an API key: send Authorization: Bearer <key>", "");
        return std::nullopt;
    }
    auto principal = deps.keys->Authenticate(*key);
    if (!principal) {
        Reject(req, res, Fault::kUnauthenticated, "the API key is unknown or revoked",
               LoggablePrefix(*key));
        return std::nullopt;
    }
    if (needed == KeyScope::kAdmin && principal->scope != KeyScope::kAdmin) {
        Reject(req, res, Fault::kForbidden,
               "this endpoint needs an admin key; key '" + principal->name + "' has " +
                   std::string(KeyScopeName(principal->scope)) + " scope",
               "gpc_" + principal->prefix);
        return std::nullopt;
    }
    return principal;
}

std::optional<Principal> CallerOf(const Deps& deps, const httplib::Request& req) {
    if (!deps.keys) return std::nullopt;
    auto key = BearerKey(req);
    return key ? deps.keys->Authenticate(*key) : std::nullopt;
}

void RefuseRead(const httplib::Request& req, httplib::Response& res,
                const std::optional<Principal>& caller, const std::string& not_found,
                const std::string& field) {
    if (!caller) {
        return Reject(req, res, Fault::kUnauthenticated,
                      "this carries a team's negotiated prices or actual spend: send "
                      "Authorization: Bearer <key> of its team (or an org key)",
                      "");
    }
    WriteProblem(res, req, pricing::MakeError(pricing::ErrorCode::kNotFound, not_found, field));
}

void AddReadKeyGate(RouteTable& routes, const Deps& deps) {
    if (!deps.keys) {
        return;  // no keys to check: every read is open (docs/database.md, "Who reads what")
    }
    routes.Wrap([deps](const std::string& /*method*/, const std::string& pattern,
                       RouteTable::Handler handler) -> RouteTable::Handler {
        if (pattern.rfind("/v1/", 0) != 0) {
            return handler;  // probes, /openapi.yaml and / stay open
        }
        return [deps, handler](const httplib::Request& req, httplib::Response& res) {
            // With --require-read-key every /v1/ request needs a key. Without it reads are
            // open, but a key that is sent is still checked: an unknown or revoked key is 401,
            // not silently taken as none (a client would believe it is authenticated).
            const bool check = deps.require_read_key || req.has_header("Authorization");
            if (!check || RequireKey(deps, req, res, KeyScope::kRead)) {
                handler(req, res);
            }
        };
    });
}

}  // namespace gpucost::http
