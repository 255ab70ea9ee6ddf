#pragma once
// Shared helpers of the import tests: the fixtures and the embedded mappings.
#include <fstream>
#include <sstream>
#include <string>

#include "service/import/mappings.hpp"

namespace gpucost::import::testing {

inline std::string Fixture(const std::string& name) {
    std::ifstream in(std::string(GPUCOST_SOURCE_DIR) + "/tests/data/import/" + name,
                     std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline const Mappings& EmbeddedMappings() {
    static const Mappings mappings = LoadEmbeddedMappings().value();
    return mappings;
}

}  // namespace gpucost::import::testing
