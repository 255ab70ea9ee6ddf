// Conditional reads of the catalog: a strong ETag per answer, 304 for a matching If-None-Match.
#include <string>
#include <string_view>

#include "pricing/catalog_loader.hpp"
#include "service/http/codec/timestamp.hpp"
#include "service/http/router.hpp"

namespace gpucost::http {
namespace {

// Clients may keep an answer but must ask again before using it: prices change at any time,
// and a revalidation that matches costs a 304 without a body.
constexpr char kCacheControl[] = "no-cache";
// What else an answer varies with: CSV or JSON by Accept, compression by Accept-Encoding.
constexpr char kVary[] = "Accept, Accept-Encoding";

bool IsCatalogRead(const std::string& method, const std::string& pattern) {
    if (method != "GET") return false;
    for (std::string_view prefix :
         {"/v1/accelerators", "/v1/providers", "/v1/offerings", "/v1/catalog", "/v1/models"}) {
        if (pattern.rfind(prefix, 0) == 0) return true;
    }
    return false;
}

// If-None-Match holds `etag` (or "*"): RFC 9110 §13.1.2, weak comparison.
bool NoneMatch(const httplib::Request& req, const std::string& etag) {
    std::string header = req.get_header_value("If-None-Match");
    if (header.empty()) return false;
    auto strip_weak = [](std::string_view tag) {
        while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) tag.remove_prefix(1);
        while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) tag.remove_suffix(1);
        if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
        return tag;
    };
    std::string_view rest = header;
    while (!rest.empty()) {
        std::size_t comma = rest.find(',');
        std::string_view tag = strip_weak(rest.substr(0, comma));
        if (tag == "*" || tag == strip_weak(etag)) return true;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return false;
}

// The answer is a function of the current catalog (its version changes with every price,
// and an as_of answer is read from history the current revision contains), the request target,
// the representation asked for, and the day (price ages count to today).
std::string CatalogEtag(const Deps& deps, const httplib::Request& req) {
    std::string target = req.target.empty() ? req.path : req.target;
    std::string key = deps.catalog()->Describe().version + "\n" + target + "\n" +
                      req.get_header_value("Accept") + "\n" + TodayUtc();
    return "\"c" + pricing::ContentHash(key) + "\"";
}

}  // namespace

void AddConditionalReads(RouteTable& routes, const Deps& deps) {
    routes.Wrap([deps](const std::string& method, const std::string& pattern,
                       RouteTable::Handler inner) -> RouteTable::Handler {
        if (!IsCatalogRead(method, pattern)) return inner;
        return
            [deps, inner = std::move(inner)](const httplib::Request& req, httplib::Response& res) {
                const std::string etag = CatalogEtag(deps, req);
                res.set_header("Cache-Control", kCacheControl);
                res.set_header("Vary", kVary);
                if (NoneMatch(req, etag)) {
                    res.set_header("ETag", etag);
                    res.status = 304;
                    return;
                }
                inner(req, res);
                if (res.status != -1 && res.status != 200) return;
                if (!res.has_header("ETag")) {
                    res.set_header("ETag", etag);
                } else if (NoneMatch(req, res.get_header_value("ETag"))) {
                    // The route's own validator (an offering's version in database mode).
                    res.status = 304;
                    res.body.clear();
                }
            };
    });
}

}  // namespace gpucost::http
