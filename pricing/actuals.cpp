#include "pricing/actuals.hpp"

namespace gpucost::pricing {

const char* SkipReasonName(SkipReason reason) {
    switch (reason) {
        case SkipReason::kNonAccelerator:
            return "non_accelerator";
        case SkipReason::kCredit:
            return "credit";
        case SkipReason::kTax:
            return "tax";
        case SkipReason::kPurchase:
            return "purchase";
        case SkipReason::kAdjustment:
            return "adjustment";
        case SkipReason::kCorrection:
            return "correction";
        case SkipReason::kUnknownSku:
            return "unknown_sku";
        case SkipReason::kUnknownProvider:
            return "unknown_provider";
    }
    return "unknown";
}

void ActualTotals::Add(const ActualCharge& c) {
    ++rows;
    accelerator_hours += c.accelerator_hours;
    billed_cost += c.billed_cost;
    effective_cost += c.effective_cost;
    list_cost += c.list_cost;
}

void ActualsReport::Keep(const ActualCharge& c) {
    ++kept;
    by_currency[c.billing_currency].Add(c);
    by_currency_month[{c.billing_currency, c.month}].Add(c);
    by_currency_tag[{c.billing_currency, c.tag_value}].Add(c);
}

void ActualsReport::Skip(SkipReason reason, const std::string& example) {
    const std::string name = SkipReasonName(reason);
    ++skipped[name];
    skipped_examples.emplace(name, example);
}

}  // namespace gpucost::pricing
