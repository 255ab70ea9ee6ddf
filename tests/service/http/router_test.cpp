#include "service/http/router.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "pricing/catalog_loader.hpp"
#include "service/http/codec/problem.hpp"
#include "tests/support/raw_client.hpp"
#include "tests/support/sample_catalog.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

std::string StatusLine(const std::string& raw) {
    return raw.substr(0, raw.find("\r\n"));
}

// A path that a route pattern matches: every {id} filled in.
std::string PathOf(const std::string& pattern) {
    std::string path = gpucost::http::RouteTable::Template(pattern);
    for (auto pos = path.find("{id}"); pos != std::string::npos; pos = path.find("{id}")) {
        path.replace(pos, 4, "x1");
    }
    return path;
}

// nginx's size syntax: bytes, or a k/m suffix (1024-based).
std::size_t NginxBytes(const std::string& size) {
    const char unit = static_cast<char>(std::tolower(static_cast<unsigned char>(size.back())));
    const std::size_t scale = unit == 'k' ? 1024 : unit == 'm' ? 1024 * 1024 : 1;
    return std::stoull(scale == 1 ? size : size.substr(0, size.size() - 1)) * scale;
}

// docker/nginx.conf's client_max_body_size per exact location ("" for the http block's).
std::map<std::string, std::size_t> NginxBodyLimits() {
    std::ifstream file(std::string(GPUCOST_SOURCE_DIR) + "/docker/nginx.conf");
    std::stringstream text;
    text << file.rdbuf();
    std::string conf = text.str();
    // Comments could name a size that is not the setting's.
    conf = std::regex_replace(conf, std::regex("#[^\n]*"), "");
    std::map<std::string, std::size_t> limits;
    const std::regex location(R"(location\s*=\s*(\S+)\s*\{([^{}]*)\})");
    const std::regex size(R"(client_max_body_size\s+(\w+)\s*;)");
    std::smatch m;
    std::string rest = conf;
    std::string outside;
    while (std::regex_search(rest, m, location)) {
        outside += m.prefix().str();
        std::smatch sized;
        const std::string block = m[2].str();
        if (std::regex_search(block, sized, size)) limits[m[1].str()] = NginxBytes(sized[1].str());
        rest = m.suffix().str();
    }
    outside += rest;
    int found = 0;
    for (auto it = std::sregex_iterator(outside.begin(), outside.end(), size);
         it != std::sregex_iterator(); ++it) {
        limits[""] = NginxBytes((*it)[1].str());
        ++found;
    }
    CHECK_MESSAGE(found == 1, "one client_max_body_size outside the exact locations");
    return limits;
}

}  // namespace

TEST_SUITE("router") {
    TEST_CASE("an unknown route is a 404 problem") {
        TestServer server(SampleDeps());
        auto r = server.Client().Get("/v2/whatever");
        REQUIRE(r);
        CHECK(r->status == 404);
        CHECK(r->get_header_value("Content-Type") == "application/problem+json");
        CHECK(json::parse(r->body)["code"] == "not_found");
    }

    TEST_CASE("a known route with the wrong method is a 405 with Allow") {
        TestServer server(SampleDeps());
        // (POST /v1/offerings exists since PostgreSQL mode; /v1/accelerators stays read-only.)
        auto r = server.Client().Post("/v1/accelerators", "{}", "application/json");
        REQUIRE(r);
        CHECK(r->status == 405);
        CHECK(r->get_header_value("Allow") == "GET");
        CHECK(r->get_header_value("Content-Type") == "application/problem+json");
        json problem = json::parse(r->body);
        CHECK(problem["code"] == "method_not_allowed");
        CHECK(problem["status"] == 405);
        CHECK(problem["type"] == "urn:gpucost:problem:method_not_allowed");
        CHECK(problem["instance"] == "/v1/accelerators");
        auto d = server.Client().Delete("/v1/accelerators/h100-sxm");
        REQUIRE(d);
        CHECK(d->status == 405);
        CHECK(d->get_header_value("Content-Type") == "application/problem+json");
        // A path with several methods lists them all; PATCH is served on no path.
        auto p = server.Client().Patch("/v1/offerings", "{}", "application/json");
        REQUIRE(p);
        CHECK(p->status == 405);
        CHECK(p->get_header_value("Allow") == "GET, POST");
        CHECK(p->get_header_value("Content-Type") == "application/problem+json");
        CHECK(json::parse(p->body)["code"] == "method_not_allowed");
    }

    TEST_CASE("a body larger than the limit is refused with 413 before it is read") {
        TestServer server(SampleDeps());
        std::string big(70 * 1024, 'x');
        auto r = server.Client().Post("/v1/plans/training", big, "application/json");
        REQUIRE(r);
        CHECK(r->status == 413);
        CHECK(json::parse(r->body)["code"] == "payload_too_large");
    }

    TEST_CASE("the bulk import takes up to 1 MiB, every other route 64 KiB") {
        TestServer server(SampleDeps());
        // Past the framing (this server has no database: 409), where other routes are 413.
        auto big =
            server.Client().Post("/v1/offerings", std::string(300 * 1024, 'x'), "application/json");
        REQUIRE(big);
        CHECK(big->status == 409);
        auto huge = server.Client().Post("/v1/offerings", std::string(1100 * 1024, 'x'),
                                         "application/json");
        REQUIRE(huge);
        CHECK(huge->status == 413);
        CHECK(json::parse(huge->body)["code"] == "payload_too_large");
    }

    TEST_CASE("chunked and compressed requests are refused as problems") {
        TestServer server(SampleDeps());
        std::string chunked = server.Raw(
            "POST /v1/offerings HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        CHECK(StatusLine(chunked) == "HTTP/1.1 411 Length Required");
        CHECK(chunked.find("application/problem+json") != std::string::npos);

        httplib::Headers gz = {{"Content-Encoding", "gzip"}};
        auto r = server.Client().Post("/v1/offerings", gz, "xx", "application/json");
        REQUIRE(r);
        CHECK(r->status == 415);
    }

    TEST_CASE("Range and If-Range are ignored: the whole answer, 200 or its error, comes back") {
        TestServer server(SampleDeps());
        auto whole = server.Client().Get("/healthz");
        REQUIRE(whole);
        for (const char* range : {"bytes=0-10", "bytes=0-1,0-1,0-1", "bytes=-5"}) {
            CAPTURE(range);
            auto r = server.Client().Get("/v1/offerings?limit=2", {{"Range", range}});
            REQUIRE(r);
            CHECK(r->status == 200);
            CHECK_FALSE(r->has_header("Content-Range"));
            CHECK(json::parse(r->body).contains("items"));
        }
        auto conditional = server.Client().Get("/v1/offerings?limit=2",
                                               {{"Range", "bytes=0-10"}, {"If-Range", "\"x\""}});
        REQUIRE(conditional);
        CHECK(conditional->status == 200);
        auto problem = server.Client().Get("/v1/nope", {{"Range", "bytes=0-10"}});
        REQUIRE(problem);
        CHECK(problem->status == 404);
        CHECK(json::parse(problem->body)["code"] == "not_found");  // whole, not 11 bytes
    }

    TEST_CASE("without --cors-origins a preflight is refused and answers carry no CORS headers") {
        TestServer server(SampleDeps());
        auto preflight = server.Client().Options(
            "/v1/plans/spot",
            {{"Origin", "https://app.example.com"}, {"Access-Control-Request-Method", "POST"}});
        REQUIRE(preflight);
        CHECK(preflight->status == 403);
        CHECK(json::parse(preflight->body)["code"] == "cors_origin_not_allowed");
        auto r = server.Client().Get("/healthz", {{"Origin", "https://app.example.com"}});
        REQUIRE(r);
        CHECK_FALSE(r->has_header("Access-Control-Allow-Origin"));
    }

    TEST_CASE("an allowed origin's preflight is 204 with the path's methods and the headers") {
        auto deps = SampleDeps();
        deps.cors_origins = {"https://app.example.com"};
        TestServer server(deps);
        httplib::Headers ask = {{"Origin", "https://app.example.com"},
                                {"Access-Control-Request-Method", "POST"},
                                {"Access-Control-Request-Headers", "content-type, authorization"}};
        auto preflight = server.Client().Options("/v1/plans/spot", ask);
        REQUIRE(preflight);
        CHECK(preflight->status == 204);
        CHECK(preflight->body.empty());
        CHECK(preflight->get_header_value("Access-Control-Allow-Origin") ==
              "https://app.example.com");
        CHECK(preflight->get_header_value("Access-Control-Allow-Methods") == "POST");
        std::string headers = preflight->get_header_value("Access-Control-Allow-Headers");
        for (const char* h : {"Authorization", "Content-Type", "If-Match", "Idempotency-Key"}) {
            CHECK(headers.find(h) != std::string::npos);
        }
        CHECK(preflight->get_header_value("Access-Control-Max-Age") == "600");
        auto offering =
            server.Client().Options("/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand", ask);
        REQUIRE(offering);
        CHECK(offering->get_header_value("Access-Control-Allow-Methods") == "DELETE, GET");

        // Actual answers, errors included, carry the origin and the readable headers.
        for (const char* path : {"/healthz", "/v1/nope"}) {
            CAPTURE(path);
            auto r = server.Client().Get(path, {{"Origin", "https://app.example.com"}});
            REQUIRE(r);
            CHECK(r->get_header_value("Access-Control-Allow-Origin") == "https://app.example.com");
            CHECK(r->get_header_value("Access-Control-Expose-Headers").find("X-Request-Id") !=
                  std::string::npos);
            CHECK(r->get_header_value("Vary") == "Origin");
        }
        // Another origin: no grant, a refused preflight, and no 5xx.
        auto other = server.Client().Get("/healthz", {{"Origin", "https://evil.example"}});
        REQUIRE(other);
        CHECK(other->status == 200);
        CHECK_FALSE(other->has_header("Access-Control-Allow-Origin"));
        ask.erase("Origin");
        ask.emplace("Origin", "https://evil.example");
        auto refused = server.Client().Options("/v1/plans/spot", ask);
        REQUIRE(refused);
        CHECK(refused->status == 403);
        // A preflight for a path that does not exist is still a 404.
        ask.erase("Origin");
        ask.emplace("Origin", "https://app.example.com");
        auto missing = server.Client().Options("/v2/nothing", ask);
        REQUIRE(missing);
        CHECK(missing->status == 404);
    }

    TEST_CASE("a POST without Content-Length is a 411 problem that says what is missing") {
        // cpp-httplib 0.11.4 reads such a body until the read timeout; keep that short here.
        gpucost::http::ServerOptions options;
        options.read_timeout_s = 1;
        TestServer server(SampleDeps(), options);
        std::string raw =
            server.Raw("POST /v1/plans/spot HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        CHECK(StatusLine(raw) == "HTTP/1.1 411 Length Required");
        CHECK(raw.find("application/problem+json") != std::string::npos);
        CHECK(raw.find("Content-Length header") != std::string::npos);
    }

    TEST_CASE("a missing or malformed Content-Length is judged after the route") {
        TestServer server(SampleDeps());
        // Without Content-Length: an unknown path is 404 and a wrong method 405, as with one.
        CHECK(StatusLine(
                  server.Raw("POST /v1/nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) ==
              "HTTP/1.1 404 Not Found");
        CHECK(StatusLine(server.Raw(
                  "POST /v1/accelerators HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) ==
              "HTTP/1.1 405 Method Not Allowed");
        // A Content-Length that is not a number is malformed (400), not too large (413).
        std::string bad = server.Raw(
            "POST /v1/plans/spot HTTP/1.1\r\nHost: x\r\nContent-Length: 1a\r\n"
            "Connection: close\r\n\r\n");
        CHECK(StatusLine(bad) == "HTTP/1.1 400 Bad Request");
        CHECK(bad.find("application/problem+json") != std::string::npos);
    }

    TEST_CASE("an over-long path is refused with 414") {
        TestServer server(SampleDeps());
        auto r = server.Client().Get("/v1/offerings/" + std::string(2000, 'a'));
        REQUIRE(r);
        CHECK(r->status == 414);
        CHECK(r->get_header_value("Content-Type") == "application/problem+json");
    }

    TEST_CASE("a malformed request line gets a problem body from the error handler") {
        TestServer server(SampleDeps());
        std::string raw = server.Raw("GARBAGE\r\n\r\n");
        CHECK(StatusLine(raw) == "HTTP/1.1 400 Bad Request");
        CHECK(raw.find("application/problem+json") != std::string::npos);
    }

    TEST_CASE("an exception in a handler is a 500 problem that leaks nothing") {
        auto deps = SampleDeps();
        deps.catalog = []() -> std::shared_ptr<const gpucost::pricing::Catalog> {
            throw std::runtime_error("secret database password in message");
        };
        TestServer server(deps);
        auto r = server.Client().Get("/v1/offerings");
        REQUIRE(r);
        CHECK(r->status == 500);
        CHECK(r->get_header_value("Content-Type") == "application/problem+json");
        CHECK(r->body.find("secret") == std::string::npos);
        CHECK_FALSE(r->has_header("EXCEPTION_WHAT"));
        CHECK(json::parse(r->body)["code"] == "internal");
    }

    TEST_CASE("every response carries a request id; a safe client id is kept") {
        TestServer server(SampleDeps());
        auto r = server.Client().Get("/healthz", {{"X-Request-Id", "abc-123"}});
        REQUIRE(r);
        CHECK(r->get_header_value("X-Request-Id") == "abc-123");
        auto unsafe = server.Client().Get("/v1/nope", {{"X-Request-Id", "bad id\"<>"}});
        REQUIRE(unsafe);
        std::string id = unsafe->get_header_value("X-Request-Id");
        CHECK_FALSE(id.empty());
        CHECK(id != "bad id\"<>");
        CHECK(json::parse(unsafe->body)["request_id"] == id);
    }

    TEST_CASE("a request the library refuses gets its own request id, not the previous one's") {
        TestServer server(SampleDeps());
        // Before, the answer had no X-Request-Id header, and its body named whichever request
        // the worker thread had served last ("prev" here when the same thread served both).
        server.Raw(
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: prev\r\nConnection: close\r\n\r\n");
        std::string second = server.Raw(
            "GET /v1/accelerators HTTP/1.1\r\nHost: x\r\nX-Request-Id: mine\r\n"
            "Range: bytes=x\r\nConnection: close\r\n\r\n");
        CHECK(StatusLine(second) == "HTTP/1.1 416 Range Not Satisfiable");
        CHECK(second.find("X-Request-Id: mine\r\n") != std::string::npos);
        CHECK(json::parse(second.substr(second.find("\r\n\r\n") + 4))["request_id"] == "mine");

        // A garbage request line carries an id of its own, in the header and the body alike.
        std::string refused = server.Raw("GARBAGE\r\n\r\n");
        CHECK(StatusLine(refused) == "HTTP/1.1 400 Bad Request");
        const std::size_t header = refused.find("X-Request-Id: ");
        REQUIRE(header != std::string::npos);
        std::string id = refused.substr(header + 14);
        id = id.substr(0, id.find("\r\n"));
        CHECK_FALSE(id.empty());
        CHECK(id != "prev");
        CHECK(json::parse(refused.substr(refused.find("\r\n\r\n") + 4))["request_id"] == id);
    }

    TEST_CASE("the error code to status table covers every code") {
        using gpucost::http::HttpStatusFor;
        using gpucost::pricing::ErrorCode;
        CHECK(HttpStatusFor(ErrorCode::kInvalidArgument) == 422);
        CHECK(HttpStatusFor(ErrorCode::kMalformed) == 400);
        CHECK(HttpStatusFor(ErrorCode::kNotFound) == 404);
        CHECK(HttpStatusFor(ErrorCode::kFailedPrecondition) == 409);
        CHECK(HttpStatusFor(ErrorCode::kUnavailable) == 503);
        CHECK(HttpStatusFor(ErrorCode::kDatabaseRequired) == 409);
        CHECK(HttpStatusFor(ErrorCode::kInternal) == 500);
    }
}

TEST_CASE("every route is documented in openapi.yaml and every documented path is routed") {
    // A line-level read of the paths section is enough: paths are the 2-space-indented keys
    // under `paths:`, methods the 4-space-indented keys below them.
    std::ifstream in(GPUCOST_SOURCE_DIR "/openapi.yaml");
    REQUIRE(in);
    std::set<std::pair<std::string, std::string>> documented;
    std::string line;
    std::string current_path;
    bool in_paths = false;
    while (std::getline(in, line)) {
        if (line == "paths:") {
            in_paths = true;
            continue;
        }
        if (in_paths && !line.empty() && line[0] != ' ') {
            break;
        }
        if (in_paths && line.rfind("  /", 0) == 0 && line.back() == ':') {
            current_path = line.substr(2, line.size() - 3);
        } else if (in_paths && line.size() > 4 && line.rfind("    ", 0) == 0 && line[4] != ' ' &&
                   line.back() == ':') {
            std::string method = line.substr(4, line.size() - 5);
            std::transform(method.begin(), method.end(), method.begin(),
                           [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
            documented.emplace(method, current_path);
        }
    }
    auto routes = gpucost::http::BuildRouteTable(SampleDeps()).Describe();
    std::set<std::pair<std::string, std::string>> routed(routes.begin(), routes.end());
    CHECK(routed == documented);
}

TEST_SUITE("router") {
    // The service's table of body limits is the source; the shipped nginx must let through
    // exactly what gpucost takes, or a valid upload is refused 413 by the proxy alone.
    TEST_CASE("the shipped nginx's body limits are the service's, route by route") {
        const gpucost::http::ServerOptions defaults;
        const auto nginx = NginxBodyLimits();
        const auto table = gpucost::http::BodyLimitsOf(defaults);
        for (const auto& route : table) {
            auto it = nginx.find(route.path);
            REQUIRE_MESSAGE(it != nginx.end(),
                            "docker/nginx.conf has no limit for '" << route.path << "'");
            CHECK_MESSAGE(it->second == route.max_body_bytes, route.path << ": nginx " << it->second
                                                                         << ", gpucost "
                                                                         << route.max_body_bytes);
        }
        CHECK(nginx.size() == table.size());  // nginx raises no other route's limit
    }

    // Each route that needs a key whatever its body says is one of the route table's, and it
    // answers from its head: a body that never comes does not keep it waiting (embedded mode:
    // each answers its own 409 database_required).
    TEST_CASE("a route that needs a key or the database answers its head before its body") {
        const gpucost::http::Deps deps = SampleDeps();
        const auto described = gpucost::http::BuildRouteTable(deps).Describe();
        TestServer server(deps);
        for (const auto& route : gpucost::http::KeyedBodyRoutes()) {
            const std::string path = PathOf(route.pattern);
            CAPTURE(route.method);
            CAPTURE(path);
            CHECK(std::find(described.begin(), described.end(),
                            std::make_pair(route.method, gpucost::http::RouteTable::Template(
                                                             route.pattern))) != described.end());
            gpucost::testing::RawClient c(server.port());
            REQUIRE(c.Send(route.method + " " + path +
                           " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           "Content-Length: 60000\r\n\r\n{"));
            std::string out = c.Read();
            CHECK(out.rfind("HTTP/1.1 409", 0) == 0);
            CHECK(out.find("\"database_required\"") != std::string::npos);
            CHECK(out.find("Connection: close") != std::string::npos);
        }
        CHECK(server.server().Stats().refused_before_body ==
              gpucost::http::KeyedBodyRoutes().size());
        // An open route's body is read as before.
        gpucost::testing::RawClient open(server.port());
        REQUIRE(
            open.Send("POST /v1/estimates/roofline HTTP/1.1\r\nHost: x\r\n"
                      "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"));
        CHECK(open.Read().rfind("HTTP/1.1 4", 0) == 0);
        CHECK(server.server().Stats().refused_before_body ==
              gpucost::http::KeyedBodyRoutes().size());
    }
}
