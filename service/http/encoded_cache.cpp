#include "service/http/encoded_cache.hpp"

#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>

#include "service/http/json_codec.hpp"

namespace gpucost::http {
namespace {

// A placeholder no encoded answer can otherwise contain: JSON escapes the control character.
constexpr std::string_view kPlaceholderText = "\x01gpucost-encoded\x01";
constexpr std::string_view kPlaceholderJson = "\"\\u0001gpucost-encoded\\u0001\"";

std::string Escaped(const std::string& text) {
    return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Encoded texts by key, bounded: past kMaxCachedTexts entries everything is forgotten (texts
// of an older catalog version; the live ones come back on first use).
class TextCache {
public:
    // Appends the text cached under `key` to `out`, encoding it with make() on a miss.
    template <typename Make>
    void Append(std::string& out, const std::string& key, const Make& make) {
        {
            std::shared_lock<std::shared_mutex> lock(mutex_);
            if (auto it = texts_.find(key); it != texts_.end()) {
                out += it->second;
                return;
            }
        }
        std::string text = make();
        out += text;
        std::unique_lock<std::shared_mutex> lock(mutex_);
        if (texts_.size() >= kMaxCachedTexts) {
            texts_.clear();
        }
        texts_.try_emplace(key, std::move(text));
    }

private:
    std::shared_mutex mutex_;
    std::unordered_map<std::string, std::string> texts_;
};

TextCache& Cache() {
    static TextCache cache;
    return cache;
}

// The constant part of an assumption's object, up to its value. Members come in the order
// nlohmann::json gives them (sorted keys), so the answer is byte-identical to one built
// through json: {"description":..,"name":..,"source":..,"unit":..,"value":<v>}.
std::string AssumptionPrefix(const pricing::Assumption& a, AssumptionDetail detail) {
    std::string prefix = "{";
    if (detail == AssumptionDetail::kFull) {
        prefix += "\"description\":" + Escaped(a.description) + ",";
    }
    prefix += "\"name\":" + Escaped(a.name) + ",";
    if (detail == AssumptionDetail::kFull) {
        prefix += "\"source\":" + Escaped(a.source) + ",";
    }
    prefix += "\"unit\":" + Escaped(a.unit) + ",\"value\":";
    return prefix;
}

}  // namespace

pricing::Result<AssumptionDetail> AssumptionDetailOf(const httplib::Request& req) {
    if (!req.has_param(kAssumptionsParam)) {
        return AssumptionDetail::kFull;
    }
    if (req.get_param_value_count(kAssumptionsParam) > 1) {
        return pricing::Error{pricing::ErrorCode::kMalformed,
                              "query parameter 'assumptions' given more than once",
                              kAssumptionsParam, {}};
    }
    const std::string value = req.get_param_value(kAssumptionsParam);
    if (value == "full") return AssumptionDetail::kFull;
    if (value == "summary") return AssumptionDetail::kSummary;
    if (value == "none") return AssumptionDetail::kNone;
    return pricing::Error{pricing::ErrorCode::kInvalidArgument,
                          "assumptions must be full, summary or none",
                          kAssumptionsParam, {}};
}

std::string EncodeAssumptions(const pricing::Assumptions& assumptions, AssumptionDetail detail) {
    std::string out = "[";
    if (detail == AssumptionDetail::kNone) {
        return out + "]";
    }
    out.reserve(assumptions.size() * (detail == AssumptionDetail::kFull ? 320 : 80));
    for (const auto& a : assumptions) {
        if (out.size() > 1) out.push_back(',');
        thread_local std::string key;
        key.assign(detail == AssumptionDetail::kFull ? "assumption-full" : "assumption-summary");
        for (const std::string* part : {&a.name, &a.unit, &a.description, &a.source}) {
            key.push_back('\0');
            key.append(*part);
        }
        Cache().Append(out, key, [&] { return AssumptionPrefix(a, detail); });
        AppendJsonNumber(out, a.value);
        out.push_back('}');
    }
    out.push_back(']');
    return out;
}

void WriteJsonWithAssumptions(httplib::Response& res, json body,
                              const pricing::Assumptions& assumptions, AssumptionDetail detail,
                              int status) {
    WriteJsonWithRaw(res, std::move(body), "assumptions", EncodeAssumptions(assumptions, detail),
                     status);
}

void AppendOfferingJson(std::string& out, const std::string& catalog_version,
                        const pricing::Offering& offering) {
    thread_local std::string key;
    key.assign("offering");
    key.push_back('\0');
    key.append(catalog_version);
    key.push_back('\0');
    key.append(offering.id);
    Cache().Append(out, key, [&] {
        return ToJson(offering, /*with_history=*/false)
            .dump(-1, ' ', false, json::error_handler_t::replace);
    });
}

void WriteJsonWithRaw(httplib::Response& res, json body, const std::string& member,
                      const std::string& raw_json, int status) {
    body[member] = kPlaceholderText;
    std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
    if (auto at = text.find(kPlaceholderJson); at != std::string::npos) {
        text.replace(at, kPlaceholderJson.size(), raw_json);
    }
    WriteJsonText(res, std::move(text), status);
}

void WriteJsonText(httplib::Response& res, std::string text, int status) {
    res.status = status;
    res.body = std::move(text);
    res.set_header("Content-Type", "application/json");
}

}  // namespace gpucost::http
