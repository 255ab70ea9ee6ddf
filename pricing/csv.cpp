#include "pricing/csv.hpp"

namespace gpucost::pricing {

Result<std::vector<CsvRecord>> ParseCsv(std::string_view text, std::string_view file_name) {
    std::vector<CsvRecord> records;
    std::size_t line = 1;
    std::size_t i = 0;
    const std::size_t n = text.size();
    auto located = [&](std::size_t at_line, const std::string& what) {
        return MakeError(ErrorCode::kInvalidArgument,
                         std::string(file_name) + " line " + std::to_string(at_line) + ": " + what);
    };
    while (i < n) {
        CsvRecord record;
        record.line = line;
        std::string field;
        bool record_done = false;
        bool any_content = false;
        while (!record_done) {
            if (i < n && text[i] == '"') {
                any_content = true;
                ++i;
                bool closed = false;
                while (i < n) {
                    char c = text[i];
                    if (c == '"') {
                        if (i + 1 < n && text[i + 1] == '"') {
                            field.push_back('"');
                            i += 2;
                            continue;
                        }
                        ++i;
                        closed = true;
                        break;
                    }
                    if (c == '\n') {
                        ++line;
                    }
                    field.push_back(c);
                    ++i;
                }
                if (!closed) {
                    return located(record.line, "unterminated quoted field");
                }
                if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
                    return located(line, "unexpected character after closing quote");
                }
            } else {
                while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
                    field.push_back(text[i]);
                    ++i;
                }
                any_content = any_content || !field.empty();
            }
            record.fields.push_back(std::move(field));
            field.clear();
            if (i >= n) {
                record_done = true;
            } else if (text[i] == ',') {
                any_content = true;
                ++i;
            } else {
                if (text[i] == '\r') {
                    ++i;
                }
                if (i < n && text[i] == '\n') {
                    ++i;
                }
                ++line;
                record_done = true;
            }
        }
        if (any_content) {
            records.push_back(std::move(record));
        }
    }
    return records;
}

}  // namespace gpucost::pricing
