#include "service/http/codec/focus_codec.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "pricing/offering.hpp"
#include "service/http/codec/query_params.hpp"

namespace gpucost::http {
namespace {

using pricing::plan::ChargeCategoryKind;
using pricing::plan::ChargeKind;
using pricing::plan::ForecastCharge;

// Who issues the forecast's rows: not a cloud account, so a fixed id says so.
constexpr char kForecastAccountId[] = "gpucost-forecast";
constexpr char kForecastAccountName[] = "gpucost forecast (not billed)";
constexpr char kBillingCurrency[] = "USD";

std::string Lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

std::string DateTime(const std::string& date) {
    return date + "T00:00:00Z";
}

std::string ProviderName(const std::string& id) {
    const pricing::Provider* p = pricing::FindProvider(id);
    return p != nullptr ? p->name : id;
}

// FOCUS PricingCategory: Standard (list or negotiated rate), Dynamic (spot), Committed.
const char* PricingCategory(const ForecastCharge& c) {
    if (c.kind != ChargeKind::kCompute) return "Standard";
    switch (c.offering->price_type) {
        case pricing::PriceType::kSpot:
            return "Dynamic";
        case pricing::PriceType::kCommit1y:
        case pricing::PriceType::kCommit3y:
            return "Committed";
        case pricing::PriceType::kOnDemand:
        case pricing::PriceType::kCapacityBlock:
            return "Standard";
    }
    return "Standard";
}

const char* ServiceCategory(ChargeKind kind) {
    switch (kind) {
        case ChargeKind::kCompute:
            return "Compute";
        case ChargeKind::kStorage:
            return "Storage";
        case ChargeKind::kEgress:
            return "Networking";
    }
    return "Other";
}

std::string Description(const ForecastCharge& c) {
    const pricing::Offering& o = *c.offering;
    switch (c.kind) {
        case ChargeKind::kCompute:
            return std::to_string(c.nodes) + " x " + o.instance_type + " (" +
                   std::string(pricing::PriceTypeName(o.price_type)) + ") in " + o.region +
                   (c.category == ChargeCategoryKind::kPurchase ? ", paid at reservation"
                                                                : ", planned");
        case ChargeKind::kStorage:
            return "object storage for the run's dataset and checkpoints";
        case ChargeKind::kEgress:
            return "internet egress of the trained model";
    }
    return "";
}

std::string Tags(const FocusContext& context) {
    nlohmann::json tags = {{"gpucost-plan", context.plan_kind},
                           {"gpucost-catalog-version", context.catalog_version}};
    return tags.dump();
}

std::vector<std::string> Row(const ForecastCharge& c, const FocusContext& context) {
    const pricing::Offering& o = *c.offering;
    const bool usage = c.category == ChargeCategoryKind::kUsage;
    const bool compute = c.kind == ChargeKind::kCompute;
    const std::string quantity = CsvNumber(c.pricing_quantity);
    return {
        "",                               // AvailabilityZone
        CsvNumber(c.effective_cost_usd),  // BilledCost
        kForecastAccountId,
        kForecastAccountName,
        kBillingCurrency,
        DateTime(c.period_end),
        DateTime(c.period_start),      // BillingPeriodEnd/Start
        usage ? "Usage" : "Purchase",  // ChargeCategory
        "",                            // ChargeClass
        Description(c),
        usage ? "Usage-Based" : "One-Time",  // ChargeFrequency
        DateTime(c.period_end),
        DateTime(c.period_start),  // ChargePeriodEnd/Start
        "",
        "",
        "",
        "",
        "",  // CommitmentDiscount*
        usage ? quantity : "",
        usage ? c.pricing_unit : "",            // ConsumedQuantity/Unit
        CsvNumber(c.effective_cost_usd),        // ContractedCost
        CsvNumber(c.effective_unit_price_usd),  // ContractedUnitPrice
        CsvNumber(c.effective_cost_usd),        // EffectiveCost
        "",                                     // InvoiceId
        ProviderName(o.provider),               // InvoiceIssuerName
        CsvNumber(c.list_cost_usd),
        CsvNumber(c.list_unit_price_usd),
        PricingCategory(c),
        kBillingCurrency,  // PricingCurrency
        quantity,
        c.pricing_unit,
        ProviderName(o.provider),
        ProviderName(o.provider),  // ProviderName, PublisherName
        o.region,
        o.region,  // RegionId, RegionName
        "",
        compute ? o.instance_type : "",  // ResourceId, ResourceName
        compute ? "Virtual Machine"
                : (c.kind == ChargeKind::kStorage ? "Object Storage" : "Data Transfer"),
        ServiceCategory(c.kind),
        compute ? o.provider + " compute" : o.provider + " data",  // ServiceName
        compute ? o.id : "",                                       // SkuId
        compute ? o.id : "",                                       // SkuPriceId
        "",
        "",  // SubAccountId/Name
        Tags(context),
        compute ? o.accelerator : "",                                  // x_Accelerator
        compute ? std::to_string(o.accelerator_count * c.nodes) : "",  // x_Accelerators
        compute ? CsvNumber(c.accelerator_hours) : "",                 // x_AcceleratorHours
        c.cost_usd_p10 ? CsvNumber(*c.cost_usd_p10) : "",
        c.cost_usd_p90 ? CsvNumber(*c.cost_usd_p90) : "",
        compute ? std::to_string(c.nodes) : "",  // x_Nodes
        context.pricing_basis,
        context.price_book,
    };
}

}  // namespace

pricing::Result<bool> WantsFocus(const httplib::Request& req) {
    if (req.has_param(kFormatParam)) {
        const std::string format = req.get_param_value(kFormatParam);
        if (format != "focus") {
            return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                      "format: the only format is 'focus' (FOCUS 1.2 CSV rows)",
                                      kFormatParam);
        }
        return true;
    }
    if (!WantsCsv(req)) return false;
    const std::string accept = Lower(req.get_header_value("Accept"));
    return accept.find("profile=\"focus\"") != std::string::npos ||
           accept.find("profile=focus") != std::string::npos;
}

const std::vector<std::string>& FocusColumns() {
    static const std::vector<std::string> kColumns = {"AvailabilityZone",
                                                      "BilledCost",
                                                      "BillingAccountId",
                                                      "BillingAccountName",
                                                      "BillingCurrency",
                                                      "BillingPeriodEnd",
                                                      "BillingPeriodStart",
                                                      "ChargeCategory",
                                                      "ChargeClass",
                                                      "ChargeDescription",
                                                      "ChargeFrequency",
                                                      "ChargePeriodEnd",
                                                      "ChargePeriodStart",
                                                      "CommitmentDiscountCategory",
                                                      "CommitmentDiscountId",
                                                      "CommitmentDiscountName",
                                                      "CommitmentDiscountStatus",
                                                      "CommitmentDiscountType",
                                                      "ConsumedQuantity",
                                                      "ConsumedUnit",
                                                      "ContractedCost",
                                                      "ContractedUnitPrice",
                                                      "EffectiveCost",
                                                      "InvoiceId",
                                                      "InvoiceIssuerName",
                                                      "ListCost",
                                                      "ListUnitPrice",
                                                      "PricingCategory",
                                                      "PricingCurrency",
                                                      "PricingQuantity",
                                                      "PricingUnit",
                                                      "ProviderName",
                                                      "PublisherName",
                                                      "RegionId",
                                                      "RegionName",
                                                      "ResourceId",
                                                      "ResourceName",
                                                      "ResourceType",
                                                      "ServiceCategory",
                                                      "ServiceName",
                                                      "SkuId",
                                                      "SkuPriceId",
                                                      "SubAccountId",
                                                      "SubAccountName",
                                                      "Tags",
                                                      "x_Accelerator",
                                                      "x_Accelerators",
                                                      "x_AcceleratorHours",
                                                      "x_CostP10",
                                                      "x_CostP90",
                                                      "x_Nodes",
                                                      "x_PricingBasis",
                                                      "x_PriceBook"};
    return kColumns;
}

CsvTable FocusForecastCsv(const std::vector<ForecastCharge>& charges, const FocusContext& context) {
    CsvTable table;
    table.header = FocusColumns();
    for (const ForecastCharge& c : charges) table.rows.push_back(Row(c, context));
    return table;
}

namespace {

// The list price of `offering` (its price without a book) and the basis the rows name.
double ListPriceFor(const pricing::Offering* offering, const PricingView& view,
                    FocusContext& context) {
    if (view.priced) {
        context.pricing_basis = "price_book";
        context.price_book = view.priced->Book().name;
    }
    if (offering == nullptr) return 0;
    if (view.priced) {
        if (const pricing::AppliedPrice* p = view.priced->PriceOf(offering->id)) {
            return p->list_usd_per_hour;
        }
    }
    return offering->price.usd_per_hour;
}

}  // namespace

CsvTable TrainingFocusCsv(const pricing::plan::TrainingPlan& plan,
                          const pricing::plan::TrainingPlanRequest& request,
                          const PricingView& view) {
    FocusContext context{"training", "list", "", plan.catalog_version};
    const double list_usd_per_hour =
        ListPriceFor(plan.recommendation ? plan.recommendation->offering : nullptr, view, context);
    return FocusForecastCsv(pricing::plan::ForecastTraining(plan, request, list_usd_per_hour),
                            context);
}

CsvTable ServingFocusCsv(const std::optional<pricing::plan::InferencePlanOption>& recommendation,
                         const std::string& catalog_version, const std::string& first_month,
                         const PricingView& view) {
    FocusContext context{"serving", "list", "", catalog_version};
    if (!recommendation) return FocusForecastCsv({}, context);
    const double list_usd_per_hour = ListPriceFor(recommendation->offering, view, context);
    return FocusForecastCsv(
        pricing::plan::ForecastServing(*recommendation, first_month, list_usd_per_hour), context);
}

}  // namespace gpucost::http
