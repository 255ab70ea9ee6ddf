#include "service/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace gpucost::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::mutex g_mutex;

}  // namespace

std::string Timestamp() {
    auto now = std::chrono::system_clock::now();
    std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
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

void SetLevel(Level level) { g_level.store(static_cast<int>(level)); }

bool Enabled(Level level) { return static_cast<int>(level) >= g_level.load(); }

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
    std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::lock_guard<std::mutex> lock(g_mutex);
    std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
}

void WriteLine(Level level, std::string json_object) {
    if (!Enabled(level)) {
        return;
    }
    json_object.push_back('\n');
    std::lock_guard<std::mutex> lock(g_mutex);
    std::fwrite(json_object.data(), 1, json_object.size(), stderr);
    std::fflush(stderr);
}

}  // namespace gpucost::log
