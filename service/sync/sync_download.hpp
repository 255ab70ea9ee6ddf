#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pricing/error.hpp"

namespace gpucost::sync {

// `gpucost sync`: which providers' price files to fetch, for which regions.
struct SyncArgs {
    std::vector<std::string> providers;  // aws | azure
    std::set<std::string> regions;       // required for aws (one offer file per region)
};

// The files downloaded for one import: a format name and its files, in import order.
struct DownloadedFiles {
    std::string format;
    std::vector<std::string> files;
};

// Downloads the providers' documented price files into `dir` (created if missing):
//   aws:
//   https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{region}/index.json
//   azure: https://prices.azure.com/api/retail/prices?$filter=serviceName eq 'Virtual Machines'
//          [and armRegionName eq '{region}'], every page (NextPageLink), at most kMaxAzurePages.
// kInvalidArgument for an unknown provider or aws without regions; kUnavailable naming the URL
// when a download fails (no network, DNS, TLS, a status other than 200).
[[nodiscard]] pricing::Result<std::vector<DownloadedFiles>> DownloadPriceFiles(
    const SyncArgs& args, const std::string& dir);

// Azure lists Virtual Machines prices 100 Items a page; a whole region is a few hundred pages.
inline constexpr int kMaxAzurePages = 5000;

}  // namespace gpucost::sync
