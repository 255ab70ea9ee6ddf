#pragma once

// Reading actual spend from the clouds' FOCUS 1.0-1.2 exports (docs/billing.md):
// CSV, plain or gzip, streamed record by record (memory bounded by the longest record). Each
// accelerator usage row becomes a pricing::ActualCharge mapped to the catalog through
// schema/seed/mappings/ (AWS x_UsageType, Azure x_SkuDetails/x_SkuMeterName, GCP SKU
// descriptions); every other row is counted under the reason it was skipped. Each cloud's
// conventions are read as it writes them (docs/billing.md "Each cloud's conventions"):
// categories in any case, Google's array Tags and AWS's `user:` tag keys, corrections filed
// under the period they correct, commitment fees and marketplace software apart from
// accelerator hours, unused commitment hours reported as waste, and costs in another currency
// converted to USD with the rate the export itself gives.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/actuals.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "service/import/mappings.hpp"

namespace gpucost::import {

// Default FOCUS Tags key attributing a row to a scenario (`--tag-key`).
inline constexpr char kDefaultActualsTagKey[] = "gpucost-scenario";
// A record longer than this is refused: it bounds memory whatever the input.
inline constexpr std::size_t kMaxFocusRecordBytes = 1 << 20;

// One parsed CSV record (RFC 4180 fields).
std::vector<std::string> ParseCsvRecord(std::string_view record);

struct FocusReadOptions {
    std::string tag_key = kDefaultActualsTagKey;
    // Showback: a second Tags key (team, project) whose value each kept row is totalled by
    // (ActualsReport::by_currency_group); empty: none.
    std::string group_by;
};

// Reads one export (`path`, gzip or plain). `on_charge` gets each kept row; `report` counts
// every row. kInvalidArgument "PATH: ..." when the file has no FOCUS header (ChargeCategory,
// BilledCost, ChargePeriodStart, BillingCurrency, and ProviderName or ServiceProviderName), a
// record is over kMaxFocusRecordBytes or a cost is not a number; kNotFound when it cannot be
// opened.
[[nodiscard]] pricing::Status ReadFocusExport(
    const std::string& path, const FocusReadOptions& options, const pricing::Catalog& catalog,
    const Mappings& mappings, pricing::ActualsReport& report,
    const std::function<void(const pricing::ActualCharge&)>& on_charge);

// The same from an export already in memory (POST /v1/actuals' body, plain CSV). Errors are
// prefixed "the body: "; a bad number names its record as "line N" (the header is line 1) in
// Error.field.
[[nodiscard]] pricing::Status ReadFocusText(
    std::string_view text, const FocusReadOptions& options, const pricing::Catalog& catalog,
    const Mappings& mappings, pricing::ActualsReport& report,
    const std::function<void(const pricing::ActualCharge&)>& on_charge);

}  // namespace gpucost::import
