// Content negotiation on every route: an answer in a media type that the request's Accept does
// not admit is 406 `not_acceptable` naming Accept (RFC 9110 §12.5.1, §15.5.7), never another
// type answered as if it had been asked for.
#include "service/http/routes/negotiation.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <string_view>

#include "service/http/codec/problem.hpp"
#include "service/http/router.hpp"

namespace gpucost::http {
namespace {

// An Accept value is read up to this many bytes (as WantsCsv reads it).
constexpr std::size_t kMaxAcceptBytes = 1024;

std::string_view Trimmed(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

std::string Lowered(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// The q parameter of one media range's parameters (`;q=0.5`), 1 when absent, 0 when unreadable.
double QualityOf(std::string_view params) {
    while (!params.empty()) {
        std::size_t semi = params.find(';');
        std::string_view param = Trimmed(params.substr(0, semi));
        if (param.size() > 2 && param.substr(0, 2) == "q=") {
            std::string_view value = param.substr(2);
            double q = 0;
            auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), q);
            if (ec != std::errc() || end != value.data() + value.size()) return 0;
            return std::clamp(q, 0.0, 1.0);
        }
        if (semi == std::string_view::npos) break;
        params.remove_prefix(semi + 1);
    }
    return 1;
}

}  // namespace

bool AcceptAdmits(std::string_view accept, std::string_view media_type) {
    const std::string header = Lowered(accept.substr(0, kMaxAcceptBytes));
    const std::string wanted = Lowered(Trimmed(media_type.substr(0, media_type.find(';'))));
    const std::string_view wanted_type = std::string_view(wanted).substr(0, wanted.find('/'));
    // The most specific range that matches decides (RFC 9110 §12.5.1): type/subtype over type/*
    // over */*; parameters other than q (a FOCUS profile) are the route's to read.
    int best_specificity = -1;
    double best_q = 0;
    bool any_range = false;
    std::string_view rest = header;
    while (true) {
        std::size_t comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        std::size_t semi = item.find(';');
        std::string_view range = Trimmed(item.substr(0, semi));
        std::size_t slash = range.find('/');
        if (slash != std::string_view::npos && slash > 0 && slash + 1 < range.size()) {
            any_range = true;
            std::string_view type = range.substr(0, slash);
            std::string_view subtype = range.substr(slash + 1);
            int specificity = -1;
            if (range == wanted) {
                specificity = 2;
            } else if (subtype == "*" && type == wanted_type) {
                specificity = 1;
            } else if (range == "*/*") {
                specificity = 0;
            }
            const double q =
                semi == std::string_view::npos ? 1.0 : QualityOf(item.substr(semi + 1));
            if (specificity > best_specificity ||
                (specificity == best_specificity && specificity >= 0 && q > best_q)) {
                best_specificity = specificity;
                best_q = q;
            }
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    // No readable range at all (an empty or garbled Accept) says nothing: anything will do.
    if (!any_range) return true;
    return best_specificity >= 0 && best_q > 0;
}

namespace {

// Routes that change something: refused before they run when their answer (JSON) is not
// acceptable, so that no write happens behind a 406.
bool Writes(const std::string& method, const std::string& pattern) {
    if (method == "DELETE") return true;
    const auto& keyed = KeyedBodyRoutes();
    return std::any_of(keyed.begin(), keyed.end(), [&](const KeyedBodyRoute& route) {
        return route.method == method && route.pattern == pattern;
    });
}

std::string MediaTypeOfAnswer(const httplib::Response& res) {
    std::string type = res.get_header_value("Content-Type");
    return std::string(Trimmed(std::string_view(type).substr(0, type.find(';'))));
}

void AnswerNotAcceptable(const httplib::Request& req, httplib::Response& res,
                         const httplib::Headers& before, const std::string& media_type) {
    res.headers = before;  // nothing of the answer that was not sent
    WriteNotAcceptable(res, req,
                       req.method + " " + req.path + " answers " + media_type +
                           " here, which Accept does not admit; ask for it (or send no Accept)");
}

}  // namespace

void AddContentNegotiation(RouteTable& routes) {
    routes.Wrap([](const std::string& method, const std::string& pattern,
                   RouteTable::Handler inner) -> RouteTable::Handler {
        const bool writes = Writes(method, pattern);
        return [writes, inner = std::move(inner)](const httplib::Request& req,
                                                  httplib::Response& res) {
            if (!req.has_header("Accept")) return inner(req, res);
            const std::string accept = req.get_header_value("Accept");
            const httplib::Headers before = res.headers;
            if (writes && !AcceptAdmits(accept, "application/json")) {
                return AnswerNotAcceptable(req, res, before, "application/json");
            }
            inner(req, res);
            // Problems are problem+json whatever was asked (RFC 9110 §15.5.7 lets an error
            // answer in its own type); only a successful answer is held to Accept. A plan
            // asked for with ?format=focus named its media type itself, over a client's default
            // Accept.
            if (res.status != -1 && (res.status < 200 || res.status >= 300)) return;
            if (req.has_param("format")) return;
            const std::string type = MediaTypeOfAnswer(res);
            if (type.empty() || AcceptAdmits(accept, type)) return;
            AnswerNotAcceptable(req, res, before, type);
        };
    });
}

}  // namespace gpucost::http
