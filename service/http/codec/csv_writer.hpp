#pragma once

#include <string>
#include <vector>

#include <httplib.h>

#include "service/text/csv_text.hpp"

namespace gpucost::http {

// CSV text as the answers and the commands write it (service/text/csv_text.hpp).
using text::CsvNumber;
using text::CsvTable;
using text::CsvUsd;
using text::ToCsv;

// True when the client prefers text/csv over application/json in its Accept header (q values
// honoured; a tie goes to JSON; no Accept header means JSON).
bool WantsCsv(const httplib::Request& req);

// Writes `table` as text/csv; charset=utf-8 with status 200.
void WriteCsv(httplib::Response& res, const CsvTable& table);

}  // namespace gpucost::http
