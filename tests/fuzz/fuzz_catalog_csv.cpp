// libFuzzer harness: the catalog CSV loader (accelerators, offerings, prices). The input is
// the three files separated by lines of "=====".
#include <cstddef>
#include <cstdint>
#include <string>

#include "pricing/catalog_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string input(reinterpret_cast<const char*>(data), size);
    const std::string separator = "\n=====\n";
    gpucost::pricing::CatalogCsv csv;
    std::string* parts[] = {&csv.accelerators_csv, &csv.offerings_csv, &csv.prices_csv};
    std::size_t start = 0;
    for (std::string* part : parts) {
        std::size_t end = input.find(separator, start);
        *part = input.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (end == std::string::npos) break;
        start = end + separator.size();
    }
    auto loaded = gpucost::pricing::LoadCatalog(csv);
    if (loaded.ok()) {
        (void)loaded.value()->Describe();
    }
    return 0;
}
