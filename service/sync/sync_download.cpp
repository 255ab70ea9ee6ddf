#include "service/sync/sync_download.hpp"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace gpucost::sync {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

constexpr char kAwsOfferBase[] =
    "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/";
constexpr char kAzurePricesBase[] = "https://prices.azure.com/api/retail/prices?$filter=";
// Connection setup is quick or not at all; a multi-GB offer file streams for minutes, so the
// read timeout bounds a stall, not the download.
constexpr std::chrono::seconds kConnectTimeout{15};
constexpr std::chrono::seconds kReadTimeout{120};

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

// Streams `url` into `path`.
pricing::Status Download(const std::string& url, const std::string& path) {
    auto scheme_end = url.find("://");
    auto path_start =
        scheme_end == std::string::npos ? std::string::npos : url.find('/', scheme_end + 3);
    if (path_start == std::string::npos) {
        return MakeError(ErrorCode::kInvalidArgument, "not a URL: " + url);
    }
    httplib::Client client(url.substr(0, path_start));
    client.set_follow_location(true);
    client.set_connection_timeout(kConnectTimeout);
    client.set_read_timeout(kReadTimeout);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    auto result = client.Get(url.substr(path_start), [&](const char* data, std::size_t length) {
        file.write(data, static_cast<std::streamsize>(length));
        return static_cast<bool>(file);
    });
    if (!result) {
        return MakeError(ErrorCode::kUnavailable,
                         "cannot download " + url + ": " + httplib::to_string(result.error()));
    }
    if (result->status != 200) {
        return MakeError(ErrorCode::kUnavailable, "cannot download " + url + ": HTTP status " +
                                                      std::to_string(result->status));
    }
    file.close();
    if (!file) {
        return MakeError(ErrorCode::kUnavailable, "cannot write " + path);
    }
    return pricing::Ok{};
}

pricing::Result<DownloadedFiles> DownloadAws(const SyncArgs& args, const std::string& dir) {
    DownloadedFiles out{"aws-price-list", {}};
    for (const std::string& region : args.regions) {
        std::string path = dir + "/aws-" + region + ".json";
        if (auto got = Download(kAwsOfferBase + region + "/index.json", path); !got.ok()) {
            return got.error();
        }
        out.files.push_back(path);
    }
    return out;
}

pricing::Result<DownloadedFiles> DownloadAzure(const SyncArgs& args, const std::string& dir) {
    DownloadedFiles out{"azure-retail-prices", {}};
    std::string filter = "serviceName eq 'Virtual Machines'";
    if (!args.regions.empty()) {
        std::string any;
        for (const std::string& region : args.regions) {
            any += (any.empty() ? "" : " or ") + std::string("armRegionName eq '") + region + "'";
        }
        filter += " and (" + any + ")";
    }
    std::string url = kAzurePricesBase + UrlEncode(filter);
    for (int page = 0; !url.empty(); ++page) {
        if (page >= kMaxAzurePages) {
            return MakeError(ErrorCode::kUnavailable, "Azure listed more than " +
                                                          std::to_string(kMaxAzurePages) +
                                                          " pages; narrow it with --region");
        }
        std::string path = dir + "/azure-page-" + std::to_string(page) + ".json";
        if (auto got = Download(url, path); !got.ok()) {
            return got.error();
        }
        out.files.push_back(path);
        std::ifstream in(path);
        auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
        auto next =
            doc.is_object() && doc.contains("NextPageLink") && doc["NextPageLink"].is_string()
                ? doc["NextPageLink"].get<std::string>()
                : std::string();
        url = next;
    }
    return out;
}

}  // namespace

pricing::Result<std::vector<DownloadedFiles>> DownloadPriceFiles(const SyncArgs& args,
                                                                 const std::string& dir) {
    for (const std::string& p : args.providers) {
        if (p != "aws" && p != "azure") {
            return MakeError(ErrorCode::kInvalidArgument,
                             "sync knows aws and azure; for gcp, download the Cloud Billing "
                             "Catalog pages with an API key and use `gpucost import`",
                             "provider");
        }
        if (p == "aws" && args.regions.empty()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "sync aws needs --region (AWS publishes one offer file per region)",
                             "--region");
        }
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return MakeError(ErrorCode::kUnavailable, "cannot create " + dir + ": " + ec.message());
    }
    std::vector<DownloadedFiles> downloaded;
    for (const std::string& p : args.providers) {
        auto got = p == "aws" ? DownloadAws(args, dir) : DownloadAzure(args, dir);
        if (!got.ok()) {
            return got.error();
        }
        downloaded.push_back(std::move(got).value());
    }
    return downloaded;
}

}  // namespace gpucost::sync
