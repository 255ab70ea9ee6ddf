#include "service/http/codec/csv_fields.hpp"

#include "service/http/codec/csv_writer.hpp"

namespace gpucost::http {
namespace {

using json = nlohmann::json;

std::string_view FirstSegment(std::string_view pointer) {
    pointer.remove_prefix(pointer.empty() ? 0 : 1);
    return pointer.substr(0, pointer.find('/'));
}

std::string ScalarCell(const json& value) {
    if (value.is_null()) return "";
    if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
    if (value.is_string()) return value.get<std::string>();
    if (value.is_number_float()) return CsvNumber(value.get<double>());
    return value.dump();  // an integer as written, or a nested value as JSON text
}

std::string Cell(const json& row, const CsvColumn& column) {
    const std::string pointer =
        column.pointer.empty() ? "/" + std::string(column.name) : std::string(column.pointer);
    const json::json_pointer at(pointer);
    if (!row.contains(at)) return "";
    const json& value = row.at(at);
    if (!value.is_array()) return ScalarCell(value);
    std::string joined;
    for (const json& item : value) {
        const json& part = column.item_member.empty() || !item.is_object()
                               ? item
                               : item.value(std::string(column.item_member), json());
        joined += (joined.empty() ? "" : ";") + ScalarCell(part);
    }
    return joined;
}

}  // namespace

bool CsvColumnReads(const CsvColumn* columns, std::size_t count, std::string_view key) {
    for (std::size_t i = 0; i < count; ++i) {
        const std::string_view pointer = columns[i].pointer;
        if ((pointer.empty() ? columns[i].name : FirstSegment(pointer)) == key) return true;
    }
    return false;
}

std::vector<std::string> CsvCellsOf(const json& row, const std::vector<CsvColumn>& columns) {
    std::vector<std::string> cells;
    cells.reserve(columns.size());
    for (const auto& column : columns) cells.push_back(Cell(row, column));
    return cells;
}

}  // namespace gpucost::http
