#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/error.hpp"

namespace gpucost::import {

// A path into a JSON document: object keys, and "[]" for an array element.
using JsonPath = std::vector<std::string>;

// Streams one JSON document and hands over, one at a time, the small objects found at
// `record_patterns` (a pattern element "*" matches any key, "[]" any array element). Only the
// record being read is held in memory; everything else is parsed and dropped. Scalars at
// depth 1 (publicationDate, offerCode, ...) are kept in `top_level`.
class RecordReader {
public:
    // Called when a record starts: false skips it without building it (a cheap filter on
    // the path, e.g. a SKU that no product kept).
    using WantFn = std::function<bool(const JsonPath& path)>;
    // Called with each complete record; a returned message aborts the read as malformed.
    using RecordFn =
        std::function<std::optional<std::string>(const JsonPath& path, nlohmann::json&& record)>;

    RecordReader(std::vector<JsonPath> record_patterns, WantFn want, RecordFn on_record);

    // Reads the whole document. kInvalidArgument "NAME: byte N: what" for a syntax error, a
    // truncated document, a value, record or nesting over the limits below or a RecordFn
    // refusal.
    [[nodiscard]] pricing::Status ReadFile(std::FILE* file, const std::string& name);
    [[nodiscard]] pricing::Status ReadBuffer(std::string_view text, const std::string& name);

    const std::map<std::string, std::string>& TopLevel() const { return top_level_; }

    // Limits that bound memory whatever the input; each is far above what the providers'
    // files hold (a product, a SKU's terms, an Item or a SKU is a few kilobytes) and each is
    // refused with an error naming it. The parser holds one value's text whole before handing
    // it over, so a value is capped as its bytes arrive, not once it has been read.
    static constexpr std::size_t kMaxRecordValues = 200000;
    static constexpr std::size_t kMaxValueBytes = std::size_t{1} << 20;   // one string or number
    static constexpr std::size_t kMaxRecordBytes = std::size_t{8} << 20;  // one record's text
    static constexpr std::size_t kMaxDepth = 64;            // nesting outside a record
    static constexpr std::size_t kMaxTopLevelValues = 256;  // scalars beside the records

private:
    class Sax;
    class Source;
    pricing::Status Run(Source& source, const std::string& name);

    std::vector<JsonPath> patterns_;
    WantFn want_;
    RecordFn on_record_;
    std::map<std::string, std::string> top_level_;
};

}  // namespace gpucost::import
