#pragma once

#include <cstddef>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/assumption.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"
#include "service/import/mappings.hpp"

namespace gpucost::import {

// The provider price-file formats gpucost reads (docs/prices.md describes each).
enum class Format {
    kAwsPriceList,
    kAzureRetailPrices,
    kGcpBillingCatalog,
    kLambdaInstanceTypes,
    kRunpodGpuTypes,
    kVastaiBundles,
    kCoreweavePricing,
};

// "aws-price-list", "azure-retail-prices", "gcp-billing-catalog", "lambda-instance-types",
// "runpod-gpu-types", "vastai-bundles", "coreweave-pricing".
std::string_view FormatName(Format format);
std::optional<Format> ParseFormat(std::string_view name);

struct ParseOptions {
    // Date recorded as each imported price's as_of when the file carries no publication date
    // (Azure pages, GCP SKU lists) and to override AWS's publicationDate. YYYY-MM-DD.
    std::string as_of;
    // Only these regions are imported (empty: all); other regions are skipped and counted.
    std::set<std::string> regions;
};

// A row of a price file refused for its price: where it is in the file (a SKU and term,
// an Items index, a SKU description, or the offering it would have priced) and why.
struct RefusedRow {
    std::string row;
    std::string reason;
};
// How many refused rows one file's result names (all are counted).
inline constexpr std::size_t kMaxRefusedListed = 100;

// What one price file yields: offerings (each with its price observation) and the rows that
// were not taken, counted by reason.
struct FileResult {
    std::string file;
    std::string publication_date;  // as printed in the file; empty when it has none
    std::string as_of;             // the date given to every price from this file
    std::size_t records_read = 0;  // products/terms, Items or SKUs looked at
    std::vector<pricing::Offering> offerings;
    std::map<std::string, std::size_t> skipped;  // reason -> rows
    // The rows refused for a bad price (not a number, NaN, infinite, negative, too large),
    // each named, the first kMaxRefusedListed of them; every one is also counted in `skipped`.
    std::vector<RefusedRow> refused;
};

// Reads the price files of one import, each as a stream: memory stays bounded by the rows
// kept, never the document. One result per file, except GCP and Vast.ai, whose pages are one
// listing read together (one result naming all of them). kNotFound for a file that cannot be
// opened; kInvalidArgument naming the file and the byte offset for a malformed, truncated or
// wrongly shaped document.
[[nodiscard]] pricing::Result<std::vector<FileResult>> ReadPriceFiles(
    Format format, const std::vector<std::string>& paths, const Mappings& mappings,
    const ParseOptions& options);

// The same over a buffer already in memory (tests and fuzzing).
[[nodiscard]] pricing::Result<FileResult> ReadPriceBuffer(Format format, std::string_view text,
                                                          const std::string& name,
                                                          const Mappings& mappings,
                                                          const ParseOptions& options);

// The constants a format's reader uses, as used (the import summary echoes them).
pricing::Assumptions FormatAssumptions(Format format);

// `{provider}-{instance_type}-{region}-{price_type}`, lowercased, every run of characters
// other than a-z 0-9 . _ replaced by '-' (the seed's rule, schema/seed/README.md).
std::string OfferingId(std::string_view provider, std::string_view instance_type,
                       std::string_view region, pricing::PriceType price_type);

}  // namespace gpucost::import
