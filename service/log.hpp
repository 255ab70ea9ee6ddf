#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpucost::log {

enum class Level { kDebug, kInfo, kWarn, kError };

std::optional<Level> ParseLevel(std::string_view name);
std::string_view LevelName(Level level);

// Minimum level written; default kInfo. Thread-safe.
void SetLevel(Level level);
bool Enabled(Level level);

// Writes one JSON object per line to stderr: {"ts":..., "level":..., "msg":..., fields...}.
// Thread-safe; lines never interleave. Fields must not carry secrets.
void Write(Level level, std::string_view message, nlohmann::json fields = nlohmann::json::object());

// Writes `json_object`, one JSON object already encoded by the caller in the format of Write
// (keys sorted, "ts" from Timestamp()), as one line. For the per-request access log, which
// builds its line without a DOM.
void WriteLine(Level level, std::string json_object);

// Moves the writing of lines off the caller's thread: from now on Write and WriteLine append
// to a buffer that one writer thread drains to stderr, so a request never waits on the log's
// file descriptor (a slow pipe, a full terminal) or on the other workers' lines. The buffer
// holds at most `max_buffered_bytes` of access-log lines (WriteLine); a line that does not
// fit is dropped and counted (DroppedLines, /metrics), never lost silently. Lines of Write
// (start-up, errors, shutdown) are always kept. Call StopAsyncWriter before exiting: it
// writes what is buffered and returns to direct writes.
void StartAsyncWriter(std::size_t max_buffered_bytes);
void StopAsyncWriter();
// Access-log lines dropped because the buffer was full, since the process started.
std::uint64_t DroppedLines();

// The "ts" value of Write: UTC, milliseconds, e.g. 2026-11-23T06:29:46.100Z.
std::string Timestamp();

inline void Debug(std::string_view m, nlohmann::json f = nlohmann::json::object()) {
    Write(Level::kDebug, m, std::move(f));
}
inline void Info(std::string_view m, nlohmann::json f = nlohmann::json::object()) {
    Write(Level::kInfo, m, std::move(f));
}
inline void Warn(std::string_view m, nlohmann::json f = nlohmann::json::object()) {
    Write(Level::kWarn, m, std::move(f));
}
inline void Error(std::string_view m, nlohmann::json f = nlohmann::json::object()) {
    Write(Level::kError, m, std::move(f));
}

}  // namespace gpucost::log
