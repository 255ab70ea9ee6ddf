#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace gpucost::pricing {

// A lower-cased copy, for the ids and names the catalog and model library match without regard
// to case (model ids, recipe names, plan ids). Byte-wise in the C locale: the ids are ASCII.
inline std::string LowerAscii(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace gpucost::pricing
