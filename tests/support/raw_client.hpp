#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpucost::testing {

// A connected loopback socket for the transport's tests: sends bytes a client library would not
// produce (pipelined, cut at any byte, malformed) and reads what comes back. Closed on
// destruction. Reads give up after 5 s (SO_RCVTIMEO) unless told otherwise. A non-zero
// `receive_buffer_bytes` sets SO_RCVBUF before connecting: a client that reads slowly or not at
// all then takes little of an answer into its own kernel buffer.
class RawClient {
public:
    explicit RawClient(int port, int receive_buffer_bytes = 0)
        : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
        if (receive_buffer_bytes > 0) {
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes,
                         sizeof(receive_buffer_bytes));
        }
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
        timeval tv{5, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    ~RawClient() { ::close(fd_); }
    RawClient(const RawClient&) = delete;
    RawClient& operator=(const RawClient&) = delete;
    RawClient(RawClient&&) = delete;
    RawClient& operator=(RawClient&&) = delete;

    bool connected() const { return connected_; }

    // Sends all of `bytes`; false when the server closed first (what it answered can still be
    // read).
    bool Send(std::string_view bytes) const {
        while (!bytes.empty()) {
            ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n <= 0) return false;
            bytes.remove_prefix(static_cast<std::size_t>(n));
        }
        return true;
    }

    // One recv() of at most `max_bytes` (empty when the peer closed or 5 s passed).
    std::string ReadSome(std::size_t max_bytes) const {
        std::string out(max_bytes, '\0');
        ssize_t n = ::recv(fd_, out.data(), out.size(), 0);
        out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        return out;
    }

    // No more requests: the server sees end of stream after what was sent.
    void EndOfRequests() const { ::shutdown(fd_, SHUT_WR); }

    // Reads until `count` complete responses (by Content-Length) arrived, the peer closed, or
    // 5 s passed.
    std::string Read(int count = 1) const {
        std::string out;
        char buf[8192];
        while (Responses(out) < count) {
            ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
            if (n <= 0) break;
            out.append(buf, static_cast<std::size_t>(n));
        }
        return out;
    }

    // Reads until `marker` arrived (or the peer closed, or 5 s passed).
    std::string ReadUntil(const std::string& marker) const {
        std::string out;
        char byte = 0;
        while (out.find(marker) == std::string::npos && ::recv(fd_, &byte, 1, 0) == 1) {
            out.push_back(byte);
        }
        return out;
    }

    // Everything until the server closes (or `timeout` passes).
    std::string ReadAll(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) const {
        std::string out;
        auto deadline = std::chrono::steady_clock::now() + timeout;
        char buf[16384];
        for (;;) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            pollfd p{fd_, POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
            ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
            if (n <= 0) break;
            out.append(buf, static_cast<std::size_t>(n));
        }
        return out;
    }

    // True when the server closed the connection within 5 s: an orderly close, or a reset
    // when bytes were sent after it.
    bool ClosedByServer() const {
        char byte = 0;
        ssize_t n = ::recv(fd_, &byte, 1, 0);
        return n == 0 || (n < 0 && errno == ECONNRESET);
    }

private:
    static int Responses(const std::string& out) {
        int found = 0;
        std::size_t pos = 0;
        for (;;) {
            auto head_end = out.find("\r\n\r\n", pos);
            if (head_end == std::string::npos) return found;
            auto cl = out.find("Content-Length: ", pos);
            std::size_t length = 0;
            if (cl != std::string::npos && cl < head_end) length = std::stoul(out.substr(cl + 16));
            if (out.size() < head_end + 4 + length) return found;
            ++found;
            pos = head_end + 4 + length;
        }
    }

    int fd_;
    bool connected_ = false;
};

}  // namespace gpucost::testing
