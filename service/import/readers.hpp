#pragma once
// Shared pieces of the price-file readers (internal to service/import).

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

// The largest amount a price file may state for one price dimension (an hourly rate, an
// upfront fee, a whole reservation term): the catalog keeps numeric(18, 6), below 1e12.
inline constexpr double kMaxFileAmountUsd = 1e11;

// A price as the file writes it, read: `usd` when it is a finite amount from 0 to
// kMaxFileAmountUsd, else `fault` names the reason the row is refused (price_not_a_number,
// price_not_finite, price_negative, price_too_large).
struct FileAmount {
    double usd = 0;
    std::string fault;
};

// A decimal string or number ("55.0400000000", 27.197); "NaN", "Infinity" and 1e999 are not
// prices.
FileAmount Usd(const nlohmann::json& value);

// The fault of a number read from a file as an amount, or "" when it is one.
std::string AmountFault(double usd);

// The refusals that name their rows in FileResult::refused: the price faults above and
// price_not_usd_money (a GCP Money value that is not USD units and nanos).
bool IsPriceFault(const std::string& reason);

// Shortest text that reads back as the same double ("55.04").
std::string Num(double value);

// YYYY-MM-DD from the start of an ISO timestamp, or "" when it does not start with a date.
std::string DatePart(const std::string& timestamp);

// Collects one file's offerings: the first row for an offering id wins, later ones are
// counted as duplicates.
class OfferingSink {
public:
    explicit OfferingSink(FileResult& result) : result_(result) {}
    // Counts a row under `reason`; a price fault also names the row (`row`) in the result.
    void Skip(const std::string& reason, const std::string& row = {});
    // Keeps an offering whose price is a usable catalog price (composed and amortised rates
    // are checked here, once); any other is refused under its price fault.
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
pricing::Assumptions LambdaAssumptions();
pricing::Assumptions RunpodAssumptions();
pricing::Assumptions VastaiAssumptions();
pricing::Assumptions CoreweaveAssumptions();

pricing::Result<FileResult> ReadAws(const Input& input, const std::string& name,
                                    const Mappings& mappings, const ParseOptions& options);
pricing::Result<FileResult> ReadAzure(const Input& input, const std::string& name,
                                      const Mappings& mappings, const ParseOptions& options);
// The neoclouds' answers (neocloud_prices.cpp): one answer per file.
pricing::Result<FileResult> ReadLambda(const Input& input, const std::string& name,
                                       const Mappings& mappings, const ParseOptions& options);
pricing::Result<FileResult> ReadRunpod(const Input& input, const std::string& name,
                                       const Mappings& mappings, const ParseOptions& options);
pricing::Result<FileResult> ReadCoreweave(const Input& input, const std::string& name,
                                          const Mappings& mappings, const ParseOptions& options);
// GCP lists SKUs over several pages: a machine's GPU, vCPU and memory SKUs may sit on
// different pages, so all pages of one listing are read together.
using NamedInput = std::pair<Input, std::string>;
pricing::Result<FileResult> ReadGcp(const std::vector<NamedInput>& pages, const Mappings& mappings,
                                    const ParseOptions& options);
// Vast.ai's search answers in pages (sync follows them by offer id): the cheapest offer per
// GPU, count and location is chosen over all pages together.
pricing::Result<FileResult> ReadVastai(const std::vector<NamedInput>& pages,
                                       const Mappings& mappings, const ParseOptions& options);

}  // namespace gpucost::import::detail
