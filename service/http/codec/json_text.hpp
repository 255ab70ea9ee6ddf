#pragma once

#include <string>

#include "service/http/codec/json_codec.hpp"

namespace gpucost::http {

// `value` as nlohmann::json's dump(indent) would write it (sorted keys; invalid UTF-8
// replaced), but every double in shortest round-trip form through AppendJsonNumber:
// nlohmann::json 3.11's own writer (Grisu2) is not always shortest and wrote a rate of
// 1.445604 as 1.4456039999999999. The one encoder of DOMs for answers and the commands'
// reports.
[[nodiscard]] std::string ToJsonText(const json& value, int indent = -1);

}  // namespace gpucost::http
