// libFuzzer harness: the transport's request framer (FrameRequest) on arbitrary bytes, with the
// server's limits and with small ones (so that every limit is reached). Checks what the
// transport relies on: a framed request lies inside the bytes and ends its head with the blank
// line; a refusal carries one of the framer's statuses; and a prefix of the bytes never frames
// a different request (more bytes cannot move where a request ends).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "service/http/transport/request_frame.hpp"

namespace {

using gpucost::http::FrameLimits;
using gpucost::http::FrameRequest;
using gpucost::http::FrameState;
using gpucost::http::RequestFrame;

void Require(bool condition) {
    if (!condition) __builtin_trap();
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
