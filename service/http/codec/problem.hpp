#pragma once

#include <string>
#include <string_view>

#include <httplib.h>

#include "pricing/error.hpp"

namespace gpucost::http {

// HTTP status for a domain error code. The one table from ErrorCode to status.
int HttpStatusFor(pricing::ErrorCode code);

// The faults the HTTP layer names itself, beside the domain's ErrorCode: each has one status and
// one stable `code` in problem.cpp's table, so a route names the fault and never a status.
enum class Fault {
    kBadRequest,            // 400 bad_request: the request cannot be read
    kUnauthenticated,       // 401 unauthenticated (with WWW-Authenticate)
    kForbidden,             // 403 forbidden: the key may not do this
    kCorsOriginNotAllowed,  // 403 cors_origin_not_allowed
    kNotFound,              // 404 not_found: no such route or file
    kDocsNotBundled,        // 404 docs_not_bundled
    kMethodNotAllowed,      // 405 method_not_allowed
    kNotAcceptable,         // 406 not_acceptable
    kRequestTimeout,        // 408 request_timeout
    kLengthRequired,        // 411 length_required
    kPreconditionFailed,    // 412 precondition_failed: If-Match names another version
    kPayloadTooLarge,       // 413 payload_too_large
    kUriTooLong,            // 414 uri_too_long
    kUnsupportedMediaType,  // 415 unsupported_media_type
    kBadRange,              // 416 bad_request: a Range the library refuses before routing
    kExpectationFailed,     // 417 expectation_failed
    kRateLimited,           // 429 rate_limited
    kHeaderTooLarge,        // 431 header_too_large
    kInternal,              // 500 internal
    kOverloaded,            // 503 overloaded
    kShuttingDown,          // 503 shutting_down
    kCatalogEmpty,          // 503 catalog_empty
    kSchemaMismatch,        // 503 schema_mismatch
    kSnapshotStale,         // 503 snapshot_stale
};

// The fault's status and stable code (problem.cpp's table).
int HttpStatusFor(Fault fault);
std::string_view FaultCode(Fault fault);

// The fault for an answer cpp-httplib decided itself (`status` is the library's): 413, 414,
// 416 and 5xx by their row, anything else a bad request.
Fault FaultForLibraryStatus(int status);

// Writes the fault's problem (a 401 also gets WWW-Authenticate).
void WriteFault(httplib::Response& res, const httplib::Request& req, Fault fault,
                std::string_view detail);

// Writes an RFC 9457 application/problem+json body:
// {type, title, status, detail, instance, code, field?, errors[], request_id}.
// `code` is a stable snake_case string; `errors` lists {field, detail} per failing field.
// A store's kFailedPrecondition on If-Match, the owner or Authorization is that Fault (412,
// 403, 401: problem.cpp's field rows), the same on every route.
void WriteProblem(httplib::Response& res, const httplib::Request& req, const pricing::Error& error);

// 406 `not_acceptable` naming Accept (`field`): the answer would be in a media type the request's
// Accept does not admit. The one way every route says so.
void WriteNotAcceptable(httplib::Response& res, const httplib::Request& req,
                        std::string_view detail);

// The same body as text, for answers the transport writes below cpp-httplib, where there is
// no Request (431 headers too large, 503 overloaded): `instance` is the request path when
// known (else left out), `request_id` the id this answer carries in X-Request-Id.
std::string ProblemText(int status, std::string_view code, std::string_view detail,
                        std::string_view instance, std::string_view request_id);
std::string ProblemText(Fault fault, std::string_view detail, std::string_view instance,
                        std::string_view request_id);

// The Problem's `title` for a status (its HTTP reason phrase).
std::string ProblemTitle(int status);

// The request body must be sent as application/json (parameters allowed, case-insensitive);
// otherwise writes the 415 problem and returns false. The one content-type check of every
// JSON-body endpoint.
bool RequireJsonBody(const httplib::Request& req, httplib::Response& res);

// The request id this server assigned to `req` (echoed in X-Request-Id).
std::string RequestIdOf(const httplib::Request& req);

}  // namespace gpucost::http
