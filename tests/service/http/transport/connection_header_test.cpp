#include <doctest/doctest.h>

#include <string>

#include "tests/support/raw_client.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using gpucost::testing::RawClient;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;

// The fields the transport reads itself, as RFC 9110/9112 say: Connection tokens compared
// without case and never percent-decoded, HTTP/1.0 persistence, one Host, values as sent.
TEST_SUITE("connection_header") {
    TEST_CASE("Connection: Close (any case) closes after the answer, and the answer says so") {
        TestServer server(SampleDeps());
        for (const char* field : {"Close", "CLOSE", "keep-alive, close"}) {
            INFO(field);
            RawClient client(server.port());
            REQUIRE(client.Send(std::string("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: ") +
                                field + "\r\n\r\n"));
            std::string answer = client.Read();
            CHECK(answer.rfind("HTTP/1.1 200", 0) == 0);
            CHECK(answer.find("Connection: close\r\n") != std::string::npos);
            CHECK(client.ClosedByServer());
        }
    }

    TEST_CASE("a percent-encoded token is not decoded into close") {
        TestServer server(SampleDeps());
        RawClient client(server.port());
        const std::string request =
            "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: %63lose\r\n\r\n";
        REQUIRE(client.Send(request));
        std::string first = client.Read();
        CHECK(first.rfind("HTTP/1.1 200", 0) == 0);
        CHECK(first.find("Connection: close") == std::string::npos);
        REQUIRE(client.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
        CHECK(client.Read().rfind("HTTP/1.1 200", 0) == 0);  // the connection was kept
    }

    TEST_CASE("HTTP/1.0 keeps the connection only when asked, and the answer says which") {
        TestServer server(SampleDeps());
        RawClient kept(server.port());
        REQUIRE(kept.Send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
        std::string first = kept.Read();
        CHECK(first.find(" 200 ") != std::string::npos);
        CHECK(first.find("Connection: keep-alive\r\n") != std::string::npos);
        CHECK(first.find("Connection: close") == std::string::npos);
        REQUIRE(kept.Send("GET /healthz HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        CHECK(kept.Read().find(" 200 ") != std::string::npos);

        RawClient plain(server.port());
        REQUIRE(plain.Send("GET /healthz HTTP/1.0\r\n\r\n"));
        std::string answer = plain.Read();
        CHECK(answer.find(" 200 ") != std::string::npos);
        CHECK(answer.find("Connection: close\r\n") != std::string::npos);
        CHECK(answer.find("Connection: keep-alive") == std::string::npos);
        CHECK(plain.ClosedByServer());
    }

    TEST_CASE("a request with two Host fields is refused with 400 and not served") {
        TestServer server(SampleDeps());
        RawClient client(server.port());
        REQUIRE(client.Send("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"));
        std::string answer = client.Read();
        CHECK(answer.rfind("HTTP/1.1 400", 0) == 0);
        CHECK(answer.find("application/problem+json") != std::string::npos);
        CHECK(answer.find("more than one Host") != std::string::npos);
        CHECK(client.ClosedByServer());
    }

    TEST_CASE("handlers read field values as sent: a percent sequence is not decoded") {
        TestServer server(SampleDeps());
        RawClient client(server.port());
        // Before, the library decoded "ab%41cd" into the valid request id "abAcd" and echoed it.
        REQUIRE(client.Send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: ab%41cd\r\n\r\n"));
        std::string answer = client.Read();
        CHECK(answer.rfind("HTTP/1.1 200", 0) == 0);
        CHECK(answer.find("X-Request-Id: abAcd") == std::string::npos);
        CHECK(answer.find("X-Request-Id: ab%41cd") == std::string::npos);  // not a valid id
    }
}
