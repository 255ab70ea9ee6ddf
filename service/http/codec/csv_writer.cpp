#include "service/http/codec/csv_writer.hpp"
#include "pricing/text_case.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace gpucost::http {
namespace {

std::string Trim(const std::string& s) {
    auto begin = s.find_first_not_of(" \t");
    if (begin == std::string::npos) {
        return "";
    }
    auto end = s.find_last_not_of(" \t");
    return s.substr(begin, end - begin + 1);
}

}  // namespace

bool WantsCsv(const httplib::Request& req) {
    if (!req.has_header("Accept")) {
        return false;
    }
    const std::string accept = pricing::LowerAscii(req.get_header_value("Accept")).substr(0, 1024);
    double q_json = -1;
    double q_csv = -1;
    std::size_t start = 0;
    while (start <= accept.size()) {
        std::size_t comma = accept.find(',', start);
        std::string item =
            accept.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        std::string type = Trim(item.substr(0, item.find(';')));
        double q = 1.0;
        auto qpos = item.find("q=");
        if (qpos != std::string::npos) {
            std::string qtext = Trim(item.substr(qpos + 2));
            double parsed = 0;
            auto [end, ec] = std::from_chars(qtext.data(), qtext.data() + qtext.size(), parsed);
            (void)end;
            q = ec == std::errc() ? std::clamp(parsed, 0.0, 1.0) : 0.0;
        }
        if (type == "text/csv") {
            q_csv = std::max(q_csv, q);
        } else if (type == "application/json" || type == "application/*" || type == "*/*") {
            // Exact types outrank wildcards of the same q; JSON wins ties anyway.
            q_json = std::max(q_json, q);
        } else if (type == "text/*") {
            q_csv = std::max(q_csv, q * 0.999);
        }
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return q_csv > 0 && q_csv > q_json;
}

void WriteCsv(httplib::Response& res, const CsvTable& table) {
    res.status = 200;
    res.set_content(ToCsv(table), "text/csv; charset=utf-8");
}

}  // namespace gpucost::http
