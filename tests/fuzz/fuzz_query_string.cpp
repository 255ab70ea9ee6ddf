// libFuzzer harness: query strings, through the library's request parser and our routes, in
// memory (no socket). The first byte picks the route; the rest is the query string.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <httplib.h>

#include "pricing/catalog_loader.hpp"
#include "service/http/router.hpp"
#include "service/log.hpp"

namespace {

std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// One request's bytes in, the answer's bytes out.
class MemoryStream final : public httplib::Stream {
public:
    explicit MemoryStream(std::string in) : in_(std::move(in)) {}
    bool is_readable() const override { return true; }
    bool is_writable() const override { return true; }
    ssize_t read(char* ptr, size_t size) override {
        size_t n = std::min(size, in_.size() - pos_);
        in_.copy(ptr, n, pos_);
        pos_ += n;
        return static_cast<ssize_t>(n);
    }
    ssize_t write(const char* ptr, size_t size) override {
        out_.append(ptr, size);
        return static_cast<ssize_t>(size);
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override {
        ip = "127.0.0.1";
        port = 40000;
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override {
        ip = "127.0.0.1";
        port = 8080;
    }
    socket_t socket() const override { return 0; }

private:
    std::string in_;
    std::size_t pos_ = 0;
    std::string out_;
};

class InMemoryServer final : public httplib::Server {
public:
    void Handle(std::string request) {
        MemoryStream stream(std::move(request));
        bool closed = false;
        process_request(stream, true, closed, nullptr);
    }
};

InMemoryServer* Server() {
    static InMemoryServer* server = [] {
        gpucost::log::SetLevel(gpucost::log::Level::kError);
        const std::string seed = std::string(GPUCOST_SOURCE_DIR) + "/schema/seed/";
        gpucost::pricing::CatalogCsv csv{ReadFile(seed + "accelerators.csv"),
                                         ReadFile(seed + "offerings.csv"),
                                         ReadFile(seed + "prices.csv")};
        auto loaded = gpucost::pricing::LoadCatalog(csv);
        if (!loaded.ok()) std::abort();
        std::shared_ptr<const gpucost::pricing::Catalog> catalog = loaded.value();
        gpucost::http::Deps deps;
        deps.catalog = [catalog] { return catalog; };
        deps.service_version = "fuzz";
        auto* s = new InMemoryServer();
        gpucost::http::ServerOptions options;
        options.access_log = false;
        gpucost::http::ConfigureServer(*s, options);
        gpucost::http::RegisterRoutes(*s, deps);
        return s;
    }();
    return server;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    static const char* const kRoutes[] = {"GET /v1/offerings",           "GET /v1/accelerators",
                                          "GET /v1/providers",           "GET /v1/offerings/x",
                                          "POST /v1/estimates/training", "POST /v1/plans/spot"};
    std::string query(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::string route = kRoutes[data[0] % (sizeof(kRoutes) / sizeof(kRoutes[0]))];
    bool post = route[0] == 'P';
    std::string body = post ? "{}" : "";
    Server()->Handle(route + "?" + query + " HTTP/1.1\r\nHost: fuzz\r\n" +
                     (post ? "Content-Type: application/json\r\nContent-Length: 2\r\n" : "") +
                     "\r\n" + body);
    return 0;
}
