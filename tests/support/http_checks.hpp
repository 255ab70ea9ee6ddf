#pragma once
// Checks the route tests share: an answer's JSON body, and an RFC 9457 problem answer (its
// status, media type, code, type, title and detail, and the field it names when one is given).

#include <string>

#include <doctest/doctest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace gpucost::testing {

inline nlohmann::json Body(const httplib::Result& r) {
    REQUIRE(r);
    return nlohmann::json::parse(r->body);
}

inline void CheckProblem(const httplib::Result& r, int status, const std::string& code,
                         const std::string& field = "") {
    REQUIRE(r);
    INFO(r->body);
    CHECK(r->status == status);
    CHECK(r->get_header_value("Content-Type") == "application/problem+json");
    const nlohmann::json body = nlohmann::json::parse(r->body);
    CHECK(body["status"] == status);
    CHECK(body["code"] == code);
    CHECK(body["type"] == "urn:gpucost:problem:" + code);
    CHECK(body.contains("title"));
    CHECK(body.contains("detail"));
    if (!field.empty()) {
        CHECK(body["field"] == field);
    }
}

}  // namespace gpucost::testing
