#include "service/http/codec/encoded_cache.hpp"

#include <array>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_text.hpp"

namespace gpucost::http {
namespace {

// A placeholder no encoded answer can otherwise contain: JSON escapes the control character.
constexpr std::string_view kPlaceholderText = "\x01gpucost-encoded\x01";
constexpr std::string_view kPlaceholderJson = "\"\\u0001gpucost-encoded\\u0001\"";

std::string Escaped(const std::string& text) {
    return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Encoded texts by key, bounded by two generations of kMaxCachedTexts entries each: new
// texts go into the current generation; when it is full it becomes the previous one (the
// one before is forgotten), and a text found only in the previous generation moves back into
// the current one. So a working set of up to kMaxCachedTexts texts (a catalog's offerings
// that are listed) always stays, and texts of older catalog versions age out, where clearing
// everything when full would never hit on a catalog larger than the cache.
class TextCache {
public:
    // Appends the text cached under `key` to `out`, encoding it with make() on a miss.
    template <typename Make>
    void Append(std::string& out, const std::string& key, const Make& make) {
        {
            std::shared_lock<std::shared_mutex> lock(mutex_);
            if (auto it = current_.find(key); it != current_.end()) {
                out += it->second;
                return;
            }
        }
        std::unique_lock<std::shared_mutex> lock(mutex_);
        if (auto it = current_.find(key); it != current_.end()) {  // stored meanwhile
            out += it->second;
            return;
        }
        if (auto old = previous_.find(key); old != previous_.end()) {
            out += old->second;
            Store(key, std::move(old->second));
            previous_.erase(key);
            return;
        }
        lock.unlock();
        std::string text = make();
        out += text;
        lock.lock();
        Store(key, std::move(text));
    }

private:
    // REQUIRES: mutex_ held exclusively.
    void Store(const std::string& key, std::string text) {
        if (current_.size() >= kMaxCachedTexts) {
            previous_ = std::move(current_);
            current_ = {};
        }
        // The first text stored for a key stays (another thread may have stored it meanwhile).
        if (auto [it, inserted] = current_.try_emplace(key); inserted) {
            it->second = std::move(text);
        }
    }

    std::shared_mutex mutex_;
    std::unordered_map<std::string, std::string> current_;
    std::unordered_map<std::string, std::string> previous_;
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
        prefix += "\"description\":" + Escaped(a.description.str()) + ",";
    }
    prefix += "\"name\":" + Escaped(a.name.str()) + ",";
    if (detail == AssumptionDetail::kFull) {
        prefix += "\"source\":" + Escaped(a.source.str()) + ",";
    }
    prefix += "\"unit\":" + Escaped(a.unit.str()) + ",\"value\":";
    return prefix;
}

// Folds `part` into the hash `seed` (boost::hash_combine's mixing).
std::size_t MixHash(std::size_t seed, std::size_t part) {
    return seed ^ (part + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// The texts an assumption's prefix is made of, as a key: looked up by views of the
// assumption's own texts (nothing is copied or joined per request), kept as copies.
struct PrefixKeyView {
    std::string_view name, unit, description, source;
    AssumptionDetail detail;
};
struct PrefixKey {
    std::string name, unit, description, source;
    AssumptionDetail detail;
    [[nodiscard]] PrefixKeyView View() const { return {name, unit, description, source, detail}; }
};

PrefixKeyView ViewOf(const pricing::Assumption& a, AssumptionDetail detail) {
    return {a.name, a.unit, a.description, a.source, detail};
}

// Hashes the name, unit and source and only the description's length: descriptions are the
// long texts, and two assumptions that agree on all the rest but not on the description are
// rare enough that the equality check may tell them apart.
struct PrefixKeyHash {
    using is_transparent = void;
    std::size_t operator()(const PrefixKeyView& k) const noexcept {
        std::size_t h = std::hash<std::string_view>{}(k.name);
        for (std::size_t part :
             {std::hash<std::string_view>{}(k.unit), std::hash<std::string_view>{}(k.source),
              k.description.size(), static_cast<std::size_t>(k.detail)}) {
            h = MixHash(h, part);
        }
        return h;
    }
    std::size_t operator()(const PrefixKey& k) const noexcept { return (*this)(k.View()); }
};
struct PrefixKeyEqual {
    using is_transparent = void;
    static bool Same(const PrefixKeyView& a, const PrefixKeyView& b) noexcept {
        return a.detail == b.detail && a.name == b.name && a.unit == b.unit &&
               a.source == b.source && a.description == b.description;
    }
    bool operator()(const PrefixKey& a, const PrefixKey& b) const noexcept {
        return Same(a.View(), b.View());
    }
    bool operator()(const PrefixKeyView& a, const PrefixKey& b) const noexcept {
        return Same(a, b.View());
    }
    bool operator()(const PrefixKey& a, const PrefixKeyView& b) const noexcept {
        return Same(a.View(), b);
    }
};

// An assumption whose four texts are string literals, identified by their addresses and
// lengths: a literal's address names one text for the life of the process, so this key needs
// neither hashing nor comparing the texts (most of an estimate's assumptions).
struct LiteralKey {
    std::array<const char*, 4> texts{};
    std::array<std::size_t, 4> sizes{};
    AssumptionDetail detail = AssumptionDetail::kFull;
    bool operator==(const LiteralKey&) const = default;
};
struct LiteralKeyHash {
    std::size_t operator()(const LiteralKey& k) const noexcept {
        std::size_t h = static_cast<std::size_t>(k.detail);
        for (const char* text : k.texts) {
            h = MixHash(h, std::hash<const void*>{}(text));
        }
        return h;
    }
};

std::optional<LiteralKey> LiteralKeyOf(const pricing::Assumption& a, AssumptionDetail detail) {
    LiteralKey key;
    key.detail = detail;
    std::size_t i = 0;
    for (const pricing::AssumptionText* text : {&a.name, &a.unit, &a.description, &a.source}) {
        if (!text->is_literal()) return std::nullopt;
        key.texts[i] = text->view().data();
        key.sizes[i] = text->size();
        ++i;
    }
    return key;
}

// Escaped assumption prefixes, bounded like TextCache: by literal addresses where all four
// texts are literals, else by content. One shared lock covers a whole answer; prefixes met
// for the first time are escaped outside it and stored afterwards.
class PrefixCache {
public:
    void AppendAll(std::string& out, const pricing::Assumptions& assumptions,
                   AssumptionDetail detail) {
        std::vector<Missed> missed;
        {
            std::shared_lock<std::shared_mutex> lock(mutex_);
            for (const auto& a : assumptions) {
                if (out.size() > 1) out.push_back(',');
                const std::string* prefix = Find(a, detail);
                if (prefix != nullptr) {
                    out += *prefix;
                } else {
                    missed.push_back({&a, AssumptionPrefix(a, detail)});
                    out += missed.back().prefix;
                }
                AppendJsonNumber(out, a.value);
                out.push_back('}');
            }
        }
        if (!missed.empty()) Store(missed, detail);
    }

private:
    struct Missed {
        const pricing::Assumption* assumption;
        std::string prefix;
    };

    const std::string* Find(const pricing::Assumption& a, AssumptionDetail detail) const {
        if (auto key = LiteralKeyOf(a, detail)) {
            auto it = literal_prefixes_.find(*key);
            return it != literal_prefixes_.end() ? &it->second : nullptr;
        }
        auto it = prefixes_.find(ViewOf(a, detail));
        return it != prefixes_.end() ? &it->second : nullptr;
    }

    void Store(std::vector<Missed>& missed, AssumptionDetail detail) {
        std::unique_lock<std::shared_mutex> lock(mutex_);
        for (auto& [a, prefix] : missed) {
            if (literal_prefixes_.size() + prefixes_.size() >= kMaxCachedTexts) {
                literal_prefixes_.clear();
                prefixes_.clear();
            }
            if (auto key = LiteralKeyOf(*a, detail)) {
                literal_prefixes_.try_emplace(*key, std::move(prefix));
            } else {
                prefixes_.try_emplace(PrefixKey{a->name.str(), a->unit.str(), a->description.str(),
                                                a->source.str(), detail},
                                      std::move(prefix));
            }
        }
    }

    std::shared_mutex mutex_;
    std::unordered_map<LiteralKey, std::string, LiteralKeyHash> literal_prefixes_;
    std::unordered_map<PrefixKey, std::string, PrefixKeyHash, PrefixKeyEqual> prefixes_;
};

PrefixCache& Prefixes() {
    static PrefixCache cache;
    return cache;
}

}  // namespace

pricing::Result<AssumptionDetail> AssumptionDetailOf(const httplib::Request& req) {
    if (!req.has_param(kAssumptionsParam)) {
        return AssumptionDetail::kFull;
    }
    if (req.get_param_value_count(kAssumptionsParam) > 1) {
        return pricing::MakeError(pricing::ErrorCode::kMalformed,
                                  "query parameter 'assumptions' given more than once",
                                  kAssumptionsParam);
    }
    const std::string value = req.get_param_value(kAssumptionsParam);
    if (value == "full") return AssumptionDetail::kFull;
    if (value == "summary") return AssumptionDetail::kSummary;
    if (value == "none") return AssumptionDetail::kNone;
    return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                              "assumptions must be full, summary or none", kAssumptionsParam);
}

std::string EncodeAssumptions(const pricing::Assumptions& assumptions, AssumptionDetail detail) {
    std::string out = "[";
    if (detail == AssumptionDetail::kNone) {
        return out + "]";
    }
    out.reserve(assumptions.size() * (detail == AssumptionDetail::kFull ? 320 : 80));
    Prefixes().AppendAll(out, assumptions, detail);
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
                        const pricing::Offering& offering, const std::string& today) {
    // Keyed by day too: price_age_days and price_state change at midnight UTC.
    thread_local std::string key;
    key.assign("offering");
    key.push_back('\0');
    key.append(catalog_version);
    key.push_back('\0');
    key.append(today);
    key.push_back('\0');
    key.append(offering.id);
    Cache().Append(out, key,
                   [&] { return ToJsonText(ToJson(offering, /*with_history=*/false, today)); });
}

void WriteJsonWithRaw(httplib::Response& res, json body, const std::string& member,
                      const std::string& raw_json, int status) {
    body[member] = kPlaceholderText;
    std::string text = ToJsonText(body);
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
