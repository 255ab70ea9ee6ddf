#include "service/storage/pg_connection.hpp"

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gpucost::storage {
namespace {

// Lookups still running after their caller gave up on them (a resolver that hangs): beyond
// this many, a connection attempt fails at once rather than start another thread.
constexpr int kMaxLookupsInFlight = 8;
std::atomic<int> g_lookups_in_flight{0};

// One lookup's result, shared by the caller and the thread that may outlive its wait.
struct Lookup {
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    std::vector<std::string> addresses;
};

bool IsNumericAddress(const std::string& host) {
    unsigned char buf[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
           ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// The host and hostaddr that libpq would read from `conninfo` (URL or key=value); false when
// libpq cannot parse it (it then reports the error itself).
bool HostOf(const std::string& conninfo, std::string& host, std::string& hostaddr) {
    char* error = nullptr;
    PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
    if (options == nullptr) {
        PQfreemem(error);
        return false;
    }
    for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
        if (o->val == nullptr) continue;
        if (std::string_view(o->keyword) == "host") host = o->val;
        if (std::string_view(o->keyword) == "hostaddr") hostaddr = o->val;
    }
    PQconninfoFree(options);
    return true;
}

// `key=value` added to a URL (as a query parameter) or to a key=value conninfo.
std::string WithParameter(const std::string& conninfo, const std::string& key,
                          const std::string& value) {
    const bool is_url =
        conninfo.rfind("postgresql://", 0) == 0 || conninfo.rfind("postgres://", 0) == 0;
    if (is_url) {
        return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") + key + "=" + value;
    }
    return conninfo + " " + key + "=" + value;
}

std::vector<std::string> ResolveWithin(const std::string& host, std::chrono::milliseconds timeout,
                                       const HostResolver& resolve) {
    if (g_lookups_in_flight.fetch_add(1) >= kMaxLookupsInFlight) {
        g_lookups_in_flight.fetch_sub(1);
        throw pqxx::broken_connection("the database host '" + host +
                                      "' is still being resolved by earlier attempts");
    }
    auto lookup = std::make_shared<Lookup>();
    std::thread([lookup, host, resolve] {
        std::vector<std::string> addresses = resolve(host);
        {
            std::lock_guard<std::mutex> lock(lookup->mutex);
            lookup->addresses = std::move(addresses);
            lookup->done = true;
        }
        lookup->finished.notify_all();
        g_lookups_in_flight.fetch_sub(1);
    }).detach();
    std::unique_lock<std::mutex> lock(lookup->mutex);
    if (!lookup->finished.wait_for(lock, timeout, [&] { return lookup->done; })) {
        throw pqxx::broken_connection("the database host '" + host + "' did not resolve within " +
                                      std::to_string(timeout.count()) + " ms");
    }
    if (lookup->addresses.empty()) {
        throw pqxx::broken_connection("the database host '" + host + "' does not resolve");
    }
    return lookup->addresses;
}

}  // namespace

std::vector<std::string> ResolveWithSystem(const std::string& host) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    std::vector<std::string> addresses;
    if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) {
        return addresses;
    }
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
        char text[INET6_ADDRSTRLEN] = {};
        const void* addr = nullptr;
        if (a->ai_family == AF_INET) {
            addr = &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr;
        } else if (a->ai_family == AF_INET6) {
            addr = &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
        }
        if (addr != nullptr && ::inet_ntop(a->ai_family, addr, text, sizeof(text)) != nullptr &&
            std::find(addresses.begin(), addresses.end(), text) == addresses.end()) {
            addresses.emplace_back(text);
        }
    }
    ::freeaddrinfo(found);
    return addresses;
}

std::string WithResolvedHost(const std::string& conninfo, std::chrono::milliseconds timeout,
                             const HostResolver& resolve) {
    std::string host;
    std::string hostaddr;
    if (!HostOf(conninfo, host, hostaddr) || !hostaddr.empty() || host.empty() ||
        host.front() == '/' || host.front() == '@' || host.find(',') != std::string::npos ||
        IsNumericAddress(host)) {
        return conninfo;
    }
    const std::vector<std::string> addresses = ResolveWithin(host, timeout, resolve);
    return addresses.size() == 1 ? WithParameter(conninfo, "hostaddr", addresses.front())
                                 : conninfo;
}

std::string WithConnectionDefaults(const std::string& url) {
    std::string out = url;
    auto add = [&](const std::string& key, const std::string& value) {
        if (out.find(key + "=") == std::string::npos) {
            out = WithParameter(out, key, value);
        }
    };
    add("connect_timeout", std::to_string(kConnectTimeoutS));
    add("keepalives", "1");
    add("keepalives_idle", "5");
    add("keepalives_interval", "2");
    add("keepalives_count", "3");
    add("tcp_user_timeout", "5000");
    add("application_name", "gpucost");
    return out;
}

std::string RedactUrl(const std::string& url) {
    std::string out = url;
    // URL form: scheme://user:password@host
    auto scheme = out.find("://");
    if (scheme != std::string::npos) {
        auto at = out.find('@', scheme + 3);
        auto colon = out.find(':', scheme + 3);
        if (at != std::string::npos && colon != std::string::npos && colon < at) {
            out.replace(colon + 1, at - colon - 1, "***");
        }
    }
    // key=value form
    auto pw = out.find("password=");
    if (pw != std::string::npos) {
        auto end = out.find_first_of(" &", pw);
        out.replace(pw + 9, (end == std::string::npos ? out.size() : end) - pw - 9, "***");
    }
    return out;
}

std::unique_ptr<pqxx::connection> Connect(const std::string& url) {
    auto conn = std::make_unique<pqxx::connection>(
        WithResolvedHost(WithConnectionDefaults(url), std::chrono::seconds(kConnectTimeoutS)));
    pqxx::nontransaction tx(*conn);
    tx.exec("SET statement_timeout = " + std::to_string(kStatementTimeoutMs));
    tx.exec("SET TIME ZONE 'UTC'");
    return conn;
}

std::string SqlState(const std::exception& e) {
    if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
        return sql->sqlstate();
    }
    return {};
}

}  // namespace gpucost::storage
