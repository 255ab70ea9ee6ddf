#include "service/http/routes/tag_key.hpp"

#include <algorithm>
#include <cstddef>

#include "pricing/actuals.hpp"
#include "service/http/ports.hpp"

namespace gpucost::http {
namespace {

// Whether `text` is well-formed UTF-8 without control characters (C0, DEL).
bool IsPrintableUtf8(std::string_view text) {
    return pricing::IsCleanUtf8(text) && std::none_of(text.begin(), text.end(), [](char c) {
               const auto byte = static_cast<unsigned char>(c);
               return byte < 0x20 || byte == 0x7F;
           });
}

}  // namespace

pricing::Status CheckActualsTagKey(std::string_view key, const std::string& field) {
    if (key.empty() || key.size() > kMaxActualsTagKeyBytes || !IsPrintableUtf8(key)) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  field + " must be 1-" + std::to_string(kMaxActualsTagKeyBytes) +
                                      " bytes of UTF-8 without control characters (a FOCUS Tags "
                                      "key, such as gpucost-scenario)",
                                  field);
    }
    return pricing::Ok{};
}

}  // namespace gpucost::http
