#include "service/text/json_text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace gpucost::text {
namespace {

// Characters a JSON string holds as they are: printable ASCII but the quote and backslash.
constexpr std::array<bool, 256> kPlainJsonChar = [] {
    std::array<bool, 256> plain{};
    for (std::size_t c = 0x20; c < 0x7f; ++c) {
        plain[c] = c != '"' && c != '\\';
    }
    return plain;
}();

// Below this, nlohmann::json writes an integral double as its integer digits and ".0"
// (it switches to an exponent from 1e15 on).
constexpr double kPlainIntegralLimit = 1e15;

// The text of recently formatted doubles, by bit pattern, per thread: an answer repeats its
// constants (assumption values, efficiencies) request after request, and the shortest
// round-trip formatting costs about 400 instructions a number.
class NumberTexts {
public:
    template <typename Format>
    void Append(std::string& out, double value, const Format& format) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        Entry& e = entries_[(bits ^ (bits >> 29) ^ (bits >> 47)) % entries_.size()];
        if (e.length == 0 || e.bits != bits) {
            e.bits = bits;
            e.length = static_cast<std::uint8_t>(format(e.text.data(), e.text.size()));
        }
        out.append(e.text.data(), e.length);
    }

private:
    struct Entry {
        std::uint64_t bits = 0;
        std::uint8_t length = 0;  // 0: empty
        std::array<char, 32> text{};
    };
    std::array<Entry, 128> entries_{};
};

// nlohmann::json's layout of a double (its serializer's format_buffer): plain decimals while
// the decimal point falls within 15 digits of the first and no more than 4 zeros follow it,
// ".0" after a whole number, else d.ddde+XX with at least two exponent digits.
constexpr int kMinPlainExponent = -4;
constexpr int kMaxPlainExponent = 15;

// `value` (finite, not zero) as the shortest digits that read back as it, in nlohmann::json's
// layout; returns the length written (`size` must hold 32). The digits are std::to_chars':
// nlohmann::json 3.11's Grisu2 does not always find the shortest (1.445604 came out as
// 1.4456039999999999).
std::size_t FormatShortest(char* out, std::size_t size, double value) {
    std::array<char, 32> scientific{};
    auto [end, ec] = std::to_chars(scientific.data(), scientific.data() + scientific.size(), value,
                                   std::chars_format::scientific);
    if (ec != std::errc() || size < scientific.size()) return 0;
    std::string_view text(scientific.data(), static_cast<std::size_t>(end - scientific.data()));
    char* p = out;
    if (text.front() == '-') {
        *p++ = '-';
        text.remove_prefix(1);
    }
    // d[.ddd]e±XX: the digits without their point, and the exponent.
    const std::size_t e = text.find('e');
    std::array<char, 20> digits{};
    int k = 0;
    for (char c : text.substr(0, e)) {
        if (c != '.') digits[static_cast<std::size_t>(k++)] = c;
    }
    int exponent = 0;
    std::string_view exponent_text = text.substr(e + 1);
    if (exponent_text.front() == '+') exponent_text.remove_prefix(1);
    std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);
    const int n = exponent + 1;  // where the decimal point falls, counted from the first digit
    auto put_digits = [&p, &digits](int from, int to) {
        for (int i = from; i < to; ++i) *p++ = digits[static_cast<std::size_t>(i)];
    };
    if (k <= n && n <= kMaxPlainExponent) {
        put_digits(0, k);
        p = std::fill_n(p, n - k, '0');
        *p++ = '.';
        *p++ = '0';
    } else if (0 < n && n <= kMaxPlainExponent) {
        put_digits(0, n);
        *p++ = '.';
        put_digits(n, k);
    } else if (kMinPlainExponent < n && n <= 0) {
        *p++ = '0';
        *p++ = '.';
        p = std::fill_n(p, -n, '0');
        put_digits(0, k);
    } else {
        put_digits(0, 1);
        if (k > 1) {
            *p++ = '.';
            put_digits(1, k);
        }
        *p++ = 'e';
        *p++ = n - 1 < 0 ? '-' : '+';
        const int magnitude = n - 1 < 0 ? 1 - n : n - 1;
        if (magnitude < 10) *p++ = '0';
        p = std::to_chars(p, out + size, magnitude).ptr;
    }
    return static_cast<std::size_t>(p - out);
}

// A DOM as nlohmann::json's dump(indent) writes it (sorted keys, ": " and newlines when
// indenting), but doubles through AppendJsonNumber and invalid UTF-8 replaced.
void AppendDom(std::string& out, const json& value, int indent, int depth) {
    auto new_line = [&out, indent](int level) {
        if (indent < 0) return;
        out += '\n';
        out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(level), ' ');
    };
    if (value.is_object() || value.is_array()) {
        const bool object = value.is_object();
        if (value.empty()) {
            out += object ? "{}" : "[]";
            return;
        }
        out += object ? '{' : '[';
        bool first = true;
        for (auto it = value.begin(); it != value.end(); ++it) {
            if (!first) out += ',';
            first = false;
            new_line(depth + 1);
            if (object) {
                AppendJsonString(out, it.key());
                out += indent < 0 ? ":" : ": ";
            }
            AppendDom(out, it.value(), indent, depth + 1);
        }
        new_line(depth);
        out += object ? '}' : ']';
    } else if (value.is_number_float()) {
        AppendJsonNumber(out, value.get<double>());
    } else if (value.is_string()) {
        AppendJsonString(out, value.get_ref<const std::string&>());
    } else {  // integers, booleans, null
        out += value.dump();
    }
}

}  // namespace

json Num(double value) {
    if (!std::isfinite(value)) {
        return nullptr;
    }
    return value == 0 ? 0.0 : value;  // no "-0"
}

void AppendJsonString(std::string& out, std::string_view text) {
    // Printable ASCII without quote or backslash needs no escaping (ids, names, rules, every
    // key): copied in one step, as most strings of an answer are. The rest goes through the
    // library so escapes and invalid UTF-8 come out as in a DOM's dump.
    const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
        return kPlainJsonChar[static_cast<unsigned char>(c)];
    });
    if (!plain) {
        out += json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
        return;
    }
    out += '"';
    out.append(text);
    out += '"';
}

void AppendJsonNumber(std::string& out, double value) {
    if (!std::isfinite(value)) {
        out += "null";
        return;
    }
    if (value == 0) value = 0.0;  // -0 is written as 0
    if (std::fabs(value) < kPlainIntegralLimit && value == std::trunc(value)) {
        char buffer[24];
        auto [end, ec] =
            std::to_chars(buffer, buffer + sizeof buffer, static_cast<long long>(value));
        out.append(buffer, end);
        out += ".0";
        return;
    }
    thread_local NumberTexts texts;
    texts.Append(out, value, [value](char* buffer, std::size_t size) {
        return FormatShortest(buffer, size, value);
    });
}

std::string ToJsonText(const json& value, int indent) {
    std::string out;
    AppendDom(out, value, indent, 0);
    return out;
}
void AppendJsonDom(std::string& out, const json& value) {
    AppendDom(out, value, -1, 0);
}

}  // namespace gpucost::text
