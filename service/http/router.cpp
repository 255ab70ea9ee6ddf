#include "service/http/router.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <regex>
#include <set>
#include <utility>

#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_text.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/routes/auth.hpp"
#include "service/http/routes/negotiation.hpp"
#include "service/http/transport/api_version.hpp"
#include "service/http/transport/request_context.hpp"
#include "service/log.hpp"

namespace gpucost::http {
namespace {

using HandlerResponse = httplib::Server::HandlerResponse;

// Route patterns are std::regex, which recurses per character in libstdc++; no API path is
// anywhere near this long.
constexpr std::size_t kMaxPathBytes = 1024;

bool HeaderContains(const httplib::Request& req, const char* name, const char* token) {
    std::string value = req.get_header_value(name);
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return value.find(token) != std::string::npos;
}

}  // namespace

void RouteTable::Add(const std::string& method, const std::string& pattern, Handler handler,
                     bool needs_length) {
    routes_.push_back({method, pattern, std::move(handler), needs_length});
}

void RouteTable::Install(httplib::Server& server, const CorsPolicy& cors) const {
    for (const Route& r : routes_) {
        // A routed request that came without Content-Length is refused here, after routing
        // (see the pre-routing handler in ConfigureServer).
        Handler handler = [inner = r.handler, needs_length = r.needs_length](
                              const httplib::Request& req, httplib::Response& res) {
            if (needs_length && CurrentRequestContext().missing_length) {
                WriteFault(res, req, Fault::kLengthRequired,
                           req.method +
                               " needs a Content-Length header; send the "
                               "JSON body (or an empty one with "
                               "Content-Length: 0)");
                return;
            }
            inner(req, res);
        };
        if (r.method == "GET") {
            server.Get(r.pattern, handler);
        } else if (r.method == "POST") {
            server.Post(r.pattern, handler);
        } else if (r.method == "PUT") {
            server.Put(r.pattern, handler);
        } else if (r.method == "DELETE") {
            server.Delete(r.pattern, handler);
        } else if (r.method == "PATCH") {
            server.Patch(r.pattern, handler);
        }
    }
    // Each route's method and compiled pattern, for the fallback's 404/405 and preflights.
    std::vector<std::pair<std::string, std::regex>> compiled;
    for (const Route& r : routes_) {
        compiled.emplace_back(r.method, std::regex(r.pattern));
    }
    auto table = std::make_shared<const decltype(compiled)>(std::move(compiled));
    auto fallback = [table, cors](const httplib::Request& req, httplib::Response& res) {
        std::set<std::string> allowed;
        for (const auto& [method, pattern] : *table) {
            if (std::regex_match(req.path, pattern)) {
                allowed.insert(method);
            }
        }
        if (allowed.empty()) {
            WriteFault(res, req, Fault::kNotFound, "no route " + req.path + "; see /openapi.yaml");
            return;
        }
        if (CorsPolicy::IsPreflight(req)) {
            cors.AnswerPreflight(req, res, allowed);
            return;
        }
        std::string allow;
        for (const auto& m : allowed) {
            allow += (allow.empty() ? "" : ", ") + m;
        }
        res.set_header("Allow", allow);
        WriteFault(res, req, Fault::kMethodNotAllowed,
                   req.method + " is not allowed on " + req.path + "; allowed: " + allow);
    };
    // cpp-httplib tries handlers in registration order, so these catch what nothing else did.
    const std::string any = ".*";
    server.Get(any, fallback);
    server.Post(any, fallback);
    server.Put(any, fallback);
    server.Patch(any, fallback);
    server.Delete(any, fallback);
    server.Options(any, fallback);
}

void WriteJson(httplib::Response& res, const nlohmann::json& body, int status) {
    res.status = status;
    res.set_content(ToJsonText(body), "application/json");
}

namespace {

// The routes whose bodies may be larger than max_body_bytes, with their own limits.
std::vector<BulkPost> BulkPostsOf(const ServerOptions& options) {
    std::vector<BulkPost> bulk;
    for (const RouteBodyLimit& route : BodyLimitsOf(options)) {
        if (!route.path.empty()) bulk.push_back({route.path, route.max_body_bytes});
    }
    return bulk;
}

}  // namespace

std::vector<RouteBodyLimit> BodyLimitsOf(const ServerOptions& options) {
    return {{"POST", kActualsPath, options.max_actuals_body_bytes},
            {"POST", kBulkImportPath, options.max_bulk_body_bytes},
            {"", "", options.max_body_bytes}};
}

const std::vector<KeyedBodyRoute>& KeyedBodyRoutes() {
    static const std::vector<KeyedBodyRoute> routes = [] {
        const std::string offering = std::string("/v1/offerings/") + kIdPattern;
        const std::string scenario = std::string("/v1/scenarios/") + kIdPattern;
        const std::string book = std::string("/v1/price-books/") + kIdPattern;
        return std::vector<KeyedBodyRoute>{
            {"POST", kBulkImportPath, KeyScope::kAdmin},
            {"PUT", offering + "/price", KeyScope::kAdmin},
            {"POST", kActualsPath, KeyScope::kAdmin},
            {"POST", "/v1/price-books", KeyScope::kAdmin},
            {"PUT", book, KeyScope::kAdmin},
            {"POST", "/v1/scenarios", KeyScope::kRead},
            {"PATCH", scenario, KeyScope::kRead},
            {"PUT", scenario + "/progress", KeyScope::kRead},
        };
    }();
    return routes;
}

namespace {

// The scope `head`'s route needs before its body, if it needs a key at all.
std::optional<KeyScope> ScopeBeforeBody(const Deps& deps, const httplib::Request& head) {
    static const std::vector<std::regex> patterns = [] {
        std::vector<std::regex> compiled;
        for (const KeyedBodyRoute& route : KeyedBodyRoutes()) compiled.emplace_back(route.pattern);
        return compiled;
    }();
    if (head.path.size() > kMaxPathBytes) return std::nullopt;  // refused 414 before routing
    const auto& routes = KeyedBodyRoutes();
    for (std::size_t i = 0; i < routes.size(); ++i) {
        if (head.method == routes[i].method && std::regex_match(head.path, patterns[i])) {
            return routes[i].scope;
        }
    }
    if (deps.keys && deps.require_read_key && head.path.rfind("/v1/", 0) == 0) {
        return KeyScope::kRead;
    }
    return std::nullopt;
}

}  // namespace

bool RefusedFromHead(const Deps& deps, const httplib::Request& head) {
    const std::optional<KeyScope> needed = ScopeBeforeBody(deps, head);
    if (!needed) return false;
    if (!deps.keys) return true;  // each such route answers database_required itself
    const std::optional<std::string> key = BearerKey(head);
    if (!key) return true;
    const std::optional<Principal> principal = deps.keys->Authenticate(*key);
    if (!principal) return true;
    if (principal->scope == *needed) return false;
    // Whether another scope will do is RequireKey's to say (its refusal is logged again when
    // the route answers).
    httplib::Response scratch;
    return !RequireKey(deps, head, scratch, *needed);
}

TransportOptions TransportFor(const ServerOptions& options) {
    TransportOptions t;
    t.workers = options.threads;
    t.max_connections = options.max_connections;
    t.max_connections_per_address = options.max_connections_per_address;
    t.log_refusals = options.access_log;
    t.max_body_bytes = options.max_body_bytes;
    t.bulk_posts = BulkPostsOf(options);
    t.max_buffered_body_bytes = options.max_buffered_body_bytes;
    t.request_timeout = std::chrono::seconds(options.request_timeout_s);
    t.keep_alive_timeout = std::chrono::seconds(options.keep_alive_timeout_s);
    t.keep_alive_max_count = options.keep_alive_max_count;
    t.write_timeout = std::chrono::seconds(options.write_timeout_s);
    return t;
}

namespace {

// Who a request counts against: the API key when the store accepts it (a made-up key must
// not buy a fresh bucket), else the socket's peer address. Never a forwarded-for header:
// clients can set those, and cpp-httplib 0.11.4 lets a client's own REMOTE_ADDR header
// shadow the server's.
std::string RateIdentity(const httplib::Request& req, const KeyAuthenticator* key_store) {
    if (key_store != nullptr) {
        if (auto key = BearerKey(req)) {
            if (auto principal = key_store->Authenticate(*key)) {
                return "key:" + std::to_string(principal->key_id);
            }
        }
    }
    return "addr:" + req.remote_addr;
}

bool IsProbe(const std::string& path) {
    return path == "/healthz" || path == "/readyz";
}

std::string JsonText(const nlohmann::json& value) {
    return ToJsonText(value);
}

// The access log's line, byte for byte what log::Write would produce for the same fields
// (keys sorted), built without a DOM: it is written once per request.
std::string AccessLogLine(log::Level level, const httplib::Request& req, int status, double ms,
                          const std::string& request_id) {
    std::string line = "{\"duration_ms\":" + JsonText(std::round(ms * 1000.0) / 1000.0);
    line += ",\"level\":" + JsonText(log::LevelName(level));
    line += ",\"method\":" + JsonText(req.method);
    line += ",\"msg\":\"request\",\"path\":" + JsonText(req.path);
    line += ",\"remote_addr\":" + JsonText(req.remote_addr);
    line += ",\"request_id\":" + JsonText(request_id);
    line += ",\"status\":" + std::to_string(status);
    line += ",\"ts\":\"" + log::Timestamp() + "\"}";
    return line;
}

}  // namespace

namespace {

// Before routing, for every request: its id and the contract's version on the answer, then
// the refusals that need no route (rate limit, long path, compressed or chunked bodies, body
// sizes by route).
void InstallRequestChecks(httplib::Server& server, const FrameLimits& body_limits,
                          const std::shared_ptr<RateLimiter>& limiter,
                          const std::shared_ptr<KeyAuthenticator>& key_store) {
    server.set_pre_routing_handler([body_limits, limiter, key_store](const httplib::Request& req,
                                                                     httplib::Response& res) {
        BeginRequest(req.get_header_value("X-Request-Id"));
        res.set_header("X-Request-Id", CurrentRequestContext().request_id);
        res.set_header(kApiVersionHeader, std::string(kApiVersion));
        if (limiter && !IsProbe(req.path)) {
            RateDecision decision = limiter->Take(RateIdentity(req, key_store.get()));
            if (limiter->enabled()) {
                res.set_header("RateLimit-Policy", limiter->PolicyField());
                res.set_header("RateLimit", RateLimiter::StateField(decision));
            }
            if (!decision.allowed) {
                res.set_header("Retry-After", std::to_string(decision.retry_after_s));
                Metrics::CountRateLimited();
                WriteFault(res, req, Fault::kRateLimited,
                           "too many requests; retry after " +
                               std::to_string(decision.retry_after_s) + " s");
                return HandlerResponse::Handled;
            }
        }
        if (req.path.size() > kMaxPathBytes) {
            WriteFault(res, req, Fault::kUriTooLong,
                       "request path is longer than " + std::to_string(kMaxPathBytes) + " bytes");
            return HandlerResponse::Handled;
        }
        if (req.has_header("Content-Encoding")) {
            WriteFault(res, req, Fault::kUnsupportedMediaType,
                       "compressed request bodies (Content-Encoding) are not accepted");
            return HandlerResponse::Handled;
        }
        if (HeaderContains(req, "Transfer-Encoding", "chunked")) {
            WriteFault(res, req, Fault::kLengthRequired,
                       "chunked request bodies are not accepted; send Content-Length");
            return HandlerResponse::Handled;
        }
        // Range and If-Range are ignored (RFC 9110 §14.2 lets a server ignore Range): every
        // answer is whole. cpp-httplib has already parsed a well-formed Range into req.ranges
        // and would slice whatever we answer, error bodies included; the request object is a
        // non-const local of the library's, so clearing its ranges here is well-defined.
        const_cast<httplib::Request&>(req).ranges.clear();
        // cpp-httplib 0.11.4 would read a POST/PUT body without Content-Length until the read
        // timeout and refuse it as 400 before routing. It is read as empty instead and refused
        // with 411 once routed (RouteTable::Install), so that an unknown path stays 404 and a
        // wrong method 405.
        const bool body_method =
            req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
        if (body_method && !req.has_header("Content-Length")) {
            CurrentRequestContext().missing_length = true;
            const_cast<httplib::Request&>(req).headers.emplace("Content-Length", "0");
        }
        if (req.has_header("Content-Length")) {
            std::string length = req.get_header_value("Content-Length");
            bool digits = !length.empty() &&
                          std::all_of(length.begin(), length.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
            if (!digits) {
                WriteFault(res, req, Fault::kBadRequest,
                           "Content-Length must be a decimal number of bytes");
                return HandlerResponse::Handled;
            }
            const std::size_t max_body = body_limits.BodyLimitFor(req.method, req.path);
            if (length.size() > 18 || std::stoull(length) > max_body) {
                WriteFault(res, req, Fault::kPayloadTooLarge,
                           "request body is larger than " + std::to_string(max_body) + " bytes");
                return HandlerResponse::Handled;
            }
        }
        return HandlerResponse::Unhandled;
    });
}

// Answers the library generates itself (a bad request line, 413, 414, ...) get the problem body.
void InstallErrorAnswers(httplib::Server& server) {
    server.set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request& req, httplib::Response& res) {
            if (res.get_header_value("Content-Type") == "application/problem+json") {
                return HandlerResponse::Unhandled;
            }
            // A request the library refuses before routing (bad request line, bad Range) never
            // reached the pre-routing handler: its context, still the previous request's on this
            // worker thread, starts here.
            if (!res.has_header("X-Request-Id")) {
                BeginRequest(req.get_header_value("X-Request-Id"));
                res.set_header("X-Request-Id", CurrentRequestContext().request_id);
            }
            if (!res.has_header(kApiVersionHeader)) {
                res.set_header(kApiVersionHeader, std::string(kApiVersion));
            }
            // cpp-httplib 0.11.4 refuses a body-carrying method without Content-Length (curl -X
            // POST with no -d sends none) as a bare 400 before routing: say what is missing, as
            // 411.
            bool body_method = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
            if (res.status == 400 && body_method && !req.has_header("Content-Length") &&
                !req.has_header("Transfer-Encoding")) {
                WriteFault(res, req, Fault::kLengthRequired,
                           req.method +
                               " needs a Content-Length header; send the JSON body "
                               "(or an empty one with Content-Length: 0)");
                return HandlerResponse::Handled;
            }
            WriteFault(res, req, FaultForLibraryStatus(res.status),
                       "the request could not be processed");
            return HandlerResponse::Handled;
        }));
}

// An exception a handler did not catch: logged with the request id, answered 500 as a problem.
void InstallExceptionAnswer(httplib::Server& server) {
    server.set_exception_handler(
        [](const httplib::Request& req, httplib::Response& res, const std::exception_ptr& ep) {
            std::string what = "unknown exception";
            try {
                if (ep) {
                    std::rethrow_exception(ep);
                }
            } catch (const std::exception& e) {
                what = e.what();
            } catch (...) {
            }
            log::Error("unhandled exception", {{"request_id", CurrentRequestContext().request_id},
                                               {"path", req.path},
                                               {"error", what}});
            res.headers.clear();
            res.set_header("X-Request-Id", CurrentRequestContext().request_id);
            res.set_header(kApiVersionHeader, std::string(kApiVersion));
            WriteFault(res, req, Fault::kInternal, "internal error; see the server log");
        });
}

}  // namespace

void ConfigureServer(httplib::Server& server, const ServerOptions& options) {
    if (dynamic_cast<EventServer*>(&server) == nullptr) {
        const std::size_t threads = options.threads;
        server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    }
    server.set_tcp_nodelay(true);
    // SO_REUSEADDR only: the library's default adds SO_REUSEPORT, which let a second gpucost
    // bind a port the first is listening on and split its traffic silently. Without it the
    // second bind fails (main says so and exits).
    server.set_socket_options([](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    FrameLimits body_limits;  // the transport's rule, for the library's own framing (TLS)
    body_limits.max_body_bytes = options.max_body_bytes;
    body_limits.bulk_posts = BulkPostsOf(options);
    server.set_payload_max_length(body_limits.LargestBody());
    server.set_read_timeout(options.read_timeout_s, 0);
    server.set_write_timeout(options.write_timeout_s, 0);
    server.set_keep_alive_timeout(options.keep_alive_timeout_s);
    // The EventServer frames every request itself (FrameRequest). The TLS server reads through
    // the library alone, whose framing leaves a body it did not read (a GET's, or one behind an
    // early answer) to be parsed as the next request: one request per TLS connection, so that
    // nothing after a request is ever read as one.
    const bool own_framing = dynamic_cast<EventServer*>(&server) != nullptr;
    server.set_keep_alive_max_count(own_framing ? options.keep_alive_max_count : 1);

    std::shared_ptr<RateLimiter> limiter =
        options.rate_limiter && options.rate_limiter->enabled() ? options.rate_limiter : nullptr;
    std::shared_ptr<KeyAuthenticator> key_store = options.key_store;
    InstallRequestChecks(server, body_limits, limiter, key_store);

    // Library-generated errors (400 bad request line, 413, 414, ...) get our problem body;
    // responses our handlers already wrote are left alone.
    InstallErrorAnswers(server);

    InstallExceptionAnswer(server);

    if (options.access_log) {
        server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
            const RequestContext& ctx = CurrentRequestContext();
            auto elapsed = std::chrono::steady_clock::now() - ctx.started_at;
            double ms = std::chrono::duration<double, std::milli>(elapsed).count();
            log::Level level = res.status >= 500 ? log::Level::kError : log::Level::kInfo;
            if (!log::Enabled(level)) {
                return;
            }
            log::WriteLine(level, AccessLogLine(level, req, res.status, ms, ctx.request_id));
        });
    }
}

std::string RouteTable::Template(const std::string& pattern) {
    std::string path = pattern;
    const std::string id = kIdPattern;
    for (auto pos = path.find(id); pos != std::string::npos; pos = path.find(id)) {
        path.replace(pos, id.size(), "{id}");
    }
    return path;
}

std::vector<std::pair<std::string, std::string>> RouteTable::Describe() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Route& r : routes_) {
        out.emplace_back(r.method, Template(r.pattern));
    }
    return out;
}

RouteTable BuildRouteTable(const Deps& deps) {
    RouteTable routes;
    AddHealthRoutes(routes, deps);
    AddCatalogRoutes(routes, deps);
    AddEstimateRoutes(routes, deps);
    AddModelRoutes(routes, deps);
    AddPlanRoutes(routes, deps);
    AddWriteRoutes(routes, deps);
    AddScenarioRoutes(routes, deps);
    AddPriceBookRoutes(routes, deps);
    AddActualsRoutes(routes, deps);
    AddMetricsRoute(routes, deps);
    AddDocsRoutes(routes, deps);
    AddWebRoutes(routes, deps);
    AddContentNegotiation(routes);
    AddConditionalReads(routes, deps);
    AddReadKeyGate(routes, deps);    // wraps every route added before it
    InstrumentRoutes(routes, deps);  // last: outermost, so 401s are counted under their route
    return routes;
}

namespace {

// The content types cpp-httplib 0.11.4 compresses (gzip or brotli) when the request's
// Accept-Encoding allows it: such an answer varies with Accept-Encoding, and a shared cache
// must be told so (RFC 9110 §12.5.5), whether or not this one was compressed.
bool LibraryMayCompress(std::string_view content_type) {
    content_type = content_type.substr(0, content_type.find(';'));
    return (content_type.rfind("text/", 0) == 0 && content_type != "text/event-stream") ||
           content_type == "application/json" || content_type == "application/javascript" ||
           content_type == "application/xml" || content_type == "application/xhtml+xml" ||
           content_type == "image/svg+xml";
}

// An HTTP/1.0 client keeps a connection only when the answer says `Connection: keep-alive`.
// The transport shows the library `Connection: Keep-Alive` exactly when such a client asked to
// keep it (LibraryRequest), and the library has already written `Connection: close` when the
// connection ends anyway (draining, the last request allowed).
void KeepAliveForHttp10(const httplib::Request& req, httplib::Response& res) {
    if (req.version == "HTTP/1.0" && req.get_header_value("Connection") == "Keep-Alive" &&
        res.get_header_value("Connection") != "close") {
        res.set_header("Connection", "keep-alive");
    }
}

// Adds Accept-Encoding to the answer's Vary unless a Vary header already names it.
void VaryOnAcceptEncoding(httplib::Response& res) {
    auto [begin, end] = res.headers.equal_range("Vary");
    for (auto it = begin; it != end; ++it) {
        const std::string& value = it->second;
        for (std::size_t i = 0; i + 15 <= value.size(); ++i) {
            if (EqualsIgnoreCase(std::string_view(value).substr(i, 15), "Accept-Encoding")) {
                return;
            }
        }
    }
    res.set_header("Vary", "Accept-Encoding");
}

}  // namespace

void RegisterRoutes(httplib::Server& server, const Deps& deps) {
    CorsPolicy cors(deps.cors_origins);
    BuildRouteTable(deps).Install(server, cors);
    if (auto* event_server = dynamic_cast<EventServer*>(&server)) {
        event_server->SetHeadGate(
            [deps](const httplib::Request& head) { return RefusedFromHead(deps, head); });
    }
    // cpp-httplib runs this hook on every answer it writes, errors and preflights included.
    server.set_post_routing_handler(
        [cors, deps](const httplib::Request& req, httplib::Response& res) {
            cors.AddResponseHeaders(req, res);
            KeepAliveForHttp10(req, res);
            // cpp-httplib 0.11.4 gives every empty answer `Content-Length: 0` before this hook;
            // a 304 has no content of its own and must not state another's length or type
            // (RFC 9110 §8.6, §15.4.5).
            if (res.status == 304) {
                res.headers.erase("Content-Length");
                res.headers.erase("Content-Type");
            }
            if (LibraryMayCompress(res.get_header_value("Content-Type"))) {
                VaryOnAcceptEncoding(res);
            }
            ObserveAnswer(deps, req, res);
        });
}

}  // namespace gpucost::http
