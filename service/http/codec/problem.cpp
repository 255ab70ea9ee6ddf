#include "service/http/codec/problem.hpp"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "service/http/catalog_store.hpp"
#include "service/http/metrics.hpp"
#include "service/http/transport/request_context.hpp"

namespace gpucost::http {
namespace {

using json = nlohmann::json;

// The status table: every Fault's status and stable code, in the enum's order.
struct FaultRow {
    Fault fault;
    int status;
    std::string_view code;
};
constexpr auto kFaults = std::to_array<FaultRow>({
    {Fault::kBadRequest, 400, "bad_request"},
    {Fault::kUnauthenticated, 401, "unauthenticated"},
    {Fault::kForbidden, 403, "forbidden"},
    {Fault::kCorsOriginNotAllowed, 403, "cors_origin_not_allowed"},
    {Fault::kNotFound, 404, "not_found"},
    {Fault::kDocsNotBundled, 404, "docs_not_bundled"},
    {Fault::kMethodNotAllowed, 405, "method_not_allowed"},
    {Fault::kNotAcceptable, 406, "not_acceptable"},
    {Fault::kRequestTimeout, 408, "request_timeout"},
    {Fault::kLengthRequired, 411, "length_required"},
    {Fault::kPreconditionFailed, 412, "precondition_failed"},
    {Fault::kPayloadTooLarge, 413, "payload_too_large"},
    {Fault::kUriTooLong, 414, "uri_too_long"},
    {Fault::kUnsupportedMediaType, 415, "unsupported_media_type"},
    {Fault::kBadRange, 416, "bad_request"},
    {Fault::kExpectationFailed, 417, "expectation_failed"},
    {Fault::kRateLimited, 429, "rate_limited"},
    {Fault::kHeaderTooLarge, 431, "header_too_large"},
    {Fault::kInternal, 500, "internal"},
    {Fault::kOverloaded, 503, "overloaded"},
    {Fault::kShuttingDown, 503, "shutting_down"},
    {Fault::kCatalogEmpty, 503, "catalog_empty"},
    {Fault::kSchemaMismatch, 503, "schema_mismatch"},
    {Fault::kSnapshotStale, 503, "snapshot_stale"},
});
constexpr bool InEnumOrder() {
    for (std::size_t i = 0; i < kFaults.size(); ++i) {
        if (static_cast<std::size_t>(kFaults[i].fault) != i) return false;
    }
    return static_cast<std::size_t>(Fault::kSnapshotStale) + 1 == kFaults.size();
}
static_assert(InEnumOrder(), "one row per Fault, in the enum's order");

const FaultRow& RowOf(Fault fault) {
    return kFaults[static_cast<std::size_t>(fault)];
}

// A store refuses with kFailedPrecondition and names what failed in `field`: the version a
// write was conditional on, the owner a team may not overwrite, the key revoked while it wrote.
struct FieldFaultRow {
    std::string_view field;
    Fault fault;
};
constexpr auto kFieldFaults = std::to_array<FieldFaultRow>({
    {kIfMatchField, Fault::kPreconditionFailed},
    {kOwnerField, Fault::kForbidden},
    {"Authorization", Fault::kUnauthenticated},
});

const char* TitleFor(int status) {
    switch (status) {
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 406:
            return "Not Acceptable";
        case 408:
            return "Request Timeout";
        case 409:
            return "Conflict";
        case 411:
            return "Length Required";
        case 412:
            return "Precondition Failed";
        case 413:
            return "Payload Too Large";
        case 414:
            return "URI Too Long";
        case 415:
            return "Unsupported Media Type";
        case 416:
            return "Range Not Satisfiable";
        case 417:
            return "Expectation Failed";
        case 422:
            return "Unprocessable Content";
        case 429:
            return "Too Many Requests";
        case 431:
            return "Request Header Fields Too Large";
        case 503:
            return "Service Unavailable";
        default:
            return status >= 500 ? "Internal Server Error" : "Error";
    }
}

// The one Problem body (openapi.yaml components/schemas/Problem). `instance` is left out
// when the request path is unknown (a connection refused before anything was read).
std::string ProblemBody(int status, std::string_view code, std::string_view detail,
                        std::string_view instance, const std::string& field,
                        const std::vector<pricing::FieldError>& errors,
                        std::string_view request_id) {
    json body = {
        {"type", "urn:gpucost:problem:" + std::string(code)},
        {"title", TitleFor(status)},
        {"status", status},
        {"detail", detail},
        {"code", code},
    };
    if (!instance.empty()) {
        body["instance"] = instance;
    }
    if (!field.empty()) {
        body["field"] = field;
    }
    json list = json::array();
    for (const auto& e : errors) {
        list.push_back({{"field", e.field}, {"detail", e.detail}});
    }
    body["errors"] = std::move(list);
    if (!request_id.empty()) {
        body["request_id"] = request_id;
    }
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

void Write(httplib::Response& res, const httplib::Request& req, int status, std::string_view code,
           std::string_view detail, const std::string& field,
           const std::vector<pricing::FieldError>& errors) {
    res.status = status;
    res.set_content(ProblemBody(status, code, detail, req.path, field, errors, RequestIdOf(req)),
                    "application/problem+json");
}

}  // namespace

int HttpStatusFor(pricing::ErrorCode code) {
    switch (code) {
        case pricing::ErrorCode::kInvalidArgument:
            return 422;
        case pricing::ErrorCode::kMalformed:
            return 400;
        case pricing::ErrorCode::kNotFound:
            return 404;
        case pricing::ErrorCode::kFailedPrecondition:
            return 409;
        case pricing::ErrorCode::kUnavailable:
            return 503;
        case pricing::ErrorCode::kDatabaseRequired:
            return 409;
        case pricing::ErrorCode::kBudgetExceeded:
            return 503;
        case pricing::ErrorCode::kInternal:
            return 500;
    }
    return 500;
}

int HttpStatusFor(Fault fault) {
    return RowOf(fault).status;
}

std::string_view FaultCode(Fault fault) {
    return RowOf(fault).code;
}

Fault FaultForLibraryStatus(int status) {
    for (Fault fault : {Fault::kPayloadTooLarge, Fault::kUriTooLong, Fault::kBadRange}) {
        if (HttpStatusFor(fault) == status) return fault;
    }
    return status >= 500 ? Fault::kInternal : Fault::kBadRequest;
}

void WriteFault(httplib::Response& res, const httplib::Request& req, Fault fault,
                std::string_view detail) {
    if (fault == Fault::kUnauthenticated) {
        res.set_header("WWW-Authenticate", "Bearer realm=\"gpucost\"");
    }
    Write(res, req, HttpStatusFor(fault), FaultCode(fault), detail, {}, {});
}

void WriteNotAcceptable(httplib::Response& res, const httplib::Request& req,
                        std::string_view detail) {
    const Fault fault = Fault::kNotAcceptable;
    Write(res, req, HttpStatusFor(fault), FaultCode(fault), detail, "Accept", {});
}

void WriteProblem(httplib::Response& res, const httplib::Request& req,
                  const pricing::Error& error) {
    if (error.code == pricing::ErrorCode::kFailedPrecondition) {
        for (const auto& row : kFieldFaults) {
            if (error.field == row.field) return WriteFault(res, req, row.fault, error.message);
        }
    }
    int status = HttpStatusFor(error.code);
    std::string detail = status == 500 ? "internal error; see the server log" : error.message;
    Write(res, req, status, pricing::ErrorCodeName(error.code), detail, error.field, error.errors);
    if (status == 503) {
        res.set_header("Retry-After", "5");
    }
    if (error.code == pricing::ErrorCode::kBudgetExceeded) {
        Metrics::CountBudgetExceeded();
    }
}

std::string ProblemTitle(int status) {
    return TitleFor(status);
}

std::string ProblemText(int status, std::string_view code, std::string_view detail,
                        std::string_view instance, std::string_view request_id) {
    return ProblemBody(status, code, detail, instance, {}, {}, request_id);
}

std::string ProblemText(Fault fault, std::string_view detail, std::string_view instance,
                        std::string_view request_id) {
    return ProblemText(HttpStatusFor(fault), FaultCode(fault), detail, instance, request_id);
}

bool RequireJsonBody(const httplib::Request& req, httplib::Response& res) {
    std::string type = req.get_header_value("Content-Type");
    type = type.substr(0, type.find(';'));
    while (!type.empty() && type.back() == ' ') {
        type.pop_back();
    }
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (type == "application/json") {
        return true;
    }
    WriteFault(res, req, Fault::kUnsupportedMediaType,
               "send the request body as Content-Type: application/json");
    return false;
}

std::string RequestIdOf(const httplib::Request& /*req*/) {
    return CurrentRequestContext().request_id;
}

}  // namespace gpucost::http
