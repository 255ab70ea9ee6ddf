#include <memory>
#include <string>
#include <string_view>

#include "service/http/codec/problem.hpp"
#include "service/http/route_table.hpp"

namespace gpucost::http {
namespace {

// The page loads only this server's files: the Redoc bundle and /openapi.yaml. The policy
// makes the browser refuse anything else (no CDN, no fonts from elsewhere); Redoc needs inline
// styles, and runs its search index in a worker it makes from a blob.
constexpr char kDocsContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

constexpr char kDocsPage[] = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gpucost API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="/openapi.yaml" hide-download-button="false"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
)html";

// The bundle changes only with the binary; a day of caching spares repeat visits 1 MB.
constexpr char kBundleCacheControl[] = "public, max-age=86400";

// The bundle's one remote reference: the "API docs by Redocly" logo in the side menu. It is
// served as an empty data: URL instead (the image then fails and Redoc hides it), so the page
// asks nothing of another host even without the Content-Security-Policy.
constexpr std::string_view kRemoteLogoUrl = "https://cdn.redoc.ly/redoc/logo-mini.svg";
constexpr std::string_view kNoLogoUrl = "data:,";

std::string LocalOnly(std::string_view bundle) {
    std::string out(bundle);
    for (auto pos = out.find(kRemoteLogoUrl); pos != std::string::npos;
         pos = out.find(kRemoteLogoUrl, pos + kNoLogoUrl.size())) {
        out.replace(pos, kRemoteLogoUrl.size(), kNoLogoUrl);
    }
    return out;
}

}  // namespace

void AddDocsRoutes(RouteTable& routes, const Deps& deps) {
    routes.Get("/docs", [deps](const httplib::Request& req, httplib::Response& res) {
        if (deps.redoc_js.empty()) {
            return WriteFault(
                res, req, Fault::kDocsNotBundled,
                "this build has no API reference page (it was built without node_modules; run "
                "npm ci and rebuild); the contract itself is at /openapi.yaml");
        }
        res.set_header("Content-Security-Policy", kDocsContentSecurityPolicy);
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_content(kDocsPage, "text/html; charset=utf-8");
    });
    auto bundle = std::make_shared<const std::string>(LocalOnly(deps.redoc_js));
    routes.Get("/docs/redoc.standalone.js",
               [deps, bundle](const httplib::Request& req, httplib::Response& res) {
                   if (deps.redoc_js.empty()) {
                       return WriteFault(res, req, Fault::kDocsNotBundled,
                                         "this build has no API reference page");
                   }
                   res.set_header("Cache-Control", kBundleCacheControl);
                   res.set_header("X-Content-Type-Options", "nosniff");
                   res.set_content(*bundle, "text/javascript; charset=utf-8");
               });
}

}  // namespace gpucost::http
