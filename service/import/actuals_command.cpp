#include "service/import/actuals_command.hpp"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pricing/money.hpp"
#include "pricing/plan_vs_actual.hpp"
#include "pricing/usd_sum.hpp"
#include "service/import/focus_actuals.hpp"
#include "service/import/import_command.hpp"
#include "service/import/row_hash_set.hpp"
#include "service/ports/actuals_store.hpp"
#include "service/text/actuals_report_json.hpp"
#include "service/text/csv_text.hpp"
#include "service/text/json_text.hpp"

namespace gpucost::import {
namespace {

using nlohmann::json;

struct ActualsArgs {
    std::vector<std::string> files;
    FocusReadOptions options;
    std::string into;
    std::string team = "default";  // who owns the imports in the database
};

constexpr char kUsage[] =
    "usage: gpucost actuals import focus FILE... [--tag-key KEY] [--group-by KEY]\n"
    "                                   [--into STORE.csv]\n"
    "                                   [--team TEAM] (with DATABASE_URL and no --into)\n"
    "       gpucost actuals compare --plan FORECAST.csv --actuals STORE.csv [--tag VALUE]\n"
    "                               [--currency USD]\n";

struct CompareArgs {
    std::string plan;
    std::string actuals;
    std::string tag;  // empty: every row
    std::string currency = "USD";
};

bool ParseCompareArgs(const std::vector<std::string>& args, CompareArgs& out) {
    if (args.empty() || args[0] != "compare") return false;
    for (std::size_t i = 1; i < args.size(); i += 2) {
        if (i + 1 >= args.size() || args[i + 1].empty()) return false;
        const std::string& value = args[i + 1];
        if (args[i] == "--plan") {
            out.plan = value;
        } else if (args[i] == "--actuals") {
            out.actuals = value;
        } else if (args[i] == "--tag") {
            out.tag = value;
        } else if (args[i] == "--currency") {
            out.currency = value;
        } else {
            return false;
        }
    }
    return !out.plan.empty() && !out.actuals.empty();
}

// Rows of a small CSV file (one record per line) as column -> value maps; nullopt when it
// cannot be read.
std::optional<std::vector<std::map<std::string, std::string>>> ReadCsvRows(
    const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::vector<std::map<std::string, std::string>> rows;
    std::string line;
    std::vector<std::string> header;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        auto cells = ParseCsvRecord(line);
        if (header.empty()) {
            header = std::move(cells);
            continue;
        }
        std::map<std::string, std::string> row;
        for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i)
            row[header[i]] = cells[i];
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string Cell(const std::map<std::string, std::string>& row, const std::string& column) {
    auto it = row.find(column);
    return it == row.end() ? "" : it->second;
}

double NumberOr0(const std::string& text) {
    try {
        return text.empty() ? 0 : std::stod(text);
    } catch (const std::exception&) {
        return 0;
    }
}

// Money as answers state it (docs/api.md "Money"): costs to the cent, the rate to 1e-6.
json FiguresJson(const pricing::SpendFigures& f) {
    return {{"accelerator_hours", text::Num(f.accelerator_hours)},
            {"effective_cost", text::Num(pricing::RoundToCents(f.effective_cost))},
            {"list_cost", text::Num(pricing::RoundToCents(f.list_cost))},
            {"effective_per_accelerator_hour",
             text::Num(pricing::RoundToMicroUsd(f.EffectivePerAcceleratorHour()))}};
}

// One month's rows added up: the costs exactly (pricing::UsdSum), whatever the number of rows.
struct MonthSums {
    double accelerator_hours = 0;
    pricing::UsdSum effective_cost;
    pricing::UsdSum list_cost;
    void Add(double hours, double effective, double list) {
        accelerator_hours += hours;
        effective_cost.Add(effective);
        list_cost.Add(list);
    }
};

std::map<std::string, pricing::SpendFigures> ToFigures(
    const std::map<std::string, MonthSums>& sums) {
    std::map<std::string, pricing::SpendFigures> out;
    for (const auto& [month, s] : sums) {
        out[month] = {s.accelerator_hours, s.effective_cost.RoundedToCents(),
                      s.list_cost.RoundedToCents()};
    }
    return out;
}

// Planned accelerator charges (rows with x_AcceleratorHours) and imported actuals, by month.
int RunCompare(const CompareArgs& args, std::FILE* out, std::FILE* err) {
    auto plan = ReadCsvRows(args.plan);
    auto actuals = ReadCsvRows(args.actuals);
    if (!plan || !actuals) {
        std::fprintf(err, "gpucost actuals: cannot read %s\n",
                     (plan ? args.actuals : args.plan).c_str());
        return kImportFailed;
    }
    std::map<std::string, MonthSums> planned;
    for (const auto& row : *plan) {
        auto hours = row.find("x_AcceleratorHours");
        if (hours == row.end() || hours->second.empty()) continue;
        if (row.count("BillingCurrency") && Cell(row, "BillingCurrency") != args.currency) continue;
        planned[Cell(row, "ChargePeriodStart").substr(0, 7)].Add(
            NumberOr0(hours->second), NumberOr0(Cell(row, "EffectiveCost")),
            NumberOr0(Cell(row, "ListCost")));
    }
    std::map<std::string, MonthSums> actual;
    for (const auto& row : *actuals) {
        if (Cell(row, "billing_currency") != args.currency) continue;
        if (!args.tag.empty() && Cell(row, "tag_value") != args.tag) continue;
        actual[Cell(row, "month")].Add(NumberOr0(Cell(row, "accelerator_hours")),
                                       NumberOr0(Cell(row, "effective_cost")),
                                       NumberOr0(Cell(row, "list_cost")));
    }
    const pricing::PlanVsActual r =
        pricing::ComparePlanToActual(ToFigures(planned), ToFigures(actual), args.currency);
    json months = json::array();
    for (const auto& m : r.months) {
        months.push_back({{"month", m.month},
                          {"planned", FiguresJson(m.planned)},
                          {"actual", FiguresJson(m.actual)}});
    }
    json answer = {{"currency", args.currency},
                   {"tag", args.tag.empty() ? json(nullptr) : json(args.tag)},
                   {"planned", FiguresJson(r.planned)},
                   {"actual", FiguresJson(r.actual)},
                   {"by_month", std::move(months)},
                   {"gap", text::Num(r.gap)},
                   {"price_effect", text::Num(r.price_effect)},
                   {"quantity_effect", text::Num(r.quantity_effect)},
                   {"explanation", r.explanation}};
    std::fprintf(out, "%s\n", text::ToJsonText(answer, 2).c_str());
    return kImportOk;
}

bool ParseArgs(const std::vector<std::string>& args, ActualsArgs& out) {
    if (args.size() < 3 || args[0] != "import" || args[1] != "focus") return false;
    for (std::size_t i = 2; i < args.size(); ++i) {
        if (args[i] == "--tag-key" || args[i] == "--group-by" || args[i] == "--into" ||
            args[i] == "--team") {
            if (i + 1 >= args.size() || args[i + 1].empty()) return false;
            (args[i] == "--tag-key"    ? out.options.tag_key
             : args[i] == "--group-by" ? out.options.group_by
             : args[i] == "--into"     ? out.into
                                       : out.team) = args[i + 1];
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
    return {c.row_id,
            c.provider,
            c.month,
            c.charge_period_start,
            c.billing_currency,
            c.sku,
            c.offering_id,
            c.accelerator,
            c.region,
            c.pricing_category,
            text::CsvNumber(c.accelerator_hours),
            text::CsvNumber(c.billed_cost),
            text::CsvNumber(c.effective_cost),
            text::CsvNumber(c.list_cost),
            c.tag_value};
}

// The row ids of the store and of the rows read so far. An id in the reader's form (16 hex
// digits, focus_actuals.cpp) is held as its 64-bit value in a RowHashSet: about 16 bytes a
// row, where the ids as strings in a std::set took about 110.
class KnownRowIds {
public:
    // True when `id` was not known (it is now).
    bool Insert(const std::string& id) {
        if (auto value = HexValue(id)) return hex_.Insert(*value);
        return other_.insert(id).second;
    }

private:
    static std::optional<std::uint64_t> HexValue(const std::string& id) {
        if (id.size() != 16) return std::nullopt;
        std::uint64_t value = 0;
        for (char c : id) {
            const int digit = c >= '0' && c <= '9'   ? c - '0'
                              : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                                     : -1;
            if (digit < 0) return std::nullopt;
            value = value << 4 | static_cast<std::uint64_t>(digit);
        }
        return value;
    }
    RowHashSet hex_;
    std::set<std::string> other_;  // ids a hand-edited store holds in another form
};

// Row ids already in the store (its first column); an absent store has none.
void ReadStoredIds(const std::string& path, KnownRowIds& ids) {
    std::ifstream in(path);
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
        if (header) {
            header = false;
            continue;
        }
        ids.Insert(line.substr(0, line.find(',')));
    }
}

// Store rows written per ToCsv call: the spool holds one batch in memory at a time.
constexpr std::size_t kStoreRowsPerWrite = 4096;

// The kept rows new to the store, spooled to a temporary file as they are read and appended to
// the store only after every export has been read: a file that fails leaves the store as it
// was, and memory does not grow with the rows.
class StoreSpool {
public:
    // False when no temporary file can be made.
    bool Open() {
        file_.reset(std::tmpfile());
        batch_.header = ActualsStoreColumns();
        return file_ != nullptr;
    }
    void Add(const pricing::ActualCharge& c) {
        batch_.rows.push_back(StoreRow(c));
        ++rows_;
        if (batch_.rows.size() >= kStoreRowsPerWrite) Flush();
    }
    std::size_t rows() const { return rows_; }
    // Appends the spooled rows to `path` (with the header when the store is new); false when
    // a write failed.
    bool AppendTo(const std::string& path) {
        Flush();
        const bool is_new = !std::ifstream(path).good();
        std::ofstream store(path, std::ios::app | std::ios::binary);
        if (is_new) store << text::ToCsv(text::CsvTable{batch_.header, {}});
        std::rewind(file_.get());
        char chunk[1 << 16];
        while (std::size_t n = std::fread(chunk, 1, sizeof chunk, file_.get())) {
            store.write(chunk, static_cast<std::streamsize>(n));
        }
        return ok_ && !std::ferror(file_.get()) && store.flush().good();
    }

private:
    void Flush() {
        if (batch_.rows.empty()) return;
        std::string text = text::ToCsv(batch_);
        text.erase(0, text.find('\n') + 1);  // the header: written once, by AppendTo
        ok_ = ok_ && std::fwrite(text.data(), 1, text.size(), file_.get()) == text.size();
        batch_.rows.clear();
    }
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, std::fclose};
    text::CsvTable batch_;
    std::size_t rows_ = 0;
    bool ok_ = true;
};

json TotalsJson(const pricing::ActualTotals& t) {
    return {{"rows", t.rows},
            {"accelerator_hours", text::Num(t.accelerator_hours)},
            {"billed_cost", text::Num(t.billed_cost)},
            {"effective_cost", text::Num(t.effective_cost)},
            {"list_cost", text::Num(t.list_cost)}};
}

// What the kept rows did to a store: none (no --into and no database), the CSV store's rows
// added, or the database's imports (one per file).
struct Stored {
    bool any_store = false;
    std::size_t added = 0;
    std::size_t already = 0;
    json imports;  // null unless the database stored them
};

json ReportJson(const pricing::ActualsReport& r, const ActualsArgs& args, const Stored& stored) {
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
    json report = {{"files", args.files},
                   {"tag_key", args.options.tag_key},
                   {"rows_read", r.rows_read},
                   {"kept", r.kept},
                   {"skipped", r.skipped},
                   {"skipped_examples", r.skipped_examples},
                   {"added", stored.any_store ? json(stored.added) : json(nullptr)},
                   {"already_imported", stored.any_store ? json(stored.already) : json(nullptr)},
                   {"by_currency", std::move(by_currency)},
                   {"by_month", std::move(by_month)},
                   {"by_tag", std::move(by_tag)}};
    text::AddActualsFindings(r, args.options.group_by, report);
    if (!stored.imports.is_null()) {
        report["into"] = "database";
        report["imports"] = stored.imports;
    }
    return report;
}

// The kept rows of every file into the database, one import (one transaction) per file, as
// POST /v1/actuals stores a body: streamed in batches, a row the team stored already counted,
// not stored again. A file that fails stores nothing (the files before it stay imported).
pricing::Result<Stored> ImportIntoDatabase(const ActualsArgs& args, const pricing::Catalog& catalog,
                                           const Mappings& mappings, ports::ActualsStore& database,
                                           pricing::ActualsReport& report) {
    ports::WriteRequest request;
    request.principal.team = args.team;
    Stored stored{true, 0, 0, json::array()};
    for (const std::string& file : args.files) {
        // No Idempotency-Key on the command line: the answer is never recorded, only read.
        ports::ActualsImport imported;
        auto status = database.Import(
            request, args.options.tag_key,
            [&](const ports::ActualsStore::ChargeSink& sink)
                -> pricing::Result<ports::ActualsStore::ExportCounts> {
                const ports::ActualsStore::ExportCounts before{report.rows_read, report.kept};
                auto read = ReadFocusExport(file, args.options, catalog, mappings, report, sink);
                if (!read.ok()) return read.error();
                return ports::ActualsStore::ExportCounts{report.rows_read - before.rows_read,
                                                         report.kept - before.kept};
            },
            [&imported](const ports::ActualsImport& i) {
                imported = i;
                return ports::StoredResponse{};
            });
        if (!status.ok()) return status.error();
        stored.added += imported.added;
        stored.already += imported.already_imported;
        stored.imports.push_back({{"file", file},
                                  {"import_id", std::to_string(imported.id)},
                                  {"added", imported.added},
                                  {"already_imported", imported.already_imported}});
    }
    return stored;
}

// An error's exit status: a file that cannot be read or stored fails, bad input is bad input.
int ExitStatusOf(const pricing::Error& error) {
    return error.code == pricing::ErrorCode::kNotFound ||
                   error.code == pricing::ErrorCode::kUnavailable ||
                   error.code == pricing::ErrorCode::kInternal
               ? kImportFailed
               : kImportBadInput;
}

}  // namespace

const std::vector<std::string>& ActualsStoreColumns() {
    static const std::vector<std::string> kColumns = {"row_id",
                                                      "provider",
                                                      "month",
                                                      "charge_period_start",
                                                      "billing_currency",
                                                      "sku",
                                                      "offering_id",
                                                      "accelerator",
                                                      "region",
                                                      "pricing_category",
                                                      "accelerator_hours",
                                                      "billed_cost",
                                                      "effective_cost",
                                                      "list_cost",
                                                      "tag_value"};
    return kColumns;
}

int RunActualsCommand(const std::vector<std::string>& args, const pricing::Catalog& catalog,
                      const Mappings& mappings, std::FILE* out, std::FILE* err,
                      ports::ActualsStore* database) {
    if (!args.empty() && args[0] == "compare") {
        CompareArgs compare;
        if (!ParseCompareArgs(args, compare)) {
            std::fputs(kUsage, err);
            return kImportBadInput;
        }
        return RunCompare(compare, out, err);
    }
    ActualsArgs parsed;
    if (!ParseArgs(args, parsed)) {
        std::fputs(kUsage, err);
        return kImportBadInput;
    }
    pricing::ActualsReport report;
    if (parsed.into.empty() && database != nullptr) {
        auto stored = ImportIntoDatabase(parsed, catalog, mappings, *database, report);
        if (!stored.ok()) {
            std::fprintf(err, "gpucost actuals: %s\n", stored.error().message.c_str());
            return ExitStatusOf(stored.error());
        }
        std::string text = text::ToJsonText(ReportJson(report, parsed, stored.value()), 2);
        std::fprintf(out, "%s\n", text.c_str());
        return kImportOk;
    }
    KnownRowIds known;
    StoreSpool spool;
    if (!parsed.into.empty()) {
        ReadStoredIds(parsed.into, known);
        if (!spool.Open()) {
            std::fprintf(err, "gpucost actuals: cannot make a temporary file for %s\n",
                         parsed.into.c_str());
            return kImportFailed;
        }
    }
    std::size_t already = 0;
    const auto keep = [&](const pricing::ActualCharge& c) {
        if (parsed.into.empty()) return;  // no store: no ids to keep
        if (known.Insert(c.row_id)) {
            spool.Add(c);
        } else {
            ++already;
        }
    };
    for (const std::string& file : parsed.files) {
        auto status = ReadFocusExport(file, parsed.options, catalog, mappings, report, keep);
        if (!status.ok()) {
            std::fprintf(err, "gpucost actuals: %s\n", status.error().message.c_str());
            return ExitStatusOf(status.error());
        }
    }
    if (!parsed.into.empty() && spool.rows() > 0 && !spool.AppendTo(parsed.into)) {
        std::fprintf(err, "gpucost actuals: cannot write %s\n", parsed.into.c_str());
        return kImportFailed;
    }
    const Stored stored{!parsed.into.empty(), spool.rows(), already, nullptr};
    std::string text = text::ToJsonText(ReportJson(report, parsed, stored), 2);
    std::fprintf(out, "%s\n", text.c_str());
    return kImportOk;
}

}  // namespace gpucost::import
