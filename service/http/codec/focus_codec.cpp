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

// Who provides charges without a catalog offering: the buyer's own hardware, or a rent
// quoted by the request rather than the catalog.
constexpr char kOwnedProviderName[] = "Owned hardware";
constexpr char kQuotedProviderName[] = "Quoted rent";

// FOCUS PricingCategory: Standard (list or negotiated rate), Dynamic (spot), Committed
// (commitments, and owned capacity's or hardware's hours paid up front).
const char* PricingCategory(const ForecastCharge& c) {
    if (c.owned) return "Committed";
    if (c.kind != ChargeKind::kCompute || c.offering == nullptr) return "Standard";
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
        case ChargeKind::kHardware:
        case ChargeKind::kOperations:
            return "Compute";
        case ChargeKind::kStorage:
            return "Storage";
        case ChargeKind::kEgress:
            return "Networking";
    }
    return "Other";
}

const char* ChargeFrequency(const ForecastCharge& c) {
    if (c.category == ChargeCategoryKind::kPurchase) return "One-Time";
    return c.recurring ? "Recurring" : "Usage-Based";
}

std::string OfferingDescription(const ForecastCharge& c, const pricing::Offering& o) {
    if (c.owned) {
        return o.instance_type + " in " + o.region +
               ": owned capacity (price book), paid by its commitment";
    }
    std::string nodes = c.nodes > 0 ? std::to_string(c.nodes) + " x " : "";
    return nodes + o.instance_type + " (" + std::string(pricing::PriceTypeName(o.price_type)) +
           ") in " + o.region +
           (c.category == ChargeCategoryKind::kPurchase ? ", paid at reservation" : ", planned");
}

std::string Description(const ForecastCharge& c) {
    switch (c.kind) {
        case ChargeKind::kCompute:
            return c.offering != nullptr ? OfferingDescription(c, *c.offering)
                                         : "rented accelerators at the quoted rent";
        case ChargeKind::kStorage:
            return "object storage for the run's dataset and checkpoints";
        case ChargeKind::kEgress:
            return "internet egress of the trained model";
        case ChargeKind::kHardware:
            return c.category == ChargeCategoryKind::kPurchase
                       ? "purchase of the owned accelerators and their servers"
                       : "owned accelerators: the purchase amortised (net of resale)";
        case ChargeKind::kOperations:
            return "running the owned accelerators: power, hosting, network, storage, "
                   "maintenance and staff";
    }
    return "";
}

std::string Tags(const ForecastCharge& c, const FocusContext& context) {
    nlohmann::json tags = {{"gpucost-plan", context.plan_kind},
                           {"gpucost-catalog-version", context.catalog_version}};
    if (!c.path.empty()) tags["gpucost-path"] = c.path;
    for (const auto& [key, value] : context.tags) tags[key] = value;
    return tags.dump();
}

// The columns that name who provides a charge and where: the offering's, else the owned
// hardware's or the quoted rent's.
struct Provenance {
    std::string provider;
    std::string region;
    std::string resource_name;
    std::string resource_type;
    std::string service_name;
    std::string sku;
    std::string accelerator;
    std::string accelerators;
};

Provenance ProvenanceOf(const ForecastCharge& c) {
    const bool compute = c.kind == ChargeKind::kCompute;
    if (c.offering != nullptr) {
        const pricing::Offering& o = *c.offering;
        const int accelerators = c.nodes > 0 ? o.accelerator_count * c.nodes : 0;
        return {ProviderName(o.provider),
                o.region,
                compute ? o.instance_type : "",
                compute ? "Virtual Machine"
                        : (c.kind == ChargeKind::kStorage ? "Object Storage" : "Data Transfer"),
                compute ? o.provider + " compute" : o.provider + " data",
                compute ? o.id : "",
                compute ? o.accelerator : "",
                compute && accelerators > 0 ? std::to_string(accelerators) : ""};
    }
    const bool owned = c.kind == ChargeKind::kHardware || c.kind == ChargeKind::kOperations;
    return {owned ? kOwnedProviderName : kQuotedProviderName,
            "",
            "",
            owned ? "Server" : "",
            owned ? "owned accelerators" : "rented accelerators",
            "",
            c.accelerator,
            c.accelerators > 0 ? std::to_string(c.accelerators) : ""};
}

std::vector<std::string> Row(const ForecastCharge& c, const FocusContext& context) {
    const Provenance p = ProvenanceOf(c);
    const bool usage = c.category == ChargeCategoryKind::kUsage;
    const bool hours = c.accelerator_hours > 0;
    const std::string quantity = CsvNumber(c.pricing_quantity);
    return {
        "",                                                           // AvailabilityZone
        CsvNumber(c.billed_cost_usd.value_or(c.effective_cost_usd)),  // BilledCost
        kForecastAccountId,
        kForecastAccountName,
        kBillingCurrency,
        DateTime(c.period_end),
        DateTime(c.period_start),      // BillingPeriodEnd/Start
        usage ? "Usage" : "Purchase",  // ChargeCategory
        "",                            // ChargeClass
        Description(c),
        ChargeFrequency(c),
        DateTime(c.period_end),
        DateTime(c.period_start),  // ChargePeriodEnd/Start
        "",
        "",
        "",
        "",
        "",  // CommitmentDiscount*
        usage ? quantity : "",
        usage ? c.pricing_unit : "",                                      // ConsumedQuantity/Unit
        CsvNumber(c.contracted_cost_usd.value_or(c.effective_cost_usd)),  // ContractedCost
        CsvNumber(c.effective_unit_price_usd),                            // ContractedUnitPrice
        CsvNumber(c.effective_cost_usd),                                  // EffectiveCost
        "",                                                               // InvoiceId
        p.provider,                                                       // InvoiceIssuerName
        CsvNumber(c.list_cost_usd),
        CsvNumber(c.list_unit_price_usd),
        PricingCategory(c),
        kBillingCurrency,  // PricingCurrency
        quantity,
        c.pricing_unit,
        p.provider,
        p.provider,  // ProviderName, PublisherName
        p.region,
        p.region,  // RegionId, RegionName
        "",
        p.resource_name,  // ResourceId, ResourceName
        p.resource_type,
        ServiceCategory(c.kind),
        p.service_name,  // ServiceName
        p.sku,           // SkuId
        p.sku,           // SkuPriceId
        "",
        "",  // SubAccountId/Name
        Tags(c, context),
        p.accelerator,                                // x_Accelerator
        p.accelerators,                               // x_Accelerators
        hours ? CsvNumber(c.accelerator_hours) : "",  // x_AcceleratorHours
        c.cost_usd_p10 ? CsvNumber(*c.cost_usd_p10) : "",
        c.cost_usd_p90 ? CsvNumber(*c.cost_usd_p90) : "",
        c.kind == ChargeKind::kCompute && c.nodes > 0 ? std::to_string(c.nodes) : "",  // x_Nodes
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
                          const PricingView& view, const FocusTags& tags) {
    FocusContext context{"training", "list", "", plan.catalog_version, tags};
    const double list_usd_per_hour =
        ListPriceFor(plan.recommendation ? plan.recommendation->offering : nullptr, view, context);
    return FocusForecastCsv(pricing::plan::ForecastTraining(plan, request, list_usd_per_hour),
                            context);
}

CsvTable ServingFocusCsv(const std::optional<pricing::plan::InferencePlanOption>& recommendation,
                         const std::optional<pricing::plan::ServingBudgetView>& budget,
                         const std::string& catalog_version, const PricingView& view,
                         const FocusTags& tags) {
    FocusContext context{"serving", "list", "", catalog_version, tags};
    if (!recommendation || !budget) return FocusForecastCsv({}, context);
    const double list_usd_per_hour = ListPriceFor(recommendation->offering, view, context);
    const std::vector<pricing::OwnedCapacity>& owned = OwnedOf(view);
    return FocusForecastCsv(
        pricing::plan::ForecastServing(*recommendation, *budget, list_usd_per_hour, owned),
        context);
}

namespace {

// The offering the plan rents: the request's, or its sibling under the plan's price type.
std::optional<pricing::Offering> RentedOffering(const pricing::plan::RentVsBuyPlan& plan,
                                                const std::optional<std::string>& offering_id,
                                                const pricing::Catalog& catalog) {
    if (!offering_id) return std::nullopt;
    std::string id = *offering_id;
    for (const pricing::plan::RentOption& option : plan.rent_options) {
        if (plan.rent_price_type && option.price_type == *plan.rent_price_type) {
            id = option.offering_id;
        }
    }
    auto found = catalog.FindOffering(id);
    if (!found.ok()) return std::nullopt;
    return found.value();
}

}  // namespace

CsvTable RentVsBuyFocusCsv(const pricing::plan::RentVsBuyPlan& plan,
                           const std::optional<std::string>& rent_offering_id,
                           const std::string& first_month, const PricingView& view,
                           const FocusTags& tags) {
    FocusContext context{"rent-vs-buy", "list", "", plan.catalog_version, tags};
    const std::optional<pricing::Offering> rented =
        RentedOffering(plan, rent_offering_id, *view.catalog);
    const pricing::Offering* offering = rented ? &*rented : nullptr;
    const double list_usd_per_hour = ListPriceFor(offering, view, context);
    return FocusForecastCsv(
        pricing::plan::ForecastRentVsBuy(plan, offering, list_usd_per_hour, first_month), context);
}

}  // namespace gpucost::http
