#pragma once

#include <string>
#include <string_view>

namespace gpucost::http {

// `data` as a gzip member (RFC 1952), at zlib's best compression. For static answers the
// HTTP library does not compress itself (its list of compressible types has no YAML).
[[nodiscard]] std::string Gzip(std::string_view data);

// True when an Accept-Encoding value accepts gzip: a `gzip` (or `*`) coding without q=0
// (RFC 9110 §12.5.3).
[[nodiscard]] bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace gpucost::http
