#pragma once

// Plans as FOCUS 1.2 forecasts (docs/billing.md): FOCUS cost-and-usage rows, one per
// calendar month and charge, for the spreadsheets and FinOps tools that read the clouds'
// exports. Asked for with `Accept: text/csv; profile="focus"` or `?format=focus`.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <httplib.h>

#include "pricing/error.hpp"
#include "pricing/plan/forecast.hpp"
#include "service/http/codec/csv_writer.hpp"
#include "service/http/codec/price_book_codec.hpp"

namespace gpucost::http {

// The query parameter that asks for FOCUS rows (`?format=focus`).
inline constexpr char kFormatParam[] = "format";

// True when the query says format=focus or the Accept header prefers text/csv with
// profile="focus" (quoted or not). Another `format` value is kInvalidArgument (422) naming
// `format`.
[[nodiscard]] pricing::Result<bool> WantsFocus(const httplib::Request& req);

// What the rows say beside the charges: the plan kind (Tags' `gpucost-plan`), the basis the
// plan priced at and the book's name (x_PricingBasis, x_PriceBook), and the catalog version.
// More `key: value` pairs for every row's Tags: a saved scenario's forecast carries its id under
// the tag key its actual spend is read by, so the forecast and the bill meet by one tag.
using FocusTags = std::vector<std::pair<std::string, std::string>>;

struct FocusContext {
    std::string plan_kind;  // "training", "serving" or "rent-vs-buy"
    std::string pricing_basis = "list";
    std::string price_book;  // empty: none
    std::string catalog_version;
    FocusTags tags;
    // The book's id (empty for an inline book) and version (x_PriceBookId, x_PriceBookVersion).
    std::string price_book_id;
    std::optional<int> price_book_version;
    // The catalog the plan priced on: a commitment's hours are priced before its discount at
    // the on-demand offering of the same instance (ContractedUnitPrice, ListUnitPrice) where
    // it has one. Null: at the charge's own prices.
    const PricingView* view = nullptr;
};

// The FOCUS 1.2 columns written, in order (FOCUS columns, then x_ ones).
const std::vector<std::string>& FocusColumns();

// FOCUS rows of the charges, in USD: one per charge, except a charge paid ahead for reserved
// hours (a commitment term's month, a capacity block), which is its purchase and, per month,
// its used and unused hours; see docs/billing.md for each column's meaning here.
CsvTable FocusForecastCsv(const std::vector<pricing::plan::ForecastCharge>& charges,
                          const FocusContext& context);

// The training plan's forecast (ForecastTraining of its recommendation, at the list price the
// view knows) as FOCUS rows; a header only when nothing is recommended.
CsvTable TrainingFocusCsv(const pricing::plan::TrainingPlan& plan,
                          const pricing::plan::TrainingPlanRequest& request,
                          const PricingView& view, const FocusTags& tags = {});

// The serving plan's recommendation over its budget view (start_date, budget_months) as
// FOCUS rows, the hours the view's price book's owned capacity covers as Committed rows billed
// 0; a header only without a recommendation or a budget.
CsvTable ServingFocusCsv(const std::optional<pricing::plan::InferencePlanOption>& recommendation,
                         const std::optional<pricing::plan::ServingBudgetView>& budget,
                         const std::string& catalog_version, const PricingView& view,
                         const FocusTags& tags = {});

// The rent-vs-buy plan's rent and buy paths (ForecastRentVsBuy) from `first_month` (YYYY-MM:
// this month) as FOCUS rows, Tags' `gpucost-path` naming the path; the rent offering (the
// request's `rent.offering_id`, under the plan's price type) at the list price the view knows.
CsvTable RentVsBuyFocusCsv(const pricing::plan::RentVsBuyPlan& plan,
                           const std::optional<std::string>& rent_offering_id,
                           const std::string& first_month, const PricingView& view,
                           const FocusTags& tags = {});

}  // namespace gpucost::http
