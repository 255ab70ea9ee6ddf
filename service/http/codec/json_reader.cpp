#include "service/http/codec/json_reader.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

namespace gpucost::http {
namespace {

using json = nlohmann::json;
using pricing::ErrorCode;

// JSON pointer escaping (RFC 6901): '~' -> "~0", '/' -> "~1"; long keys are cut.
std::string EscapePointerToken(std::string_view key) {
    std::string out;
    for (char c : key.substr(0, 64)) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace

JsonReader::JsonReader(const json& object, std::string pointer)
    : object_(object), pointer_(std::move(pointer)) {}

std::string JsonReader::PointerOf(std::string_view key) const {
    return pointer_ + "/" + EscapePointerToken(key);
}

void JsonReader::Fail(ErrorCode code, std::string_view key, const std::string& detail) {
    if (!error_) {
        const std::string field = PointerOf(key);
        error_ = pricing::MakeError(code, field + ": " + detail, field);
    }
}

void JsonReader::FailAt(ErrorCode code, std::string_view key, std::size_t index,
                        const std::string& detail) {
    if (!error_) {
        const std::string field = PointerOf(key) + "/" + std::to_string(index);
        error_ = pricing::MakeError(code, field + ": " + detail, field);
    }
}

const json* JsonReader::Member(std::string_view key) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
        return nullptr;
    }
    return &*it;
}

std::optional<double> JsonReader::Number(std::string_view key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_number()) {
        Fail(ErrorCode::kMalformed, key, "must be a number");
        return std::nullopt;
    }
    double d = v->get<double>();
    if (!std::isfinite(d)) {
        Fail(ErrorCode::kInvalidArgument, key, "must be finite");
        return std::nullopt;
    }
    return d;
}

std::optional<int> JsonReader::Int(std::string_view key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (v->is_number_integer()) {
        if (v->is_number_unsigned()) {
            auto u = v->get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(INT_MAX)) {
                Fail(ErrorCode::kInvalidArgument, key, "is too large");
                return std::nullopt;
            }
            return static_cast<int>(u);
        }
        auto i = v->get<std::int64_t>();
        if (i > INT_MAX || i < INT_MIN) {
            Fail(ErrorCode::kInvalidArgument, key, "is out of range");
            return std::nullopt;
        }
        return static_cast<int>(i);
    }
    if (v->is_number_float()) {
        double d = v->get<double>();
        if (std::isfinite(d) && d == std::floor(d)) {
            if (d > static_cast<double>(INT_MAX) || d < static_cast<double>(INT_MIN)) {
                Fail(ErrorCode::kInvalidArgument, key, "is out of range");
                return std::nullopt;
            }
            return static_cast<int>(d);
        }
    }
    Fail(ErrorCode::kMalformed, key, "must be an integer");
    return std::nullopt;
}

std::optional<std::string> JsonReader::String(std::string_view key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_string()) {
        Fail(ErrorCode::kMalformed, key, "must be a string");
        return std::nullopt;
    }
    const std::string& text = v->get_ref<const std::string&>();
    if (text.find('\0') != std::string::npos) {
        // PostgreSQL's text cannot hold U+0000: it would be stored cut at the NUL.
        Fail(ErrorCode::kInvalidArgument, key, "must not contain the NUL character (U+0000)");
        return std::nullopt;
    }
    return text;
}

std::optional<bool> JsonReader::Bool(std::string_view key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_boolean()) {
        Fail(ErrorCode::kMalformed, key, "must be true or false");
        return std::nullopt;
    }
    return v->get<bool>();
}

std::optional<std::vector<std::string>> JsonReader::Strings(std::string_view key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_array()) {
        Fail(ErrorCode::kMalformed, key, "must be an array of strings");
        return std::nullopt;
    }
    std::vector<std::string> out;
    for (const json& item : *v) {
        if (!item.is_string()) {
            Fail(ErrorCode::kMalformed, key, "must be an array of strings");
            return std::nullopt;
        }
        if (item.get_ref<const std::string&>().find('\0') != std::string::npos) {
            Fail(ErrorCode::kInvalidArgument, key, "must not contain the NUL character (U+0000)");
            return std::nullopt;
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

const json* JsonReader::Object(std::string_view key) {
    const json* v = Member(key);
    if (v == nullptr) {
        return nullptr;
    }
    if (!v->is_object()) {
        Fail(ErrorCode::kMalformed, key, "must be an object");
        return nullptr;
    }
    return v;
}

// A linear scan: the lists are short and fixed, and a set built per request cost more than
// the whole lookup (known-member lists run to 30 keys).
template <typename Keys>
void JsonReader::CheckKnown(const Keys& known) {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
        const std::string& key = it.key();
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            std::set<std::string> allowed;
            for (const auto& k : known) allowed.emplace(k);
            std::string list;
            for (const auto& k : allowed) {
                list += (list.empty() ? "" : ", ") + k;
            }
            Fail(ErrorCode::kMalformed, key, "unknown member; known members: " + list);
            return;
        }
    }
}

void JsonReader::OnlyKnown(std::initializer_list<std::string_view> known) {
    CheckKnown(known);
}

void JsonReader::OnlyKnown(const std::vector<std::string>& known) {
    CheckKnown(known);
}

void JsonReader::Require(std::string_view key) {
    if (Member(key) == nullptr) {
        Fail(ErrorCode::kInvalidArgument, key, "is required");
    }
}

}  // namespace gpucost::http
