#include "service/http/routes/tag_key.hpp"

#include <cstddef>

#include "service/http/actuals_store.hpp"

namespace gpucost::http {
namespace {

// Whether `text` is well-formed UTF-8 without control characters (C0, DEL).
bool IsPrintableUtf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        if (lead < 0x20 || lead == 0x7F) return false;
        std::size_t length = 1;
        unsigned min = 0;
        unsigned cp = lead;
        if (lead >= 0x80) {
            if ((lead & 0xE0) == 0xC0) {
                length = 2, min = 0x80, cp = lead & 0x1F;
            } else if ((lead & 0xF0) == 0xE0) {
                length = 3, min = 0x800, cp = lead & 0x0F;
            } else if ((lead & 0xF8) == 0xF0) {
                length = 4, min = 0x10000, cp = lead & 0x07;
            } else {
                return false;
            }
        }
        if (i + length > text.size()) return false;
        for (std::size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (next & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += length;
    }
    return true;
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
