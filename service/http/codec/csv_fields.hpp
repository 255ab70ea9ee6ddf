#pragma once
// Options CSVs read from the answer's field tables: a line is the option as its JSON table
// writes it, each column's cell read from there, so a member added to the table reaches the CSV
// without a second list of names and cells.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/http/codec/field_table.hpp"

namespace gpucost::http {

// A CSV column: its name and the JSON pointer of its cell in the option's JSON. A list's cell is
// its items joined by ';' (`item_member`: the member of each item that stands for it).
struct CsvColumn {
    std::string_view name;
    std::string_view pointer;
    std::string_view item_member = {};
};

// True when one of the columns reads the member `key` (or a part of it).
bool CsvColumnReads(const CsvColumn* columns, std::size_t count, std::string_view key);

// `first`, then a column for each member of the field table that no column of `first` or
// `last` reads (by its first pointer segment), named by its key, in the table's order, then
// `last`.
template <typename T, std::size_t N, std::size_t M, std::size_t L>
std::vector<CsvColumn> CsvColumnsOf(const std::array<CsvColumn, M>& first,
                                    const std::array<AnswerField<T>, N>& fields,
                                    const std::array<CsvColumn, L>& last) {
    std::vector<CsvColumn> columns(first.begin(), first.end());
    for (const auto& field : fields) {
        if (!CsvColumnReads(first.data(), first.size(), field.key) &&
            !CsvColumnReads(last.data(), last.size(), field.key)) {
            columns.push_back({field.key, {}});
        }
    }
    columns.insert(columns.end(), last.begin(), last.end());
    return columns;
}

// The cells of one line: `row` is the option's JSON plus the answer-level members every line
// repeats (catalog_version, currency). A missing or null value is an empty cell; numbers are
// written as CsvNumber writes them.
std::vector<std::string> CsvCellsOf(const nlohmann::json& row,
                                    const std::vector<CsvColumn>& columns);

// The option's JSON as its field table writes it, parsed, with `shared` members added.
template <typename T, std::size_t N>
nlohmann::json CsvRowOf(const T& object, const std::array<AnswerField<T>, N>& fields,
                        const nlohmann::json& shared) {
    std::string text;
    JsonWriter w(text);
    WriteFields(w, object, fields);
    nlohmann::json row = nlohmann::json::parse(text);
    row.update(shared);
    return row;
}

}  // namespace gpucost::http
