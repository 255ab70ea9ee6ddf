#include "service/http/routes/deprecation.hpp"

#include <string>

namespace gpucost::http {

namespace {
// The served reference (/docs renders openapi.yaml, whose description states the policy and
// whose schemas mark each deprecated member).
constexpr char kPolicyLink[] = "</docs>; rel=\"deprecation\"; type=\"text/html\"";
}  // namespace

void SetDeprecationHeaders(httplib::Response& res, const Deprecation& deprecation) {
    res.set_header("Deprecation", "@" + std::to_string(deprecation.deprecated_at_unix_s));
    res.set_header("Sunset", std::string(deprecation.sunset_http_date));
    res.set_header("Link", kPolicyLink);
}

}  // namespace gpucost::http
