#include "service/text/actuals_report_json.hpp"

#include "pricing/money.hpp"

namespace gpucost::text {
namespace {

// Money as answers state it (docs/api.md "Money"): costs to the cent.
json TotalsJson(const pricing::ActualTotals& t) {
    return {{"rows", t.rows},
            {"accelerator_hours", Num(t.accelerator_hours)},
            {"billed_cost", Num(pricing::RoundToCents(t.billed_cost))},
            {"effective_cost", Num(pricing::RoundToCents(t.effective_cost))},
            {"list_cost", Num(pricing::RoundToCents(t.list_cost))}};
}

json NullIfEmpty(const std::string& text) {
    return text.empty() ? json(nullptr) : json(text);
}

}  // namespace

void AddActualsFindings(const pricing::ActualsReport& r, const std::string& group_by,
                        json& report) {
    json converted = json::array();
    for (const auto& [key, rows] : r.converted_to_usd) {
        converted.push_back({{"currency", key.first}, {"rate_column", key.second}, {"rows", rows}});
    }
    json unused = json::array();
    for (const auto& [key, totals] : r.unused_commitment) {
        json row = TotalsJson(totals);
        row["currency"] = key.currency;
        row["tag_value"] = NullIfEmpty(key.tag_value);
        row["commitment_id"] = NullIfEmpty(key.commitment_id);
        unused.push_back(std::move(row));
    }
    json showback = nullptr;
    if (!group_by.empty()) {
        json groups = json::array();
        for (const auto& [key, totals] : r.by_currency_group) {
            json row = TotalsJson(totals);
            row["currency"] = key.first;
            row["value"] = NullIfEmpty(key.second);
            groups.push_back(std::move(row));
        }
        showback = {{"tag_key", group_by}, {"groups", std::move(groups)}};
    }
    report["corrections"] = r.corrections;
    report["converted_to_usd"] = std::move(converted);
    report["unused_commitment"] = std::move(unused);
    report["showback"] = std::move(showback);
}

}  // namespace gpucost::text
