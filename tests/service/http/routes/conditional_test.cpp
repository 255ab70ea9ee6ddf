#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

namespace {

// Every read that answers an ETag (the planning page's and the contract's included).
const char* const kConditionalReads[] = {"/v1/accelerators",
                                         "/v1/accelerators/h100-sxm",
                                         "/v1/providers",
                                         "/v1/offerings?provider=aws&limit=5",
                                         "/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand",
                                         "/v1/catalog",
                                         "/v1/models",
                                         "/v1/models/deepseek-v3",
                                         "/",
                                         "/openapi.yaml"};

// The head of an answer read off the socket as sent (no client library in between), its
// field names in lower case.
std::string HeadOnTheWire(const TestServer& server, const std::string& path,
                          const std::string& fields) {
    std::string answer = server.Raw("GET " + path + " HTTP/1.1\r\nHost: x\r\n" + fields +
                                    "Connection: close\r\n\r\n");
    std::string head = answer.substr(0, answer.find("\r\n\r\n") + 2);
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return head;
}

}  // namespace

TEST_SUITE("conditional") {
    TEST_CASE("every ETag-bearing read answers 304 to its own tag and 200 to another") {
        TestServer server(SampleDeps());
        auto c = server.Client();
        for (const char* path : kConditionalReads) {
            INFO(path);
            auto first = c.Get(path);
            REQUIRE(first);
            REQUIRE(first->status == 200);
            const std::string etag = first->get_header_value("ETag");
            REQUIRE(etag.size() > 4);
            CHECK(etag.front() == '"');
            auto again = c.Get(path, {{"If-None-Match", etag}});
            REQUIRE(again);
            CHECK(again->status == 304);
            CHECK(again->body.empty());
            CHECK(again->get_header_value("ETag") == etag);
            auto other = c.Get(path, {{"If-None-Match", "\"0123456789abcdef\""}});
            REQUIRE(other);
            CHECK(other->status == 200);
            CHECK(other->body == first->body);
        }
    }

    TEST_CASE("gzip, br and identity are distinct strong validators, each matched on its own") {
        TestServer server(SampleDeps());
        auto c = server.Client();
        for (const char* path : {"/v1/catalog", "/v1/offerings?limit=3", "/openapi.yaml"}) {
            INFO(path);
            std::set<std::string> tags;
            for (const char* coding : {"identity", "gzip", "br"}) {
                INFO(coding);
                auto first = c.Get(path, {{"Accept-Encoding", coding}});
                REQUIRE(first);
                REQUIRE(first->status == 200);
                const std::string etag = first->get_header_value("ETag");
                CHECK(etag.substr(0, 2) != "W/");
                tags.insert(etag);
                auto same = c.Get(path, {{"Accept-Encoding", coding}, {"If-None-Match", etag}});
                REQUIRE(same);
                CHECK(same->status == 304);
                CHECK(same->get_header_value("ETag") == etag);
                // The tag of another coding is another representation: sent in full.
                const char* other = std::string(coding) == "gzip" ? "identity" : "gzip";
                auto crossed = c.Get(path, {{"Accept-Encoding", other}, {"If-None-Match", etag}});
                REQUIRE(crossed);
                CHECK(crossed->status == 200);
            }
            // The contract has no br of its own (the library does not compress YAML).
            CHECK(tags.size() == (std::string(path) == "/openapi.yaml" ? 2U : 3U));
        }
    }

    TEST_CASE("the tag is a digest of the body: another body, another tag") {
        gpucost::http::Deps deps = SampleDeps();
        TestServer first(deps);
        deps.openapi_yaml = "openapi: 3.1.1\n";
        TestServer second(deps);
        auto a = first.Client().Get("/openapi.yaml");
        auto b = second.Client().Get("/openapi.yaml");
        REQUIRE(a);
        REQUIRE(b);
        CHECK(a->get_header_value("ETag") != b->get_header_value("ETag"));
        // The same query under another name of the same answer is the same representation.
        auto ordered = first.Client().Get("/v1/offerings?limit=5&provider=aws");
        auto reordered = first.Client().Get("/v1/offerings?provider=aws&limit=5");
        REQUIRE(ordered);
        REQUIRE(reordered);
        CHECK(ordered->body == reordered->body);
        CHECK(ordered->get_header_value("ETag") == reordered->get_header_value("ETag"));
    }

    TEST_CASE("a 304 on the wire has no Content-Length, Content-Type or Content-Encoding") {
        TestServer server(SampleDeps());
        for (const char* path : kConditionalReads) {
            for (const char* coding : {"identity", "gzip"}) {
                INFO(path << " " << coding);
                const std::string fields = std::string("Accept-Encoding: ") + coding + "\r\n";
                const std::string ok = HeadOnTheWire(server, path, fields);
                REQUIRE(ok.rfind("http/1.1 200", 0) == 0);
                const std::size_t at = ok.find("\r\netag: ");
                REQUIRE(at != std::string::npos);
                const std::string etag = ok.substr(at + 8, ok.find("\r\n", at + 2) - at - 8);
                const std::string head =
                    HeadOnTheWire(server, path, fields + "If-None-Match: " + etag + "\r\n");
                CAPTURE(head);
                CHECK(head.rfind("http/1.1 304", 0) == 0);
                CHECK(head.find("\r\ncontent-length:") == std::string::npos);
                CHECK(head.find("\r\ncontent-type:") == std::string::npos);
                CHECK(head.find("\r\ncontent-encoding:") == std::string::npos);
                CHECK(head.find("\r\netag: " + etag + "\r\n") != std::string::npos);
                CHECK(head.find("\r\nvary: ") != std::string::npos);
            }
        }
    }
}
