#include "service/http/transport/transport.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/raw_client.hpp"
#include "tests/support/sample_deps.hpp"
#include "tests/support/test_server.hpp"

using json = nlohmann::json;
using gpucost::testing::RawClient;
using gpucost::testing::SampleDeps;
using gpucost::testing::TestServer;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kHealthz = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

// Larger than what the kernel takes of an answer for a client that reads nothing (on loopback
// the send buffer grows to about 2.3 MB of data by default), so that the server must hold it.
constexpr std::size_t kBigAnswerBytes = std::size_t{4} * 1024 * 1024;
// SO_RCVBUF of a client that reads nothing (Linux rounds it up to a few KiB).
constexpr int kSmallReceiveBytes = 2048;

std::string Get(const std::string& target) {
    return "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
}

// An EventServer with GET /fast and GET /big?n=N (N, a colon, then kBigAnswerBytes of 'x') on an
// ephemeral loopback port; stopped (unless stopped gracefully already) and joined on destruction.
class BareServer {
public:
    explicit BareServer(const gpucost::http::TransportOptions& transport) : server_(transport) {
        server_.Get("/fast", [](const httplib::Request&, httplib::Response& res) {
            res.set_content("fast", "text/plain");
        });
        server_.Get("/big", [](const httplib::Request& req, httplib::Response& res) {
            res.set_content(req.get_param_value("n") + ":" + std::string(kBigAnswerBytes, 'x'),
                            "text/plain");
        });
        port_ = server_.bind_to_any_port("127.0.0.1");
        listener_ = std::thread([this] { server_.listen_after_bind(); });
        while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~BareServer() {
        if (server_.is_running()) server_.stop();
        listener_.join();
    }
    BareServer(const BareServer&) = delete;
    BareServer& operator=(const BareServer&) = delete;
    BareServer(BareServer&&) = delete;
    BareServer& operator=(BareServer&&) = delete;

    int port() const { return port_; }
    gpucost::http::EventServer& server() { return server_; }
    std::size_t UnsentBytes() const { return server_.Stats().unsent_bytes; }

private:
    gpucost::http::EventServer server_;
    int port_ = 0;
    std::thread listener_;
};

// Polls `done` every 10 ms for up to `limit` (a wait with a wide bound, not a timing check).
template <typename Done>
bool WaitUntil(Done done, std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
    auto deadline = Clock::now() + limit;
    while (!done()) {
        if (Clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

struct Answer {
    std::string head;
    std::string body;
};

// Reads until `count` whole answers arrived (or the server closed, or 5 s passed without a
// byte), parsing as it goes: answers of megabytes read in small pieces stay linear.
std::vector<Answer> ReadAnswers(const RawClient& client, std::size_t count,
                                std::size_t bytes_per_read = std::size_t{256} * 1024,
                                std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
    std::string out;
    std::vector<Answer> answers;
    std::size_t start = 0;                     // of the answer being read
    std::size_t head_end = std::string::npos;  // its blank line, once here
    std::size_t end = 0;                       // its end, once its head is here
    while (answers.size() < count) {
        if (head_end == std::string::npos) {
            head_end = out.find("\r\n\r\n", start);
            if (head_end != std::string::npos) {
                std::size_t cl = out.find("Content-Length: ", start);
                std::size_t length = cl == std::string::npos || cl > head_end
                                         ? 0
                                         : std::stoul(out.substr(cl + 16, 20));
                end = head_end + 4 + length;
            }
        }
        if (head_end != std::string::npos && out.size() >= end) {
            answers.push_back({out.substr(start, head_end + 4 - start),
                               out.substr(head_end + 4, end - head_end - 4)});
            start = end;
            head_end = std::string::npos;
            continue;
        }
        std::string chunk = client.ReadSome(bytes_per_read);
        if (chunk.empty()) break;
        out += chunk;
        std::this_thread::sleep_for(pause);
    }
    return answers;
}

// Whether `answer` is /big?n=`n`, whole.
bool IsBig(const Answer& answer, const std::string& n) {
    return answer.head.rfind("HTTP/1.1 200", 0) == 0 && answer.body.rfind(n + ":", 0) == 0 &&
           answer.body.size() == n.size() + 1 + kBigAnswerBytes;
}

std::size_t ResidentKb() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6));
    }
    return 0;
}

}  // namespace

TEST_SUITE("transport") {
    TEST_CASE("200 clients trickling header bytes neither hold workers nor delay a normal client") {
        gpucost::http::ServerOptions options;
        options.request_timeout_s = 4;  // the trickling clients are cut off during the test
        options.max_connections_per_address = 1000;  // all 200 come from 127.0.0.1
        TestServer server(SampleDeps(), options);    // 4 workers
        std::vector<std::unique_ptr<RawClient>> slow;
        // One more that sends part of a head once, then nothing: it is told 408 when cut off.
        RawClient stalled(server.port());
        REQUIRE(stalled.Send("GET /healthz HTTP/1.1\r\nHost: stalled\r\n"));
        for (int i = 0; i < 200; ++i) {
            slow.push_back(std::make_unique<RawClient>(server.port()));
            REQUIRE(slow.back()->connected());
        }
        const std::size_t rss_before_kb = ResidentKb();
        std::string partial = "GET /healthz HTTP/1.1\r\nHost: slow\r\nX-Padding: ";
        double worst_ms = 0;
        auto started = Clock::now();
        // Three trickle rounds, 3 s apart (one header byte per client per round); a normal
        // client asks every 250 ms meanwhile.
        for (int round = 0; round < 3; ++round) {
            for (auto& c : slow) {
                c->Send(partial.substr(static_cast<std::size_t>(round), 1));
            }
            auto next_round = started + std::chrono::seconds(3 * (round + 1));
            while (Clock::now() < next_round) {
                auto t0 = Clock::now();
                auto r = server.Client().Get("/healthz");
                double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                REQUIRE(r);
                CHECK(r->status == 200);
                worst_ms = std::max(worst_ms, ms);
                std::this_thread::sleep_for(std::chrono::milliseconds(250));
            }
        }
        MESSAGE("slowest normal request while 200 clients trickled: " << worst_ms << " ms");
        // Held workers would make it wait the 4 s request timeout; a margin under that survives
        // a busy 2-core machine (1,024 ms was seen there against a limit of 1,000).
        CHECK(worst_ms < 3000);
        // Every trickling client was disconnected once its request took longer than the
        // request timeout, so what they can pin is bounded by time as well as by count.
        auto stats = server.server().Stats();
        CHECK(stats.timed_out >= 201);
        CHECK(stats.open_connections <= 1);
        // Each trickling client was told 408 (unless its next byte raced the close) and closed.
        std::string told = slow.front()->Read();
        CHECK((told.empty() || told.rfind("HTTP/1.1 408", 0) == 0));
        CHECK(slow.front()->ClosedByServer());
        // Cut off part-way, a request is told why (408) before the connection closes.
        std::string cut_off = stalled.Read();
        CHECK(cut_off.rfind("HTTP/1.1 408", 0) == 0);
        CHECK(cut_off.find("Connection: close") != std::string::npos);
        CHECK(stalled.ClosedByServer());
        // Loose bound: 200 connections with a few bytes each must not cost megabytes.
        CHECK(ResidentKb() < rss_before_kb + 64 * 1024);
    }

    TEST_CASE("pipelined requests on one connection are answered in order") {
        TestServer server(SampleDeps());
        RawClient c(server.port());
        REQUIRE(c.Send(kHealthz + "GET /v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n" + kHealthz));
        std::string out = c.Read(3);
        auto first = out.find("HTTP/1.1 200");
        auto second = out.find("HTTP/1.1 404");
        auto third = out.find("HTTP/1.1 200", second);
        CHECK(first != std::string::npos);
        CHECK(second != std::string::npos);
        CHECK(third != std::string::npos);
        CHECK(first < second);
    }

    TEST_CASE("a body that arrives in pieces is read whole") {
        TestServer server(SampleDeps());
        RawClient c(server.port());
        std::string body = R"({"accelerator": "h100-sxm", "precision": "bf16", )"
                           R"("ops": [{"kind": "gemm", "m": 1024, "n": 1024, "k": 1024}]})";
        REQUIRE(
            c.Send("POST /v1/estimates/roofline HTTP/1.1\r\nHost: x\r\n"
                   "Content-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 10)));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        REQUIRE(c.Send(body.substr(10)));
        std::string out = c.Read();
        CHECK(out.rfind("HTTP/1.1 200", 0) == 0);
    }

    TEST_CASE("a client waiting for 100 Continue gets it and its body is read") {
        TestServer server(SampleDeps());
        RawClient c(server.port());
        std::string body = R"({"accelerator": "h100-sxm", "precision": "bf16", )"
                           R"("ops": [{"kind": "gemm", "m": 1024, "n": 1024, "k": 1024}]})";
        REQUIRE(
            c.Send("POST /v1/estimates/roofline HTTP/1.1\r\nHost: x\r\n"
                   "Content-Type: application/json\r\nExpect: 100-continue\r\n"
                   "Content-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n"));
        // The interim answer comes before the body is sent.
        CHECK(c.ReadUntil("\r\n\r\n").rfind("HTTP/1.1 100 Continue", 0) == 0);
        REQUIRE(c.Send(body));
        CHECK(c.Read(1).rfind("HTTP/1.1 200 OK", 0) == 0);
    }

    TEST_CASE("request headers over the limit answer 431 and close") {
        TestServer server(SampleDeps());
        RawClient c(server.port());
        REQUIRE(c.Send("GET /healthz?x=1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: big-1\r\nX-Big: " +
                       std::string(40000, 'a')));
        std::string out = c.Read();
        CHECK(out.rfind("HTTP/1.1 431", 0) == 0);
        CHECK(out.find("application/problem+json") != std::string::npos);
        // The shared Problem body: errors, instance and request_id, as every other problem.
        CHECK(out.find("\r\nX-Request-Id: big-1\r\n") != std::string::npos);
        json problem = json::parse(out.substr(out.find("\r\n\r\n") + 4));
        CHECK(problem["errors"] == json::array());
        CHECK(problem["instance"] == "/healthz");
        CHECK(problem["request_id"] == "big-1");
        CHECK(problem["title"] == "Request Header Fields Too Large");
        CHECK(server.server().Stats().header_too_large == 1);
    }

    TEST_CASE("connections beyond max_connections get a 503 problem") {
        gpucost::http::ServerOptions options;
        options.max_connections = 2;
        TestServer server(SampleDeps(), options);
        RawClient a(server.port());
        RawClient b(server.port());
        REQUIRE(a.Send(kHealthz));
        REQUIRE(b.Send(kHealthz));
        CHECK(a.Read().rfind("HTTP/1.1 200", 0) == 0);
        CHECK(b.Read().rfind("HTTP/1.1 200", 0) == 0);
        RawClient c(server.port());
        std::string out = c.Read();
        CHECK(out.rfind("HTTP/1.1 503", 0) == 0);
        json problem = json::parse(out.substr(out.find("\r\n\r\n") + 4));
        CHECK(problem["code"] == "overloaded");
        CHECK(problem["errors"] == json::array());
        REQUIRE(problem["request_id"].is_string());
        CHECK(out.find("\r\nX-Request-Id: " + problem["request_id"].get<std::string>() + "\r\n") !=
              std::string::npos);
    }

    // The race behind a reset seen under load at SIGTERM: a keep-alive connection that had
    // been answered sent its next request while every worker was busy, so the bytes sat in
    // the kernel and the connection still looked idle when the drain began. Closing a socket
    // with unread bytes sends a reset, losing a request sent before the signal.
    TEST_CASE("a request waiting for a busy worker when the drain begins is answered, not reset") {
        gpucost::http::TransportOptions transport;
        transport.workers = 1;
        gpucost::http::EventServer server(transport);
        server.Get("/fast", [](const httplib::Request&, httplib::Response& res) {
            res.set_content("fast", "text/plain");
        });
        server.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
            std::this_thread::sleep_for(std::chrono::milliseconds(600));
            res.set_content("slow", "text/plain");
        });
        int port = server.bind_to_any_port("127.0.0.1");
        REQUIRE(port > 0);
        std::thread listener([&] { server.listen_after_bind(); });
        while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

        RawClient idle(port);
        REQUIRE(idle.Send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"));
        REQUIRE(idle.Read().rfind("HTTP/1.1 200", 0) == 0);  // answered once: now idle
        RawClient busy(port);
        REQUIRE(busy.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the worker is in /slow
        REQUIRE(idle.Send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"));  // waits in the kernel
        server.StopGracefully(std::chrono::milliseconds(3000));

        std::string second = idle.Read();
        CHECK(second.rfind("HTTP/1.1 200", 0) == 0);
        CHECK(second.find("Connection: close") != std::string::npos);
        CHECK(busy.Read().rfind("HTTP/1.1 200", 0) == 0);
        listener.join();
    }

    TEST_CASE("an idle keep-alive connection is closed after the keep-alive timeout") {
        gpucost::http::ServerOptions options;
        options.keep_alive_timeout_s = 1;
        TestServer server(SampleDeps(), options);
        RawClient c(server.port());
        REQUIRE(c.Send(kHealthz));
        CHECK(c.Read().find("Keep-Alive: timeout=1") != std::string::npos);
        CHECK(c.ClosedByServer());  // within the 5 s receive timeout
    }

    TEST_CASE("one address cannot take every connection: beyond its share, 503 and close") {
        gpucost::http::ServerOptions options;
        options.max_connections = 100;
        options.max_connections_per_address = 2;
        TestServer server(SampleDeps(), options);
        RawClient a(server.port());
        RawClient b(server.port());
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        RawClient c(server.port());
        REQUIRE(c.Send(kHealthz));
        std::string out = c.Read();
        CHECK(out.rfind("HTTP/1.1 503", 0) == 0);
        CHECK(out.find("from your address") != std::string::npos);
        CHECK(c.ClosedByServer());
        CHECK(server.server().Stats().refused_per_address == 1);
        // The two within the share are served.
        REQUIRE(a.Send(kHealthz));
        CHECK(a.Read().rfind("HTTP/1.1 200", 0) == 0);
    }

    // The head gate (installed by the router) refuses a request from its head: the body is
    // never read, the library sees the request with a length of 0 so that the route answers
    // it as usual, and the connection closes after the answer.
    TEST_CASE("a body the head gate refuses is never read: the route answers the head alone") {
        gpucost::http::TransportOptions transport;
        transport.workers = 2;
        gpucost::http::EventServer server(transport);
        server.Post("/upload", [](const httplib::Request& req, httplib::Response& res) {
            res.status = req.has_header("Authorization") ? 200 : 401;
            res.set_content(
                std::to_string(req.body.size()) + " of " + req.get_header_value("Content-Length"),
                "text/plain");
        });
        std::atomic<int> asked{0};
        server.SetHeadGate([&asked](const httplib::Request& head) {
            ++asked;
            return head.method == "POST" && head.path == "/upload" &&
                   !head.has_header("Authorization");
        });
        int port = server.bind_to_any_port("127.0.0.1");
        REQUIRE(port > 0);
        std::thread listener([&] { server.listen_after_bind(); });
        while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

        // The path as the route sees it (percent-decoded); no 100 Continue for a refused body.
        RawClient anonymous(port);
        REQUIRE(
            anonymous.Send("POST /up%6Coad HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                           "Content-Length: 60000\r\n\r\n"));
        std::string out = anonymous.Read();
        CHECK(out.rfind("HTTP/1.1 401", 0) == 0);
        CHECK(out.find("Connection: close") != std::string::npos);
        CHECK(out.substr(out.find("\r\n\r\n") + 4) == "0 of 0");
        // The body sent anyway is dropped by the lingering close, then the connection ends.
        anonymous.Send(std::string(60000, 'x'));
        CHECK(anonymous.ClosedByServer());
        CHECK(server.Stats().refused_before_body == 1);

        // With the key the same body is read whole, on a connection that stays open.
        RawClient keyed(port);
        REQUIRE(
            keyed.Send("POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"
                       "Content-Length: 60000\r\n\r\n" +
                       std::string(60000, 'x')));
        std::string answered = keyed.Read();
        CHECK(answered.rfind("HTTP/1.1 200", 0) == 0);
        CHECK(answered.substr(answered.find("\r\n\r\n") + 4) == "60000 of 60000");
        CHECK(answered.find("Connection: close") == std::string::npos);
        // A request without a body is not asked about.
        REQUIRE(keyed.Send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"));
        CHECK(keyed.Read().rfind("HTTP/1.1 401", 0) == 0);
        CHECK(asked == 2);
        server.stop();
        listener.join();
    }

    TEST_CASE("bodies held across connections have a budget: beyond it 503, before the body") {
        gpucost::http::ServerOptions options;
        options.max_buffered_body_bytes = 100000;
        TestServer server(SampleDeps(), options);
        std::string body = R"({"accelerator": "h100-sxm", "precision": "bf16", )"
                           R"("ops": [{"kind": "gemm", "m": 1024, "n": 1024, "k": 1024}]})";
        body.resize(60000, ' ');  // JSON allows the trailing whitespace
        const std::string head =
            "POST /v1/estimates/roofline HTTP/1.1\r\nHost: x\r\n"
            "Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n";
        RawClient first(server.port());
        REQUIRE(first.Send(head + body.substr(0, 1000)));
        for (int i = 0; i < 100 && server.server().Stats().buffered_body_bytes == 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        CHECK(server.server().Stats().buffered_body_bytes == 60000);  // reserved whole, once

        RawClient second(server.port());
        REQUIRE(second.Send(head));
        std::string refused = second.Read();
        CHECK(refused.rfind("HTTP/1.1 503", 0) == 0);
        CHECK(refused.find("\r\nRetry-After: 1\r\n") != std::string::npos);
        CHECK(refused.find("Connection: close") != std::string::npos);
        json problem = json::parse(refused.substr(refused.find("\r\n\r\n") + 4));
        CHECK(problem["code"] == "overloaded");
        CHECK(problem["instance"] == "/v1/estimates/roofline");
        CHECK(server.server().Stats().refused_over_budget == 1);

        // The first body is served; its share comes back, and the next body fits again.
        REQUIRE(first.Send(body.substr(1000)));
        CHECK(first.Read().rfind("HTTP/1.1 200", 0) == 0);
        for (int i = 0; i < 100 && server.server().Stats().buffered_body_bytes != 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the worker returns
        }
        CHECK(server.server().Stats().buffered_body_bytes == 0);
        RawClient third(server.port());
        REQUIRE(third.Send(head + body));
        CHECK(third.Read().rfind("HTTP/1.1 200", 0) == 0);
    }

    // The Slow Read attack: a worker used to write the answer itself and wait for the client to
    // read it (up to the write timeout), so as many non-reading clients as workers froze the
    // server. Now the worker hands the answer to the event loop and is free at once.
    TEST_CASE(
        "answers no one reads hold no worker: with as many such clients as workers, "
        "another client is answered") {
        gpucost::http::TransportOptions transport;
        transport.workers = 2;
        transport.write_timeout = std::chrono::seconds(30);
        BareServer server(transport);
        std::vector<std::unique_ptr<RawClient>> readers_of_nothing;
        for (int i = 0; i < 2; ++i) {
            readers_of_nothing.push_back(
                std::make_unique<RawClient>(server.port(), kSmallReceiveBytes));
            REQUIRE(readers_of_nothing.back()->Send(Get("/big?n=0") + Get("/big?n=1") +
                                                    Get("/big?n=2") + Get("/big?n=3")));
        }
        REQUIRE(WaitUntil([&] { return server.UnsentBytes() >= 2 * kBigAnswerBytes; }));
        RawClient other(server.port());
        REQUIRE(other.Send(Get("/fast")));
        auto answers = ReadAnswers(other, 1);
        REQUIRE(answers.size() == 1);
        CHECK(answers[0].head.rfind("HTTP/1.1 200", 0) == 0);
        CHECK(answers[0].body == "fast");
    }

    TEST_CASE("pipelined answers stay whole and in order when the client stops reading midway") {
        gpucost::http::TransportOptions transport;
        transport.workers = 1;
        transport.write_timeout = std::chrono::seconds(30);
        BareServer server(transport);
        RawClient pipelining(server.port(), kSmallReceiveBytes);
        REQUIRE(pipelining.Send(Get("/big?n=0") + Get("/fast") + Get("/big?n=2") + Get("/fast")));
        // The first answer is held, the three requests after it wait: the one worker is free.
        REQUIRE(WaitUntil([&] { return server.UnsentBytes() >= kBigAnswerBytes; }));
        RawClient other(server.port());
        REQUIRE(other.Send(Get("/fast")));
        CHECK(other.Read().rfind("HTTP/1.1 200", 0) == 0);
        auto answers = ReadAnswers(pipelining, 4);
        REQUIRE(answers.size() == 4);
        CHECK(IsBig(answers[0], "0"));
        CHECK(answers[1].body == "fast");
        CHECK(IsBig(answers[2], "2"));
        CHECK(answers[3].body == "fast");
    }

    TEST_CASE("unsent answers are capped: one per connection, and beyond the total a 503") {
        gpucost::http::TransportOptions transport;
        transport.workers = 2;
        transport.max_unsent_bytes_total = kBigAnswerBytes * 3 / 2;
        BareServer server(transport);
        RawClient first(server.port(), kSmallReceiveBytes);
        REQUIRE(first.Send(Get("/big?n=0") + Get("/big?n=1") + Get("/big?n=2")));
        REQUIRE(WaitUntil([&] { return server.UnsentBytes() >= kBigAnswerBytes; }));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // time to serve more
        // The connection holds its first answer; the two requests after it wait until it is read.
        CHECK(server.UnsentBytes() < 2 * kBigAnswerBytes);

        RawClient second(server.port(), kSmallReceiveBytes);
        REQUIRE(second.Send(Get("/big?n=9")));
        REQUIRE(WaitUntil([&] { return server.UnsentBytes() >= 2 * kBigAnswerBytes; }));
        // Over the total: refused before its handler runs, told when to retry, closed.
        RawClient third(server.port());
        REQUIRE(third.Send(Get("/fast")));
        std::string refused = third.Read();
        CHECK(refused.rfind("HTTP/1.1 503", 0) == 0);
        CHECK(refused.find("\r\nRetry-After: 1\r\n") != std::string::npos);
        CHECK(refused.find("\r\nConnection: close\r\n") != std::string::npos);
        json problem = json::parse(refused.substr(refused.find("\r\n\r\n") + 4));
        CHECK(problem["code"] == "overloaded");
        CHECK(third.ClosedByServer());
        CHECK(server.server().Stats().refused_unsent_budget == 1);

        // Read by its client, a held answer goes, the requests behind it are answered in order,
        // and the server takes new requests again.
        auto answers = ReadAnswers(first, 3);
        REQUIRE(answers.size() == 3);
        CHECK(IsBig(answers[0], "0"));
        CHECK(IsBig(answers[1], "1"));
        CHECK(IsBig(answers[2], "2"));
        REQUIRE(WaitUntil([&] { return server.UnsentBytes() < 2 * kBigAnswerBytes; }));
        RawClient fourth(server.port());
        REQUIRE(fourth.Send(Get("/fast")));
        CHECK(fourth.Read().rfind("HTTP/1.1 200", 0) == 0);
    }

    // The write timeout is the longest the client may take no byte of its answer (nginx's
    // send_timeout), not the longest the whole answer may take: a slow but steady reader gets
    // all of it, one that stopped reading is closed.
    TEST_CASE(
        "a slow but steady reader gets its whole answer; one that reads nothing is closed "
        "after the write timeout") {
        gpucost::http::TransportOptions transport;
        transport.workers = 2;
        transport.write_timeout = std::chrono::seconds(1);
        BareServer server(transport);
        RawClient steady(server.port(), 16 * 1024);
        RawClient stalled(server.port(), kSmallReceiveBytes);
        REQUIRE(steady.Send(Get("/big?n=1")));
        REQUIRE(stalled.Send(Get("/big?n=2") + Get("/big?n=3")));
        auto started = Clock::now();
        // At most about 1 MB/s (4 KiB, then 4 ms): a few seconds for the answer.
        auto answers = ReadAnswers(steady, 1, 4096, std::chrono::milliseconds(4));
        double took_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
        MESSAGE("the steady reader took " << took_ms
                                          << " ms for its answer (write timeout 1000 ms)");
        REQUIRE(answers.size() == 1);
        CHECK(IsBig(answers[0], "1"));
        // The stalled one: closed by the reaper, its answer's memory given back.
        CHECK(WaitUntil([&] { return server.server().Stats().write_timed_out == 1; }));
        CHECK(WaitUntil([&] { return server.server().Stats().open_connections == 1; }));
        CHECK(server.UnsentBytes() == 0);
        CHECK(ReadAnswers(stalled, 2).size() < 2);
    }

    TEST_CASE("a graceful stop delivers an answer waiting for its reader and answers the others") {
        gpucost::http::TransportOptions transport;
        transport.workers = 1;
        transport.write_timeout = std::chrono::seconds(30);
        BareServer server(transport);
        RawClient slow(server.port(), kSmallReceiveBytes);
        REQUIRE(slow.Send(Get("/big?n=7") + Get("/big?n=8")));
        REQUIRE(WaitUntil([&] { return server.UnsentBytes() >= kBigAnswerBytes; }));
        RawClient other(server.port());
        REQUIRE(other.Send(Get("/fast")));
        std::thread stopper(
            [&] { server.server().StopGracefully(std::chrono::milliseconds(3000)); });
        CHECK(other.Read().rfind("HTTP/1.1 200", 0) == 0);
        // Both requests had arrived: both are answered, the second with Connection: close.
        auto answers = ReadAnswers(slow, 2);
        stopper.join();
        REQUIRE(answers.size() == 2);
        CHECK(IsBig(answers[0], "7"));
        CHECK(IsBig(answers[1], "8"));
        CHECK(answers[1].head.find("\r\nConnection: close\r\n") != std::string::npos);
        CHECK(slow.ClosedByServer());
    }
}
