#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "service/http/ports.hpp"

namespace gpucost::http {

// The Idempotency-Key of a write: "" when none was sent; nullopt, with a 400 problem written,
// when it was sent empty or blank (not taken as none: the client meant one), or is longer than
// 200 characters, or holds anything but printable ASCII without spaces.
std::optional<std::string> ReadIdempotencyKey(const httplib::Request& req, httplib::Response& res);

// What a retry with the same Idempotency-Key must match: method, path, query parameters and
// body. A JSON body is compared as parsed (member order, whitespace and 44 vs 44.0 do not
// matter: the same request written another way is a replay, not a conflict); any other body
// byte for byte.
std::string RequestFingerprint(const httplib::Request& req);

// Fills `write`'s Idempotency-Key, If-Match and fingerprint from the request: what every write
// reads before the store judges it. False, with a 400 problem written, for a malformed key.
bool ReadRetryHeaders(const httplib::Request& req, httplib::Response& res, WriteRequest& write);

// A JSON request's content hash as RequestFingerprint compares it (numbers as doubles, members
// in order), leaving out the top-level members named in `ignored` (a page cursor, say).
std::string JsonFingerprint(nlohmann::json value, std::initializer_list<std::string_view> ignored);

// A write's answer as the store records it with the Idempotency-Key (status, body, ETag): what
// `write` writes into a response. The headers that every answer of the route carries
// (Location, Deprecation) are the handler's to set again on a replay.
StoredResponse AnswerOf(const std::function<void(httplib::Response&)>& write);

// Writes a recorded answer: its status, its body as application/json (none for a 204), its
// ETag, and on a replay Idempotent-Replayed: true.
void WriteStored(httplib::Response& res, const StoredResponse& stored);

}  // namespace gpucost::http
