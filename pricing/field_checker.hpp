#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "pricing/assumption.hpp"
#include "pricing/error.hpp"

namespace gpucost::pricing {

// Collects every failing field of a planning request (JSON pointers) and turns them into one
// kInvalidArgument whose message and field name the first. Numbers must be finite.
class FieldChecker {
public:
    void Fail(std::string pointer, std::string detail) {
        error_.errors.push_back({std::move(pointer), std::move(detail)});
    }

    // lo <= v <= hi (lo < v when lo_open).
    void Range(double value, const std::string& pointer, double lo, double hi,
               bool lo_open = false) {
        bool ok = std::isfinite(value) && (lo_open ? value > lo : value >= lo) && value <= hi;
        if (!ok) {
            Fail(pointer, std::string("must be a number ") + (lo_open ? "> " : ">= ") + Text(lo) +
                              " and <= " + Text(hi));
        }
    }
    void Range(const std::optional<double>& value, const std::string& pointer, double lo, double hi,
               bool lo_open = false) {
        if (value) {
            Range(*value, pointer, lo, hi, lo_open);
        }
    }
    void IntRange(long long value, const std::string& pointer, long long lo, long long hi) {
        if (value < lo || value > hi) {
            Fail(pointer,
                 "must be an integer between " + std::to_string(lo) + " and " + std::to_string(hi));
        }
    }

    bool ok() const { return error_.errors.empty(); }

    [[nodiscard]] Status Done() const {
        if (ok()) {
            return Ok{};
        }
        Error e = error_;
        e.code = ErrorCode::kInvalidArgument;
        e.field = e.errors.front().field;
        e.message = e.errors.front().field + ": " + e.errors.front().detail;
        return e;
    }

private:
    static std::string Text(double v) {
        std::string s = std::to_string(v);
        while (s.find('.') != std::string::npos && (s.back() == '0' || s.back() == '.')) {
            bool dot = s.back() == '.';
            s.pop_back();
            if (dot) {
                break;
            }
        }
        return s;
    }
    Error error_{ErrorCode::kInvalidArgument, "", "", {}};
};

// `value` with `decimals` digits after the point ("12.5"); "nan"/"inf" for non-finite values.
inline std::string Fixed(double value, int decimals) {
    if (!std::isfinite(value)) {
        return std::isnan(value) ? "nan" : "inf";
    }
    std::array<char, 64> buf{};
    auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), value,
                                   std::chars_format::fixed, decimals);
    if (ec != std::errc()) {
        return "?";
    }
    return std::string(buf.data(), end);
}

// Money in every text an answer carries (reasoning, explanations, warnings), the one format:
// "$12.34" below $100, "$1,234" from $100 (whole dollars with thousands separators: cents do
// not change a choice between runs of thousands, and the planning page writes amounts so);
// "-$12.34" when negative (a loss, a saving that costs). `decimals` places below $100 for
// a price of a small unit ("$0.1500" per million tokens).
inline std::string UsdText(double usd, int decimals = 2) {
    if (std::isfinite(usd) && usd < 0) {
        std::string out = "-";
        out += UsdText(-usd, decimals);
        return out;
    }
    std::string out = "$";
    if (!std::isfinite(usd) || usd < 100) {
        out += Fixed(usd, decimals);
        return out;
    }
    const std::string digits = Fixed(usd, 0);
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) {
            out += ',';
        }
        out += digits[i];
    }
    return out;
}

// A change against a reference in answers' texts, always signed ("+1.1%", "-87.5%"): an
// alternative can cost more or, when the cheaper one was passed over (a stale price), less.
inline std::string SignedPercentText(double change_fraction, int decimals = 1) {
    const std::string digits = Fixed(100.0 * change_fraction, decimals);
    if (!std::isfinite(change_fraction) || digits.front() == '-') return digits + "%";
    return "+" + digits + "%";
}

// An Assumption whose source says whether the caller gave it.
inline Assumption Echo(AssumptionText name, double value, AssumptionText unit,
                       AssumptionText description, bool from_request,
                       AssumptionText default_source) {
    return Assumption{std::move(name), value, std::move(unit), std::move(description),
                      SourceOf(from_request, std::move(default_source))};
}

}  // namespace gpucost::pricing
