#include "service/http/codec/query_params.hpp"

#include <charconv>
#include <cmath>

namespace gpucost::http {

using pricing::ErrorCode;
using pricing::MakeError;

namespace {
// Beyond every integer parameter's own limit (limit <= 500, counts of accelerators): a value
// past it is out of range before the query's Validate() looks at it.
constexpr long long kMaxMagnitude = 1000000000LL;
}  // namespace

QueryParams::QueryParams(const httplib::Request& req, std::set<std::string> allowed)
    : req_(req), allowed_(std::move(allowed)) {}

pricing::Status QueryParams::Check() const {
    if (req_.params.size() > kMaxParams) {
        return MakeError(ErrorCode::kMalformed,
                         "too many query parameters (at most " + std::to_string(kMaxParams) + ")");
    }
    for (const auto& [name, value] : req_.params) {
        if (allowed_.count(name) == 0) {
            std::string known;
            for (const auto& a : allowed_) {
                known += (known.empty() ? "" : ", ") + a;
            }
            return MakeError(ErrorCode::kMalformed,
                             "unknown query parameter '" + name.substr(0, 64) +
                                 "'; this route accepts: " + (known.empty() ? "none" : known),
                             name.substr(0, 64));
        }
    }
    return pricing::Ok{};
}

std::vector<std::string> QueryParams::List(const std::string& name) const {
    std::vector<std::string> out;
    auto range = req_.params.equal_range(name);
    for (auto it = range.first; it != range.second; ++it) {
        const std::string& value = it->second;
        std::size_t start = 0;
        while (start <= value.size()) {
            std::size_t comma = value.find(',', start);
            std::string item =
                value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            if (!item.empty()) {
                out.push_back(item);
            }
            if (comma == std::string::npos) {
                break;
            }
            start = comma + 1;
        }
    }
    return out;
}

pricing::Result<std::optional<std::string>> QueryParams::One(const std::string& name) const {
    std::size_t count = req_.get_param_value_count(name);
    if (count == 0) {
        return std::optional<std::string>{};
    }
    if (count > 1) {
        return MakeError(ErrorCode::kMalformed, name + " may be given only once", name);
    }
    return std::optional<std::string>{req_.get_param_value(name)};
}

pricing::Result<std::optional<int>> QueryParams::Int(const std::string& name) const {
    auto text = One(name);
    if (!text.ok() || !text.value()) {
        return text.ok() ? pricing::Result<std::optional<int>>(std::optional<int>{}) : text.error();
    }
    const std::string& s = *text.value();
    long long value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    const bool integer_text = !s.empty() && end == s.data() + s.size() &&
                              (ec == std::errc() || ec == std::errc::result_out_of_range);
    if (!integer_text) {
        return MakeError(ErrorCode::kMalformed,
                         name + " must be an integer (got '" + s.substr(0, 32) + "')", name);
    }
    // A well-formed integer beyond any parameter's range is an invalid value (422), as in a
    // body; the type fault above is the only 400.
    if (ec != std::errc() || value < -kMaxMagnitude || value > kMaxMagnitude) {
        return MakeError(ErrorCode::kInvalidArgument,
                         name + ": " + s.substr(0, 32) + " is out of range", name);
    }
    return std::optional<int>{static_cast<int>(value)};
}

pricing::Result<std::optional<double>> QueryParams::Double(const std::string& name) const {
    auto text = One(name);
    if (!text.ok() || !text.value()) {
        return text.ok() ? pricing::Result<std::optional<double>>(std::optional<double>{})
                         : text.error();
    }
    const std::string& s = *text.value();
    double value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) {
        return MakeError(ErrorCode::kMalformed,
                         name + " must be a number (got '" + s.substr(0, 32) + "')", name);
    }
    return std::optional<double>{value};
}

pricing::Result<std::optional<bool>> QueryParams::Bool(const std::string& name) const {
    auto text = One(name);
    if (!text.ok() || !text.value()) {
        return text.ok() ? pricing::Result<std::optional<bool>>(std::optional<bool>{})
                         : text.error();
    }
    if (*text.value() == "true") {
        return std::optional<bool>{true};
    }
    if (*text.value() == "false") {
        return std::optional<bool>{false};
    }
    return MakeError(ErrorCode::kMalformed, name + " must be true or false", name);
}

}  // namespace gpucost::http
