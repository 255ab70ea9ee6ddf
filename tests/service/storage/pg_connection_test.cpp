#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "service/storage/pg_connection.hpp"

using namespace gpucost;

namespace {

// A resolver that answers only once the test lets it: a lookup the network's DNS never
// answers in time.
struct HeldResolver {
    std::mutex mutex;
    std::condition_variable released_cv;
    bool released = false;
    int calls = 0;

    void Release() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            released = true;
        }
        released_cv.notify_all();
    }
};

storage::HostResolver Answering(std::vector<std::string> addresses, int* calls) {
    return [addresses, calls](const std::string&) {
        ++*calls;
        return addresses;
    };
}

constexpr std::chrono::milliseconds kBound{2000};

}  // namespace

TEST_SUITE("pg_connection") {
    TEST_CASE(
        "a database host that does not resolve within the bound fails the attempt while "
        "its lookup still hangs") {
        auto held = std::make_shared<HeldResolver>();
        storage::HostResolver resolve = [held](const std::string&) {
            std::unique_lock<std::mutex> lock(held->mutex);
            ++held->calls;
            held->released_cv.wait(lock, [&] { return held->released; });
            return std::vector<std::string>{"10.0.0.9"};
        };
        CHECK_THROWS_AS(storage::WithResolvedHost("postgresql://u@postgres:5432/db",
                                                  std::chrono::milliseconds(50), resolve),
                        pqxx::broken_connection);
        // The call came back while the lookup was still held: nothing waited on it.
        {
            std::lock_guard<std::mutex> lock(held->mutex);
            CHECK(held->calls == 1);
            CHECK_FALSE(held->released);
        }
        held->Release();
    }

    TEST_CASE("a host with one address is pinned with hostaddr, in both conninfo forms") {
        int calls = 0;
        auto resolve = Answering({"10.89.0.2"}, &calls);
        CHECK(storage::WithResolvedHost("postgresql://u:p@postgres:5432/db?sslmode=disable", kBound,
                                        resolve) ==
              "postgresql://u:p@postgres:5432/db?sslmode=disable&hostaddr=10.89.0.2");
        CHECK(storage::WithResolvedHost("postgresql://u@postgres/db", kBound, resolve) ==
              "postgresql://u@postgres/db?hostaddr=10.89.0.2");
        CHECK(storage::WithResolvedHost("host=postgres dbname=db", kBound, resolve) ==
              "host=postgres dbname=db hostaddr=10.89.0.2");
        CHECK(calls == 3);
    }

    TEST_CASE("a host with several addresses is left to libpq, which tries each") {
        int calls = 0;
        auto resolve = Answering({"::1", "127.0.0.1"}, &calls);
        CHECK(storage::WithResolvedHost("postgresql://u@localhost/db", kBound, resolve) ==
              "postgresql://u@localhost/db");
        CHECK(calls == 1);
    }

    TEST_CASE("a name that does not resolve fails the attempt") {
        int calls = 0;
        CHECK_THROWS_AS(
            storage::WithResolvedHost("postgresql://u@nowhere/db", kBound, Answering({}, &calls)),
            pqxx::broken_connection);
    }

    TEST_CASE("nothing to resolve: a socket directory, an address, hostaddr set, several hosts") {
        int calls = 0;
        auto resolve = Answering({"10.0.0.1"}, &calls);
        for (const std::string conninfo :
             {"postgresql://u@127.0.0.1:5432/db", "postgresql://u@[::1]:5432/db",
              "host=/run/postgresql dbname=db", "host=db hostaddr=10.0.0.2 dbname=db",
              "postgresql://u@a:5432,b:5432/db", "dbname=db"}) {
            CAPTURE(conninfo);
            CHECK(storage::WithResolvedHost(conninfo, kBound, resolve) == conninfo);
        }
        CHECK(calls == 0);
    }

    TEST_CASE("connection defaults are added to both forms and never override the caller's") {
        CHECK(storage::WithConnectionDefaults("postgresql://u@h/db?connect_timeout=9")
                  .find("connect_timeout=9&keepalives=1") != std::string::npos);
        CHECK(storage::WithConnectionDefaults("host=h dbname=db")
                  .rfind("host=h dbname=db "
                         "connect_timeout=2",
                         0) == 0);
    }
}
