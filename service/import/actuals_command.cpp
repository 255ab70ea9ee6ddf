#include "service/import/actuals_command.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "service/http/csv_writer.hpp"
#include "service/http/json_codec.hpp"
#include "service/import/focus_actuals.hpp"
#include "service/import/import_command.hpp"

namespace gpucost::import {
namespace {

using nlohmann::json;

struct ActualsArgs {
    std::vector<std::string> files;
    FocusReadOptions options;
    std::string into;
};

constexpr char kUsage[] =
    "usage: gpucost actuals import focus FILE... [--tag-key KEY] [--into STORE.csv]\n";

bool ParseArgs(const std::vector<std::string>& args, ActualsArgs& out) {
    if (args.size() < 3 || args[0] != "import" || args[1] != "focus") return false;
    for (std::size_t i = 2; i < args.size(); ++i) {
        if (args[i] == "--tag-key" || args[i] == "--into") {
            if (i + 1 >= args.size() || args[i + 1].empty()) return false;
            (args[i] == "--tag-key" ? out.options.tag_key : out.into) = args[i + 1];
            ++i;
        } else if (args[i].rfind("--", 0) == 0) {
            return false;
        } else {
            out.files.push_back(args[i]);
        }
    }
    return !out.files.empty();
}

std::vector<std::string> StoreRow(const pricing::ActualCharge& c) {
    return {c.row_id, c.provider, c.month, c.charge_period_start, c.billing_currency, c.sku,
            c.offering_id, c.accelerator, c.region, c.pricing_category,
            http::CsvNumber(c.accelerator_hours), http::CsvNumber(c.billed_cost),
            http::CsvNumber(c.effective_cost), http::CsvNumber(c.list_cost), c.tag_value};
}

// Row ids already in the store (its first column); an absent store is empty.
std::set<std::string> StoredIds(const std::string& path) {
    std::set<std::string> ids;
    std::ifstream in(path);
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
        if (header) {
            header = false;
            continue;
        }
        ids.insert(line.substr(0, line.find(',')));
    }
    return ids;
}

json TotalsJson(const pricing::ActualTotals& t) {
    return {{"rows", t.rows},
            {"accelerator_hours", http::Num(t.accelerator_hours)},
            {"billed_cost", http::Num(t.billed_cost)},
            {"effective_cost", http::Num(t.effective_cost)},
            {"list_cost", http::Num(t.list_cost)}};
}

json ReportJson(const pricing::ActualsReport& r, const ActualsArgs& args, std::size_t added,
                std::size_t already) {
    json by_currency = json::object();
    for (const auto& [currency, t] : r.by_currency) by_currency[currency] = TotalsJson(t);
    json by_month = json::array();
    for (const auto& [key, t] : r.by_currency_month) {
        json row = TotalsJson(t);
        row["currency"] = key.first;
        row["month"] = key.second;
        by_month.push_back(std::move(row));
    }
    json by_tag = json::array();
    for (const auto& [key, t] : r.by_currency_tag) {
        json row = TotalsJson(t);
        row["currency"] = key.first;
        row["tag_value"] = key.second.empty() ? json(nullptr) : json(key.second);
        by_tag.push_back(std::move(row));
    }
    return {{"files", args.files},
            {"tag_key", args.options.tag_key},
            {"rows_read", r.rows_read},
            {"kept", r.kept},
            {"skipped", r.skipped},
            {"skipped_examples", r.skipped_examples},
            {"added", args.into.empty() ? json(nullptr) : json(added)},
            {"already_imported", args.into.empty() ? json(nullptr) : json(already)},
            {"by_currency", std::move(by_currency)},
            {"by_month", std::move(by_month)},
            {"by_tag", std::move(by_tag)}};
}

}  // namespace

const std::vector<std::string>& ActualsStoreColumns() {
    static const std::vector<std::string> kColumns = {
        "row_id", "provider", "month", "charge_period_start", "billing_currency", "sku",
        "offering_id", "accelerator", "region", "pricing_category", "accelerator_hours",
        "billed_cost", "effective_cost", "list_cost", "tag_value"};
    return kColumns;
}

int RunActualsCommand(const std::vector<std::string>& args, const pricing::Catalog& catalog,
                      const Mappings& mappings, std::FILE* out, std::FILE* err) {
    ActualsArgs parsed;
    if (!ParseArgs(args, parsed)) {
        std::fputs(kUsage, err);
        return kImportBadInput;
    }
    const std::set<std::string> stored = parsed.into.empty() ? std::set<std::string>{}
                                                             : StoredIds(parsed.into);
    http::CsvTable fresh;
    fresh.header = ActualsStoreColumns();
    std::size_t already = 0;
    std::set<std::string> batch;
    pricing::ActualsReport report;
    for (const std::string& file : parsed.files) {
        auto status = ReadFocusExport(file, parsed.options, catalog, mappings, report,
                                      [&](const pricing::ActualCharge& c) {
                                          if (stored.count(c.row_id) || !batch.insert(c.row_id).second) {
                                              ++already;
                                          } else if (!parsed.into.empty()) {
                                              fresh.rows.push_back(StoreRow(c));
                                          }
                                      });
        if (!status.ok()) {
            std::fprintf(err, "gpucost actuals: %s\n", status.error().message.c_str());
            return status.error().code == pricing::ErrorCode::kNotFound ? kImportFailed
                                                                        : kImportBadInput;
        }
    }
    if (!parsed.into.empty() && !fresh.rows.empty()) {
        std::string text = http::ToCsv(fresh);
        if (!stored.empty() || std::ifstream(parsed.into).good()) {
            text.erase(0, text.find('\n') + 1);  // the store has its header already
        }
        std::ofstream store(parsed.into, std::ios::app | std::ios::binary);
        store << text;
        if (!store) {
            std::fprintf(err, "gpucost actuals: cannot write %s\n", parsed.into.c_str());
            return kImportFailed;
        }
    }
    std::string text = ReportJson(report, parsed, fresh.rows.size(), already).dump(2);
    std::fprintf(out, "%s\n", text.c_str());
    return kImportOk;
}

}  // namespace gpucost::import
