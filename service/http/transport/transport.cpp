#include "service/http/transport/transport.hpp"

#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include "service/http/codec/problem.hpp"
#include "service/http/transport/api_version.hpp"
#include "service/http/transport/request_context.hpp"
#include "service/log.hpp"

namespace gpucost::http {
namespace {

using Clock = std::chrono::steady_clock;

// Wakes idle workers and the reaper this often to notice a stop.
constexpr int kPollIntervalMs = 100;
// One recv() per read; a request is usually far smaller.
constexpr std::size_t kRecvChunkBytes = std::size_t{16} * 1024;

// Queue that runs each accepted connection's task on the accept thread at once: the task is
// our process_and_close_socket override, which only registers the socket with epoll.
class HandOffQueue final : public httplib::TaskQueue {
public:
    explicit HandOffQueue(std::function<void()> on_shutdown)
        : on_shutdown_(std::move(on_shutdown)) {}
    void enqueue(std::function<void()> fn) override { fn(); }
    void shutdown() override { on_shutdown_(); }

private:
    std::function<void()> on_shutdown_;
};

void Address(int fd, bool peer, std::string& ip, int& port) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    auto* sa = reinterpret_cast<sockaddr*>(&addr);
    int rc = peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len);
    if (rc != 0) {
        return;
    }
    char host[NI_MAXHOST] = {};
    if (::getnameinfo(sa, len, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) == 0) {
        ip = host;
    }
    if (addr.ss_family == AF_INET) {
        port = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    } else if (addr.ss_family == AF_INET6) {
        port = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    }
}

// Best effort: the socket is non-blocking and about to be closed.
void SendAndForget(int fd, std::string_view bytes) {
    (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

std::string_view TrimHeaderValue(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// Values of header `name` in a request head (request line excluded), in order.
std::vector<std::string_view> HeaderValues(std::string_view head, std::string_view name) {
    std::vector<std::string_view> values;
    std::size_t line_start = head.find('\n');
    while (line_start != std::string_view::npos && line_start + 1 < head.size()) {
        std::size_t begin = line_start + 1;
        std::size_t end = head.find('\n', begin);
        std::string_view line =
            head.substr(begin, end == std::string_view::npos ? end : end - begin);
        std::size_t colon = line.find(':');
        if (colon != std::string_view::npos &&
            EqualsIgnoreCase(TrimHeaderValue(line.substr(0, colon)), name)) {
            values.push_back(TrimHeaderValue(line.substr(colon + 1)));
        }
        line_start = end;
    }
    return values;
}

// The path of the request line at the start of `head` ("" when there is none to trust).
std::string_view RequestPath(std::string_view head) {
    constexpr std::size_t kMaxInstanceBytes = 1024;  // the router's longest path
    std::string_view line = head.substr(0, head.find('\n'));
    std::size_t start = line.find(' ');
    if (start == std::string_view::npos) return {};
    std::string_view target = line.substr(start + 1);
    target = target.substr(0, target.find_first_of(" ?\r"));
    if (target.empty() || target.front() != '/' || target.size() > kMaxInstanceBytes) return {};
    return target;
}

// An answer written below cpp-httplib (431, 503 overloaded): the shared Problem body and an
// X-Request-Id, from what of the request `head` has arrived (nothing, for a refused
// connection).
std::string ProblemResponse(int status, std::string_view code, std::string_view detail,
                            std::string_view head = {}, std::optional<std::string_view> path = {},
                            std::string_view extra_headers = {}) {
    auto client_ids = HeaderValues(head, "X-Request-Id");
    BeginRequest(client_ids.empty() ? std::string() : std::string(client_ids.front()));
    const std::string request_id = CurrentRequestContext().request_id;
    std::string body =
        ProblemText(status, code, detail, path ? *path : RequestPath(head), request_id);
    return "HTTP/1.1 " + std::to_string(status) + " " + ProblemTitle(status) +
           "\r\nContent-Type: application/problem+json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nX-Request-Id: " + request_id + "\r\n" +
           kApiVersionHeader + ": " + std::string(kApiVersion) + "\r\n" +
           std::string(extra_headers) + "Connection: close\r\n\r\n" + body;
}
// The same, for a fault of problem.cpp's table.
std::string ProblemResponse(Fault fault, std::string_view detail, std::string_view head = {},
                            std::optional<std::string_view> path = {},
                            std::string_view extra_headers = {}) {
    return ProblemResponse(HttpStatusFor(fault), FaultCode(fault), detail, head, path,
                           extra_headers);
}

// Bytes written to `fd` that the client has not acknowledged yet (-1 when unknown).
int KernelQueuedBytes(int fd) {
    int bytes = 0;
    return ::ioctl(fd, SIOCOUTQ, &bytes) == 0 ? bytes : -1;
}

// Bytes the kernel holds for `fd` that no worker has read yet: a request may be waiting for a
// free worker. Closing a socket with unread bytes sends a reset, and that request is lost.
bool UnreadBytesWaiting(int fd) {
    int bytes = 0;
    return ::ioctl(fd, FIONREAD, &bytes) == 0 && bytes > 0;
}

// Whether bytes [from, end) of `in` can change what FrameRequest says about a head that was
// still incomplete at `from`: the blank line, a bare LF (refused at once), or a line or head
// over its limit. Anything else is more of a line already judged incomplete, so a client that
// trickles its head costs one framing per request, not one per packet.
bool WorthFraming(std::string_view in, std::size_t from, const FrameLimits& limits) {
    if (in.size() > limits.max_head_bytes) return true;
    std::size_t begin = from >= 3 ? from - 3 : 0;
    if (in.find("\r\n\r\n", begin) != std::string_view::npos) return true;
    for (std::size_t pos = in.find('\n', from); pos != std::string_view::npos;
         pos = in.find('\n', pos + 1)) {
        if (pos == 0 || in[pos - 1] != '\r') return true;
    }
    std::size_t last_lf = in.rfind('\n');
    std::size_t line_bytes =
        last_lf == std::string_view::npos ? in.size() : in.size() - last_lf - 1;
    return line_bytes > std::min(limits.max_request_line_bytes, limits.max_header_line_bytes);
}

// The head's bytes as far as they go (the whole buffer while the blank line has not come).
std::string_view HeadOf(std::string_view in) {
    std::size_t end = in.find("\r\n\r\n");
    return end == std::string_view::npos ? in : in.substr(0, end + 4);
}

// The head as the route will read it: the target's path percent-decoded (cpp-httplib 0.11.4's
// Server::parse_request_line), header values as sent (LibraryRequest shows the library each
// `%` as `%25`, so its decoding gives them back), fields with an empty value dropped. The head
// gate must see the request as the route will, or it could judge another one.
httplib::Request HeadRequest(std::string_view head, const RequestFrame& frame,
                             const std::string& remote_ip) {
    httplib::Request req;
    req.method = frame.method;
    req.path = httplib::detail::decode_url(frame.path, false);
    req.remote_addr = remote_ip;
    std::size_t line_start = head.find('\n');
    while (line_start != std::string_view::npos && line_start + 1 < head.size()) {
        std::size_t begin = line_start + 1;
        std::size_t end = head.find('\n', begin);
        std::string_view line =
            head.substr(begin, end == std::string_view::npos ? end : end - begin);
        std::size_t colon = line.find(':');
        std::string_view value = colon == std::string_view::npos
                                     ? std::string_view()
                                     : TrimHeaderValue(line.substr(colon + 1));
        if (!value.empty()) {
            req.headers.emplace(std::string(line.substr(0, colon)), std::string(value));
        }
        line_start = end;
    }
    return req;
}

// The head of `frame` as the library is to see it when its body is withheld: the Expect and
// Content-Length lines dropped and "Content-Length: 0" in their place (a POST without one would
// be refused 411 before its route could answer).
std::string HeadWithoutBody(std::string_view in, const RequestFrame& frame) {
    std::string shown;
    shown.reserve(frame.head_bytes + 24);
    std::size_t pos = 0;
    const std::size_t fields_end = frame.head_bytes - 2;  // before the blank line
    std::pair<std::size_t, std::size_t> spans[] = {{frame.expect_begin, frame.expect_end},
                                                   {frame.length_begin, frame.length_end}};
    if (spans[1].first < spans[0].first) std::swap(spans[0], spans[1]);
    for (const auto& [begin, end] : spans) {
        if (end <= begin) continue;
        shown.append(in.substr(pos, begin - pos));
        pos = end;
    }
    shown.append(in.substr(pos, fields_end - pos));
    shown.append("Content-Length: 0\r\n\r\n");
    return shown;
}

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// A lingering close reads at most this much before it gives up on a polite end.
constexpr std::size_t kMaxLingerBytes = std::size_t{1024} * 1024;
// A connection's answer buffer keeps its memory between answers up to this size; a larger one
// is given back once its answer is out, so idle keep-alive connections hold little.
constexpr std::size_t kKeptOutCapacityBytes = std::size_t{64} * 1024;

}  // namespace

struct EventServer::Connection {
    int fd = -1;
    std::uint64_t id = 0;
    std::string in;               // received bytes; the current request starts at in[0]
    std::size_t framed_upto = 0;  // in.size() when the current head was last judged incomplete
    RequestFrame frame;           // of the current request, once its head is whole (kFramed)
    bool continue_sent = false;   // the 100 Continue for the current request went out
    std::size_t served = 0;       // requests answered on this connection
    bool busy = false;            // a worker owns it (guarded by mutex_)
    bool lingering = false;  // answered with Connection: close; reading to EOF (shut for writes)
    std::size_t lingered_bytes = 0;
    // Bytes of the current body counted against max_buffered_body_bytes (0 when none is held).
    std::size_t budgeted_bytes = 0;
    // The current request's body was withheld (HeadGate) or refused: the connection closes
    // after the answer, and its lingering close may drop this many more bytes of that body.
    bool close_after = false;
    std::size_t unread_body_bytes = 0;
    // The answer on its way to the client, owned here once the worker has built it: out[0,
    // out_sent) has gone. While it is unsent the connection waits for EPOLLOUT and serves no
    // further request (its pipelined requests wait in `in` and the kernel).
    std::string out;
    std::size_t out_sent = 0;
    std::size_t out_charged = 0;     // of `out`, counted in EventServer::unsent_bytes_
    bool close_after_out = false;    // the answer closes the connection: linger once it is out
    Clock::time_point out_progress;  // when the client last took bytes of `out`
    int kernel_queued_bytes = -1;    // the kernel's unsent bytes when the reaper last looked
    Clock::time_point deadline;
    std::string remote_ip;
    int remote_port = 0;
    std::string local_ip;
    int local_port = 0;
};

// The library's parser reads through this: exactly one framed request (FrameRequest), then end
// of stream. It never reads the socket, so it cannot take a byte of the next request or wait on
// a client. Its answer is appended to the connection's `out`, which the event loop sends: it
// never writes the socket either, so it cannot wait on a client that does not read.
class EventServer::ConnectionStream final : public httplib::Stream {
public:
    ConnectionStream(Connection& conn, std::string_view request) : conn_(conn), request_(request) {}

    bool is_readable() const override { return read_ < request_.size(); }
    bool is_writable() const override { return true; }

    ssize_t read(char* ptr, size_t size) override {
        std::size_t n = std::min(size, request_.size() - read_);
        std::memcpy(ptr, request_.data() + read_, n);
        read_ += n;
        return static_cast<ssize_t>(n);
    }

    // Collects the answer, so that status line, headers and body leave in one send().
    ssize_t write(const char* ptr, size_t size) override {
        conn_.out.append(ptr, size);
        return static_cast<ssize_t>(size);
    }

    void get_remote_ip_and_port(std::string& ip, int& port) const override {
        ip = conn_.remote_ip;
        port = conn_.remote_port;
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override {
        ip = conn_.local_ip;
        port = conn_.local_port;
    }
    socket_t socket() const override { return conn_.fd; }

private:
    Connection& conn_;
    std::string_view request_;
    std::size_t read_ = 0;
};

EventServer::EventServer(TransportOptions options) : options_(std::move(options)) {
    limits_.max_request_line_bytes = options_.max_request_line_bytes;
    limits_.max_header_line_bytes = options_.max_header_line_bytes;
    limits_.max_head_bytes = options_.max_header_bytes;
    limits_.max_body_bytes = options_.max_body_bytes;
    limits_.bulk_posts = options_.bulk_posts;
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    new_task_queue = [this] { return new HandOffQueue([this] { Drain(); }); };
    StartWorkers();
}

EventServer::~EventServer() {
    stopping_ = true;
    for (auto& t : workers_) {
        if (t.joinable()) t.join();
    }
    if (reaper_.joinable()) reaper_.join();
    for (auto& [id, conn] : connections_) {
        ::close(conn->fd);
    }
    connections_.clear();
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

bool EventServer::SetBacklog(int backlog) {
    return ::listen(svr_sock_, backlog) == 0;
}

void EventServer::StopGracefully(std::chrono::milliseconds grace) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        grace_ = grace;
    }
    // Connections the kernel completed but nobody accepted yet would be reset when the
    // listening socket closes: take them in first, so their requests are answered.
    socket_t listener = svr_sock_;
    if (listener != INVALID_SOCKET) {
        // Non-blocking for the sweep; the accept thread treats EAGAIN as "try again" until
        // stop() below closes the socket.
        ::fcntl(listener, F_SETFL, ::fcntl(listener, F_GETFL, 0) | O_NONBLOCK);
        for (;;) {
            socket_t sock = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (sock == INVALID_SOCKET) {
                break;
            }
            process_and_close_socket(sock);
        }
    }
    stop();
}

TransportStats EventServer::Stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    TransportStats s = stats_;
    s.open_connections = connections_.size();
    s.buffered_body_bytes = buffered_body_bytes_.load();
    s.unsent_bytes = unsent_bytes_;
    return s;
}

void EventServer::StartWorkers() {
    for (std::size_t i = 0; i < std::max<std::size_t>(1, options_.workers); ++i) {
        workers_.emplace_back([this] { WorkerLoop(); });
    }
    reaper_ = std::thread([this] { ReaperLoop(); });
}

// Called by the library on the accept thread for each new connection.
bool EventServer::process_and_close_socket(socket_t sock) {
    std::string remote_ip;
    int remote_port = 0;
    Address(sock, true, remote_ip, remote_port);
    if (std::string refusal = AdmissionRefusal(remote_ip); !refusal.empty()) {
        // Whatever request already arrived is read first, so that closing does not reset the
        // connection before the client has read the 503.
        char discard[kRecvChunkBytes];
        while (::recv(sock, discard, sizeof(discard), MSG_DONTWAIT) > 0) {
        }
        SendAndForget(sock, refusal);
        ::shutdown(sock, SHUT_WR);
        ::close(sock);
        return false;
    }
    int flags = ::fcntl(sock, F_GETFL, 0);
    ::fcntl(sock, F_SETFL, flags | O_NONBLOCK);
    int one = 1;
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

    auto conn = std::make_shared<Connection>();
    conn->fd = sock;
    conn->deadline = Clock::now() + options_.request_timeout;
    conn->remote_ip = std::move(remote_ip);
    conn->remote_port = remote_port;
    Address(sock, false, conn->local_ip, conn->local_port);

    std::lock_guard<std::mutex> lock(mutex_);
    conn->id = next_id_++;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLONESHOT;
    ev.data.u64 = conn->id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, sock, &ev) != 0) {
        ::close(sock);
        return false;
    }
    ++connections_per_address_[conn->remote_ip];
    connections_.emplace(conn->id, std::move(conn));
    return true;
}

std::string EventServer::AdmissionRefusal(const std::string& remote_ip) {
    std::unique_lock<std::mutex> lock(mutex_);
    ++stats_.accepted;
    if (connections_.size() >= options_.max_connections) {
        ++stats_.refused_over_limit;
        lock.unlock();
        return ProblemResponse(Fault::kOverloaded, "too many open connections; retry later");
    }
    auto it = connections_per_address_.find(remote_ip);
    if (it != connections_per_address_.end() &&
        it->second >= options_.max_connections_per_address) {
        ++stats_.refused_per_address;
        lock.unlock();
        return ProblemResponse(Fault::kOverloaded,
                               "too many open connections from your address (at most " +
                                   std::to_string(options_.max_connections_per_address) +
                                   "); reuse a keep-alive connection or retry later");
    }
    return {};
}

void EventServer::WorkerLoop() {
    while (!stopping_) {
        epoll_event ev{};
        int n = ::epoll_wait(epoll_fd_, &ev, 1, kPollIntervalMs);
        if (n <= 0) {
            continue;
        }
        std::shared_ptr<Connection> conn;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = connections_.find(ev.data.u64);
            if (it == connections_.end() || it->second->busy) {
                continue;  // closed by the reaper meanwhile
            }
            conn = it->second;
            conn->busy = true;
        }
        HandleReadable(conn);
    }
}

// Sends what is left of an answer the client was slow to read; reads what arrived; answers
// every complete request; waits in epoll for the rest. An answer the socket does not take at
// once is left to the event loop (EPOLLOUT), and the requests after it wait until it is out.
void EventServer::HandleReadable(const std::shared_ptr<Connection>& conn) {
    if (conn->lingering) {
        return DrainLingering(conn);
    }
    if (!conn->out.empty()) {
        if (!SendUnsent(*conn)) return Close(conn);
        if (!conn->out.empty()) return Rearm(conn);
        if (conn->close_after_out) return Linger(conn);
        conn->deadline = Clock::now() + (conn->in.empty() ? options_.keep_alive_timeout
                                                          : options_.request_timeout);
    }
    bool eof = Receive(*conn);
    for (;;) {
        switch (Advance(*conn)) {
            case Progress::kRefused:
                return RefuseAndLinger(conn);
            case Progress::kOverBudget:
                return RefuseOverBudget(conn);
            case Progress::kReadMore:
                eof = Receive(*conn) || eof;
                continue;
            case Progress::kWait:
                return eof ? Close(conn) : Rearm(conn);
            case Progress::kServe:
                break;
        }
        if (OverUnsentBudget()) {
            return RefuseOverUnsentBudget(conn);
        }
        const bool keep_open = ServeOne(*conn);
        ReleaseBody(*conn);
        if (!conn->out.empty()) {
            conn->close_after_out = !keep_open;
            return Rearm(conn);
        }
        if (!keep_open) {
            return Linger(conn);
        }
        if (conn->in.empty()) {
            conn->deadline = Clock::now() + options_.keep_alive_timeout;
            return eof ? Close(conn) : Rearm(conn);
        }
        conn->deadline = Clock::now() + options_.request_timeout;  // a pipelined request
    }
}

// Appends what the kernel holds, up to ReceiveLimit (pipelined requests beyond it wait in the
// kernel). True at end of stream or on a socket error.
bool EventServer::Receive(Connection& conn) {
    char buf[kRecvChunkBytes];
    for (std::size_t limit = ReceiveLimit(conn); conn.in.size() < limit;) {
        const std::size_t asked = std::min(sizeof(buf), limit - conn.in.size());
        ssize_t n = ::recv(conn.fd, buf, asked, 0);
        if (n > 0) {
            if (conn.in.empty()) {
                conn.deadline = Clock::now() + options_.request_timeout;
            }
            const std::size_t before = conn.in.size();
            conn.in.append(buf, static_cast<std::size_t>(n));
            if (static_cast<std::size_t>(n) < asked || HeadEndsIn(conn, before)) return false;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
        return true;  // orderly close or a socket error
    }
    return false;
}

// Whether the bytes appended from `before` on complete a head not framed yet: it is framed (and
// its body admitted or refused) before more is read.
bool EventServer::HeadEndsIn(const Connection& conn, std::size_t before) {
    if (conn.frame.state == FrameState::kFramed) return false;
    return conn.in.find("\r\n\r\n", before >= 3 ? before - 3 : 0) != std::string::npos;
}

// How much of the current request may be held: until its head is framed, at most one byte
// over the head limit (enough to refuse it 431); once its body is admitted, exactly its frame,
// into a buffer reserved at that size. A body is never read before the head gate and the budget
// have admitted it, and never grows its buffer by doubling.
std::size_t EventServer::ReceiveLimit(const Connection& conn) const {
    if (conn.frame.state == FrameState::kFramed) {
        return conn.frame.head_bytes + conn.frame.body_bytes;
    }
    return options_.max_header_bytes + 1;
}

// Frames the request at the start of conn.in once its head is whole, and admits its body (head
// gate, budget); sends the interim answer a client waiting on Expect: 100-continue needs; says
// whether the whole frame is here.
EventServer::Progress EventServer::Advance(Connection& conn) {
    bool admitted_now = false;
    if (conn.frame.state != FrameState::kFramed) {
        if (conn.in.empty() || !WorthFraming(conn.in, conn.framed_upto, limits_)) {
            conn.framed_upto = conn.in.size();
            return Progress::kWait;
        }
        conn.frame = FrameRequest(conn.in, limits_);
        conn.framed_upto = conn.in.size();
        if (conn.frame.state == FrameState::kRefused) return Progress::kRefused;
        if (conn.frame.state == FrameState::kNeedHead) return Progress::kWait;
        if (conn.frame.body_bytes > 0) {
            if (Progress admitted = AdmitBody(conn); admitted != Progress::kReadMore) {
                return admitted;
            }
            admitted_now = true;
        }
    }
    const std::size_t frame_bytes = conn.frame.head_bytes + conn.frame.body_bytes;
    if (conn.in.size() >= frame_bytes) return Progress::kServe;
    if (conn.frame.expects_continue && !conn.continue_sent) {
        // Sent here, in the event loop: the body then arrives like any other, under the
        // request deadline, and no worker waits for it.
        conn.continue_sent = true;
        SendAndForget(conn.fd, kContinue);
    }
    return admitted_now ? Progress::kReadMore : Progress::kWait;
}

// A framed head that announces a body: withheld when its route refuses the head (kServe: the
// head alone is answered), refused when the budget has no room for it (kOverBudget), else
// counted against the budget and its buffer reserved (kReadMore).
EventServer::Progress EventServer::AdmitBody(Connection& conn) {
    if (RefusedFromHead(conn)) {
        WithholdBody(conn);
        return Progress::kServe;
    }
    const std::size_t body = conn.frame.body_bytes;
    const std::size_t frame_bytes = conn.frame.head_bytes + body;
    const std::size_t held = buffered_body_bytes_.fetch_add(body) + body;
    // A body that has already arrived whole costs nothing more to keep: only one still to be
    // read is refused.
    if (held > options_.max_buffered_body_bytes && conn.in.size() < frame_bytes) {
        buffered_body_bytes_.fetch_sub(body);
        return Progress::kOverBudget;
    }
    conn.budgeted_bytes = body;
    conn.in.reserve(frame_bytes);
    return Progress::kReadMore;
}

bool EventServer::RefusedFromHead(const Connection& conn) const {
    if (!head_gate_) return false;
    const std::string_view head(conn.in.data(), conn.frame.head_bytes);
    return head_gate_(HeadRequest(head, conn.frame, conn.remote_ip));
}

// The route answers the head alone: conn.in keeps only the head, shown with a length of 0, and
// the connection closes after the answer (the body's bytes, still coming, are dropped by the
// lingering close; nothing after them can be framed without reading them).
void EventServer::WithholdBody(Connection& conn) {
    RequestFrame& frame = conn.frame;
    const std::size_t received = std::min(conn.in.size() - frame.head_bytes, frame.body_bytes);
    conn.unread_body_bytes = frame.body_bytes - received;
    conn.close_after = true;
    std::string shown = HeadWithoutBody(conn.in, frame);
    conn.in = std::move(shown);
    frame.head_bytes = conn.in.size();
    frame.body_bytes = 0;
    frame.expects_continue = false;
    frame.expect_begin = frame.expect_end = 0;
    frame.length_begin = frame.length_end = 0;
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.refused_before_body;
}

// After an answer (or when the connection stops reading): the body's share of the budget comes
// back, and a buffer grown for a large body is not kept by an idle keep-alive connection.
void EventServer::ReleaseBody(Connection& conn) {
    ReturnBudget(conn);
    if (conn.in.capacity() > options_.max_header_bytes + kRecvChunkBytes) {
        conn.in.shrink_to_fit();
    }
}

void EventServer::ReturnBudget(Connection& conn) {
    buffered_body_bytes_.fetch_sub(conn.budgeted_bytes);
    conn.budgeted_bytes = 0;
}

// 503 with Retry-After for a body the budget has no room for, before any of it is read; then a
// lingering close, as for every refusal, that may drop the whole body.
void EventServer::RefuseOverBudget(const std::shared_ptr<Connection>& conn) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.refused_over_budget;
    }
    const RequestFrame& frame = conn->frame;
    conn->unread_body_bytes = frame.body_bytes;
    const std::string answer = ProblemResponse(
        Fault::kOverloaded,
        "the server holds as many request bodies as it may (" +
            std::to_string(options_.max_buffered_body_bytes) + " bytes); retry later",
        std::string_view(conn->in.data(), frame.head_bytes), std::string_view(frame.path),
        "Retry-After: 1\r\n");
    if (options_.log_refusals && log::Enabled(log::Level::kWarn)) {
        log::Warn("request body refused: buffered body budget reached",
                  {{"status", 503},
                   {"path", frame.path},
                   {"method", frame.method},
                   {"content_length", frame.body_bytes},
                   {"remote_addr", conn->remote_ip},
                   {"request_id", CurrentRequestContext().request_id}});
    }
    SendAndForget(conn->fd, answer);
    Linger(conn);
}

bool EventServer::ServeOne(Connection& conn) {
    const RequestFrame& frame = conn.frame;
    const std::size_t frame_bytes = frame.head_bytes + frame.body_bytes;
    std::string_view request(conn.in.data(), frame_bytes);
    std::string library_request;
    if (frame.library_head_differs) {
        library_request = LibraryRequest(request, frame);
        request = library_request;
    }
    ConnectionStream stream(conn, request);
    bool close_connection = draining_ || conn.close_after ||
                            conn.served + 1 >= options_.keep_alive_max_count ||
                            frame.close_requested;
    bool connection_closed = false;
    SetEmptyHeaderFields(frame.empty_fields);
    bool ok = process_request(stream, close_connection, connection_closed, nullptr);
    SetEmptyHeaderFields({});
    // The worker is done with the answer here: what the socket does not take now, the event
    // loop sends as the client reads.
    conn.out_progress = Clock::now();
    ok = SendUnsent(conn) && ok;
    ++conn.served;
    // The whole frame, whatever the handler or the library read of it: a body left unread
    // (an early answer, a route that takes none) never becomes the next request.
    conn.in.erase(0, frame_bytes);
    conn.frame = RequestFrame{};
    conn.framed_upto = 0;
    conn.continue_sent = false;
    return ok && !close_connection && !connection_closed;
}

// A request the transport cannot frame: answered here (the library never sees it), then the
// connection is closed, since nothing after it can be trusted to start a request.
void EventServer::RefuseAndLinger(const std::shared_ptr<Connection>& conn) {
    const RequestFrame& frame = conn->frame;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.refused_framing;
        if (frame.status == 431) ++stats_.header_too_large;
    }
    std::string_view head = HeadOf(conn->in);
    std::string answer =
        ProblemResponse(frame.status, frame.code, frame.detail, head, std::string_view(frame.path));
    if (options_.log_refusals && log::Enabled(log::Level::kInfo)) {
        log::Info("request refused before routing",
                  {{"status", frame.status},
                   {"code", frame.code},
                   {"path", frame.path},
                   {"method", frame.method},
                   {"remote_addr", conn->remote_ip},
                   {"request_id", CurrentRequestContext().request_id}});
    }
    SendAndForget(conn->fd, answer);
    Linger(conn);
}

// Closes for writing (the client reads the answer, then end of stream) and drops what the
// client still sends until it closes or linger_timeout passes.
void EventServer::Linger(const std::shared_ptr<Connection>& conn) {
    BeginLinger(*conn, Clock::now());
    DrainLingering(conn);
}

void EventServer::BeginLinger(Connection& conn, Clock::time_point now) {
    ::shutdown(conn.fd, SHUT_WR);
    conn.lingering = true;
    conn.in.clear();
    conn.in.shrink_to_fit();
    ReturnBudget(conn);
    conn.frame = RequestFrame{};
    conn.deadline = now + options_.linger_timeout;
}

void EventServer::DrainLingering(const std::shared_ptr<Connection>& conn) {
    char buf[kRecvChunkBytes];
    for (;;) {
        ssize_t n = ::recv(conn->fd, buf, sizeof(buf), 0);
        if (n > 0) {
            conn->lingered_bytes += static_cast<std::size_t>(n);
            // A body refused unread is dropped whole: closing on its rest would reset the
            // connection, and a proxy that sent it could lose the answer.
            if (conn->lingered_bytes > kMaxLingerBytes + conn->unread_body_bytes) {
                return Close(conn);
            }
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Rearm(conn);
        return Close(conn);
    }
}

bool EventServer::SendUnsent(Connection& conn) {
    bool ok = true;
    while (conn.out_sent < conn.out.size()) {
        ssize_t n = ::send(conn.fd, conn.out.data() + conn.out_sent,
                           conn.out.size() - conn.out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            conn.out_sent += static_cast<std::size_t>(n);
            conn.out_progress = Clock::now();
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        ok = false;  // the client is gone
        break;
    }
    if (!ok || conn.out_sent == conn.out.size()) {
        conn.out.clear();
        if (conn.out.capacity() > kKeptOutCapacityBytes) std::string().swap(conn.out);
        conn.out_sent = 0;
    }
    ChargeUnsent(conn);
    return ok;
}

// What a connection holds is its whole answer buffer until the answer is out; only the
// connection's owner changes it, so the difference is all that needs to be atomic.
void EventServer::ChargeUnsent(Connection& conn) {
    const std::size_t held = conn.out.size();
    if (held >= conn.out_charged) {
        unsent_bytes_ += held - conn.out_charged;
    } else {
        unsent_bytes_ -= conn.out_charged - held;
    }
    conn.out_charged = held;
}

bool EventServer::OverUnsentBudget() const {
    return unsent_bytes_.load() >= options_.max_unsent_bytes_total;
}

// Answers held for slow readers have taken the memory set aside for them: the request is
// refused before any handler runs (nothing was done, so a retry is safe), as a connection over
// the limit is.
void EventServer::RefuseOverUnsentBudget(const std::shared_ptr<Connection>& conn) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.refused_unsent_budget;
    }
    const std::string answer =
        ProblemResponse(Fault::kOverloaded,
                        "answers waiting for clients to read them hold " +
                            std::to_string(options_.max_unsent_bytes_total) +
                            " bytes, the most this server keeps; retry later",
                        HeadOf(conn->in), std::nullopt, "Retry-After: 1\r\n");
    if (options_.log_refusals && log::Enabled(log::Level::kWarn)) {
        log::Warn("request refused: unsent answers over their budget",
                  {{"status", 503},
                   {"unsent_bytes", unsent_bytes_.load()},
                   {"remote_addr", conn->remote_ip},
                   {"request_id", CurrentRequestContext().request_id}});
    }
    SendAndForget(conn->fd, answer);
    Linger(conn);
}

void EventServer::Rearm(const std::shared_ptr<Connection>& conn) {
    std::lock_guard<std::mutex> lock(mutex_);
    conn->busy = false;
    if (draining_ && IdleAfterAnswer(*conn)) {
        CloseLocked(*conn);
        return;
    }
    epoll_event ev{};
    ev.events = (conn->out.empty() ? EPOLLIN : EPOLLOUT) | EPOLLONESHOT;
    ev.data.u64 = conn->id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, conn->fd, &ev) != 0) {
        CloseLocked(*conn);
    }
}

// Answered at least once, the answer wholly sent, nothing of a next request received or waiting
// in the kernel: such a connection may be closed while draining without losing a request.
bool EventServer::IdleAfterAnswer(const Connection& conn) const {
    return conn.lingering ||
           (conn.served > 0 && conn.out.empty() && conn.in.empty() && !UnreadBytesWaiting(conn.fd));
}

// Caller holds mutex_. epoll_ctl and close happen under the same lock as accept's
// EPOLL_CTL_ADD, so a reused descriptor number never meets a stale registration.
void EventServer::CloseLocked(Connection& conn) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, conn.fd, nullptr);
    ::close(conn.fd);
    ReturnBudget(conn);
    unsent_bytes_ -= conn.out_charged;
    conn.out_charged = 0;
    auto per_address = connections_per_address_.find(conn.remote_ip);
    if (per_address != connections_per_address_.end() && --per_address->second == 0) {
        connections_per_address_.erase(per_address);
    }
    connections_.erase(conn.id);
    changed_.notify_all();
}

void EventServer::Close(const std::shared_ptr<Connection>& conn) {
    std::lock_guard<std::mutex> lock(mutex_);
    CloseLocked(*conn);
}

// Closes connections whose request, keep-alive or linger time is up, those whose answer the
// client stopped reading, and idle ones while draining. A request cut off part-way gets a 408
// first.
void EventServer::ReaperLoop() {
    while (!stopping_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(kPollIntervalMs));
        auto now = Clock::now();
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<std::shared_ptr<Connection>> expired;
        for (auto& [id, conn] : connections_) {
            if (conn->busy) continue;
            if (!conn->out.empty()) {
                // An answer on its way, also while draining: it is delivered unless the client
                // takes nothing of it for the write timeout. The socket reports writable only
                // once a third of its buffer (megabytes) is free, so a client that reads slowly
                // but steadily shows its progress in the kernel's queue first.
                const int queued = KernelQueuedBytes(conn->fd);
                if (queued != conn->kernel_queued_bytes) {
                    conn->kernel_queued_bytes = queued;
                    conn->out_progress = now;
                }
                if (now - conn->out_progress > options_.write_timeout) {
                    ++stats_.write_timed_out;
                    expired.push_back(conn);
                }
                continue;
            }
            bool timed_out = now > conn->deadline;
            // Idle between requests; a connection that has sent nothing yet keeps its time.
            bool idle_while_draining =
                draining_ && ((conn->served > 0 && conn->in.empty()) || conn->lingering);
            bool grace_over = draining_ && now > drain_deadline_;
            if (!timed_out && !idle_while_draining && !grace_over) {
                continue;
            }
            // A request that arrived while every worker was busy is not idleness: a worker
            // answers it. Asked only of a connection about to be closed.
            if (!grace_over && !conn->lingering && conn->in.empty() &&
                UnreadBytesWaiting(conn->fd)) {
                continue;
            }
            if (timed_out && !draining_ && !conn->lingering) {
                ++stats_.timed_out;
                if (!conn->in.empty()) {
                    // Cut off part-way: told why, then a lingering close like any refusal, so
                    // that bytes still arriving do not reset the connection over the answer.
                    SendAndForget(
                        conn->fd,
                        ProblemResponse(Fault::kRequestTimeout,
                                        "the request did not arrive whole within " +
                                            std::to_string(options_.request_timeout.count()) +
                                            " ms of its first byte",
                                        HeadOf(conn->in)));
                    BeginLinger(*conn, now);
                    continue;
                }
            }
            expired.push_back(conn);
        }
        for (auto& conn : expired) {
            CloseLocked(*conn);
        }
    }
}

// Runs on the listen thread once the listening socket is closed (stop()).
void EventServer::Drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    drain_deadline_ = Clock::now() + grace_;
    draining_ = true;
    // Requests in progress finish (bounded by their handler) and answers on their way are
    // sent (bounded by the write timeout: the reaper closes a connection whose client takes
    // none of its answer for that long); the reaper closes idle connections now and partial
    // requests once the grace is over.
    changed_.wait_until(lock, drain_deadline_ + options_.write_timeout,
                        [this] { return connections_.empty(); });
    lock.unlock();
    stopping_ = true;
    for (auto& t : workers_) {
        if (t.joinable()) t.join();
    }
    if (reaper_.joinable()) reaper_.join();
}

bool TlsServer::SetBacklog(int backlog) {
    return ::listen(svr_sock_, backlog) == 0;
}

std::unique_ptr<TlsServer> MakeTlsServer(const std::string& cert_path, const std::string& key_path,
                                         std::string* error) {
    for (const std::string& path : {cert_path, key_path}) {
        if (::access(path.c_str(), R_OK) != 0) {
            *error = "cannot read " + path;
            return nullptr;
        }
    }
    auto server = std::make_unique<TlsServer>(cert_path.c_str(), key_path.c_str());
    SSL_CTX* ctx = server->is_valid() ? server->ssl_context() : nullptr;
    if (ctx == nullptr) {
        *error = "the certificate or key was rejected (PEM expected, matching pair)";
        return nullptr;
    }
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1) {
        *error = "OpenSSL refused the protocol or cipher settings";
        return nullptr;
    }
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION);
    return server;
}

}  // namespace gpucost::http
