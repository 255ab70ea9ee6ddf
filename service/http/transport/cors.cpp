#include "service/http/transport/cors.hpp"

#include <algorithm>

#include "service/http/codec/problem.hpp"

namespace gpucost::http {
namespace {

// Beyond the CORS-safelisted ones, every response header the API sends that a page acts on.
constexpr char kExposedHeaders[] =
    "ETag, Location, Retry-After, X-Request-Id, RateLimit, RateLimit-Policy, Catalog-Version, "
    "API-Version, Deprecation, Sunset, Link, Idempotent-Replayed";

}  // namespace

CorsPolicy::CorsPolicy(std::vector<std::string> origins) : origins_(std::move(origins)) {}

bool CorsPolicy::Allows(const std::string& origin) const {
    if (origin.empty()) {
        return false;
    }
    return std::any_of(origins_.begin(), origins_.end(),
                       [&](const std::string& o) { return o == "*" || o == origin; });
}

void CorsPolicy::AddResponseHeaders(const httplib::Request& req, httplib::Response& res) const {
    if (!enabled() || !req.has_header("Origin")) {
        return;
    }
    const std::string origin = req.get_header_value("Origin");
    // Caches must keep answers for different origins apart even when this one is refused.
    res.set_header("Vary", "Origin");
    if (!Allows(origin)) {
        return;
    }
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Access-Control-Expose-Headers", kExposedHeaders);
}

bool CorsPolicy::IsPreflight(const httplib::Request& req) {
    return req.method == "OPTIONS" && req.has_header("Origin") &&
           req.has_header("Access-Control-Request-Method");
}

void CorsPolicy::AnswerPreflight(const httplib::Request& req, httplib::Response& res,
                                 const std::set<std::string>& methods) const {
    const std::string origin = req.get_header_value("Origin");
    if (!Allows(origin)) {
        WriteFault(res, req, Fault::kCorsOriginNotAllowed,
                   "origin '" + origin +
                       "' is not allowed to call this API from a browser; the "
                       "operator lists allowed origins with --cors-origins");
        return;
    }
    std::string allow;
    for (const auto& m : methods) {
        allow += (allow.empty() ? "" : ", ") + m;
    }
    res.status = 204;
    res.set_header("Access-Control-Allow-Methods", allow);
    res.set_header("Access-Control-Allow-Headers", kCorsAllowedHeaders);
    res.set_header("Access-Control-Max-Age", std::to_string(kCorsMaxAgeS));
}

}  // namespace gpucost::http
