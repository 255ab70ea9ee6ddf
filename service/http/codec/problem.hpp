#pragma once

#include <string>
#include <string_view>

#include <httplib.h>

#include "pricing/error.hpp"

namespace gpucost::http {

// HTTP status for a domain error code. The one table from ErrorCode to status.
int HttpStatusFor(pricing::ErrorCode code);

// Writes an RFC 9457 application/problem+json body:
// {type, title, status, detail, instance, code, field?, errors[], request_id}.
// `code` is a stable snake_case string; `errors` lists {field, detail} per failing field.
void WriteProblem(httplib::Response& res, const httplib::Request& req, const pricing::Error& error);

// Same, for failures the transport layer detects itself (404 route, 405, 411, 413, 415, 416,
// 500). `code` is the stable string, e.g. "method_not_allowed".
void WriteTransportProblem(httplib::Response& res, const httplib::Request& req, int status,
                           std::string_view code, std::string_view detail);

// 406 `not_acceptable` naming Accept (`field`): the answer would be in a media type the request's
// Accept does not admit. The one way every route says so.
void WriteNotAcceptable(httplib::Response& res, const httplib::Request& req,
                        std::string_view detail);

// The same body as text, for answers the transport writes below cpp-httplib, where there is
// no Request (431 headers too large, 503 overloaded): `instance` is the request path when
// known (else left out), `request_id` the id this answer carries in X-Request-Id.
std::string ProblemText(int status, std::string_view code, std::string_view detail,
                        std::string_view instance, std::string_view request_id);

// The Problem's `title` for a status (its HTTP reason phrase).
std::string ProblemTitle(int status);

// The request body must be sent as application/json (parameters allowed, case-insensitive);
// otherwise writes the 415 problem and returns false. The one content-type check of every
// JSON-body endpoint.
bool RequireJsonBody(const httplib::Request& req, httplib::Response& res);

// The request id this server assigned to `req` (echoed in X-Request-Id).
std::string RequestIdOf(const httplib::Request& req);

}  // namespace gpucost::http
