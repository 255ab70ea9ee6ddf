#pragma once

#include <set>
#include <string>
#include <vector>

#include <httplib.h>

namespace gpucost::http {

// Cross-origin access for browsers (the Fetch standard's CORS protocol). Origins are exact
// "scheme://host[:port]" strings, or "*" for any; none by default, so a browser page on
// another origin cannot read the API unless the operator names it (--cors-origins).
class CorsPolicy {
public:
    CorsPolicy() = default;
    explicit CorsPolicy(std::vector<std::string> origins);

    bool enabled() const { return !origins_.empty(); }
    bool Allows(const std::string& origin) const;

    // On a response to an allowed Origin: Access-Control-Allow-Origin (the origin itself),
    // Vary: Origin and the response headers a page may read (ETag, Location, Retry-After,
    // X-Request-Id, the rate-limit fields, Catalog-Version, API-Version, Deprecation, Sunset,
    // Link, Idempotent-Replayed). Does nothing without an Origin header or for another origin.
    void AddResponseHeaders(const httplib::Request& req, httplib::Response& res) const;

    // Whether `req` is a preflight: OPTIONS with Origin and Access-Control-Request-Method.
    static bool IsPreflight(const httplib::Request& req);

    // Answers a preflight for a path whose routes allow `methods`: 204 with the allowed
    // methods and request headers for an allowed origin, a 403 problem otherwise.
    void AnswerPreflight(const httplib::Request& req, httplib::Response& res,
                         const std::set<std::string>& methods) const;

private:
    std::vector<std::string> origins_;
};

// Request headers a page may send: the ones the API reads.
inline constexpr char kCorsAllowedHeaders[] =
    "Authorization, Content-Type, Accept, If-Match, If-None-Match, Idempotency-Key, X-Request-Id";
// How long a browser may cache a preflight answer, in seconds (browsers cap it: Chromium at
// 7200, Firefox at 86400).
inline constexpr int kCorsMaxAgeS = 600;

}  // namespace gpucost::http
