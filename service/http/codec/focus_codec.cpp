#include "service/http/codec/focus_codec.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "pricing/offering.hpp"
#include "pricing/text_case.hpp"
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
constexpr char kHoursUnit[] = "Hours";

std::string DateTime(const std::string& date) {
    return date + "T00:00:00Z";
}

// The names a provider's own FOCUS export gives its provider, publisher and the services a
// plan charges for (AWS Data Exports, Azure's FocusCost, Google's FOCUS view: the fixtures in
// tests/data/focus), so a forecast row groups with the bill's. Judgement where no export was
// read: Google's internet egress under its Networking service; other providers by their
// catalog name.
struct ProviderNames {
    std::string_view id;
    std::string_view provider;
    std::string_view publisher;
    std::string_view compute;
    std::string_view storage;
    std::string_view egress;
    std::string_view commitment_type;  // CommitmentDiscountType of its commitments
    std::string_view tpu;              // the service its TPUs bill under (Google: Cloud TPU)
};
constexpr std::array<ProviderNames, 3> kProviderNames = {{
    {"aws", "AWS", "Amazon Web Services", "Amazon Elastic Compute Cloud",
     "Amazon Simple Storage Service", "AWS Data Transfer", "Reserved Instance", ""},
    {"azure", "Microsoft", "Microsoft", "Virtual Machines", "Storage", "Bandwidth", "Reservation",
     ""},
    {"gcp", "Google Cloud", "Google Cloud", "Compute Engine", "Cloud Storage", "Networking",
     "Committed Use Discount", "Cloud TPU"},
}};

struct Names {
    std::string provider, publisher, compute, storage, egress, commitment_type, tpu;
};

Names NamesOf(const std::string& id) {
    for (const ProviderNames& n : kProviderNames) {
        if (n.id == id) {
            return {std::string(n.provider), std::string(n.publisher),
                    std::string(n.compute),  std::string(n.storage),
                    std::string(n.egress),   std::string(n.commitment_type),
                    std::string(n.tpu)};
        }
    }
    const pricing::Provider* p = pricing::FindProvider(id);
    const std::string name = p != nullptr ? p->name : id;
    return {name,         name, name + " GPU instances", name + " storage", name + " data transfer",
            "Commitment", ""};
}

// Who provides charges without a catalog offering: the buyer's own hardware, or a rent
// quoted by the request rather than the catalog.
constexpr char kOwnedProviderName[] = "Owned hardware";
constexpr char kQuotedProviderName[] = "Quoted rent";

std::string Dashed(std::string_view name) {
    std::string out(name);
    std::replace(out.begin(), out.end(), '_', '-');
    return out;
}

// The SKU an offering prices: its id without the price type (catalog ids end with it:
// "aws-p5.48xlarge-us-east-1-on-demand"), so the SKU stays one across on-demand, spot and
// commitments (FOCUS: "SkuId MUST remain consistent across PricingCategory values") while
// SkuPriceId, the offering id, tells the prices apart.
std::string SkuIdOf(const pricing::Offering& o) {
    const std::string suffix = "-" + Dashed(pricing::PriceTypeName(o.price_type));
    if (o.id.size() > suffix.size() &&
        o.id.compare(o.id.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return o.id.substr(0, o.id.size() - suffix.size());
    }
    return o.provider + "-" + o.instance_type + "-" + o.region;
}

// Accelerators FOCUS's GpuCount counts: GPUs (NVIDIA's and AMD's), not TPU chips or Neuron
// and Gaudi devices.
constexpr std::array<std::string_view, 2> kGpuVendors = {"NVIDIA", "AMD"};
constexpr char kTpuVendor[] = "Google";

// The vendor of the offering's accelerator (empty when the plan's catalog is not at hand).
std::string VendorOf(const pricing::Offering& o, const FocusContext& context) {
    if (context.view == nullptr) return "";
    auto accelerator = context.view->catalog->FindAccelerator(o.accelerator);
    return accelerator.ok() ? accelerator.value().vendor : "";
}

// FOCUS's SKU price properties of an instance offering: InstanceType, GpuCount (GPUs only) and
// the price type (x_PriceType: on demand, spot, a commitment's term, a capacity block).
std::string PriceDetails(const pricing::Offering& o, const std::string& vendor) {
    nlohmann::json details = {{"InstanceType", o.instance_type},
                              {"x_PriceType", pricing::PriceTypeName(o.price_type)}};
    if (std::find(kGpuVendors.begin(), kGpuVendors.end(), vendor) != kGpuVendors.end()) {
        details["GpuCount"] = o.accelerator_count;
    }
    return details.dump();
}

// One row: column -> cell; a column absent is null.
using Cells = std::map<std::string, std::string>;

void Set(Cells& row, const std::string& column, std::string value) {
    row[column] = std::move(value);
}

// Who provides a charge, what and where: the offering's, else the owned hardware's or the
// quoted rent's. A compute charge on an offering runs on a planned resource; storage and
// egress are not charges of a resource in the forecast.
void SetProvenance(const ForecastCharge& c, const FocusContext& context, Cells& row) {
    if (c.offering != nullptr) {
        const pricing::Offering& o = *c.offering;
        const Names names = NamesOf(o.provider);
        Set(row, "ProviderName", names.provider);
        Set(row, "PublisherName", names.publisher);
        Set(row, "InvoiceIssuerName", names.provider);
        Set(row, "RegionId", o.region);
        Set(row, "RegionName", o.region);
        if (c.kind == ChargeKind::kCompute) {
            const std::string sku = SkuIdOf(o);
            const std::string vendor = VendorOf(o, context);
            Set(row, "ServiceName",
                vendor == kTpuVendor && !names.tpu.empty() ? names.tpu : names.compute);
            Set(row, "ServiceSubcategory", "Virtual Machines");
            Set(row, "SkuId", sku);
            Set(row, "SkuPriceId", o.id);
            Set(row, "SkuMeter", "Instance Hours");
            Set(row, "SkuPriceDetails", PriceDetails(o, vendor));
            Set(row, "ResourceId", "gpucost-forecast/" + context.plan_kind + "/" + sku);
            Set(row, "ResourceName",
                (c.nodes > 0 ? std::to_string(c.nodes) + " x " : "") + o.instance_type +
                    " (planned)");
            Set(row, "ResourceType", "Virtual Machine");
            Set(row, "x_Accelerator", o.accelerator);
            if (c.nodes > 0) {
                Set(row, "x_Accelerators", std::to_string(o.accelerator_count * c.nodes));
                Set(row, "x_Nodes", std::to_string(c.nodes));
            }
            return;
        }
        const bool storage = c.kind == ChargeKind::kStorage;
        const std::string sku = o.provider + (storage ? "-object-storage" : "-internet-egress");
        Set(row, "ServiceName", storage ? names.storage : names.egress);
        Set(row, "ServiceSubcategory", storage ? "Object Storage" : "Network Connectivity");
        Set(row, "SkuId", sku);
        Set(row, "SkuPriceId", sku + "-" + o.region);
        Set(row, "SkuMeter", storage ? "Storage" : "Data Transfer Out");
        return;
    }
    const bool owned = c.kind == ChargeKind::kHardware || c.kind == ChargeKind::kOperations;
    const std::string provider = owned ? kOwnedProviderName : kQuotedProviderName;
    const std::string what = c.accelerator.empty() ? "accelerators" : c.accelerator;
    Set(row, "ProviderName", provider);
    Set(row, "PublisherName", provider);
    Set(row, "InvoiceIssuerName", provider);
    Set(row, "x_Accelerator", c.accelerator);
    if (c.accelerators > 0) Set(row, "x_Accelerators", std::to_string(c.accelerators));
    if (!owned) {
        Set(row, "ServiceName", "Rented accelerators");
        Set(row, "ServiceSubcategory", "Virtual Machines");
        Set(row, "SkuId", "quoted-rent-" + what);
        Set(row, "SkuPriceId", "quoted-rent-" + what);
        Set(row, "SkuMeter", "Rent");
        return;
    }
    const bool hardware = c.kind == ChargeKind::kHardware;
    Set(row, "ServiceName", hardware ? "Owned accelerators" : "Owned accelerator operations");
    Set(row, "ServiceSubcategory", hardware ? "Virtual Machines" : "Other (Compute)");
    const std::string sku = (hardware ? "owned-hardware-" : "owned-operations-") + what;
    Set(row, "SkuId", sku);
    Set(row, "SkuPriceId", sku);
    Set(row, "SkuMeter", hardware ? "Owned Hardware" : "Operations");
    Set(row, "ResourceId", "gpucost-forecast/" + context.plan_kind + "/owned/" + what);
    Set(row, "ResourceName",
        (c.accelerators > 0 ? std::to_string(c.accelerators) + " x " : "") + what + " (owned)");
    Set(row, "ResourceType", "Server");
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

// FOCUS PricingCategory of a charge not paid ahead: Standard (list or negotiated rate),
// Dynamic (spot), Committed (a book's owned capacity: a commitment discount), Other (owned
// hardware's amortisation: a pricing model FOCUS has no category for).
const char* PricingCategory(const ForecastCharge& c) {
    if (c.kind == ChargeKind::kHardware && c.category == ChargeCategoryKind::kUsage) {
        return "Other";
    }
    if (c.owned) return "Committed";
    if (c.kind == ChargeKind::kCompute && c.offering != nullptr &&
        c.offering->price_type == pricing::PriceType::kSpot) {
        return "Dynamic";
    }
    return "Standard";
}

std::string OfferingDescription(const ForecastCharge& c, const pricing::Offering& o) {
    if (c.unused) {
        return o.instance_type + " in " + o.region +
               ": owned capacity (price book) reserved and not used by any plan";
    }
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

// Quantity, unit prices and the costs they make: list and contracted are unit price x
// quantity (FOCUS's product rules); billed and effective as given.
void SetPricing(Cells& row, double quantity, const char* unit, double list_unit_price_usd,
                double contracted_unit_price_usd, double billed_usd, double effective_usd) {
    Set(row, "PricingQuantity", CsvNumber(quantity));
    Set(row, "PricingUnit", unit);
    Set(row, "ListUnitPrice", CsvNumber(list_unit_price_usd));
    Set(row, "ListCost", CsvNumber(list_unit_price_usd * quantity));
    Set(row, "ContractedUnitPrice", CsvNumber(contracted_unit_price_usd));
    Set(row, "ContractedCost", CsvNumber(contracted_unit_price_usd * quantity));
    Set(row, "BilledCost", CsvNumber(billed_usd));
    Set(row, "EffectiveCost", CsvNumber(effective_usd));
}

// What every row of a charge carries: account, periods, provenance, tags, book.
Cells BaseRow(const ForecastCharge& c, const FocusContext& context) {
    Cells row;
    Set(row, "BillingAccountId", kForecastAccountId);
    Set(row, "BillingAccountName", kForecastAccountName);
    Set(row, "BillingCurrency", kBillingCurrency);
    Set(row, "PricingCurrency", kBillingCurrency);
    Set(row, "BillingPeriodStart", DateTime(c.period_start));
    Set(row, "BillingPeriodEnd", DateTime(c.period_end));
    Set(row, "ChargePeriodStart", DateTime(c.period_start));
    Set(row, "ChargePeriodEnd", DateTime(c.period_end));
    Set(row, "ChargeCategory", c.category == ChargeCategoryKind::kUsage ? "Usage" : "Purchase");
    Set(row, "ChargeDescription", Description(c));
    Set(row, "ChargeFrequency",
        c.category == ChargeCategoryKind::kPurchase ? "One-Time"
                                                    : (c.recurring ? "Recurring" : "Usage-Based"));
    Set(row, "ServiceCategory", ServiceCategory(c.kind));
    SetProvenance(c, context, row);
    Set(row, "PricingCategory", PricingCategory(c));
    Set(row, "Tags", Tags(c, context));
    Set(row, "x_PricingBasis", context.pricing_basis);
    Set(row, "x_PriceBook", context.price_book);
    Set(row, "x_PriceBookId", context.price_book_id);
    if (context.price_book_version) {
        Set(row, "x_PriceBookVersion", std::to_string(*context.price_book_version));
    }
    return row;
}

// The on-demand list and contracted price per hour of the instance `o` runs on (what its
// hours cost before a commitment's discount), where the catalog has that offering; else
// `fallback`.
std::pair<double, double> BeforeCommitment(const pricing::Offering& o, const FocusContext& context,
                                           std::pair<double, double> fallback) {
    if (context.view == nullptr || o.price_type == pricing::PriceType::kOnDemand) return fallback;
    auto found = context.view->catalog->FindOffering(
        SkuIdOf(o) + "-" + Dashed(pricing::PriceTypeName(pricing::PriceType::kOnDemand)));
    if (!found.ok()) return fallback;
    double list = found.value().price.usd_per_hour;
    if (context.view->priced) {
        if (const pricing::AppliedPrice* p = context.view->priced->PriceOf(found.value().id)) {
            list = p->list_usd_per_hour;
        }
    }
    return {list, found.value().price.usd_per_hour};
}

// The commitment a book's owned capacity is: named by the book and the offering it reserves.
void SetOwnedCommitment(const ForecastCharge& c, const FocusContext& context, Cells& row) {
    const pricing::Offering& o = *c.offering;
    const std::string book =
        !context.price_book_id.empty() ? context.price_book_id : context.price_book;
    const std::string id = "price-book/" + book + "/owned/" + o.id;
    Set(row, "CommitmentDiscountId", id);
    Set(row, "CommitmentDiscountName",
        "owned capacity: " + o.instance_type + " in " + o.region + " (" + context.price_book + ")");
    Set(row, "CommitmentDiscountType", NamesOf(o.provider).commitment_type);
    Set(row, "CommitmentDiscountCategory", "Usage");
    Set(row, "CommitmentDiscountStatus", c.unused ? "Unused" : "Used");
    Set(row, "CommitmentDiscountQuantity", CsvNumber(c.pricing_quantity));
    Set(row, "CommitmentDiscountUnit", kHoursUnit);
    if (c.unused) {
        // FOCUS: an unused commitment's row names the commitment as its resource.
        Set(row, "ResourceId", id);
        Set(row, "ResourceName", row["CommitmentDiscountName"]);
        Set(row, "ResourceType", "Commitment");
    }
}

// One row of a charge not paid ahead.
Cells Row(const ForecastCharge& c, const FocusContext& context) {
    Cells row = BaseRow(c, context);
    const bool owned_capacity = c.owned && c.offering != nullptr;
    // Owned capacity's hours before the commitment: the offering's contracted price.
    const double contracted =
        owned_capacity ? c.offering->price.usd_per_hour : c.effective_unit_price_usd;
    SetPricing(row, c.pricing_quantity, c.pricing_unit, c.list_unit_price_usd, contracted,
               c.billed_cost_usd.value_or(c.effective_cost_usd), c.effective_cost_usd);
    if (c.contracted_cost_usd) Set(row, "ContractedCost", CsvNumber(*c.contracted_cost_usd));
    if (c.category == ChargeCategoryKind::kUsage && !c.unused) {
        Set(row, "ConsumedQuantity", CsvNumber(c.pricing_quantity));
        Set(row, "ConsumedUnit", c.pricing_unit);
    }
    if (c.accelerator_hours > 0) Set(row, "x_AcceleratorHours", CsvNumber(c.accelerator_hours));
    if (c.cost_usd_p10) Set(row, "x_CostP10", CsvNumber(*c.cost_usd_p10));
    if (c.cost_usd_p90) Set(row, "x_CostP90", CsvNumber(*c.cost_usd_p90));
    if (owned_capacity) SetOwnedCommitment(c, context, row);
    return row;
}

// A charge paid ahead for reserved hours: its purchase (a commitment term's month, Recurring;
// a capacity block, One-Time), billed and amortised into the hours it reserves, each month
// the run's hours (Used) and the rest (Unused). A commitment's hours are Committed, priced
// before its discount at the instance's on-demand price; a capacity block's are Standard at
// its own price.
void AppendPaidAhead(const ForecastCharge& c, const FocusContext& context,
                     std::vector<Cells>& rows) {
    const pricing::Offering& o = *c.offering;
    const bool block = o.price_type == pricing::PriceType::kCapacityBlock;
    const std::string id = "gpucost-forecast/" + context.plan_kind +
                           (block ? "/capacity-block/" : "/commitment/") + o.id + "/" +
                           c.reserved_from;
    const std::string name = (block ? "planned capacity block of " : "planned commitment of ") +
                             std::to_string(c.nodes) + " x " + o.instance_type + " in " + o.region;
    const double billed = c.billed_cost_usd.value_or(c.effective_cost_usd);
    Cells purchase = BaseRow(c, context);
    Set(purchase, "ChargeCategory", "Purchase");
    Set(purchase, "ChargeFrequency", block ? "One-Time" : "Recurring");
    Set(purchase, "PricingCategory", "Standard");
    SetPricing(purchase, c.pricing_quantity, c.pricing_unit, c.list_unit_price_usd,
               c.effective_unit_price_usd, billed, 0);
    Set(purchase, "ResourceId", id);
    Set(purchase, "ResourceName", name);
    Set(purchase, "ResourceType", block ? "Capacity Block" : "Commitment");
    if (c.cost_usd_p10) Set(purchase, "x_CostP10", CsvNumber(*c.cost_usd_p10));
    if (c.cost_usd_p90) Set(purchase, "x_CostP90", CsvNumber(*c.cost_usd_p90));
    auto reservation = [&](Cells& row, const char* status, double quantity) {
        if (block) {
            Set(row, "CapacityReservationId", id);
            if (status != nullptr) Set(row, "CapacityReservationStatus", status);
            return;
        }
        Set(row, "CommitmentDiscountId", id);
        Set(row, "CommitmentDiscountName", name);
        Set(row, "CommitmentDiscountType", NamesOf(o.provider).commitment_type);
        Set(row, "CommitmentDiscountCategory", "Usage");
        if (status != nullptr) Set(row, "CommitmentDiscountStatus", status);
        Set(row, "CommitmentDiscountQuantity", CsvNumber(quantity));
        Set(row, "CommitmentDiscountUnit", kHoursUnit);
    };
    reservation(purchase, nullptr, c.pricing_quantity);
    rows.push_back(std::move(purchase));
    const auto [list, contracted] =
        block ? std::make_pair(c.list_unit_price_usd, c.effective_unit_price_usd)
              : BeforeCommitment(o, context, {c.list_unit_price_usd, c.effective_unit_price_usd});
    for (const pricing::plan::ReservedMonth& m : c.reserved_months) {
        for (const bool used : {true, false}) {
            const double hours =
                used ? m.used_instance_hours : m.reserved_instance_hours - m.used_instance_hours;
            if (hours <= pricing::kOwnedHoursResidue) continue;
            ForecastCharge part = c;
            part.category = ChargeCategoryKind::kUsage;
            part.recurring = false;
            Cells row = BaseRow(part, context);
            Set(row, "ChargePeriodStart", DateTime(m.period_start));
            Set(row, "BillingPeriodStart", DateTime(m.period_start));
            Set(row, "ChargePeriodEnd", DateTime(m.period_end));
            Set(row, "BillingPeriodEnd", DateTime(m.period_end));
            Set(row, "PricingCategory", block ? "Standard" : "Committed");
            const double share = c.pricing_quantity > 0 ? hours / c.pricing_quantity : 0;
            SetPricing(row, hours, kHoursUnit, list, contracted, 0, c.effective_cost_usd * share);
            Set(row, "ChargeDescription",
                name + (used ? ": hours the run uses" : ": reserved hours the run does not use"));
            // An unused commitment has nothing consumed; FOCUS asks a capacity reservation's
            // unused row for its quantity all the same.
            if (used || block) {
                Set(row, "ConsumedQuantity", CsvNumber(hours));
                Set(row, "ConsumedUnit", kHoursUnit);
            }
            if (used) {
                Set(row, "x_AcceleratorHours", CsvNumber(hours * o.accelerator_count));
            } else {
                Set(row, "ResourceId", id);
                Set(row, "ResourceName", name);
                Set(row, "ResourceType", block ? "Capacity Block" : "Commitment");
            }
            reservation(row, used ? "Used" : "Unused", hours);
            rows.push_back(std::move(row));
        }
    }
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
    const std::string accept = pricing::LowerAscii(req.get_header_value("Accept"));
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
                                                      "CapacityReservationId",
                                                      "CapacityReservationStatus",
                                                      "ChargeCategory",
                                                      "ChargeClass",
                                                      "ChargeDescription",
                                                      "ChargeFrequency",
                                                      "ChargePeriodEnd",
                                                      "ChargePeriodStart",
                                                      "CommitmentDiscountCategory",
                                                      "CommitmentDiscountId",
                                                      "CommitmentDiscountName",
                                                      "CommitmentDiscountQuantity",
                                                      "CommitmentDiscountStatus",
                                                      "CommitmentDiscountType",
                                                      "CommitmentDiscountUnit",
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
                                                      "ServiceSubcategory",
                                                      "SkuId",
                                                      "SkuMeter",
                                                      "SkuPriceDetails",
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
                                                      "x_PriceBook",
                                                      "x_PriceBookId",
                                                      "x_PriceBookVersion"};
    return kColumns;
}

CsvTable FocusForecastCsv(const std::vector<ForecastCharge>& charges, const FocusContext& context) {
    CsvTable table;
    table.header = FocusColumns();
    std::vector<Cells> rows;
    for (const ForecastCharge& c : charges) {
        if (!c.reserved_months.empty() && c.offering != nullptr) {
            AppendPaidAhead(c, context, rows);
        } else {
            rows.push_back(Row(c, context));
        }
    }
    for (Cells& row : rows) {
        std::vector<std::string> cells;
        cells.reserve(table.header.size());
        for (const std::string& column : table.header) cells.push_back(std::move(row[column]));
        table.rows.push_back(std::move(cells));
    }
    return table;
}

namespace {

FocusContext ContextFor(const char* plan_kind, const std::string& catalog_version,
                        const FocusTags& tags) {
    FocusContext context;
    context.plan_kind = plan_kind;
    context.catalog_version = catalog_version;
    context.tags = tags;
    return context;
}

// The list price of `offering` (its price without a book) and the basis the rows name.
double ListPriceFor(const pricing::Offering* offering, const PricingView& view,
                    FocusContext& context) {
    context.view = &view;
    if (view.priced) {
        context.pricing_basis = "price_book";
        context.price_book = view.priced->Book().name;
        context.price_book_id = view.priced->Book().id;
        context.price_book_version = view.priced->Book().version;
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
    FocusContext context = ContextFor("training", plan.catalog_version, tags);
    const double list_usd_per_hour =
        ListPriceFor(plan.recommendation ? plan.recommendation->offering : nullptr, view, context);
    return FocusForecastCsv(
        pricing::plan::WithUnusedOwned(
            pricing::plan::ForecastTraining(plan, request, list_usd_per_hour), OwnedOf(view)),
        context);
}

CsvTable ServingFocusCsv(const std::optional<pricing::plan::InferencePlanOption>& recommendation,
                         const std::optional<pricing::plan::ServingBudgetView>& budget,
                         const std::string& catalog_version, const PricingView& view,
                         const FocusTags& tags) {
    FocusContext context = ContextFor("serving", catalog_version, tags);
    if (!recommendation || !budget) return FocusForecastCsv({}, context);
    const double list_usd_per_hour = ListPriceFor(recommendation->offering, view, context);
    const std::vector<pricing::OwnedCapacity>& owned = OwnedOf(view);
    return FocusForecastCsv(
        pricing::plan::WithUnusedOwned(
            pricing::plan::ForecastServing(*recommendation, *budget, list_usd_per_hour, owned),
            owned),
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
    FocusContext context = ContextFor("rent-vs-buy", plan.catalog_version, tags);
    const std::optional<pricing::Offering> rented =
        RentedOffering(plan, rent_offering_id, *view.catalog);
    const pricing::Offering* offering = rented ? &*rented : nullptr;
    const double list_usd_per_hour = ListPriceFor(offering, view, context);
    return FocusForecastCsv(
        pricing::plan::WithUnusedOwned(
            pricing::plan::ForecastRentVsBuy(plan, offering, list_usd_per_hour, first_month),
            OwnedOf(view)),
        context);
}

}  // namespace gpucost::http
