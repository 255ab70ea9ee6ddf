#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pricing/error.hpp"

namespace gpucost::sync {

// Where each provider publishes its price files (docs/prices.md, "The formats"). A deployment
// may point one at a mirror, and the tests at their fixture server (GPUCOST_SYNC_*_URL).
inline constexpr char kAwsOfferBase[] =
    "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/";
inline constexpr char kAzurePricesBase[] = "https://prices.azure.com/api/retail/prices";
inline constexpr char kGcpBillingBase[] = "https://cloudbilling.googleapis.com/v1/services/";
// The neoclouds' own price answers: Lambda's instance-types API (needs an API key), RunPod's
// public GraphQL API (gpuTypes), Vast.ai's public bundles search and CoreWeave's pricing page.
inline constexpr char kLambdaInstanceTypesUrl[] =
    "https://cloud.lambdalabs.com/api/v1/instance-types";
inline constexpr char kRunpodGraphqlUrl[] = "https://api.runpod.io/graphql";
inline constexpr char kVastaiBundlesUrl[] = "https://console.vast.ai/api/v0/bundles/";
inline constexpr char kCoreweavePricingUrl[] = "https://www.coreweave.com/pricing";
// The Cloud Billing Catalog services whose SKUs price GPU machines and TPUs: Compute Engine
// and Cloud TPU (docs/prices.md, `gcp-billing-catalog`).
inline constexpr std::array<const char*, 2> kGcpServices = {"6F81-5844-456A", "E000-3F24-B8AA"};

// How one download is retried. The providers' own guidance: Azure's Retail Prices API and
// Google's APIs answer 429 with Retry-After when a client reads too fast; a 5xx or a body cut
// short is transient. Four attempts with a doubling wait (1, 2, 4 s unless Retry-After says
// otherwise, at most a minute) ride out a short outage without holding a CronJob for long.
struct RetryPolicy {
    int attempts = 4;
    std::chrono::milliseconds first_wait{1000};
    std::chrono::seconds max_wait{60};
};

// `gpucost sync`: which providers' price files to fetch, for which regions, from where.
struct SyncArgs {
    std::vector<std::string> providers;  // one of kSyncProviders each
    std::set<std::string> regions;       // required for aws (one offer file per region)
    std::string aws_base = kAwsOfferBase;
    std::string azure_base = kAzurePricesBase;
    std::string gcp_base = kGcpBillingBase;
    std::string gcp_api_key;  // required for gcp (GCP_API_KEY or GCP_API_KEY_FILE)
    std::string lambda_url = kLambdaInstanceTypesUrl;
    std::string runpod_url = kRunpodGraphqlUrl;
    std::string vastai_url = kVastaiBundlesUrl;
    std::string coreweave_url = kCoreweavePricingUrl;
    std::string lambda_api_key;  // required for lambda (LAMBDA_API_KEY or LAMBDA_API_KEY_FILE)
    RetryPolicy retry;
};

// The files downloaded for one import: a format name and its files, in import order, and
// where they came from (recorded with the run).
struct DownloadedFiles {
    std::string provider;
    std::string format;
    std::vector<std::string> files;
    std::vector<std::string> urls;  // API keys left out
};

// The providers sync knows (one list; `gpucost sync` refuses others by name).
inline constexpr std::array<const char*, 7> kSyncProviders = {
    "aws", "azure", "gcp", "lambda", "runpod", "vastai", "coreweave"};

// kInvalidArgument for an unknown provider or aws without regions (a mistake in the command).
[[nodiscard]] pricing::Status CheckSyncArgs(const SyncArgs& args);

// Why `provider` cannot be synced in this deployment: gcp or lambda without its API key (the
// variable to set); nullopt when it can. Such a provider is skipped and recorded as skipped,
// and the others are still synced.
[[nodiscard]] std::optional<std::string> MissingApiKey(const SyncArgs& args,
                                                       const std::string& provider);

// `gpucost sync`'s exit status, so that a CronJob's job status says how the run went:
inline constexpr int kSyncOk = 0;  // each provider named synced, or was skipped for want of its key
inline constexpr int kSyncNotRecorded = 1;  // synced, but a run could not be recorded
inline constexpr int kSyncBadInput = 2;     // a mistake in the command, or none could run (no keys)
inline constexpr int kSyncSomeFailed = 3;   // a download or import failed: those providers' prices
                                            // left as they were, the others' applied

// Downloads `provider`'s documented price files into `dir` (created if missing):
//   aws:   {aws_base}{region}/index.json, one per region
//   azure: {azure_base}?$filter=serviceName eq 'Virtual Machines' [and (armRegionName eq
//          '{region}' or ...)], every page (NextPageLink), at most kMaxAzurePages
//   gcp:   {gcp_base}{service}/skus?currencyCode=USD&key=KEY for each of kGcpServices, every
//          page (nextPageToken), at most kMaxGcpPages each
//   lambda:    GET {lambda_url} with the API key as a Bearer token; a JSON object with `data`
//   runpod:    POST {runpod_url} the gpuTypes query; `data.gpuTypes` and no GraphQL `errors`
//   vastai:    GET {vastai_url}?q={rentable, verified, on-demand, ascending id, limit
//              kVastaiOfferLimit[, id above the previous page's last]}: `offers`, every page
//              until one answers none, at most kMaxVastaiPages
//   coreweave: GET {coreweave_url}; a whole HTML page (its GPU table is read at import)
// 429 and 5xx answers and bodies shorter than their Content-Length are retried by `retry`;
// kUnavailable naming the URL when a download still fails (no network, DNS, TLS, another
// status, a body cut short), and when a page is not the JSON object its API documents
// (a truncated or changed answer): then nothing of that provider is imported.
[[nodiscard]] pricing::Result<DownloadedFiles> DownloadProvider(const SyncArgs& args,
                                                                const std::string& provider,
                                                                const std::string& dir);

// Azure lists Virtual Machines prices 100 Items a page; a whole region is a few hundred pages.
inline constexpr int kMaxAzurePages = 5000;
// GCP lists at most 5,000 SKUs a page; Compute Engine has some tens of thousands.
inline constexpr int kMaxGcpPages = 100;
// Vast.ai's marketplace lists a few thousand rentable verified offers; the search answers at
// most `limit` of them in one page, and sync asks for the next page (offers above the last id)
// until one is empty, so a search that answers fewer than asked still yields every offer.
inline constexpr int kVastaiOfferLimit = 10000;
inline constexpr int kMaxVastaiPages = 100;

}  // namespace gpucost::sync
