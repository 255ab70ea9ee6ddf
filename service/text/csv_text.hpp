#pragma once

#include <string>
#include <vector>

namespace gpucost::text {

// A table to write as text/csv (RFC 4180): a header row, then one row per item. Cells are
// already formatted; see CsvNumber.
struct CsvTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

// Formats a number the way the JSON answers round it (6 decimals, trailing zeros dropped);
// empty for non-finite values.
std::string CsvNumber(double value);
// An amount in USD as answers state money (pricing/money.hpp): to the cent, the same figure
// the JSON answer gives.
std::string CsvUsd(double usd);

// RFC 4180 text with CRLF line ends. Cells with a comma, quote, CR or LF are quoted and
// quotes doubled. Text cells starting with '=', '+', '-' or '@' get a leading apostrophe so
// spreadsheets do not run them as formulas (numbers from CsvNumber are left alone).
std::string ToCsv(const CsvTable& table);

}  // namespace gpucost::text
