#include "service/http/transport/gzip.hpp"

#include <stdexcept>

#include <zlib.h>

#include "service/http/transport/request_frame.hpp"

namespace gpucost::http {

namespace {

// zlib's windowBits: 15 (the largest window) + 16 asks deflate for a gzip header and trailer.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kMemLevel = 8;  // zlib's default

std::string_view TrimCoding(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The q value of one coding's parameters ("q=0.5"); 1 without one.
double GzipQualityOf(std::string_view params) {
    while (!params.empty()) {
        std::size_t semi = params.find(';');
        std::string_view param = TrimCoding(params.substr(0, semi));
        params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
        if (param.size() > 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
            try {
                return std::stod(std::string(param.substr(2)));
            } catch (const std::exception&) {
                return 0;  // an unreadable weight is not a yes
            }
        }
    }
    return 1;
}

}  // namespace

std::string Gzip(std::string_view data) {
    z_stream stream{};
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, kGzipWindowBits, kMemLevel,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
        throw std::runtime_error("zlib deflateInit2 failed");
    }
    std::string out(deflateBound(&stream, static_cast<uLong>(data.size())), '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream.avail_in = static_cast<uInt>(data.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    const int status = deflate(&stream, Z_FINISH);
    out.resize(stream.total_out);
    deflateEnd(&stream);
    if (status != Z_STREAM_END) {
        throw std::runtime_error("zlib deflate did not finish");
    }
    return out;
}

bool AcceptsGzip(std::string_view accept_encoding) {
    while (!accept_encoding.empty()) {
        std::size_t comma = accept_encoding.find(',');
        std::string_view coding = accept_encoding.substr(0, comma);
        accept_encoding = comma == std::string_view::npos ? std::string_view()
                                                          : accept_encoding.substr(comma + 1);
        std::size_t semi = coding.find(';');
        std::string_view name = TrimCoding(coding.substr(0, semi));
        std::string_view params =
            semi == std::string_view::npos ? std::string_view() : coding.substr(semi + 1);
        if ((EqualsIgnoreCase(name, "gzip") || name == "*") && GzipQualityOf(params) > 0) {
            return true;
        }
    }
    return false;
}

}  // namespace gpucost::http
