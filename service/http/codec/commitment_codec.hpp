#pragma once
// POST /v1/plans/commitments (docs/billing.md, "The commitment a portfolio should buy"): the
// request's own members (its price book is taken out first), the answer as JSON, CSV (one row
// per recommended commitment) and FOCUS (each commitment's monthly fee over its term).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/error.hpp"
#include "pricing/plan/commitment.hpp"
#include "service/http/codec/csv_writer.hpp"
#include "service/http/codec/price_book_codec.hpp"

namespace gpucost::http {

// `start_date` (YYYY-MM-DD: when the terms would begin) and `slip_days` (0 to
// kMaxSlipDays); any other member is kInvalidArgument naming it.
struct CommitmentOptions {
    std::optional<double> start_hour;
    std::optional<double> slip_days;
};
[[nodiscard]] pricing::Result<CommitmentOptions> DecodeCommitmentRequest(
    const nlohmann::json& body);

// The answer's JSON text: the terms' start, the saved plans read (counted or why not), the
// demand per offering, the commitments with their what-ifs, totals and `assumptions_json`.
// `owned_use`: per month and owned offering, utilisation and coverage from the ledger and the
// imported bills (OwnedUseByMonth).
std::string EncodeCommitmentPlan(const pricing::plan::CommitmentPlan& plan,
                                 const std::vector<pricing::plan::PlannedDemand>& demand,
                                 const std::vector<pricing::plan::OwnedMonthUse>& owned_use,
                                 std::string_view assumptions_json);

// One row per commitment: term, instances, rates, cost, and each what-if's utilisation,
// unused cost and saving.
CsvTable CommitmentCsv(const pricing::plan::CommitmentPlan& plan);

// Each commitment's fee month by month over its term, as FOCUS forecast rows (Committed,
// Recurring), at the price the view knows.
CsvTable CommitmentFocusCsv(const pricing::plan::CommitmentPlan& plan, const PricingView& view,
                            const std::string& catalog_version);

}  // namespace gpucost::http
