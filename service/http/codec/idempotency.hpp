#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace gpucost::http {

// The Idempotency-Key of a write: "" when none was sent; nullopt, with a 400 problem written,
// when it was sent empty or blank (not taken as none: the client meant one), or is longer than
// 200 characters, or holds anything but printable ASCII without spaces.
std::optional<std::string> ReadIdempotencyKey(const httplib::Request& req, httplib::Response& res);

// What a retry with the same Idempotency-Key must match: method, path and body. A JSON body is
// compared as parsed (member order, whitespace and 44 vs 44.0 do not matter: the same request
// written another way is a replay, not a conflict); any other body byte for byte.
std::string RequestFingerprint(const httplib::Request& req);

// A JSON request's content hash as RequestFingerprint compares it (numbers as doubles, members
// in order), leaving out the top-level members named in `ignored` (a page cursor, say).
std::string JsonFingerprint(nlohmann::json value, std::initializer_list<std::string_view> ignored);

}  // namespace gpucost::http
