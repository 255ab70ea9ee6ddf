// libFuzzer harness: the transport's request framer (FrameRequest) on arbitrary bytes, with the
// server's limits and with small ones (so that every limit is reached). Checks what the
// transport relies on: a framed request lies inside the bytes and ends its head with the blank
// line; a refusal carries one of the framer's statuses; and a prefix of the bytes never frames
// a different request (more bytes cannot move where a request ends); and the head the library is
// shown (LibraryRequest) frames the same body, with no Connection field and no bare `%` left.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "service/http/transport/request_frame.hpp"

namespace {

using gpucost::http::FrameLimits;
using gpucost::http::FrameRequest;
using gpucost::http::FrameState;
using gpucost::http::LibraryRequest;
using gpucost::http::RequestFrame;

void Require(bool condition) {
    if (!condition) __builtin_trap();
}

// What the library reads frames where the transport framed: the same body, every line within
// the line limits, and nothing the library would decode differently from what was sent.
void CheckLibraryView(std::string_view in, const RequestFrame& f, const FrameLimits& limits) {
    if (in.size() < f.head_bytes + f.body_bytes) return;  // the body has not all arrived
    std::string shown = LibraryRequest(in.substr(0, f.head_bytes + f.body_bytes), f);
    // Framing the shown bytes again counts each `%25` as three bytes once more.
    FrameLimits roomy = limits;
    roomy.max_head_bytes = 3 * limits.max_head_bytes + 32;
    roomy.max_header_line_bytes = 3 * limits.max_header_line_bytes + 32;
    RequestFrame again = FrameRequest(shown, roomy);
    Require(again.state == FrameState::kFramed);
    Require(again.body_bytes == f.body_bytes &&
            again.head_bytes + again.body_bytes == shown.size());
    Require(!again.expects_continue && again.http10_keep_alive == f.http10_keep_alive);
    // Every header line shown is within the line limit the library applies, and every `%` of
    // a value is the start of `%25`.
    std::string_view head(shown.data(), again.head_bytes);
    for (std::size_t pos = head.find('\n') + 1; pos < head.size();) {
        std::size_t end = head.find('\n', pos) + 1;
        Require(end - pos <= limits.max_header_line_bytes);
        std::string_view line = head.substr(pos, end - pos);
        std::size_t colon = line.find(':');
        for (std::size_t at = line.find('%', colon);
             colon != std::string_view::npos && at != std::string_view::npos;
             at = line.find('%', at + 1)) {
            Require(line.substr(at, 3) == "%25");
        }
        pos = end;
    }
}

void CheckOne(std::string_view in, const FrameLimits& limits) {
    RequestFrame f = FrameRequest(in, limits);
    switch (f.state) {
        case FrameState::kFramed:
            Require(f.head_bytes >= 4 && f.head_bytes <= in.size());
            Require(in.substr(f.head_bytes - 4, 4) == "\r\n\r\n");
            Require(f.head_bytes <= limits.max_head_bytes);
            Require(f.body_bytes <= limits.max_body_bytes);
            Require(f.expect_begin <= f.expect_end && f.expect_end <= f.head_bytes);
            Require(!f.expects_continue || f.body_bytes > 0);
            // The same head with fewer bytes after it frames the same request.
            {
                RequestFrame head_only = FrameRequest(in.substr(0, f.head_bytes), limits);
                Require(head_only.state == FrameState::kFramed);
                Require(head_only.head_bytes == f.head_bytes &&
                        head_only.body_bytes == f.body_bytes);
                if (f.head_bytes > 1) {
                    RequestFrame shorter = FrameRequest(in.substr(0, f.head_bytes - 1), limits);
                    Require(shorter.state != FrameState::kFramed);
                }
            }
            CheckLibraryView(in, f, limits);
            break;
        case FrameState::kRefused:
            Require(f.status == 400 || f.status == 411 || f.status == 413 || f.status == 414 ||
                    f.status == 417 || f.status == 431);
            Require(!f.code.empty() && !f.detail.empty());
            break;
        case FrameState::kNeedHead:
            Require(in.size() <= limits.max_head_bytes);
            break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    CheckOne(in, FrameLimits{});
    FrameLimits small;
    small.max_request_line_bytes = 40;
    small.max_header_line_bytes = 24;
    small.max_head_bytes = 96;
    small.max_body_bytes = 16;
    CheckOne(in, small);
    return 0;
}
