#include "service/http/codec/problem.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "service/http/metrics.hpp"
#include "service/http/transport/request_context.hpp"

namespace gpucost::http {
namespace {

using json = nlohmann::json;

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

void WriteNotAcceptable(httplib::Response& res, const httplib::Request& req,
                        std::string_view detail) {
    Write(res, req, 406, "not_acceptable", detail, "Accept", {});
}

void WriteProblem(httplib::Response& res, const httplib::Request& req,
                  const pricing::Error& error) {
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

void WriteTransportProblem(httplib::Response& res, const httplib::Request& req, int status,
                           std::string_view code, std::string_view detail) {
    Write(res, req, status, code, detail, {}, {});
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
    WriteTransportProblem(res, req, 415, "unsupported_media_type",
                          "send the request body as Content-Type: application/json");
    return false;
}

std::string RequestIdOf(const httplib::Request& /*req*/) {
    return CurrentRequestContext().request_id;
}

}  // namespace gpucost::http
