#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <httplib.h>

#include "service/http/router.hpp"

namespace gpucost::testing {

// An in-process API server on an ephemeral loopback port (never a fixed one), stopped and
// joined on destruction. cpp-httplib 0.11.4 has no wait_until_ready, so start-up polls
// is_running().
class TestServer {
public:
    explicit TestServer(const http::Deps& deps, http::ServerOptions options = {}) {
        options.access_log = false;
        options.threads = 4;
        server_ = std::make_unique<http::EventServer>(http::TransportFor(options));
        http::ConfigureServer(*server_, options);
        http::RegisterRoutes(*server_, deps);
        port_ = server_->bind_to_any_port("127.0.0.1");
        if (port_ <= 0) {
            throw std::runtime_error("test server could not bind");
        }
        thread_ = std::thread([this] { server_->listen_after_bind(); });
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!server_->is_running()) {
            if (std::chrono::steady_clock::now() > deadline) {
                throw std::runtime_error("test server did not start");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    ~TestServer() {
        server_->stop();
        thread_.join();
    }
    TestServer(const TestServer&) = delete;
    TestServer& operator=(const TestServer&) = delete;
    TestServer(TestServer&&) = delete;
    TestServer& operator=(TestServer&&) = delete;

    int port() const { return port_; }
    http::EventServer& server() { return *server_; }

    httplib::Client Client() const {
        httplib::Client client("127.0.0.1", port_);
        client.set_connection_timeout(5, 0);
        client.set_read_timeout(5, 0);
        return client;
    }

    // Sends raw bytes and returns everything the server answers until it closes or 3 s pass.
    // For requests a well-behaved client library refuses to produce.
    std::string Raw(const std::string& bytes) const {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port_));
        ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
            ::close(fd);
            throw std::runtime_error("raw connect failed");
        }
        timeval tv{3, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        std::size_t sent = 0;
        while (sent < bytes.size()) {
            ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) {
                break;
            }
            sent += static_cast<std::size_t>(n);
        }
        std::string out;
        char buf[4096];
        for (;;) {
            ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
            if (n <= 0) {
                break;
            }
            out.append(buf, static_cast<std::size_t>(n));
            // One response is enough: stop once headers and the announced body are in.
            auto header_end = out.find("\r\n\r\n");
            if (header_end != std::string::npos) {
                auto cl = out.find("Content-Length: ");
                if (cl != std::string::npos && cl < header_end) {
                    std::size_t length = std::stoul(out.substr(cl + 16));
                    if (out.size() >= header_end + 4 + length) {
                        break;
                    }
                }
            }
        }
        ::close(fd);
        return out;
    }

private:
    std::unique_ptr<http::EventServer> server_;
    int port_ = 0;
    std::thread thread_;
};

}  // namespace gpucost::testing
