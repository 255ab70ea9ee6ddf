#include "service/storage/if_match.hpp"

namespace gpucost::storage {

bool IfMatchAccepts(const std::string& header, const std::string& etag) {
    std::size_t start = 0;
    while (start <= header.size()) {
        std::size_t end = header.find(',', start);
        if (end == std::string::npos) end = header.size();
        std::string item = header.substr(start, end - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (item == "*" || item == etag) return true;
        start = end + 1;
    }
    return false;
}

}  // namespace gpucost::storage
