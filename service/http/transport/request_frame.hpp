#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpucost::http {

// Where one HTTP/1.1 request ends: the transport's single reading of a request head. The
// transport frames every request with it before a worker or cpp-httplib sees a byte, hands the
// library exactly that frame, and erases exactly that frame after the answer. Two framers that
// can disagree (ours and the library's) are how a body becomes a second request, so this one
// is strict (RFC 9112): anything it cannot frame with certainty is refused and the connection
// closed, never guessed at.
// A route whose body may be larger than FrameLimits::max_body_bytes: POST to `path` (the
// target without its query), with a Content-Length of at most `max_body_bytes`.
struct BulkPost {
    std::string path;
    std::size_t max_body_bytes = 0;
};

struct FrameLimits {
    // The request line with its CRLF (cpp-httplib's CPPHTTPLIB_REQUEST_URI_MAX_LENGTH; nginx's
    // large_client_header_buffers size in the Docker deployment). Longer: 414.
    std::size_t max_request_line_bytes = 8192;
    // One header line with its CRLF (cpp-httplib's CPPHTTPLIB_HEADER_MAX_LENGTH). Longer: 431.
    std::size_t max_header_line_bytes = 8192;
    // Request line, headers and the blank line together. Larger: 431.
    std::size_t max_head_bytes = std::size_t{32} * 1024;
    // Content-Length at most; larger: 413 before any body byte is read.
    std::size_t max_body_bytes = std::size_t{64} * 1024;
    // The routes that take a larger body than max_body_bytes (the bulk offering import of up
    // to 1,000 items; a FOCUS export sent to POST /v1/actuals): each its own Content-Length
    // limit. None: every request has max_body_bytes.
    std::vector<BulkPost> bulk_posts;
    // The Content-Length limit for a request of `method` on `path` (the target without query).
    [[nodiscard]] std::size_t BodyLimitFor(std::string_view method, std::string_view path) const {
        if (method == "POST") {
            for (const BulkPost& bulk : bulk_posts) {
                if (path == bulk.path) return std::max(max_body_bytes, bulk.max_body_bytes);
            }
        }
        return max_body_bytes;
    }
    // The most any request's body may hold.
    [[nodiscard]] std::size_t LargestBody() const {
        std::size_t largest = max_body_bytes;
        for (const BulkPost& bulk : bulk_posts) largest = std::max(largest, bulk.max_body_bytes);
        return largest;
    }
};

// What the transport does with the bytes received so far.
enum class FrameState {
    kNeedHead,  // no complete head yet, and nothing wrong with what has arrived
    kFramed,    // the head is complete and valid: the request is head_bytes + body_bytes long
    kRefused,   // answer `status` and close the connection (the framing cannot be trusted)
};

struct RequestFrame {
    FrameState state = FrameState::kNeedHead;
    std::size_t head_bytes = 0;  // request line + headers + blank line
    std::size_t body_bytes = 0;  // the one Content-Length (0 without one)
    // The client sent `Expect: 100-continue` for a body that is to come: the transport sends the
    // interim answer, and the line [expect_begin, expect_end) of the head is not shown to
    // cpp-httplib (which would send a second one).
    bool expects_continue = false;
    std::size_t expect_begin = 0;
    std::size_t expect_end = 0;
    // The Content-Length line [length_begin, length_end) of the head (both 0 without one): a
    // request whose body the transport withholds is shown to cpp-httplib with a length of 0.
    std::size_t length_begin = 0;
    std::size_t length_end = 0;
    // Header fields sent with an empty value (at most kMaxEmptyFields kept), which cpp-httplib
    // drops: a handler can still tell an empty field from a missing one (HeaderSentEmpty).
    std::vector<std::string> empty_fields;
    static constexpr std::size_t kMaxEmptyFields = 8;
    // kRefused: the answer. `code` is the Problem's stable code.
    int status = 0;
    std::string code;
    std::string detail;
    // The request's method and path (for the Problem's `instance` and the log; "" when the
    // request line is unusable).
    std::string method;
    std::string path;
    // kFramed: the connection ends after this answer, as the client asked (RFC 9112 §9.3): a
    // `close` token in Connection (compared without case), or HTTP/1.0 without `keep-alive`.
    bool close_requested = false;
    // kFramed: an HTTP/1.0 request that asked to keep the connection (a `keep-alive` token);
    // its answer must say `Connection: keep-alive` for the client to reuse it.
    bool http10_keep_alive = false;
    // kFramed: the head cpp-httplib is shown differs from the head received (LibraryRequest):
    // a handled Expect line, Connection lines, or a `%` in a field value.
    bool library_head_differs = false;
};

// Frames the request at the start of `received` (which may hold only part of it, or several
// pipelined requests). Pure and total: every byte sequence gives one of the three states.
//  - Head syntax (400): request line `token SP target SP HTTP/1.0|HTTP/1.1 CRLF`; header lines
//    `token ":" value CRLF` (no whitespace before the colon, no obsolete line folding, no control
//    bytes but HTAB); every line ends with CRLF (a bare LF or CR is refused, not tolerated).
//  - Content-Length (400): at most one field, of 1 to 18 digits.
//  - Transfer-Encoding: 411 on a method that takes a body (send Content-Length), 400 otherwise.
//  - A body on a method that takes none (anything but POST, PUT, PATCH): 400.
//  - Expect: only `100-continue` (417 otherwise).
//  - Host (400): at most one field (RFC 9112 §3.2).
//  - Connection: its tokens decide close_requested and http10_keep_alive.
//  - Sizes: request line 414, header line or head 431, body 413. A header line counts each
//    `%` of its value three times, as LibraryRequest writes it.
// A kNeedHead result is decided on the bytes so far: a refusal is given as soon as the bytes
// received already break a rule (a bare LF, an overlong line), without waiting for the rest.
RequestFrame FrameRequest(std::string_view received, const FrameLimits& limits);

// The bytes of the framed request at the start of `request` (head_bytes + body_bytes of a
// kFramed `frame`) as cpp-httplib is to read them. The library percent-decodes every field
// value and compares Connection with "close" exactly, so what it saw differed from what was
// sent: `%63lose` closed a connection, `Close` did not, and a key with one percent-encoded
// byte authenticated. Here the transport has read Connection itself (close_requested), so:
//  - Connection lines are left out, and an HTTP/1.0 keep-alive request gets the one spelling
//    the library honours (`Connection: Keep-Alive`);
//  - each `%` in a field value is written `%25`, so that the library's decoding gives back the
//    bytes as sent;
//  - a handled `Expect: 100-continue` line is left out (the library would send a second 100).
// The request line and the body are passed unchanged.
std::string LibraryRequest(std::string_view request, const RequestFrame& frame);

// ASCII case-insensitive equality: how HTTP compares field names (RFC 9110 §5.1) and tokens
// such as "100-continue". The one such compare of the transport and the request context.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// True for the methods whose requests may carry a body (POST, PUT, PATCH); every other
// method's request is refused when it announces one.
bool MethodTakesBody(std::string_view method);

}  // namespace gpucost::http
