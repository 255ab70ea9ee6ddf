#include "service/log.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <thread>

namespace gpucost::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::mutex g_mutex;  // one line at a time on stderr (direct writes and the writer thread)

// The buffer of the asynchronous writer and its thread; `running` says whether lines go
// through it.
struct AsyncSink {
    std::mutex mutex;
    std::condition_variable wake;
    std::string pending;  // whole lines, '\n'-terminated
    std::size_t max_bytes = 0;
    bool running = false;
    bool stopping = false;
    std::thread writer;
};
AsyncSink g_sink;
constexpr std::chrono::milliseconds kBatchInterval{5};
std::atomic<std::uint64_t> g_dropped{0};

void WriteDirect(const std::string& lines) {
    std::lock_guard<std::mutex> lock(g_mutex);
    std::fwrite(lines.data(), 1, lines.size(), stderr);
    std::fflush(stderr);
}

// Writes what is buffered in one write per wake-up, until StopAsyncWriter has been called
// and the buffer is empty.
void DrainLoop() {
    std::string batch;
    std::unique_lock<std::mutex> lock(g_sink.mutex);
    for (;;) {
        g_sink.wake.wait(lock, [] { return !g_sink.pending.empty() || g_sink.stopping; });
        if (g_sink.pending.empty()) {
            return;  // stopping, and everything is written
        }
        batch.clear();
        batch.swap(g_sink.pending);
        lock.unlock();
        WriteDirect(batch);
        // Under load, lines arrive faster than one wake-up and write each: pausing after a
        // write lets them collect, so the writer costs one wake-up and one write per
        // interval instead of a context switch per request (lines reach stderr at most this
        // much later; at shutdown the pause is cut short).
        lock.lock();
        g_sink.wake.wait_for(lock, kBatchInterval, [] { return g_sink.stopping; });
    }
}

// Appends `line` (with its newline) to the buffer if the writer runs; false when the caller
// must write it itself. A droppable line that does not fit is counted and dropped.
bool Enqueue(const std::string& line, bool droppable) {
    std::lock_guard<std::mutex> lock(g_sink.mutex);
    if (!g_sink.running) {
        return false;
    }
    if (droppable && g_sink.pending.size() + line.size() > g_sink.max_bytes) {
        g_dropped.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    const bool was_empty = g_sink.pending.empty();
    g_sink.pending += line;
    if (was_empty) {
        g_sink.wake.notify_one();  // otherwise the writer is awake already
    }
    return true;
}

void Emit(std::string line, bool droppable) {
    line.push_back('\n');
    if (!Enqueue(line, droppable)) {
        WriteDirect(line);
    }
}

}  // namespace

void StartAsyncWriter(std::size_t max_buffered_bytes) {
    std::lock_guard<std::mutex> lock(g_sink.mutex);
    if (g_sink.running) {
        return;
    }
    g_sink.max_bytes = max_buffered_bytes;
    g_sink.stopping = false;
    g_sink.running = true;
    g_sink.writer = std::thread(DrainLoop);
}

void StopAsyncWriter() {
    {
        std::lock_guard<std::mutex> lock(g_sink.mutex);
        if (!g_sink.running) {
            return;
        }
        g_sink.running = false;  // later lines are written directly, after the buffered ones
        g_sink.stopping = true;
    }
    g_sink.wake.notify_one();
    g_sink.writer.join();
    if (std::uint64_t dropped = DroppedLines(); dropped > 0) {
        Write(Level::kWarn, "access log lines dropped (log buffer full)",
              {{"dropped_lines", dropped}});
    }
}

std::uint64_t DroppedLines() {
    return g_dropped.load(std::memory_order_relaxed);
}

std::string Timestamp() {
    auto now = std::chrono::system_clock::now();
    std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buf[32];
    std::size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    char out[48];
    std::snprintf(out, sizeof(out), "%.*s.%03dZ", static_cast<int>(n), buf,
                  static_cast<int>(millis.count()));
    return out;
}

std::optional<Level> ParseLevel(std::string_view name) {
    if (name == "debug") {
        return Level::kDebug;
    }
    if (name == "info") {
        return Level::kInfo;
    }
    if (name == "warn") {
        return Level::kWarn;
    }
    if (name == "error") {
        return Level::kError;
    }
    return std::nullopt;
}

std::string_view LevelName(Level level) {
    switch (level) {
        case Level::kDebug:
            return "debug";
        case Level::kInfo:
            return "info";
        case Level::kWarn:
            return "warn";
        case Level::kError:
            return "error";
    }
    return "info";
}

void SetLevel(Level level) {
    g_level.store(static_cast<int>(level));
}

bool Enabled(Level level) {
    return static_cast<int>(level) >= g_level.load();
}

void Write(Level level, std::string_view message, nlohmann::json fields) {
    if (!Enabled(level)) {
        return;
    }
    nlohmann::json line = nlohmann::json::object();
    line["ts"] = Timestamp();
    line["level"] = LevelName(level);
    line["msg"] = message;
    if (fields.is_object()) {
        for (auto& [key, value] : fields.items()) {
            line[key] = std::move(value);
        }
    }
    Emit(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), false);
}

void WriteLine(Level level, std::string json_object) {
    if (!Enabled(level)) {
        return;
    }
    Emit(std::move(json_object), true);
}

}  // namespace gpucost::log
