#pragma once

#include "service/http/codec/json_codec.hpp"
#include "service/text/json_text.hpp"

namespace gpucost::http {

// The one encoder of DOMs for answers and the commands' reports (service/text/json_text.hpp).
using text::ToJsonText;

}  // namespace gpucost::http
