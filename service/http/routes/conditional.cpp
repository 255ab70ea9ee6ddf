// Conditional reads: a strong ETag that is a digest of the bytes of the answer as it is sent,
// one per content coding, and 304 for a matching If-None-Match.
#include "service/http/routes/conditional.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "service/http/route_table.hpp"

namespace gpucost::http {
namespace {

// Clients may keep an answer but must ask again before using it: prices change at any time,
// and a revalidation that matches costs a 304 without a body.
constexpr char kCacheControl[] = "no-cache";
// What else a catalog answer varies with: CSV or JSON by Accept, compression by
// Accept-Encoding.
constexpr char kVary[] = "Accept, Accept-Encoding";

bool IsCatalogRead(const std::string& pattern) {
    for (std::string_view prefix :
         {"/v1/accelerators", "/v1/providers", "/v1/offerings", "/v1/catalog", "/v1/models"}) {
        if (pattern.rfind(prefix, 0) == 0) return true;
    }
    return false;
}

// The page or entry point at / and the contract: they set their own Cache-Control and Vary.
bool IsDocumentRead(const std::string& pattern) {
    return pattern == "/" || pattern == "/openapi.yaml";
}

std::string_view TrimSpaces(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

// If-None-Match holds `etag` (or "*"): RFC 9110 §13.1.2, weak comparison.
bool NoneMatch(const httplib::Request& req, const std::string& etag) {
    std::string header = req.get_header_value("If-None-Match");
    if (header.empty()) return false;
    auto strip_weak = [](std::string_view tag) {
        tag = TrimSpaces(tag);
        if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
        return tag;
    };
    std::string_view rest = header;
    while (!rest.empty()) {
        std::size_t comma = rest.find(',');
        std::string_view tag = strip_weak(rest.substr(0, comma));
        if (tag == "*" || tag == strip_weak(etag)) return true;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return false;
}

// 64 bits of the answer's bytes, eight at a time. Each step (xor a word, multiply by an odd
// constant) is a bijection of the state, so answers that differ in any one word always get
// different tags; the last mix spreads every bit over the hex digits.
std::string BodyDigest(std::string_view body) {
    constexpr std::uint64_t kPrime = 0x100000001b3ULL;
    std::uint64_t h = 0xcbf29ce484222325ULL ^ body.size();
    std::size_t i = 0;
    for (; i + 8 <= body.size(); i += 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, body.data() + i, sizeof word);
        h = (h ^ word) * kPrime;
    }
    for (; i < body.size(); ++i) {
        h = (h ^ static_cast<unsigned char>(body[i])) * kPrime;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int k = 15; k >= 0; --k, h >>= 4) out[static_cast<std::size_t>(k)] = kHex[h & 0xF];
    return out;
}

// The content coding the answer goes out in: the route's own (the gzipped contract), else the
// one cpp-httplib will apply to this body and this request after the handler returns (its own
// rule, so the tag names what is actually sent).
std::string ContentCodingOf(const httplib::Request& req, const httplib::Response& res) {
    if (res.has_header("Content-Encoding")) return res.get_header_value("Content-Encoding");
    switch (httplib::detail::encoding_type(req, res)) {
        case httplib::detail::EncodingType::Gzip:
            return "gzip";
        case httplib::detail::EncodingType::Brotli:
            return "br";
        case httplib::detail::EncodingType::None:
            break;
    }
    return "";
}

// The answer's strong validator (RFC 9110 §8.8.3): a digest of its identity body, so it changes
// with every byte of it, and its content coding, so gzip, br and identity are distinct
// representations. A route's own validator (an offering's version, `"v3"`, in database mode)
// leads it, so that the tag still names that version for If-Match on the next write.
std::string RepresentationTag(const httplib::Request& req, const httplib::Response& res) {
    std::string tag = "\"";
    if (res.has_header("ETag")) {
        const std::string header = res.get_header_value("ETag");
        std::string_view own = TrimSpaces(header);
        if (own.size() >= 2 && own.front() == '"' && own.back() == '"') {
            tag.append(own.substr(1, own.size() - 2));
            tag += '.';
        }
    }
    tag += BodyDigest(res.body);
    const std::string coding = ContentCodingOf(req, res);
    if (!coding.empty()) tag += "-" + coding;
    return tag + "\"";
}

// A 304 carries what the 200 would have that a cache updates from it (ETag, Cache-Control,
// Vary) and the transport's own fields, and no representation: no body, Content-Type or
// Content-Encoding (RFC 9110 §15.4.5). Content-Length is taken out after cpp-httplib adds it
// (RegisterRoutes).
void AnswerNotModified(httplib::Response& res, const httplib::Headers& before) {
    httplib::Headers kept = before;
    for (const char* name : {"ETag", "Cache-Control", "Vary"}) {
        auto [begin, end] = res.headers.equal_range(name);
        for (auto it = begin; it != end; ++it) {
            if (before.find(name) == before.end()) kept.emplace(name, it->second);
        }
    }
    res.headers = std::move(kept);
    res.body.clear();
    res.status = 304;
}

}  // namespace

std::string RouteValidatorsIn(std::string_view if_match) {
    std::string out;
    while (true) {
        std::size_t comma = if_match.find(',');
        std::string_view tag = TrimSpaces(if_match.substr(0, comma));
        std::size_t dot = tag.find('.');
        if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"' &&
            dot != std::string_view::npos) {
            tag = tag.substr(0, dot);
            out += std::string(tag) + "\"";
        } else {
            out += std::string(tag);
        }
        if (comma == std::string_view::npos) break;
        out += ", ";
        if_match.remove_prefix(comma + 1);
    }
    return out;
}

void AddConditionalReads(RouteTable& routes, const Deps& /*deps*/) {
    routes.Wrap([](const std::string& method, const std::string& pattern,
                   RouteTable::Handler inner) -> RouteTable::Handler {
        if (method != "GET") return inner;
        const bool catalog = IsCatalogRead(pattern);
        if (!catalog && !IsDocumentRead(pattern)) return inner;
        return [catalog, inner = std::move(inner)](const httplib::Request& req,
                                                   httplib::Response& res) {
            const httplib::Headers before = res.headers;
            if (catalog) {
                res.set_header("Cache-Control", kCacheControl);
                res.set_header("Vary", kVary);
            }
            inner(req, res);
            if (res.status != -1 && res.status != 200) return;
            const std::string etag = RepresentationTag(req, res);
            res.headers.erase("ETag");
            res.set_header("ETag", etag);
            if (NoneMatch(req, etag)) AnswerNotModified(res, before);
        };
    });
}

}  // namespace gpucost::http
