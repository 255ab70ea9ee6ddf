#pragma once
// Shared pieces of the three price-file readers (internal to service/import).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/import/price_file.hpp"
#include "service/import/record_reader.hpp"

namespace gpucost::import::detail {

// Where a reader gets its bytes from: one of the two RecordReader entry points.
struct Input {
    std::FILE* file = nullptr;
    std::string_view buffer;
    pricing::Status Read(RecordReader& reader, const std::string& name) const {
        return file != nullptr ? reader.ReadFile(file, name) : reader.ReadBuffer(buffer, name);
    }
};

// The text of a string member, or "" when absent or not a string.
std::string Text(const nlohmann::json& object, const char* key);

// A decimal string or number as a non-negative double ("55.0400000000", 27.197).
std::optional<double> Usd(const nlohmann::json& value);

// Shortest text that reads back as the same double ("55.04").
std::string Num(double value);

// YYYY-MM-DD from the start of an ISO timestamp, or "" when it does not start with a date.
std::string DatePart(const std::string& timestamp);

// Collects one file's offerings: the first row for an offering id wins, later ones are
// counted as duplicates.
class OfferingSink {
public:
    explicit OfferingSink(FileResult& result) : result_(result) {}
    void Skip(const std::string& reason) { ++result_.skipped[reason]; }
    void Add(pricing::Offering offering);

private:
    FileResult& result_;
    std::map<std::string, std::size_t> index_;
};

// A new offering of `shape` with one price observation; as_of and source are set by the
// caller once the file has been read.
pricing::Offering MakeOffering(std::string_view provider, std::string_view instance_type,
                               std::string_view region, pricing::PriceType price_type,
                               const InstanceShape& shape, double usd_per_hour, std::string notes);

// Stamps every observation with the file's as_of (the --as-of date, else `publication_date`)
// and `source`; kInvalidArgument when neither date is known.
pricing::Status StampObservations(FileResult& result, const ParseOptions& options,
                                  const std::string& source_prefix);

pricing::Assumptions AwsAssumptions();
pricing::Assumptions AzureAssumptions();
pricing::Assumptions GcpAssumptions();

pricing::Result<FileResult> ReadAws(const Input& input, const std::string& name,
                                    const Mappings& mappings, const ParseOptions& options);
pricing::Result<FileResult> ReadAzure(const Input& input, const std::string& name,
                                      const Mappings& mappings, const ParseOptions& options);
// GCP lists SKUs over several pages: a machine's GPU, vCPU and memory SKUs may sit on
// different pages, so all pages of one listing are read together.
using NamedInput = std::pair<Input, std::string>;
pricing::Result<FileResult> ReadGcp(const std::vector<NamedInput>& pages, const Mappings& mappings,
                                    const ParseOptions& options);

}  // namespace gpucost::import::detail
