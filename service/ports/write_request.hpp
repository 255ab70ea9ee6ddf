#pragma once

#include <optional>
#include <string>

#include "service/ports/principal.hpp"

namespace gpucost::ports {

// Body, status and ETag of a write's answer. Stored with the Idempotency-Key in the same
// transaction as the write, so that a retry replays it byte for byte.
struct StoredResponse {
    int status = 200;
    std::string body;
    std::string etag;
    bool replayed = false;
};

// The answer of a delete: 204, no body (recorded with the Idempotency-Key as any other).
inline StoredResponse DeletedAnswer() {
    return {204, "", "", false};
}

// Who writes, with which Idempotency-Key and If-Match: what every write of every store takes.
struct WriteRequest {
    Principal principal;
    std::string idempotency_key;  // empty: none sent
    std::string request_hash;     // fingerprint of method, path and body
    std::optional<std::string> if_match;
};

// True when an If-Match header (a comma-separated list of entity tags, or "*") holds `etag`
// (RFC 9110 §13.1.1, strong comparison): the one check every store's writes make.
bool IfMatchAccepts(const std::string& header, const std::string& etag);

// Error.field of a failed If-Match check (the handlers answer 412 for it).
inline constexpr char kIfMatchField[] = "If-Match";

// Error.field of a change refused because the caller is neither the owner nor an admin of the
// owner's team (kFailedPrecondition with this field: the handlers answer 403).
inline constexpr char kOwnerField[] = "owner";

}  // namespace gpucost::ports
