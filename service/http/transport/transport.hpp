#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <httplib.h>

#include "service/http/transport/request_frame.hpp"

namespace gpucost::http {

// How connections are held and requests framed. cpp-httplib 0.11.4 gives each connection a pool
// thread from accept to close, so idle keep-alive clients and clients that trickle their headers
// starve everyone else once they outnumber the threads; and it reads a body only when its handler
// asks, so a body left unread became the next request. EventServer keeps every connection in one
// epoll set, frames each request itself (FrameRequest: head and Content-Length body, strictly),
// and hands a worker the whole frame and nothing beyond it; a worker never waits for a client to
// send, and after the answer the whole frame is gone, whatever the handler read of it. The
// answer goes back to the event loop whole: what the socket does not take at once is sent on
// EPOLLOUT, so a client that reads slowly or not at all holds memory, never a worker.
struct TransportOptions {
    // Threads that run handlers. They never wait on a client's input or for a client to read
    // an answer, so they only need to cover the CPUs plus requests blocked in the database.
    std::size_t workers = 16;
    // Open connections at most; further ones get a 503 and are closed. Kept under FD_SETSIZE
    // (1024): the library answers 500 to a request on a higher descriptor.
    std::size_t max_connections = 900;
    // Open connections from one peer address at most, so that one client cannot take every
    // slot; further ones get a 503. Behind a proxy every connection comes from the proxy's
    // address: raise it to max_connections there and let the proxy limit per client.
    std::size_t max_connections_per_address = 64;
    // A request's line and headers larger than this answer 431 (nginx's default
    // large_client_header_buffers is 4 x 8 KiB).
    std::size_t max_header_bytes = std::size_t{32} * 1024;
    // The request line (414) and each header line (431), CRLF included: cpp-httplib's own
    // limits, so that nothing the transport frames is a request the library cannot parse.
    std::size_t max_request_line_bytes = 8192;
    std::size_t max_header_line_bytes = 8192;
    // Bodies up to this are received before a worker is involved; larger ones are refused
    // (413) by the pre-routing handler and the connection closed.
    std::size_t max_body_bytes = std::size_t{64} * 1024;
    // POSTs to these paths (the bulk offering import, POST /v1/actuals) may carry more, each
    // up to its own limit.
    std::vector<BulkPost> bulk_posts;
    // A request must arrive whole within this time of its first byte (of the connection for
    // the first request); slower clients are disconnected (nginx client_header_timeout).
    std::chrono::milliseconds request_timeout{10000};
    // An idle keep-alive connection is closed after this long.
    std::chrono::milliseconds keep_alive_timeout{5000};
    // Requests per connection before the answer says Connection: close.
    std::size_t keep_alive_max_count = 1000;
    // A connection whose unsent answer makes no progress (not one byte taken by the client)
    // for this long is closed (nginx send_timeout). No worker waits meanwhile: the event loop
    // sends an answer as the client reads it.
    std::chrono::milliseconds write_timeout{5000};
    // Answer bytes held for clients that have not read them yet, across all connections. A
    // request that arrives while they hold this much gets a 503 (Retry-After) before any
    // handler runs, and its connection is closed. Each connection holds at most one answer:
    // it serves its next request only once the previous answer is wholly sent. The default is
    // about twice what one address's share of connections (max_connections_per_address, 64)
    // holds with the largest answers (about 1.1 MB: the Redoc bundle, a training plan at
    // limit 500) on each.
    std::size_t max_unsent_bytes_total = std::size_t{128} * 1024 * 1024;
    // After an answer that closes the connection, the client's remaining bytes are read and
    // dropped for at most this long (a lingering close, as nginx's lingering_time): closing a
    // socket with unread bytes sends a reset, which can destroy the answer before it is read.
    std::chrono::milliseconds linger_timeout{2000};
    // Bytes of request bodies held across all connections at most: a body counts from the
    // moment its head is framed until its answer. A body that would take the total beyond this
    // is refused (503 overloaded, Retry-After) before any of it is read, so that memory for
    // bodies stays bounded whatever the number of connections (docs/performance.md, "Memory").
    // At least the largest body limit, or that body could never be received.
    std::size_t max_buffered_body_bytes = std::size_t{128} * 1024 * 1024;
    // Requests the transport refuses itself (framing faults) are logged as access lines.
    bool log_refusals = true;
};

// Asked of a request that announces a body, once its head is framed and before any of its body
// is read: true when its route refuses it from the head alone (an API key missing, unknown,
// revoked or without the route's scope; a database-only route without a database). The
// transport then never reads the body: it shows the request to the library with a length of 0,
// so that the route gives its own answer, and closes the connection after it. `head` carries
// the method, the path and the header fields as cpp-httplib parses them, no body. The router
// supplies it (RegisterRoutes), so that the transport holds no knowledge of routes.
using HeadGate = std::function<bool(const httplib::Request& head)>;

// Counters of the connection manager (thread-safe snapshots).
struct TransportStats {
    std::size_t open_connections = 0;
    std::uint64_t accepted = 0;
    std::uint64_t refused_over_limit = 0;     // 503: max_connections reached
    std::uint64_t refused_per_address = 0;    // 503: max_connections_per_address reached
    std::uint64_t timed_out = 0;              // request_timeout or keep-alive expiry
    std::uint64_t header_too_large = 0;       // 431
    std::uint64_t refused_framing = 0;        // any answer FrameRequest decided (400-431)
    std::uint64_t refused_before_body = 0;    // the head gate refused; the body was never read
    std::uint64_t refused_over_budget = 0;    // 503: max_buffered_body_bytes reached
    std::size_t buffered_body_bytes = 0;      // bodies held now (counted against the budget)
    std::size_t unsent_bytes = 0;             // answer bytes clients have not read yet (now)
    std::uint64_t write_timed_out = 0;        // closed: no answer byte taken for write_timeout
    std::uint64_t refused_unsent_budget = 0;  // 503: max_unsent_bytes_total reached
};

// An httplib::Server whose accepted sockets go to an epoll-based connection manager (see
// TransportOptions). Routes and hooks are the library's (Server::process_request); the waiting
// for input and the framing of requests are ours: the library reads from a stream that ends
// where FrameRequest says the request ends.
class EventServer : public httplib::Server {
public:
    explicit EventServer(TransportOptions options = {});
    ~EventServer() override;
    EventServer(const EventServer&) = delete;
    EventServer& operator=(const EventServer&) = delete;
    EventServer(EventServer&&) = delete;
    EventServer& operator=(EventServer&&) = delete;

    // The Debian build hard-codes a listen backlog of 5, which turns connection bursts into
    // 1-3 s SYN retries; call after bind.
    bool SetBacklog(int backlog);

    // Graceful stop: closes the listening socket (no new connections), answers every request
    // already received (with Connection: close), closes idle connections, waits up to `grace`
    // for requests still arriving, then closes the rest. listen_after_bind() returns after it.
    void StopGracefully(std::chrono::milliseconds grace);

    TransportStats Stats() const;

    // Installs the head gate (see HeadGate); call before listening.
    void SetHeadGate(HeadGate gate) { head_gate_ = std::move(gate); }

private:
    struct Connection;
    class ConnectionStream;
    // kReadMore: a body was just admitted; what of it the kernel already holds can be read now.
    enum class Progress { kWait, kReadMore, kServe, kRefused, kOverBudget };

    bool process_and_close_socket(socket_t sock) override;
    // The 503 for a connection over a limit, or empty when it may be registered.
    std::string AdmissionRefusal(const std::string& remote_ip);

    void StartWorkers();
    void WorkerLoop();
    void ReaperLoop();
    void Drain();
    void HandleReadable(const std::shared_ptr<Connection>& conn);
    bool Receive(Connection& conn);
    std::size_t ReceiveLimit(const Connection& conn) const;
    static bool HeadEndsIn(const Connection& conn, std::size_t before);
    Progress Advance(Connection& conn);
    Progress AdmitBody(Connection& conn);
    bool RefusedFromHead(const Connection& conn) const;
    void WithholdBody(Connection& conn);
    void ReleaseBody(Connection& conn);
    void ReturnBudget(Connection& conn);
    void RefuseOverBudget(const std::shared_ptr<Connection>& conn);
    bool ServeOne(Connection& conn);
    void RefuseAndLinger(const std::shared_ptr<Connection>& conn);
    void Linger(const std::shared_ptr<Connection>& conn);
    // Shuts the connection for writing and starts dropping what the client still sends, until
    // it closes or linger_timeout passes (caller owns the connection or holds mutex_).
    void BeginLinger(Connection& conn, std::chrono::steady_clock::time_point now);
    void DrainLingering(const std::shared_ptr<Connection>& conn);
    // Sends what the socket takes of the connection's unsent answer, never waiting; false on a
    // socket error (the answer is dropped).
    bool SendUnsent(Connection& conn);
    // Counts the connection's unsent answer bytes in unsent_bytes_.
    void ChargeUnsent(Connection& conn);
    bool OverUnsentBudget() const;
    void RefuseOverUnsentBudget(const std::shared_ptr<Connection>& conn);
    // Waits in epoll for the connection's next event: writable while an answer is unsent,
    // else readable.
    void Rearm(const std::shared_ptr<Connection>& conn);
    bool IdleAfterAnswer(const Connection& conn) const;
    void CloseLocked(Connection& conn);
    void Close(const std::shared_ptr<Connection>& conn);

    TransportOptions options_;
    FrameLimits limits_;
    int epoll_fd_ = -1;
    std::atomic<bool> draining_{false};
    std::atomic<bool> stopping_{false};
    std::chrono::milliseconds grace_{10000};
    std::chrono::steady_clock::time_point drain_deadline_{};

    mutable std::mutex mutex_;  // guards connections_ and every epoll_ctl call
    std::condition_variable changed_;
    std::unordered_map<std::uint64_t, std::shared_ptr<Connection>> connections_;
    std::unordered_map<std::string, std::size_t> connections_per_address_;
    std::uint64_t next_id_ = 1;
    TransportStats stats_;
    HeadGate head_gate_;
    std::atomic<std::size_t> buffered_body_bytes_{0};  // the sum of Connection::budgeted_bytes
    std::atomic<std::size_t> unsent_bytes_{0};         // answer bytes held across all connections

    std::vector<std::thread> workers_;
    std::thread reaper_;
};

// HTTPS (--tls-cert/--tls-key): the library's SSLServer, thread-per-connection, with TLS 1.2
// as the floor and only ECDHE + AEAD cipher suites (TLS 1.3 suites are all AEAD).
class TlsServer final : public httplib::SSLServer {
public:
    using httplib::SSLServer::SSLServer;
    bool SetBacklog(int backlog);
};

// Loads the PEM files and restricts protocols and ciphers; null with `error` set on failure.
std::unique_ptr<TlsServer> MakeTlsServer(const std::string& cert_path, const std::string& key_path,
                                         std::string* error);

// The cipher list for TLS 1.2 (Mozilla "intermediate": ECDHE key exchange, AEAD only).
inline constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

}  // namespace gpucost::http
