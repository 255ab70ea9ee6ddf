#include "service/http/transport/request_frame.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "service/http/codec/problem.hpp"

namespace gpucost::http {
namespace {

// RFC 9110 §5.6.2 tchar: the bytes of a method or a header name.
constexpr std::array<bool, 256> MakeTokenTable() {
    std::array<bool, 256> table{};
    for (int c = '0'; c <= '9'; ++c) table[static_cast<std::size_t>(c)] = true;
    for (int c = 'a'; c <= 'z'; ++c) table[static_cast<std::size_t>(c)] = true;
    for (int c = 'A'; c <= 'Z'; ++c) table[static_cast<std::size_t>(c)] = true;
    for (char c : std::string_view("!#$%&'*+-.^_`|~")) {
        table[static_cast<unsigned char>(c)] = true;
    }
    return table;
}
constexpr std::array<bool, 256> kTokenChar = MakeTokenTable();

bool IsToken(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return kTokenChar[static_cast<unsigned char>(c)];
    });
}

// A request-target: visible ASCII only (RFC 9112 §3.2; no whitespace, no controls).
bool IsTarget(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7f;
    });
}

// A field value: HTAB, SP, visible ASCII and obs-text; no other control byte (RFC 9110 §5.5).
bool IsFieldValue(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u == '\t' || (u >= 0x20 && u != 0x7f);
    });
}

std::string_view TrimOws(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

RequestFrame Refuse(Fault fault, std::string detail) {
    RequestFrame frame;
    frame.state = FrameState::kRefused;
    frame.status = HttpStatusFor(fault);
    frame.code = std::string(FaultCode(fault));
    frame.detail = std::move(detail);
    return frame;
}

RequestFrame Malformed(std::string detail) {
    return Refuse(Fault::kBadRequest, std::move(detail));
}

struct RequestLine {
    std::string_view method;
    std::string_view target;
    std::string_view path;  // the target without its query, for `instance`
    bool http10 = false;
};

std::optional<RequestLine> ParseRequestLine(std::string_view line) {
    std::size_t first = line.find(' ');
    std::size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
    if (second == std::string_view::npos) return std::nullopt;
    RequestLine parsed;
    parsed.method = line.substr(0, first);
    parsed.target = line.substr(first + 1, second - first - 1);
    std::string_view version = line.substr(second + 1);
    if (!IsToken(parsed.method) || !IsTarget(parsed.target) ||
        (version != "HTTP/1.1" && version != "HTTP/1.0")) {
        return std::nullopt;
    }
    parsed.path = parsed.target.substr(0, parsed.target.find('?'));
    parsed.http10 = version == "HTTP/1.0";
    return parsed;
}

// What the head says about the body, gathered line by line.
struct BodyFields {
    int content_length_fields = 0;
    std::string_view content_length;
    bool transfer_encoding = false;
    int expect_fields = 0;
    std::string_view expect;
    std::size_t expect_begin = 0;
    std::size_t expect_end = 0;
    std::size_t length_begin = 0;
    std::size_t length_end = 0;
};

// What the head says about the connection and the host, gathered line by line.
struct ConnectionFields {
    int host_fields = 0;
    bool connection_lines = false;
    bool close_token = false;
    bool keep_alive_token = false;
    bool percent_in_values = false;
};

// Calls `each` with every token of a comma-separated field value (RFC 9110 §5.6.1), empty
// list elements skipped.
template <typename Each>
void ForEachListToken(std::string_view value, Each each) {
    while (!value.empty()) {
        std::size_t comma = value.find(',');
        std::string_view token = TrimOws(value.substr(0, comma));
        if (!token.empty()) each(token);
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    }
}

// The bytes a value takes once LibraryRequest has written each `%` as `%25`.
std::size_t EscapedExtraBytes(std::string_view value) {
    return 2 * static_cast<std::size_t>(std::count(value.begin(), value.end(), '%'));
}

// The head's lines, each checked as it completes. kNeedHead while the blank line has not come.
class HeadReader {
public:
    HeadReader(std::string_view in, const FrameLimits& limits) : in_(in), limits_(limits) {}

    // Every result names the method and path once the request line has been read.
    RequestFrame Read() {
        RequestFrame frame = ReadLines();
        frame.method = std::string(line_.method);
        frame.path = std::string(line_.path);
        return frame;
    }

private:
    RequestFrame ReadLines() {
        std::size_t pos = 0;
        bool first = true;
        for (;;) {
            std::size_t lf = in_.find('\n', pos);
            std::size_t limit =
                first ? limits_.max_request_line_bytes : limits_.max_header_line_bytes;
            if (lf == std::string_view::npos) {
                return Incomplete(pos, limit, first);
            }
            if (lf == pos || in_[lf - 1] != '\r') {
                return Malformed(
                    "a line of the request head ends with a bare LF; HTTP/1.1 lines "
                    "end with CRLF");
            }
            std::string_view line = in_.substr(pos, lf - 1 - pos);
            if (line.size() + 2 > limit) {
                return first ? Refuse(Fault::kUriTooLong, RequestLineTooLong())
                             : Refuse(Fault::kHeaderTooLarge, HeaderLineTooLong());
            }
            if (lf + 1 > limits_.max_head_bytes) {
                return Refuse(Fault::kHeaderTooLarge, HeadTooLarge());
            }
            if (line.find('\r') != std::string_view::npos) {
                return Malformed("a bare CR inside a line of the request head");
            }
            if (first) {
                auto parsed = ParseRequestLine(line);
                if (!parsed) {
                    return Malformed(
                        "the request line must be METHOD SP target SP HTTP/1.1 (or "
                        "HTTP/1.0), single spaces, no control characters");
                }
                line_ = *parsed;
                first = false;
            } else if (line.empty()) {
                return Framed(lf + 1);
            } else if (auto refused = ReadField(line, pos)) {
                return *refused;
            }
            pos = lf + 1;
        }
    }

    RequestFrame Incomplete(std::size_t line_start, std::size_t limit, bool request_line) const {
        std::size_t partial = in_.size() - line_start;
        // A CR can only be followed by the LF that is still to come.
        std::size_t cr = in_.find('\r', line_start);
        if (cr != std::string_view::npos && cr + 1 < in_.size()) {
            return Malformed("a bare CR inside a line of the request head");
        }
        if (partial > limit) {
            return request_line ? Refuse(Fault::kUriTooLong, RequestLineTooLong())
                                : Refuse(Fault::kHeaderTooLarge, HeaderLineTooLong());
        }
        if (in_.size() > limits_.max_head_bytes) {
            return Refuse(Fault::kHeaderTooLarge, HeadTooLarge());
        }
        return {};
    }

    std::optional<RequestFrame> ReadField(std::string_view line, std::size_t line_start) {
        if (line.front() == ' ' || line.front() == '\t') {
            return Malformed(
                "obsolete line folding (a header line starting with whitespace) is "
                "not accepted");
        }
        std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
            return Malformed(
                "a header line must be name \":\" value, the name a token directly "
                "followed by the colon");
        }
        std::string_view name = line.substr(0, colon);
        std::string_view value = TrimOws(line.substr(colon + 1));
        if (!IsFieldValue(value)) {
            return Malformed("header " + std::string(name) + " holds a control character");
        }
        if (line.size() + 2 + EscapedExtraBytes(value) > limits_.max_header_line_bytes) {
            return Refuse(Fault::kHeaderTooLarge, HeaderLineTooLong());
        }
        if (value.empty() && empty_fields_.size() < RequestFrame::kMaxEmptyFields) {
            empty_fields_.emplace_back(name);
        }
        ReadConnectionField(name, value);
        if (EqualsIgnoreCase(name, "Content-Length")) {
            ++body_.content_length_fields;
            body_.content_length = value;
            body_.length_begin = line_start;
            body_.length_end = line_start + line.size() + 2;
        } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
            body_.transfer_encoding = true;
        } else if (EqualsIgnoreCase(name, "Expect")) {
            ++body_.expect_fields;
            body_.expect = value;
            body_.expect_begin = line_start;
            body_.expect_end = line_start + line.size() + 2;
        }
        return std::nullopt;
    }

    void ReadConnectionField(std::string_view name, std::string_view value) {
        connection_.percent_in_values =
            connection_.percent_in_values || value.find('%') != std::string_view::npos;
        if (EqualsIgnoreCase(name, "Host")) {
            ++connection_.host_fields;
        } else if (EqualsIgnoreCase(name, "Connection")) {
            connection_.connection_lines = true;
            ForEachListToken(value, [this](std::string_view token) {
                connection_.close_token =
                    connection_.close_token || EqualsIgnoreCase(token, "close");
                connection_.keep_alive_token =
                    connection_.keep_alive_token || EqualsIgnoreCase(token, "keep-alive");
            });
        }
    }

    // The head is whole: judge what it says about the body.
    RequestFrame Framed(std::size_t head_bytes) const {
        const bool takes_body = MethodTakesBody(line_.method);
        std::size_t length = 0;
        if (body_.content_length_fields > 1) {
            return Malformed("more than one Content-Length header");
        }
        if (body_.content_length_fields == 1) {
            std::string_view text = body_.content_length;
            bool digits =
                !text.empty() && text.size() <= 18 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (!digits) {
                return Malformed("Content-Length must be one decimal number of bytes");
            }
            for (char c : text) length = length * 10 + static_cast<std::size_t>(c - '0');
        }
        if (body_.transfer_encoding) {
            return takes_body ? Refuse(Fault::kLengthRequired,
                                       "request bodies with Transfer-Encoding (chunked) are not "
                                       "accepted; send Content-Length")
                              : BodyNotAllowed();
        }
        if (length > 0 && !takes_body) {
            return BodyNotAllowed();
        }
        if (body_.expect_fields > 1 ||
            (body_.expect_fields == 1 && !EqualsIgnoreCase(body_.expect, "100-continue"))) {
            return Refuse(Fault::kExpectationFailed,
                          "the only expectation accepted is Expect: 100-continue");
        }
        if (const std::size_t limit = limits_.BodyLimitFor(line_.method, line_.path);
            length > limit) {
            return Refuse(Fault::kPayloadTooLarge,
                          "request body is larger than " + std::to_string(limit) + " bytes");
        }
        if (connection_.host_fields > 1) {
            return Malformed("more than one Host header");
        }
        RequestFrame frame;
        frame.state = FrameState::kFramed;
        frame.head_bytes = head_bytes;
        frame.body_bytes = length;
        frame.empty_fields = empty_fields_;
        frame.length_begin = body_.length_begin;
        frame.length_end = body_.length_end;
        if (body_.expect_fields == 1) {
            frame.expects_continue = length > 0;
            frame.expect_begin = body_.expect_begin;
            frame.expect_end = body_.expect_end;
        }
        frame.close_requested =
            connection_.close_token || (line_.http10 && !connection_.keep_alive_token);
        frame.http10_keep_alive = line_.http10 && !frame.close_requested;
        frame.library_head_differs = body_.expect_fields == 1 || connection_.connection_lines ||
                                     connection_.percent_in_values || frame.http10_keep_alive;
        return frame;
    }

    RequestFrame BodyNotAllowed() const {
        return Malformed(std::string(line_.method) +
                         " takes no request body; send it without one (no Content-Length above "
                         "0, no Transfer-Encoding)");
    }

    std::string RequestLineTooLong() const {
        return "the request line is longer than " + std::to_string(limits_.max_request_line_bytes) +
               " bytes";
    }
    std::string HeaderLineTooLong() const {
        return "a header line is longer than " + std::to_string(limits_.max_header_line_bytes) +
               " bytes";
    }
    std::string HeadTooLarge() const {
        return "request line and headers are longer than " +
               std::to_string(limits_.max_head_bytes) + " bytes";
    }

    std::string_view in_;
    const FrameLimits& limits_;
    RequestLine line_;
    BodyFields body_;
    ConnectionFields connection_;
    std::vector<std::string> empty_fields_;
};

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
    auto lower = [](char c) {
        return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    };
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                              [&](char x, char y) { return lower(x) == lower(y); });
}

bool MethodTakesBody(std::string_view method) {
    return method == "POST" || method == "PUT" || method == "PATCH";
}

RequestFrame FrameRequest(std::string_view received, const FrameLimits& limits) {
    return HeadReader(received, limits).Read();
}

std::string LibraryRequest(std::string_view request, const RequestFrame& frame) {
    std::string out;
    out.reserve(request.size() + 64);
    std::size_t pos = request.find('\n') + 1;  // the request line, as sent
    out.append(request.substr(0, pos));
    if (frame.http10_keep_alive) {
        out.append("Connection: Keep-Alive\r\n");
    }
    while (pos < frame.head_bytes) {
        std::size_t end = request.find('\n', pos) + 1;
        std::string_view line = request.substr(pos, end - pos);
        std::size_t colon = line.find(':');
        const bool hidden = (pos == frame.expect_begin && end == frame.expect_end) ||
                            (colon != std::string_view::npos &&
                             EqualsIgnoreCase(line.substr(0, colon), "Connection"));
        if (!hidden) {
            // Names are passed as sent (the library does not decode them), values escaped.
            const std::size_t value_begin = colon == std::string_view::npos ? 0 : colon + 1;
            out.append(line.substr(0, value_begin));
            for (char c : line.substr(value_begin)) {
                if (c == '%') {
                    out.append("%25");
                } else {
                    out.push_back(c);
                }
            }
        }
        pos = end;
    }
    out.append(request.substr(frame.head_bytes, frame.body_bytes));
    return out;
}

}  // namespace gpucost::http
