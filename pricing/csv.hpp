#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/error.hpp"

namespace gpucost::pricing {

// One CSV record and the 1-based line on which it starts (the header is line 1).
struct CsvRecord {
    std::size_t line = 0;
    std::vector<std::string> fields;
};

// Parses RFC 4180 CSV text (quoted fields, "" escapes, CRLF or LF, quoted newlines).
// Blank lines are skipped. Errors (kInvalidArgument) name `file_name` and the line:
// an unterminated quote, or text after a closing quote.
[[nodiscard]] Result<std::vector<CsvRecord>> ParseCsv(std::string_view text,
                                                      std::string_view file_name);

}  // namespace gpucost::pricing
