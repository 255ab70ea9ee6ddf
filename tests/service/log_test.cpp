// The asynchronous log writer: what is buffered is written in order at stop, and access-log
// lines that do not fit the buffer are dropped and counted, never other lines.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "service/log.hpp"

namespace {

// Runs `body` with stderr sent to a temporary file; returns what was written.
template <typename F>
std::string CaptureStderr(F&& body) {
    std::fflush(stderr);
    char path[] = "/tmp/gpucost-log-test-XXXXXX";
    int file = ::mkstemp(path);
    REQUIRE(file >= 0);
    int saved = ::dup(2);
    ::dup2(file, 2);
    body();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    ::close(file);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    ::unlink(path);
    return text.str();
}

std::string AccessLine(int i) {
    return R"({"level":"info","msg":"request","n":)" + std::to_string(i) + "}";
}

}  // namespace

TEST_CASE("the log writer thread writes every buffered line, in order, before it stops") {
    std::string out = CaptureStderr([] {
        gpucost::log::StartAsyncWriter(1u << 20);
        for (int i = 0; i < 500; ++i)
            gpucost::log::WriteLine(gpucost::log::Level::kInfo, AccessLine(i));
        gpucost::log::StopAsyncWriter();
    });
    std::size_t at = 0;
    for (int i = 0; i < 500; ++i) {
        std::size_t next = out.find(AccessLine(i) + "\n", at);
        REQUIRE_MESSAGE(next != std::string::npos, "line " << i << " missing or out of order");
        at = next;
    }
}

TEST_CASE(
    "access-log lines that do not fit the buffer are dropped and counted; other lines are kept") {
    const std::uint64_t before = gpucost::log::DroppedLines();
    std::string out = CaptureStderr([] {
        gpucost::log::StartAsyncWriter(0);  // no room: every access line is dropped
        for (int i = 0; i < 7; ++i)
            gpucost::log::WriteLine(gpucost::log::Level::kInfo, AccessLine(i));
        gpucost::log::Info("kept although the buffer is full");
        gpucost::log::StopAsyncWriter();
    });
    CHECK(gpucost::log::DroppedLines() - before == 7);
    CHECK(out.find(R"("msg":"request")") == std::string::npos);
    CHECK(out.find("kept although the buffer is full") != std::string::npos);
    CHECK(out.find("access log lines dropped") != std::string::npos);
}
