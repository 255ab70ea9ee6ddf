#include "service/http/codec/idempotency.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "pricing/catalog_loader.hpp"
#include "pricing/error.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/transport/request_context.hpp"

namespace gpucost::http {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxIdempotencyKeyBytes = 200;
constexpr char kHeader[] = "Idempotency-Key";

// Numbers as doubles, so that 44 and 44.0 read alike (the handlers read both as the same value);
// objects are already ordered by key.
void NumbersAsDoubles(json& value) {
    if (value.is_number()) {
        value = value.get<double>();
    } else if (value.is_structured()) {
        for (json& item : value) NumbersAsDoubles(item);
    }
}

bool IsJson(const httplib::Request& req) {
    std::string type = req.get_header_value("Content-Type");
    type = type.substr(0, type.find(';'));
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return type.find("json") != std::string::npos;
}

}  // namespace

std::optional<std::string> ReadIdempotencyKey(const httplib::Request& req, httplib::Response& res) {
    if (!req.has_header(kHeader) && !HeaderSentEmpty(kHeader)) {
        return std::string();
    }
    std::string key = req.get_header_value(kHeader);
    bool printable = std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 127; });
    if (key.empty() || key.size() > kMaxIdempotencyKeyBytes || !printable) {
        WriteProblem(res, req,
                     pricing::MakeError(pricing::ErrorCode::kMalformed,
                                        "Idempotency-Key must be 1-200 printable ASCII characters "
                                        "without spaces (a UUID is a good choice); an empty key "
                                        "is not taken as none",
                                        kHeader));
        return std::nullopt;
    }
    return key;
}

std::string RequestFingerprint(const httplib::Request& req) {
    std::string body = req.body;
    if (IsJson(req)) {
        json parsed = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
        if (!parsed.is_discarded()) {
            NumbersAsDoubles(parsed);
            body = parsed.dump(-1, ' ', false, json::error_handler_t::replace);
        }
    }
    // The query parameters in name order (a multimap's); none: the fingerprint of a write
    // that takes none, as it always was.
    std::string query;
    for (const auto& [name, value] : req.params) {
        query += (query.empty() ? "?" : "&") + name + "=" + value;
    }
    return pricing::ContentHash(req.method + " " + req.path + query + "\n" + body);
}

bool ReadRetryHeaders(const httplib::Request& req, httplib::Response& res, WriteRequest& write) {
    auto key = ReadIdempotencyKey(req, res);
    if (!key) {
        return false;
    }
    write.idempotency_key = *key;
    if (req.has_header("If-Match")) {
        write.if_match = req.get_header_value("If-Match");
    }
    write.request_hash = RequestFingerprint(req);
    return true;
}

StoredResponse AnswerOf(const std::function<void(httplib::Response&)>& write) {
    httplib::Response scratch;
    write(scratch);
    return {scratch.status, scratch.body, scratch.get_header_value("ETag"), false};
}

void WriteStored(httplib::Response& res, const StoredResponse& stored) {
    res.status = stored.status;
    if (!stored.body.empty()) {
        res.set_content(stored.body, "application/json");
    }
    if (!stored.etag.empty()) {
        res.set_header("ETag", stored.etag);
    }
    if (stored.replayed) {
        res.set_header("Idempotent-Replayed", "true");
    }
}

std::string JsonFingerprint(json value, std::initializer_list<std::string_view> ignored) {
    if (value.is_object()) {
        for (std::string_view key : ignored) value.erase(std::string(key));
    }
    NumbersAsDoubles(value);
    return pricing::ContentHash(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace gpucost::http
