#include "service/http/codec/problem.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "service/http/catalog_store.hpp"

using gpucost::http::Fault;
using gpucost::http::FaultCode;
using gpucost::http::FaultForLibraryStatus;
using gpucost::http::HttpStatusFor;
using gpucost::pricing::ErrorCode;

namespace {

// The status and code a route's WriteProblem gives a store's error.
std::pair<int, std::string> Written(ErrorCode code, const std::string& field) {
    httplib::Request req;
    req.path = "/v1/scenarios/1";
    httplib::Response res;
    gpucost::http::WriteProblem(res, req, gpucost::pricing::MakeError(code, "refused", field));
    auto body = nlohmann::json::parse(res.body);
    CHECK(body.at("status") == res.status);
    return {res.status, body.at("code").get<std::string>()};
}

}  // namespace

TEST_SUITE("problem") {
    TEST_CASE("a store's refusal on If-Match, the owner or the key is one status on every route") {
        CHECK(Written(ErrorCode::kFailedPrecondition, gpucost::http::kIfMatchField) ==
              std::pair<int, std::string>{412, "precondition_failed"});
        CHECK(Written(ErrorCode::kFailedPrecondition, gpucost::http::kOwnerField) ==
              std::pair<int, std::string>{403, "forbidden"});
        CHECK(Written(ErrorCode::kFailedPrecondition, "Authorization") ==
              std::pair<int, std::string>{401, "unauthenticated"});
        // Any other field, and the same fields under another code, keep the code's status.
        CHECK(Written(ErrorCode::kFailedPrecondition, "id").first == 409);
        CHECK(Written(ErrorCode::kInvalidArgument, gpucost::http::kIfMatchField).first == 422);
    }

    TEST_CASE("a 401 says how to authenticate") {
        httplib::Request req;
        httplib::Response res;
        gpucost::http::WriteFault(res, req, Fault::kUnauthenticated, "send a key");
        CHECK(res.status == 401);
        CHECK(res.get_header_value("WWW-Authenticate") == "Bearer realm=\"gpucost\"");
    }

    TEST_CASE("every fault has a status with its reason phrase") {
        for (int i = 0; i <= static_cast<int>(Fault::kSnapshotStale); ++i) {
            const auto fault = static_cast<Fault>(i);
            CAPTURE(FaultCode(fault));
            CHECK(gpucost::http::ProblemTitle(HttpStatusFor(fault)) != "Error");
        }
    }

    TEST_CASE("the library's own refusals keep their status") {
        CHECK(HttpStatusFor(FaultForLibraryStatus(413)) == 413);
        CHECK(HttpStatusFor(FaultForLibraryStatus(414)) == 414);
        CHECK(HttpStatusFor(FaultForLibraryStatus(416)) == 416);
        CHECK(FaultCode(FaultForLibraryStatus(416)) == "bad_request");
        CHECK(HttpStatusFor(FaultForLibraryStatus(400)) == 400);
        CHECK(HttpStatusFor(FaultForLibraryStatus(500)) == 500);
    }
}
