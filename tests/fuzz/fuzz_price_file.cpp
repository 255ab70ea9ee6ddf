// libFuzzer harness: the provider price-file importers (AWS Price List, Azure Retail Prices,
// GCP Cloud Billing Catalog) through ReadPriceBuffer, with the mapping tables built into the
// binary. The first byte of the input picks the format (its value mod 3: '0' AWS, '1' Azure,
// '2' GCP, as the seeds in corpus/price_file start); the rest is the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include "service/import/price_file.hpp"

namespace {

const gpucost::import::Mappings& EmbeddedMappings() {
    static const gpucost::import::Mappings mappings = [] {
        auto loaded = gpucost::import::LoadEmbeddedMappings();
        if (!loaded.ok()) std::abort();  // the built-in tables must load
        return loaded.value();
    }();
    return mappings;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    using gpucost::import::Format;
    constexpr Format kFormats[] = {Format::kAwsPriceList,      Format::kAzureRetailPrices,
                                   Format::kGcpBillingCatalog, Format::kLambdaInstanceTypes,
                                   Format::kRunpodGpuTypes,    Format::kVastaiBundles,
                                   Format::kCoreweavePricing};
    const Format format = kFormats[data[0] % std::size(kFormats)];
    std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    gpucost::import::ParseOptions options;
    options.as_of = "2026-11-01";
    auto read =
        gpucost::import::ReadPriceBuffer(format, text, "fuzz.json", EmbeddedMappings(), options);
    if (read.ok()) {
        for (const auto& offering : read.value().offerings) {
            // Every kept offering is a whole object with a price the catalog can hold: never
            // NaN, an infinity, negative or over the bound, whatever the file says.
            if (!gpucost::pricing::IsUsableUsdPerHour(offering.price.usd_per_hour)) std::abort();
        }
    }
    return 0;
}
