#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "service/http/codec/problem.hpp"
#include "service/http/route_table.hpp"

namespace gpucost::http {
namespace {

// The planning page loads only this server's files and talks only to this server's API; no inline
// script or style, nothing from another host (no CDN, no web fonts). The CSV download navigates
// to a blob: URL, which needs no source here.
constexpr char kWebContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// The page itself is revalidated on every visit (its ETag changes with the bundle); the assets
// it names carry their content hash in the name, so a browser may keep them for a year.
constexpr char kIndexCacheControl[] = "no-cache";
constexpr char kAssetCacheControl[] = "public, max-age=31536000, immutable";

// What / shows when the binary was built without the page (no web/node_modules at configure
// time and no GPUCOST_WEB_DIST).
constexpr char kNotBuiltPage[] = R"html(<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>gpucost</title><link rel="icon" href="data:,"></head>
<body>
<h1>gpucost</h1>
<p>This binary was built without its planning page. To build it: install Node.js and npm, run
<code>npm ci</code> in <code>web/</code> (or <code>.ci/install-deps</code>, which does both),
then configure and build again (<code>cmake --preset release &amp;&amp; cmake --build --preset release</code>).
A prebuilt bundle can be given with <code>-DGPUCOST_WEB_DIST=DIR</code>.</p>
<p>The API works without it: see <a href="/docs">/docs</a> and <a href="/openapi.yaml">/openapi.yaml</a>.</p>
</body>
</html>
)html";

// FNV-1a, 64 bit: names assets by content so a new build never reuses a cached name.
std::string ContentHash(std::string_view bytes) {
    std::uint64_t h = 14695981039346656037ULL;
    for (char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ULL;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return hex;
}

struct Asset {
    std::string_view body;
    const char* content_type;
};

// The page as served: index.html with its asset placeholders replaced by the hashed names.
struct Site {
    std::string index_html;
    std::map<std::string, Asset, std::less<>> assets;  // by file name under /web/
};

void ReplaceAll(std::string& text, std::string_view from, std::string_view to) {
    for (auto pos = text.find(from); pos != std::string::npos;
         pos = text.find(from, pos + to.size())) {
        text.replace(pos, from.size(), to);
    }
}

std::shared_ptr<const Site> BuildSite(const WebBundle& web) {
    auto site = std::make_shared<Site>();
    if (web.app_js.empty()) {
        site->index_html = kNotBuiltPage;
    } else {
        std::string js = "app." + ContentHash(web.app_js) + ".js";
        std::string css = "app." + ContentHash(web.app_css) + ".css";
        site->assets.emplace(js, Asset{web.app_js, "text/javascript; charset=utf-8"});
        site->assets.emplace(css, Asset{web.app_css, "text/css; charset=utf-8"});
        site->index_html = std::string(web.index_html);
        ReplaceAll(site->index_html, "{{app.js}}", "/web/" + js);
        ReplaceAll(site->index_html, "{{app.css}}", "/web/" + css);
    }
    return site;
}

// Browsers ask for text/html when they navigate; curl and API clients (*/*, application/json)
// keep getting the JSON entry point.
bool WantsHtml(const httplib::Request& req) {
    return req.get_header_value("Accept").find("text/html") != std::string::npos;
}

void SetPageHeaders(httplib::Response& res) {
    res.set_header("Content-Security-Policy", kWebContentSecurityPolicy);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
}

// Its ETag and 304 come from the conditional reads (conditional.cpp), as for every document.
void WriteIndex(const Site& site, httplib::Response& res) {
    SetPageHeaders(res);
    res.set_header("Cache-Control", kIndexCacheControl);
    res.set_content(site.index_html, "text/html; charset=utf-8");
}

}  // namespace

void AddWebRoutes(RouteTable& routes, const Deps& deps) {
    auto site = BuildSite(deps.web);
    routes.Get("/", [deps, site](const httplib::Request& req, httplib::Response& res) {
        // Both answers are compressed for clients that accept it; a 304 must name it too.
        res.set_header("Vary", "Accept, Accept-Encoding");
        if (WantsHtml(req)) {
            return WriteIndex(*site, res);
        }
        WriteJson(res, {{"service", "gpucost"},
                        {"version", deps.service_version},
                        {"openapi", "/openapi.yaml"},
                        {"links",
                         {"/v1/accelerators", "/v1/providers", "/v1/offerings", "/v1/catalog",
                          "/healthz", "/readyz"}}});
    });
    routes.Get(std::string("/web/") + kIdPattern, [site](const httplib::Request& req,
                                                         httplib::Response& res) {
        auto it = site->assets.find(std::string_view(req.matches[1].str()));
        if (it == site->assets.end()) {
            return WriteFault(res, req, Fault::kNotFound,
                              "no such file of the planning page (asset names change "
                              "with every build; reload /)");
        }
        res.set_header("Cache-Control", kAssetCacheControl);
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_content(it->second.body.data(), it->second.body.size(), it->second.content_type);
    });
}

}  // namespace gpucost::http
