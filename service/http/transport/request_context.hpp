#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace gpucost::http {

// Per-request state kept by the worker thread that serves the request. cpp-httplib 0.11.4
// runs pre-routing, the handler, the error handler and the logger for one request on the
// same thread, and hands the handlers a const Request, so this is where the request id and
// start time live between those hooks.
struct RequestContext {
    std::string request_id;
    std::chrono::steady_clock::time_point started_at{};
    // The route template that handled the request ("/v1/offerings/{id}"); empty when none.
    std::string route;
    // A POST or PUT that came without Content-Length: answered 411 once routed, so that an
    // unknown path is still 404 and a wrong method 405 (router.cpp).
    bool missing_length = false;
};

RequestContext& CurrentRequestContext();

// Starts a new context: keeps `client_request_id` when it is 1-64 characters of
// [A-Za-z0-9._-], otherwise generates a fresh id.
void BeginRequest(const std::string& client_request_id);

// Header fields the client sent with an empty value (or only spaces). cpp-httplib 0.11.4 drops
// them while parsing, so an empty Idempotency-Key would read as none. The transport sets them
// for the request it hands the library on this thread (from its own framing) and clears them
// after; in TLS mode, where the library frames requests, none are known.
void SetEmptyHeaderFields(std::vector<std::string> names);
bool HeaderSentEmpty(std::string_view name);

}  // namespace gpucost::http
