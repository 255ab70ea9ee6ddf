#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

constexpr char kIndex[] =
    "<html><link rel=\"stylesheet\" href=\"{{app.css}}\"><script "
    "src=\"{{app.js}}\"></script></html>";

gpucost::http::Deps WithPage(std::string_view js) {
    gpucost::http::Deps deps = SampleDeps();
    deps.web = {kIndex, js, "body{}"};
    return deps;
}

const httplib::Headers kBrowser = {{"Accept", "text/html,application/xhtml+xml,*/*;q=0.8"}};

std::string AssetPath(const std::string& page, const std::string& ext) {
    std::smatch m;
    std::regex re("(/web/app\\.[0-9a-f]{16}\\." + ext + ")\"");
    REQUIRE(std::regex_search(page, m, re));
    return m[1].str();
}

}  // namespace

TEST_SUITE("web_routes") {
    TEST_CASE(
        "a browser gets the page with hashed asset names; other clients the JSON entry point") {
        TestServer server(WithPage("console.log(1)"));
        auto page = server.Client().Get("/", kBrowser);
        REQUIRE(page);
        CHECK(page->status == 200);
        CHECK(page->get_header_value("Content-Type") == "text/html; charset=utf-8");
        CHECK(page->get_header_value("Cache-Control") == "no-cache");
        CHECK(page->get_header_value("Vary") == "Accept, Accept-Encoding");
        CHECK(page->get_header_value("Content-Security-Policy").find("script-src 'self'") !=
              std::string::npos);
        CHECK(page->body.find("{{") == std::string::npos);

        auto js = server.Client().Get(AssetPath(page->body, "js").c_str());
        REQUIRE(js);
        CHECK(js->status == 200);
        CHECK(js->body == "console.log(1)");
        CHECK(js->get_header_value("Content-Type") == "text/javascript; charset=utf-8");
        CHECK(js->get_header_value("Cache-Control") == "public, max-age=31536000, immutable");
        auto css = server.Client().Get(AssetPath(page->body, "css").c_str());
        REQUIRE(css);
        CHECK(css->get_header_value("Content-Type") == "text/css; charset=utf-8");

        auto api = server.Client().Get("/");
        REQUIRE(api);
        CHECK(api->get_header_value("Content-Type") == "application/json");
        CHECK(api->body.find("\"service\":\"gpucost\"") != std::string::npos);
    }

    TEST_CASE("the page is revalidated by ETag, and a new bundle changes its names and ETag") {
        TestServer one(WithPage("a()"));
        TestServer two(WithPage("b()"));
        auto first = one.Client().Get("/", kBrowser);
        auto second = two.Client().Get("/", kBrowser);
        REQUIRE(first);
        REQUIRE(second);
        std::string etag = first->get_header_value("ETag");
        CHECK(!etag.empty());
        CHECK(etag != second->get_header_value("ETag"));
        CHECK(AssetPath(first->body, "js") != AssetPath(second->body, "js"));

        httplib::Headers again = kBrowser;
        again.emplace("If-None-Match", etag);
        auto not_modified = one.Client().Get("/", again);
        REQUIRE(not_modified);
        CHECK(not_modified->status == 304);
        CHECK(not_modified->body.empty());
        // The other build's asset is not this server's.
        auto stale = one.Client().Get(AssetPath(second->body, "js").c_str());
        REQUIRE(stale);
        CHECK(stale->status == 404);
        CHECK(stale->get_header_value("Content-Type") == "application/problem+json");
    }

    TEST_CASE("built without the page, / tells a browser how to build it") {
        TestServer server(SampleDeps());
        auto page = server.Client().Get("/", kBrowser);
        REQUIRE(page);
        CHECK(page->status == 200);
        CHECK(page->body.find("npm ci") != std::string::npos);
        auto asset = server.Client().Get("/web/app.0000000000000000.js");
        REQUIRE(asset);
        CHECK(asset->status == 404);
    }
}
