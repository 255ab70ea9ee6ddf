#include "service/sync/sync_download.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace gpucost::sync {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

// Connection setup is quick or not at all; a multi-GB offer file streams for minutes, so the
// read timeout bounds a stall, not the download.
constexpr std::chrono::seconds kConnectTimeout{15};
constexpr std::chrono::seconds kReadTimeout{120};
constexpr char kAzurePricesPath[] = "/api/retail/prices";

std::string UrlEncode(const std::string& text) {
    static const char* kHex = "0123456789ABCDEF";
    std::string out;
    for (char ch : text) {
        auto c = static_cast<unsigned char>(ch);
        if (std::isalnum(c) != 0 || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            out += ch;
        } else {
            out += '%';
            out += kHex[c >> 4U];
            out += kHex[c & 15U];
        }
    }
    return out;
}

// One try at a download: how it ended, whether another try may succeed, and how long the
// server asked to wait first (Retry-After, in seconds).
struct Attempt {
    pricing::Status status;
    bool transient = false;
    std::optional<std::chrono::milliseconds> retry_after;
};

Attempt Final(pricing::Status status) {
    return {std::move(status), false, std::nullopt};
}
Attempt Transient(pricing::Status status,
                  std::optional<std::chrono::milliseconds> retry_after = std::nullopt) {
    return {std::move(status), true, retry_after};
}

std::optional<std::chrono::milliseconds> RetryAfter(const httplib::Response& response) {
    const std::string value = response.get_header_value("Retry-After");
    if (value.empty() || !std::all_of(value.begin(), value.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) != 0;
        })) {
        return std::nullopt;  // absent, or an HTTP date: the doubling wait instead
    }
    return std::chrono::seconds(std::stoll(value.substr(0, 9)));
}

// One request: GET unless `post_body` is set (RunPod's GraphQL query), with `headers` (an API
// key as a Bearer token).
struct Fetch {
    std::string url;
    httplib::Headers headers;
    std::optional<std::string> post_body;
};

Attempt DownloadOnce(const Fetch& fetch, const std::string& path) {
    const std::string& url = fetch.url;
    auto scheme_end = url.find("://");
    auto path_start =
        scheme_end == std::string::npos ? std::string::npos : url.find('/', scheme_end + 3);
    if (path_start == std::string::npos) {
        return Final(MakeError(ErrorCode::kInvalidArgument, "not a URL: " + url));
    }
    httplib::Client client(url.substr(0, path_start));
    client.set_follow_location(true);
    client.set_connection_timeout(kConnectTimeout);
    client.set_read_timeout(kReadTimeout);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    std::size_t bytes = 0;
    auto write = [&](const char* data, std::size_t length) {
        file.write(data, static_cast<std::streamsize>(length));
        bytes += length;
        return static_cast<bool>(file);
    };
    auto result = fetch.post_body ? client.Post(url.substr(path_start), fetch.headers,
                                                *fetch.post_body, "application/json")
                                  : client.Get(url.substr(path_start), fetch.headers, write);
    if (result && fetch.post_body) {
        write(result->body.data(), result->body.size());
    }
    const std::string what = "cannot download " + url + ": ";
    if (!result) {
        return Transient(
            MakeError(ErrorCode::kUnavailable, what + httplib::to_string(result.error())));
    }
    const int status = result->status;
    if (status == 429 || status >= 500) {
        return Transient(
            MakeError(ErrorCode::kUnavailable, what + "HTTP status " + std::to_string(status)),
            RetryAfter(*result));
    }
    if (status != 200) {
        return Final(
            MakeError(ErrorCode::kUnavailable, what + "HTTP status " + std::to_string(status)));
    }
    const std::string length = result->get_header_value("Content-Length");
    if (!length.empty() && length != std::to_string(bytes)) {
        return Transient(MakeError(ErrorCode::kUnavailable, what + "the body was cut short (" +
                                                                std::to_string(bytes) + " of " +
                                                                length + " bytes)"));
    }
    file.close();
    if (!file) {
        return Final(MakeError(ErrorCode::kUnavailable, "cannot write " + path));
    }
    return Final(pricing::Ok{});
}

// Streams `url` into `path`, retrying what `policy` says is worth another try.
pricing::Status Download(const Fetch& fetch, const std::string& path, const RetryPolicy& policy) {
    std::chrono::milliseconds wait = policy.first_wait;
    for (int attempt = 1;; ++attempt) {
        Attempt tried = DownloadOnce(fetch, path);
        if (tried.status.ok() || !tried.transient || attempt >= policy.attempts) {
            if (!tried.status.ok() && tried.transient) {
                return MakeError(
                    ErrorCode::kUnavailable,
                    tried.status.error().message + " (" + std::to_string(attempt) + " attempts)");
            }
            return tried.status;
        }
        std::this_thread::sleep_for(
            std::min<std::chrono::milliseconds>(tried.retry_after.value_or(wait), policy.max_wait));
        wait = std::min<std::chrono::milliseconds>(wait * 2, policy.max_wait);
    }
}

// A downloaded page as its API documents it: a JSON object; kUnavailable naming the URL when
// it is not (a body cut short without a Content-Length, an error page, a changed API).
pricing::Result<nlohmann::json> ReadPage(const std::string& path, const std::string& url) {
    std::ifstream in(path);
    auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object()) {
        return MakeError(ErrorCode::kUnavailable,
                         url +
                             " did not answer a JSON object (cut short or not the documented "
                             "format); nothing of this provider is imported");
    }
    return doc;
}

// An AWS offer file is one JSON object of up to gigabytes, streamed by the importer: here only
// its ends are looked at, so a body cut short without a Content-Length is caught before import.
pricing::Status CheckJsonObjectEnds(const std::string& path, const std::string& url) {
    std::ifstream in(path, std::ios::binary);
    std::string head(64, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    in.clear();
    in.seekg(-std::min<std::streamoff>(
                 64, static_cast<std::streamoff>(std::filesystem::file_size(path))),
             std::ios::end);
    std::ostringstream rest;  // not istreambuf_iterator: GCC 12 -O3 -Werror=null-dereference
    rest << in.rdbuf();
    const std::string tail = rest.str();
    auto first = head.find_first_not_of(" \t\r\n");
    auto last = tail.find_last_not_of(" \t\r\n");
    if (first == std::string::npos || head[first] != '{' || last == std::string::npos ||
        tail[last] != '}') {
        return MakeError(ErrorCode::kUnavailable,
                         url +
                             " is not a whole JSON object (cut short?); nothing of this "
                             "provider is imported");
    }
    return pricing::Ok{};
}

pricing::Result<DownloadedFiles> DownloadAws(const SyncArgs& args, const std::string& dir) {
    DownloadedFiles out{"aws", "aws-price-list", {}, {}};
    for (const std::string& region : args.regions) {
        std::string path = dir + "/aws-" + region + ".json";
        std::string url = args.aws_base + region + "/index.json";
        if (auto got = Download({url, {}, std::nullopt}, path, args.retry); !got.ok()) {
            return got.error();
        }
        if (auto whole = CheckJsonObjectEnds(path, url); !whole.ok()) {
            return whole.error();
        }
        out.files.push_back(path);
        out.urls.push_back(url);
    }
    return out;
}

pricing::Result<DownloadedFiles> DownloadAzure(const SyncArgs& args, const std::string& dir) {
    DownloadedFiles out{"azure", "azure-retail-prices", {}, {}};
    std::string filter = "serviceName eq 'Virtual Machines'";
    if (!args.regions.empty()) {
        std::string any;
        for (const std::string& region : args.regions) {
            any += (any.empty() ? "" : " or ") + std::string("armRegionName eq '") + region + "'";
        }
        filter += " and (" + any + ")";
    }
    std::string url = args.azure_base + "?$filter=" + UrlEncode(filter);
    for (int page = 0; !url.empty(); ++page) {
        if (page >= kMaxAzurePages) {
            return MakeError(ErrorCode::kUnavailable, "Azure listed more than " +
                                                          std::to_string(kMaxAzurePages) +
                                                          " pages; narrow it with --region");
        }
        std::string path = dir + "/azure-page-" + std::to_string(page) + ".json";
        if (auto got = Download({url, {}, std::nullopt}, path, args.retry); !got.ok()) {
            return got.error();
        }
        auto doc = ReadPage(path, url);
        if (!doc.ok()) return doc.error();
        if (!doc.value().contains("Items") || !doc.value()["Items"].is_array()) {
            return MakeError(ErrorCode::kUnavailable,
                             url +
                                 " has no Items array (the Retail Prices API changed?); "
                                 "nothing of this provider is imported");
        }
        out.files.push_back(path);
        out.urls.push_back(url);
        const auto& next = doc.value()["NextPageLink"];
        url = next.is_string() ? next.get<std::string>() : std::string();
        // NextPageLink names Azure's own host (https://prices.azure.com:443/api/retail/prices?...);
        // a mirror serves the same pages under its own base.
        if (const auto at = url.find(kAzurePricesPath);
            args.azure_base != kAzurePricesBase && at != std::string::npos) {
            url = args.azure_base + url.substr(at + std::string_view(kAzurePricesPath).size());
        }
    }
    return out;
}

pricing::Result<DownloadedFiles> DownloadGcp(const SyncArgs& args, const std::string& dir) {
    DownloadedFiles out{"gcp", "gcp-billing-catalog", {}, {}};
    for (const char* service : kGcpServices) {
        std::string token;
        for (int page = 0;; ++page) {
            if (page >= kMaxGcpPages) {
                return MakeError(ErrorCode::kUnavailable, std::string("GCP listed more than ") +
                                                              std::to_string(kMaxGcpPages) +
                                                              " pages of " + service);
            }
            std::string shown = args.gcp_base + service + "/skus?currencyCode=USD" +
                                (token.empty() ? "" : "&pageToken=" + UrlEncode(token));
            std::string path = dir + "/gcp-" + service + "-" + std::to_string(page) + ".json";
            if (auto got =
                    Download({shown + "&key=" + UrlEncode(args.gcp_api_key), {}, std::nullopt},
                             path, args.retry);
                !got.ok()) {
                // The message names the URL with the key; say it without.
                return MakeError(
                    ErrorCode::kUnavailable,
                    "cannot download " + shown + " (key left out): " +
                        got.error().message.substr(got.error().message.rfind(": ") + 2));
            }
            auto doc = ReadPage(path, shown);
            if (!doc.ok()) return doc.error();
            if (!doc.value().contains("skus") || !doc.value()["skus"].is_array()) {
                return MakeError(ErrorCode::kUnavailable,
                                 shown +
                                     " has no skus array (the Cloud Billing Catalog "
                                     "changed?); nothing of this provider is imported");
            }
            out.files.push_back(path);
            out.urls.push_back(shown);
            const auto& next = doc.value()["nextPageToken"];
            token = next.is_string() ? next.get<std::string>() : std::string();
            if (token.empty()) break;
        }
    }
    return out;
}

// The bundles search's query for one page: rentable verified on-demand offers in ascending
// offer id, those above `after_id` (the previous page's last). The search has no page token or
// offset (vast-ai/vast-python vast.py `search offers` sends one query and reads `offers`), but
// it filters and orders by any offer field, `id` among them: keyset paging.
std::string VastaiPageUrl(const SyncArgs& args, std::optional<std::int64_t> after_id) {
    std::string query = R"({"rentable":{"eq":true},"verified":{"eq":true},"type":"on-demand",)"
                        R"("order":[["id","asc"]],)";
    if (after_id) query += R"("id":{"gt":)" + std::to_string(*after_id) + "},";
    query += R"("limit":)" + std::to_string(kVastaiOfferLimit) + "}";
    return args.vastai_url + "?q=" + UrlEncode(query);
}

// The highest offer id of a page; nullopt when an offer has no integer id (a changed answer:
// the next page cannot be asked for).
std::optional<std::int64_t> LastOfferId(const nlohmann::json& offers) {
    std::optional<std::int64_t> last;
    for (const auto& offer : offers) {
        if (!offer.is_object() || !offer.contains("id") || !offer["id"].is_number_integer()) {
            return std::nullopt;
        }
        last = std::max(last.value_or(offer["id"].get<std::int64_t>()),
                        offer["id"].get<std::int64_t>());
    }
    return last;
}

// Every page of the bundles search, until one answers no offers. Asking until an empty page,
// rather than stopping at a page shorter than `limit`, also reads every offer where the search
// answers fewer than asked per page.
pricing::Result<DownloadedFiles> DownloadVastai(const SyncArgs& args, const std::string& dir) {
    DownloadedFiles out{"vastai", "vastai-bundles", {}, {}};
    std::optional<std::int64_t> after_id;
    for (int page = 0;; ++page) {
        if (page >= kMaxVastaiPages) {
            return MakeError(
                ErrorCode::kUnavailable,
                "Vast.ai listed more than " + std::to_string(kMaxVastaiPages) + " pages of offers");
        }
        const std::string url = VastaiPageUrl(args, after_id);
        const std::string path = dir + "/vastai-page-" + std::to_string(page) + ".json";
        if (auto got = Download({url, {}, std::nullopt}, path, args.retry); !got.ok()) {
            return got.error();
        }
        auto doc = ReadPage(path, url);
        if (!doc.ok()) return doc.error();
        const nlohmann::json& offers = doc.value()["offers"];
        if (!offers.is_array()) {
            return MakeError(ErrorCode::kUnavailable,
                             url +
                                 " has no offers array (the bundles search changed?); nothing of "
                                 "this provider is imported");
        }
        if (offers.empty()) break;
        const auto last = LastOfferId(offers);
        if (!last || (after_id && *last <= *after_id)) {
            return MakeError(ErrorCode::kUnavailable,
                             url +
                                 " answered offers without increasing integer ids, so the next "
                                 "page cannot be asked for; nothing of this provider is imported");
        }
        out.files.push_back(path);
        out.urls.push_back(url);
        after_id = last;
    }
    return out;
}

// The fields RunPod's gpuTypes query asks for: the GPU, the clouds that rent it and their
// on-demand and spot prices per GPU-hour.
constexpr char kRunpodQuery[] =
    R"({"query":"query GpuTypes { gpuTypes { id displayName manufacturer memoryInGb )"
    R"(secureCloud communityCloud securePrice communityPrice secureSpotPrice )"
    R"(communitySpotPrice } }"})";

// One answer of a neocloud, downloaded and checked to be whole and in its documented shape.
pricing::Result<DownloadedFiles> DownloadOne(const SyncArgs& args, const std::string& provider,
                                             const std::string& dir) {
    Fetch fetch;
    std::string format;
    std::string shown;
    if (provider == "lambda") {
        fetch.url = args.lambda_url;
        fetch.headers = {{"Authorization", "Bearer " + args.lambda_api_key}};
        format = "lambda-instance-types";
    } else if (provider == "runpod") {
        fetch.url = args.runpod_url;
        fetch.post_body = kRunpodQuery;
        format = "runpod-gpu-types";
    } else {
        fetch.url = args.coreweave_url;
        format = "coreweave-pricing";
    }
    const std::string path = dir + "/" + provider + (provider == "coreweave" ? ".html" : ".json");
    if (auto got = Download(fetch, path, args.retry); !got.ok()) {
        return got.error();
    }
    const std::string changed =
        " is not the documented answer (the API changed?); nothing of this provider is imported";
    if (provider == "coreweave") {
        std::ifstream in(path, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (text.str().find("</html>") == std::string::npos) {
            return MakeError(ErrorCode::kUnavailable,
                             fetch.url +
                                 " is not a whole HTML page (cut short?); nothing of this "
                                 "provider is imported");
        }
    } else {
        auto doc = ReadPage(path, fetch.url);
        if (!doc.ok()) return doc.error();
        const nlohmann::json& page = doc.value();
        const bool documented =
            provider == "lambda"
                ? page.contains("data") && page["data"].is_object()
                : !page.contains("errors") && page.contains("data") && page["data"].is_object() &&
                      page["data"].contains("gpuTypes") && page["data"]["gpuTypes"].is_array();
        if (!documented) {
            return MakeError(ErrorCode::kUnavailable, fetch.url + changed);
        }
    }
    return DownloadedFiles{provider, format, {path}, {fetch.url}};
}

}  // namespace

pricing::Status CheckSyncArgs(const SyncArgs& args) {
    for (const std::string& p : args.providers) {
        if (std::find(kSyncProviders.begin(), kSyncProviders.end(), p) == kSyncProviders.end()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "sync knows aws, azure, gcp, lambda, runpod, vastai and coreweave "
                             "(" +
                                 p + " publishes no price file the importers read)",
                             "provider");
        }
        if (p == "aws" && args.regions.empty()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "sync aws needs --region (AWS publishes one offer file per region)",
                             "--region");
        }
    }
    return pricing::Ok{};
}

std::optional<std::string> MissingApiKey(const SyncArgs& args, const std::string& provider) {
    if (provider == "gcp" && args.gcp_api_key.empty()) {
        return "no API key: the Cloud Billing Catalog needs one (set GCP_API_KEY, or "
               "GCP_API_KEY_FILE naming a file that holds it, a mounted Secret)";
    }
    if (provider == "lambda" && args.lambda_api_key.empty()) {
        return "no API key: Lambda's instance-types API needs one (set LAMBDA_API_KEY, or "
               "LAMBDA_API_KEY_FILE naming a file that holds it, a mounted Secret)";
    }
    return std::nullopt;
}

pricing::Result<DownloadedFiles> DownloadProvider(const SyncArgs& args, const std::string& provider,
                                                  const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return MakeError(ErrorCode::kUnavailable, "cannot create " + dir + ": " + ec.message());
    }
    if (provider == "aws") return DownloadAws(args, dir);
    if (provider == "azure") return DownloadAzure(args, dir);
    if (provider == "gcp") return DownloadGcp(args, dir);
    if (provider == "vastai") return DownloadVastai(args, dir);
    if (std::find(kSyncProviders.begin(), kSyncProviders.end(), provider) != kSyncProviders.end()) {
        return DownloadOne(args, provider, dir);
    }
    return MakeError(ErrorCode::kInvalidArgument, "sync does not know " + provider, "provider");
}

}  // namespace gpucost::sync
