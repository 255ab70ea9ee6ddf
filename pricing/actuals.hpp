#pragma once

// Actual spend: accelerator charges read from the clouds' FOCUS exports
// (service/import/focus_actuals.hpp reads them), tallied by currency, month and tag.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace gpucost::pricing {

// One kept row: an accelerator usage charge. Costs are in `billing_currency` (FOCUS
// BillingCurrency); accelerator_hours = consumed instance-hours x accelerators per instance
// (GCP GPU SKUs: the GPU-hours themselves).
struct ActualCharge {
    std::string row_id;  // stable identity of the export row (idempotent re-import)
    std::string provider;
    std::string month;  // YYYY-MM of ChargePeriodStart (UTC)
    std::string charge_period_start;
    std::string billing_currency;
    std::string sku;          // instance type, VM size or GCP SKU description
    std::string offering_id;  // the catalog's offering; empty when the catalog has none
    std::string accelerator;
    std::string region;
    std::string pricing_category;  // Standard | Dynamic | Committed | Other
    double accelerator_hours = 0;
    double billed_cost = 0;
    double effective_cost = 0;
    double list_cost = 0;
    std::string tag_value;  // the attribution tag's value; empty: untagged
    // A FOCUS ChargeClass Correction of an earlier period's usage: filed under the month it
    // corrects (its ChargePeriodStart), its figures (hours too) may be negative.
    bool correction = false;
    // The value of the showback tag key (FocusReadOptions::group_by); empty: untagged.
    std::string group_value;
};

// What a kept charge's cells must hold (docs/billing.md "What an export must hold"); a row
// outside these is refused, never stored. Costs (BilledCost, EffectiveCost, ListCost) lie
// from -kMaxChargeAmount to kMaxChargeAmount of the billing currency (a usage row may carry a
// negative correction); ConsumedQuantity from 0 to kMaxConsumedQuantity of its unit (hours or
// seconds); ChargePeriodStart is an ISO 8601 date or date-time in the years kFirstChargeYear
// to kLastChargeYear. Far beyond any real row, far below where a month's sums stop being
// finite.
inline constexpr double kMaxChargeAmount = 1e9;
inline constexpr double kMaxConsumedQuantity = 1e9;
inline constexpr int kFirstChargeYear = 2000;
inline constexpr int kLastChargeYear = 2099;

// Why `value` cannot be a cost of a kept charge ("is not a finite number", "is outside
// -1e9 to 1e9"), or "" when it can.
std::string ChargeAmountFault(double value);
// Why `value` cannot be a ConsumedQuantity, or "" when it can.
std::string ConsumedQuantityFault(double value);
// Why `text` cannot be a ChargePeriodStart: YYYY-MM-DD, optionally followed by "T" or a space,
// hh:mm, optional :ss and fraction, and an optional zone (Z, +hh:mm, +hhmm); a real calendar
// date in the window. "" when it can.
std::string ChargePeriodFault(std::string_view text);
// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF) without a NUL byte: what PostgreSQL stores and JSON carries.
bool IsCleanUtf8(std::string_view text);
// Whether `text` is an ISO 4217 alphabetic code (three capital letters), as FOCUS
// BillingCurrency is.
bool IsCurrencyCode(std::string_view text);

// Why a row was not kept. Names are the report's keys.
enum class SkipReason {
    kNonAccelerator,    // "non_accelerator": usage of something without accelerators
    kCredit,            // "credit"
    kTax,               // "tax"
    kPurchase,          // "purchase": commitment and reservation purchases (their usage is kept)
    kAdjustment,        // "adjustment" (a ChargeClass Correction of accelerator usage is kept)
    kUnknownSku,        // "unknown_sku": looks like an accelerator SKU the mappings do not know
    kUnknownProvider,   // "unknown_provider"
    kMarketplace,       // "marketplace": a third party's software fee billed through the cloud
    kUnusedCommitment,  // "unused_commitment": reserved hours nobody used (reported apart)
};
const char* SkipReasonName(SkipReason reason);

// Totals of kept charges for one key (a currency, a month, a tag value).
struct ActualTotals {
    std::size_t rows = 0;
    double accelerator_hours = 0;
    double billed_cost = 0;
    double effective_cost = 0;
    double list_cost = 0;
    void Add(const ActualCharge& c);
};

// Who holds unused commitment hours: the row's currency, its attribution tag value ("" when
// untagged) and the commitment (FOCUS CommitmentDiscountId).
struct UnusedCommitmentKey {
    std::string currency;
    std::string tag_value;
    std::string commitment_id;
    bool operator<(const UnusedCommitmentKey& o) const {
        return std::tie(currency, tag_value, commitment_id) <
               std::tie(o.currency, o.tag_value, o.commitment_id);
    }
};

// A currency the reader converted to US dollars with the export's own rate: the original
// currency and the column the rate came from (x_EffectiveCostInUsd, x_CurrencyConversionRate).
using CurrencyConversion = std::pair<std::string, std::string>;

// What an import read: rows kept and skipped (by reason, with one example each), and totals
// by currency, by (currency, month) and by (currency, tag value; "" untagged); the corrections
// applied, the rows converted to USD, the unused commitment hours (commitment waste, never
// usage) and, when a showback key was asked for, totals by (currency, that key's value).
struct ActualsReport {
    std::size_t rows_read = 0;
    std::size_t kept = 0;
    std::size_t corrections = 0;  // kept rows that correct an earlier period
    std::map<std::string, std::size_t> skipped;
    std::map<std::string, std::string> skipped_examples;
    std::map<std::string, ActualTotals> by_currency;
    std::map<std::pair<std::string, std::string>, ActualTotals> by_currency_month;
    std::map<std::pair<std::string, std::string>, ActualTotals> by_currency_tag;
    std::map<std::pair<std::string, std::string>, ActualTotals> by_currency_group;
    std::map<CurrencyConversion, std::size_t> converted_to_usd;
    std::map<UnusedCommitmentKey, ActualTotals> unused_commitment;

    void Keep(const ActualCharge& c);
    void Skip(SkipReason reason, const std::string& example);
    // An unused commitment row (hours reserved and not used), with its figures in `c`.
    void Unused(const ActualCharge& c, const std::string& commitment_id);
};

}  // namespace gpucost::pricing
