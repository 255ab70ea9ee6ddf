#include "service/http/transport/request_frame.hpp"

#include <doctest/doctest.h>

#include <string>

using gpucost::http::FrameLimits;
using gpucost::http::FrameRequest;
using gpucost::http::FrameState;
using gpucost::http::LibraryRequest;
using gpucost::http::RequestFrame;

namespace {

RequestFrame Frame(const std::string& bytes) {
    return FrameRequest(bytes, FrameLimits{});
}

}  // namespace

TEST_SUITE("request_frame") {
    TEST_CASE("a whole head frames the request: head bytes plus Content-Length") {
        std::string head =
            "POST /v1/estimates/roofline HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n";
        RequestFrame f = Frame(head + "hello" + "GET / HTTP/1.1\r\n\r\n");
        REQUIRE(f.state == FrameState::kFramed);
        CHECK(f.head_bytes == head.size());
        CHECK(f.body_bytes == 5);
        CHECK(f.path == "/v1/estimates/roofline");
        CHECK_FALSE(f.expects_continue);
    }

    TEST_CASE("a head still arriving needs more bytes, at any cut") {
        std::string head = "GET /v1/offerings?limit=2 HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
        for (std::size_t cut = 0; cut < head.size(); ++cut) {
            INFO("cut " << cut);
            CHECK(Frame(head.substr(0, cut)).state == FrameState::kNeedHead);
        }
        CHECK(Frame(head).state == FrameState::kFramed);
    }

    TEST_CASE("line endings and header syntax the library could read differently are refused") {
        for (std::string bad : {
                 "GET / HTTP/1.1\nHost: x\r\n\r\n",               // bare LF after the request line
                 "GET / HTTP/1.1\r\nHost: x\n\r\n",               // bare LF after a header
                 "GET / HTTP/1.1\r\nHost: x\r\n\n",               // bare LF as the blank line
                 "GET / HTTP/1.1\r\nContent-Length : 0\r\n\r\n",  // space before the colon
                 "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n",          // obsolete line folding
                 "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",             // bare CR in a value
                 "GET / HTTP/1.1\r\nX: a\x01\r\n\r\n",            // control byte in a value
                 "GET / HTTP/1.1\r\nNo colon\r\n\r\n",
                 "GET  / HTTP/1.1\r\n\r\n",  // two spaces
                 "GET / HTTP/2.0\r\n\r\n",
                 "GET / http/1.1\r\n\r\n",
                 "\r\nGET / HTTP/1.1\r\n\r\n",  // an empty line first
                 "G(T / HTTP/1.1\r\n\r\n",
             }) {
            INFO(bad);
            RequestFrame f = Frame(bad);
            CHECK(f.state == FrameState::kRefused);
            CHECK(f.status == 400);
            CHECK(f.code == "bad_request");
        }
    }

    TEST_CASE("a bare LF is refused as soon as it arrives, before the head is whole") {
        RequestFrame f = Frame("GET / HTTP/1.1\nHost");
        CHECK(f.state == FrameState::kRefused);
        CHECK(f.status == 400);
    }

    TEST_CASE("Content-Length: one field of digits, within the body limit") {
        CHECK(Frame("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx").status ==
              400);
        CHECK(Frame("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx").status ==
              400);
        CHECK(Frame("POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\nx").status == 400);
        CHECK(Frame("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").status == 400);
        CHECK(Frame("POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\nx").status == 400);
        CHECK(Frame("POST / HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n").status ==
              400);
        CHECK(Frame("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n").status == 400);
        RequestFrame big = Frame("POST / HTTP/1.1\r\nContent-Length: 65537\r\n\r\n");
        CHECK(big.status == 413);
        CHECK(big.code == "payload_too_large");
        RequestFrame ok = Frame("POST / HTTP/1.1\r\ncontent-length:  65536 \r\n\r\n");
        CHECK(ok.state == FrameState::kFramed);
        CHECK(ok.body_bytes == 65536);
    }

    TEST_CASE("a body on a method that takes none is refused; Content-Length: 0 is not a body") {
        for (std::string method : {"GET", "HEAD", "OPTIONS", "TRACE", "DELETE", "CONNECT", "FOO"}) {
            INFO(method);
            RequestFrame f = Frame(method + " / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
            CHECK(f.status == 400);
            CHECK(f.detail.find("takes no request body") != std::string::npos);
            CHECK(f.method == method);  // named in the log line of the refusal
            CHECK(f.path == "/");
            CHECK(Frame(method + " / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").status ==
                  400);
            CHECK(Frame(method + " / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").state ==
                  FrameState::kFramed);
        }
        for (std::string method : {"POST", "PUT", "PATCH"}) {
            CHECK(Frame(method + " / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc").state ==
                  FrameState::kFramed);
            RequestFrame chunked =
                Frame(method + " / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
            CHECK(chunked.status == 411);
            CHECK(chunked.code == "length_required");
            CHECK(Frame(method +
                        " / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
                      .status == 411);
        }
    }

    TEST_CASE("Expect: 100-continue is framed with the line to hide; anything else is 417") {
        std::string before = "POST /x HTTP/1.1\r\nHost: x\r\n";
        std::string expect = "Expect: 100-Continue\r\n";
        RequestFrame f = Frame(before + expect + "Content-Length: 4\r\n\r\n");
        REQUIRE(f.state == FrameState::kFramed);
        CHECK(f.expects_continue);
        CHECK(f.expect_begin == before.size());
        CHECK(f.expect_end == before.size() + expect.size());
        RequestFrame empty = Frame(before + expect + "Content-Length: 0\r\n\r\n");
        CHECK_FALSE(empty.expects_continue);  // nothing to wait for; the line is still hidden
        CHECK(empty.expect_end > empty.expect_begin);
        CHECK(Frame(before + "Expect: 200-ok\r\nContent-Length: 4\r\n\r\n").status == 417);
        CHECK(Frame(before + expect + expect + "Content-Length: 4\r\n\r\n").status == 417);
        // Over the limit: refused before any body byte is asked for.
        CHECK(Frame(before + expect + "Content-Length: 100000\r\n\r\n").status == 413);
    }

    TEST_CASE("sizes: request line 414, header line and head 431, decided as soon as exceeded") {
        FrameLimits limits;
        std::string long_target = "GET /" + std::string(limits.max_request_line_bytes, 'a');
        RequestFrame line = FrameRequest(long_target, limits);  // no CRLF yet
        CHECK(line.status == 414);
        CHECK(FrameRequest(long_target + " HTTP/1.1\r\n\r\n", limits).status == 414);
        std::string at_limit =
            "GET /" + std::string(limits.max_request_line_bytes - 16, 'a') + " HTTP/1.1\r\n\r\n";
        CHECK(FrameRequest(at_limit, limits).state == FrameState::kFramed);
        RequestFrame header = FrameRequest(
            "GET / HTTP/1.1\r\nX: " + std::string(limits.max_header_line_bytes, 'b'), limits);
        CHECK(header.status == 431);
        CHECK(header.path == "/");
        std::string many = "GET / HTTP/1.1\r\n";
        while (many.size() <= limits.max_head_bytes)
            many += "X-Pad: " + std::string(100, 'c') + "\r\n";
        CHECK(FrameRequest(many, limits).status == 431);
        CHECK(FrameRequest(many + "\r\n", limits).status == 431);
    }

    TEST_CASE("each bulk route has its own body limit; POST of another path has the default") {
        FrameLimits limits;
        limits.bulk_posts = {{"/v1/offerings", 1024 * 1024}, {"/v1/actuals", 8 * 1024 * 1024}};
        CHECK(limits.BodyLimitFor("POST", "/v1/actuals") == 8 * 1024 * 1024);
        CHECK(limits.BodyLimitFor("POST", "/v1/offerings") == 1024 * 1024);
        CHECK(limits.BodyLimitFor("PUT", "/v1/actuals") == 65536);
        CHECK(limits.BodyLimitFor("POST", "/v1/actuals/x") == 65536);
        CHECK(limits.LargestBody() == 8 * 1024 * 1024);
        const std::string head = "POST /v1/actuals?tag_key=team HTTP/1.1\r\nContent-Length: ";
        RequestFrame fits = FrameRequest(head + "8388608\r\n\r\n", limits);
        CHECK(fits.state == FrameState::kFramed);
        RequestFrame over = FrameRequest(head + "8388609\r\n\r\n", limits);
        CHECK(over.status == 413);
        CHECK(FrameRequest("POST /v1/offerings HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n", limits)
                  .status == 413);
    }

    TEST_CASE("Connection tokens decide the close, compared without case and never decoded") {
        const std::string line = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
        auto close = [&](const std::string& field) {
            RequestFrame f = Frame(line + field + "\r\n");
            REQUIRE(f.state == FrameState::kFramed);
            return f.close_requested;
        };
        CHECK_FALSE(close(""));
        CHECK(close("Connection: close\r\n"));
        CHECK(close("Connection: Close\r\n"));
        CHECK(close("Connection: CLOSE\r\n"));
        CHECK(close("Connection: keep-alive, close\r\n"));
        CHECK(close("Connection: TE,close \r\n"));
        CHECK(close("Connection: keep-alive\r\nConnection: close\r\n"));
        CHECK_FALSE(close("Connection: %63lose\r\n"));  // a token as sent, not percent-decoded
        CHECK_FALSE(close("Connection: closed\r\n"));
        CHECK_FALSE(close("Connection: keep-alive\r\n"));
    }

    TEST_CASE("HTTP/1.0 closes unless it asks for keep-alive") {
        RequestFrame plain = Frame("GET / HTTP/1.0\r\n\r\n");
        CHECK(plain.close_requested);
        CHECK_FALSE(plain.http10_keep_alive);
        RequestFrame kept = Frame("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        CHECK_FALSE(kept.close_requested);
        CHECK(kept.http10_keep_alive);
        CHECK(kept.library_head_differs);
        RequestFrame both = Frame("GET / HTTP/1.0\r\nConnection: Keep-Alive, close\r\n\r\n");
        CHECK(both.close_requested);
        CHECK_FALSE(both.http10_keep_alive);
    }

    TEST_CASE("more than one Host field is refused (400)") {
        RequestFrame f = Frame("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
        CHECK(f.state == FrameState::kRefused);
        CHECK(f.status == 400);
        CHECK(f.detail.find("Host") != std::string::npos);
        CHECK(Frame("GET / HTTP/1.1\r\nhost: a\r\nHOST: a\r\n\r\n").status == 400);
        CHECK(Frame("GET / HTTP/1.1\r\nHost: a\r\n\r\n").state == FrameState::kFramed);
    }

    TEST_CASE("the library is shown field values as sent: each % written %25") {
        const std::string head =
            "POST /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer gpc_%61b\r\n"
            "Connection: %63lose\r\nContent-Length: 3\r\n\r\n";
        RequestFrame f = Frame(head + "a%b");
        REQUIRE(f.state == FrameState::kFramed);
        CHECK(f.library_head_differs);
        CHECK(LibraryRequest(head + "a%b", f) ==
              "POST /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer gpc_%2561b\r\n"
              "Content-Length: 3\r\n\r\na%b");
        // A name is a token that may hold `%`; the library does not decode names.
        const std::string named = "GET / HTTP/1.1\r\nHost: x\r\nX-A%41: %41\r\n\r\n";
        RequestFrame n = Frame(named);
        REQUIRE(n.state == FrameState::kFramed);
        CHECK(LibraryRequest(named, n) == "GET / HTTP/1.1\r\nHost: x\r\nX-A%41: %2541\r\n\r\n");
        // Nothing to change: shown as received.
        CHECK_FALSE(Frame("GET /a%20b HTTP/1.1\r\nHost: x\r\n\r\n").library_head_differs);
    }

    TEST_CASE("the library view hides a handled Expect and says Keep-Alive for HTTP/1.0") {
        const std::string expect =
            "POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi";
        RequestFrame e = Frame(expect);
        REQUIRE(e.state == FrameState::kFramed);
        CHECK(LibraryRequest(expect, e) ==
              "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi");
        const std::string old = "GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n";
        RequestFrame k = Frame(old);
        REQUIRE(k.state == FrameState::kFramed);
        CHECK(LibraryRequest(old, k) == "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
    }

    TEST_CASE("a header line's limit counts each % as the three bytes the library is shown") {
        FrameLimits limits;
        const std::string line = "GET / HTTP/1.1\r\nHost: x\r\n";
        const std::size_t room = limits.max_header_line_bytes - std::string("X-A: \r\n").size();
        CHECK(FrameRequest(line + "X-A: " + std::string(room, 'a') + "\r\n\r\n", limits).state ==
              FrameState::kFramed);
        CHECK(FrameRequest(line + "X-A: " + std::string(room / 3 + 1, '%') + "\r\n\r\n", limits)
                  .status == 431);
    }
}
