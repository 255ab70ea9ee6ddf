#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpucost::text {

// JSON text as the answers and the commands' reports write it: one writer of numbers and
// strings shared by the HTTP codecs and the command-line tools, which link no HTTP library.

using json = nlohmann::json;

// A number at the JSON boundary, exact: written by ToJsonText as the shortest text that reads
// back as the same double, so echoed constants equal those used (3.6e-06 stays 3.6e-06).
// Non-finite values become null, -0 becomes 0.
json Num(double value);

// Appends `value` as ToJsonText(Num(value)) writes it: the shortest text that reads back as it
// (std::to_chars' digits; nlohmann::json's own dump is not always shortest) in nlohmann::json's
// layout (1.5, 0.0001, 3.6e-06, 2.0), null for non-finite, 0.0 for -0, without building a json
// value for it.
void AppendJsonNumber(std::string& out, double value);

// Appends `text` as a JSON string, escaped as nlohmann::json escapes it (invalid UTF-8
// replaced).
void AppendJsonString(std::string& out, std::string_view text);

// Appends ToJsonText(value) without its own string.
void AppendJsonDom(std::string& out, const json& value);

// `value` as nlohmann::json's dump(indent) would write it (sorted keys; invalid UTF-8
// replaced), but every double in shortest round-trip form through AppendJsonNumber:
// nlohmann::json 3.11's own writer (Grisu2) is not always shortest and wrote a rate of
// 1.445604 as 1.4456039999999999. The one encoder of DOMs for answers and the commands'
// reports.
[[nodiscard]] std::string ToJsonText(const json& value, int indent = -1);

}  // namespace gpucost::text
