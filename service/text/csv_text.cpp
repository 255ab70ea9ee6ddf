#include "service/text/csv_text.hpp"

#include <array>
#include <charconv>
#include <cmath>

#include "pricing/money.hpp"

namespace gpucost::text {
namespace {

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

}  // namespace gpucost::text
