#include "service/http/codec/csv_writer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "pricing/money.hpp"

namespace gpucost::http {
namespace {

std::string Lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string Trim(const std::string& s) {
    auto begin = s.find_first_not_of(" \t");
    if (begin == std::string::npos) {
        return "";
    }
    auto end = s.find_last_not_of(" \t");
    return s.substr(begin, end - begin + 1);
}

bool LooksNumeric(const std::string& cell) {
    double ignored = 0;
    auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), ignored);
    return ec == std::errc() && end == cell.data() + cell.size();
}

// OWASP's CSV-injection list: a cell a spreadsheet would read as a formula starts with one of
// these (TAB and CR included: some spreadsheets drop them and read what follows).
bool StartsLikeFormula(const std::string& cell) {
    return !cell.empty() && (cell[0] == '=' || cell[0] == '+' || cell[0] == '-' || cell[0] == '@' ||
                             cell[0] == '\t' || cell[0] == '\r');
}

std::string Cell(const std::string& raw) {
    std::string cell = raw;
    if (StartsLikeFormula(cell) && !LooksNumeric(cell)) {
        cell.insert(cell.begin(), '\'');
    }
    if (cell.find_first_of(",\"\r\n") == std::string::npos) {
        return cell;
    }
    std::string quoted = "\"";
    for (char c : cell) {
        quoted += c;
        if (c == '"') {
            quoted += '"';
        }
    }
    return quoted + "\"";
}

void AppendRow(std::string& out, const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
        if (i > 0) {
            out += ',';
        }
        out += Cell(row[i]);
    }
    out += "\r\n";
}

}  // namespace

std::string CsvUsd(double usd) {
    return CsvNumber(pricing::RoundToCents(usd));
}

std::string CsvNumber(double value) {
    if (!std::isfinite(value)) {
        return "";
    }
    double rounded = std::round(value * 1e6) / 1e6;
    if (rounded == 0) {
        rounded = 0;  // no "-0"
    }
    std::array<char, 400> buf{};
    auto [end, ec] =
        std::to_chars(buf.data(), buf.data() + buf.size(), rounded, std::chars_format::fixed, 6);
    if (ec != std::errc()) {
        return "";
    }
    std::string text(buf.data(), end);
    while (text.back() == '0') {
        text.pop_back();
    }
    if (text.back() == '.') {
        text.pop_back();
    }
    return text;
}

std::string ToCsv(const CsvTable& table) {
    std::string out;
    AppendRow(out, table.header);
    for (const auto& row : table.rows) {
        AppendRow(out, row);
    }
    return out;
}

bool WantsCsv(const httplib::Request& req) {
    if (!req.has_header("Accept")) {
        return false;
    }
    const std::string accept = Lower(req.get_header_value("Accept")).substr(0, 1024);
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
