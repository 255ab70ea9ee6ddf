#include "service/http/assumption_encoder.hpp"

#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>

#include "service/http/json_codec.hpp"

namespace gpucost::http {
namespace {

// A placeholder no encoded answer can otherwise contain: JSON escapes the control character.
constexpr std::string_view kPlaceholderText = "\x01gpucost-assumptions\x01";
constexpr std::string_view kPlaceholderJson = "\"\\u0001gpucost-assumptions\\u0001\"";

std::string Escaped(const std::string& text) {
    return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Encoded prefixes, keyed by the constant fields. Members of each object come out in the
// order nlohmann::json gives them (sorted keys), so a cached answer is byte-identical to
// one built through json: {"description":..,"name":..,"source":..,"unit":..,"value":<v>}.
class PrefixCache {
public:
    // Appends the encoded prefix of `a` to `out`.
    void Append(std::string& out, const pricing::Assumption& a, AssumptionDetail detail) {
        thread_local std::string key;
        key.clear();
        key.append(detail == AssumptionDetail::kFull ? "F" : "S");
        for (const std::string* part : {&a.name, &a.unit, &a.description, &a.source}) {
            key.append(*part).push_back('\0');
        }
        {
            std::shared_lock<std::shared_mutex> lock(mutex_);
            if (auto it = prefixes_.find(key); it != prefixes_.end()) {
                out += it->second;
                return;
            }
        }
        std::string prefix = "{";
        if (detail == AssumptionDetail::kFull) {
            prefix += "\"description\":" + Escaped(a.description) + ",";
        }
        prefix += "\"name\":" + Escaped(a.name) + ",";
        if (detail == AssumptionDetail::kFull) {
            prefix += "\"source\":" + Escaped(a.source) + ",";
        }
        prefix += "\"unit\":" + Escaped(a.unit) + ",\"value\":";
        out += prefix;
        std::unique_lock<std::shared_mutex> lock(mutex_);
        if (prefixes_.size() >= kMaxCachedAssumptions) {
            prefixes_.clear();  // texts from an older catalog version; the live ones come back
        }
        prefixes_.try_emplace(key, std::move(prefix));
    }

private:
    std::shared_mutex mutex_;
    std::unordered_map<std::string, std::string> prefixes_;
};

PrefixCache& Cache() {
    static PrefixCache cache;
    return cache;
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
        Cache().Append(out, a, detail);
        out += Num(a.value).dump();
        out.push_back('}');
    }
    out.push_back(']');
    return out;
}

void WriteJsonWithAssumptions(httplib::Response& res, json body,
                              const pricing::Assumptions& assumptions, AssumptionDetail detail,
                              int status) {
    body["assumptions"] = kPlaceholderText;
    std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
    if (auto at = text.find(kPlaceholderJson); at != std::string::npos) {
        text.replace(at, kPlaceholderJson.size(), EncodeAssumptions(assumptions, detail));
    }
    res.status = status;
    res.body = std::move(text);
    res.set_header("Content-Type", "application/json");
}

}  // namespace gpucost::http
