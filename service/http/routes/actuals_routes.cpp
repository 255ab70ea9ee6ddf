// Actual spend in database mode (docs/billing.md): POST /v1/actuals stores the
// accelerator charges of a FOCUS export (read by service/import's reader, handed in through
// Deps), and GET /v1/scenarios/{id}/actuals sets them against a saved scenario's planned
// monthly spend (pricing::ComparePlanToActual).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pricing/money.hpp"
#include "pricing/plan_vs_actual.hpp"
#include "pricing/usd_sum.hpp"
#include "service/http/codec/idempotency.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/page_cursor.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/codec/timestamp.hpp"
#include "service/http/ports.hpp"
#include "service/http/route_table.hpp"
#include "service/http/routes/auth.hpp"
#include "service/http/routes/scenario_plan_use.hpp"
#include "service/http/routes/tag_key.hpp"
#include "service/text/actuals_report_json.hpp"

namespace gpucost::http {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

// The saved plans' budgets are in US dollars: actuals in other currencies are listed apart.
constexpr char kPlanCurrency[] = "USD";

std::string MediaTypeOf(const httplib::Request& req) {
    std::string type = req.get_header_value("Content-Type");
    type = type.substr(0, type.find(';'));
    while (!type.empty() && type.back() == ' ') type.pop_back();
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return type;
}

// The query parameter naming the FOCUS Tags key that attributes charges to scenarios.
constexpr char kTagKeyParam[] = "tag_key";

// The query parameter naming a showback Tags key (POST /v1/actuals only).
constexpr char kGroupByParam[] = "group_by";

// A Tags key given as `param` (`fallback` when absent); 1 to kMaxActualsTagKeyBytes bytes of
// UTF-8 without control characters, else 422.
pricing::Result<std::string> ReadKeyParam(const httplib::Request& req, const char* param,
                                          const std::string& fallback) {
    auto given = QueryParams(req, {param}).One(param);
    if (!given.ok()) return given.error();
    if (!given.value()) return fallback;
    auto checked = CheckActualsTagKey(*given.value(), param);
    if (!checked.ok()) return checked.error();
    return *given.value();
}

// ?tag_key=: the FOCUS Tags key whose value is a scenario's id (kActualsTagKey when absent).
pricing::Result<std::string> ReadTagKey(const httplib::Request& req) {
    return ReadKeyParam(req, kTagKeyParam, kActualsTagKey);
}

// The common start: no query parameters but `allowed`, a database with the actuals store, a
// key of `scope`.
std::optional<WriteRequest> BeginActualsCall(const Deps& deps, const httplib::Request& req,
                                             httplib::Response& res, KeyScope scope,
                                             std::initializer_list<const char*> allowed = {
                                                 kTagKeyParam}) {
    if (auto checked =
            QueryParams(req, std::set<std::string>(allowed.begin(), allowed.end())).Check();
        !checked.ok()) {
        WriteProblem(res, req, checked.error());
        return std::nullopt;
    }
    if (!deps.keys || !deps.actuals || !deps.read_focus) {
        WriteProblem(res, req,
                     MakeError(ErrorCode::kDatabaseRequired,
                               "actual spend is kept only in PostgreSQL mode: start gpucost with "
                               "DATABASE_URL"));
        return std::nullopt;
    }
    auto principal = RequireKey(deps, req, res, scope);
    if (!principal) return std::nullopt;
    WriteRequest write;
    write.principal = *principal;
    return write;
}

// The start of a write: BeginActualsCall with an admin key, then the Idempotency-Key.
std::optional<WriteRequest> BeginActualsWrite(const Deps& deps, const httplib::Request& req,
                                              httplib::Response& res) {
    auto write = BeginActualsCall(deps, req, res, KeyScope::kAdmin, {kTagKeyParam, kGroupByParam});
    if (!write || !ReadRetryHeaders(req, res, *write)) return std::nullopt;
    return write;
}

json ReportJson(const pricing::ActualsReport& r, const ActualsImport& stored,
                const FocusTagKeys& keys) {
    json report = {{"import_id", std::to_string(stored.id)},
                   {"tag_key", keys.tag_key},
                   {"rows_read", r.rows_read},
                   {"kept", r.kept},
                   {"added", stored.added},
                   {"already_imported", stored.already_imported},
                   {"skipped", r.skipped},
                   {"skipped_examples", r.skipped_examples}};
    text::AddActualsFindings(r, keys.group_by, report);
    return report;
}

// POST /v1/actuals: a FOCUS export as text/csv, by an admin key.
void ServeImport(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto write = BeginActualsWrite(deps, req, res);
    if (!write) return;
    auto tag_key = ReadTagKey(req);
    if (!tag_key.ok()) return WriteProblem(res, req, tag_key.error());
    auto group_by = ReadKeyParam(req, kGroupByParam, "");
    if (!group_by.ok()) return WriteProblem(res, req, group_by.error());
    const FocusTagKeys keys{tag_key.value(), group_by.value()};
    if (MediaTypeOf(req) != "text/csv") {
        return WriteFault(res, req, Fault::kUnsupportedMediaType,
                          "send a FOCUS export as text/csv");
    }
    pricing::ActualsReport report;
    auto stored = deps.actuals->Import(
        *write, tag_key.value(),
        [&](const ActualsStore::ChargeSink& sink) -> pricing::Result<ActualsStore::ExportCounts> {
            auto read = deps.read_focus(req.body, keys, report, sink);
            if (!read.ok()) return read.error();
            return ActualsStore::ExportCounts{report.rows_read, report.kept};
        },
        [&](const ActualsImport& imported) {
            return AnswerOf([&](httplib::Response& r) {
                WriteJson(r, ReportJson(report, imported, keys), 201);
            });
        });
    if (!stored.ok()) return WriteProblem(res, req, stored.error());
    WriteStored(res, stored.value());
}

// Money as answers state it (docs/api.md "Money"): every amount to the cent.
json ActualJson(const pricing::SpendFigures& f, std::size_t rows, double billed) {
    return {{"rows", rows},
            {"accelerator_hours", Num(f.accelerator_hours)},
            {"billed_cost_usd", Num(pricing::RoundToCents(billed))},
            {"effective_cost_usd", Num(pricing::RoundToCents(f.effective_cost))},
            {"list_cost_usd", Num(pricing::RoundToCents(f.list_cost))}};
}

struct ActualsByMonth {
    std::map<std::string, pricing::SpendFigures> figures;  // in kPlanCurrency
    std::map<std::string, std::pair<std::size_t, double>> rows_billed;
    json other_currencies = json::array();
};

ActualsByMonth SplitByCurrency(const std::vector<ActualMonth>& months) {
    ActualsByMonth out;
    for (const ActualMonth& m : months) {
        if (m.billing_currency != kPlanCurrency) {
            out.other_currencies.push_back(
                {{"currency", m.billing_currency},
                 {"month", m.month},
                 {"rows", m.rows},
                 {"effective_cost", Num(pricing::RoundToCents(m.effective_cost))}});
            continue;
        }
        out.figures[m.month] = {m.accelerator_hours, m.effective_cost, m.list_cost};
        out.rows_billed[m.month] = {m.rows, m.billed_cost};
    }
    return out;
}

// The headline a reader compares: the plan against the bill over the months billed so far
// (null before the first charge). The whole plan's figure stays in planned_usd.
json ToDateJson(const std::optional<pricing::PlanToDate>& d) {
    if (!d) return nullptr;
    return {{"through_month", d->through_month},
            {"months", d->months},
            {"planned_usd", Num(d->planned)},
            {"actual_effective_cost_usd", Num(d->actual)},
            {"gap_usd", Num(d->gap)},
            {"gap_fraction", d->gap_fraction ? json(Num(*d->gap_fraction)) : json(nullptr)}};
}

json ComparisonJson(const Scenario& s, const std::string& tag_key, bool has_budget,
                    const ActualsByMonth& actual, const pricing::PlanVsActual& r) {
    json months = json::array();
    json without = json::array();
    std::size_t total_rows = 0;
    pricing::UsdSum total_billed;
    std::string last_billed;  // the last month with charges: the bill's date
    for (const pricing::MonthComparison& m : r.months) {
        auto it = actual.rows_billed.find(m.month);
        const auto [rows, billed] =
            it == actual.rows_billed.end() ? std::pair<std::size_t, double>{0, 0} : it->second;
        total_rows += rows;
        total_billed.Add(billed);
        if (rows == 0) without.push_back(m.month);
        if (rows > 0) last_billed = m.month;
        months.push_back({{"month", m.month},
                          {"planned_usd", Num(pricing::RoundToCents(m.planned.effective_cost))},
                          {"actual", ActualJson(m.actual, rows, billed)},
                          {"has_actuals", rows > 0},
                          {"gap_usd", Num(m.split.gap)}});
    }
    return {{"scenario_id", std::to_string(s.id)},
            {"plan", s.plan_kind},
            {"currency", kPlanCurrency},
            {"tag_key", tag_key},
            {"has_budget", has_budget},
            {"planned_usd", Num(pricing::RoundToCents(r.planned.effective_cost))},
            {"actual", ActualJson(r.actual, total_rows, total_billed.RoundedToCents())},
            {"gap_usd", Num(r.gap)},
            {"months", std::move(months)},
            {"months_without_actuals", std::move(without)},
            {"other_currencies", actual.other_currencies},
            {"to_date", ToDateJson(pricing::CompareToDate(r, last_billed))}};
}

// The saved request's stored book cannot be read any more (deleted, or a version it no longer
// has): not this request's fault, and the planned side cannot be stated without its owned
// capacity, so 409 saying which book. Other errors (the database) pass as they are.
pricing::Error BookGoneProblem(std::int64_t id, const pricing::Error& e) {
    if (e.code != ErrorCode::kInvalidArgument && e.code != ErrorCode::kMalformed &&
        e.code != ErrorCode::kNotFound) {
        return e;
    }
    return MakeError(ErrorCode::kFailedPrecondition,
                     "scenario " + std::to_string(id) +
                         " was planned with a price book that can no longer be read (" + e.message +
                         "): the owned capacity it planned with is unknown",
                     "id");
}

// GET /v1/scenarios/{id}/actuals, by a key of the scenario's team or an org key (spend is
// confidential; to other teams the scenario does not exist).
void ServeScenarioActuals(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto caller = BeginActualsCall(deps, req, res, KeyScope::kRead);
    if (!caller) return;
    auto tag_key = ReadTagKey(req);
    if (!tag_key.ok()) return WriteProblem(res, req, tag_key.error());
    const std::string text = req.matches[1].str();
    std::int64_t id = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc() || end != text.data() + text.size() || id <= 0) {
        return WriteProblem(
            res, req, MakeError(ErrorCode::kNotFound, "no scenario with id '" + text + "'", "id"));
    }
    auto found = deps.scenarios->GetScenario(id);
    if (!found.ok()) return WriteProblem(res, req, found.error());
    if (!ReadsTeam(caller->principal, found.value().team)) {
        return RefuseRead(req, res, caller->principal, "no scenario with id " + text);
    }
    auto tagged =
        deps.actuals->MonthsTagged(tag_key.value(), std::to_string(id), found.value().team);
    if (!tagged.ok()) return WriteProblem(res, req, tagged.error());
    auto owned = SavedOwnedCapacity(deps, found.value(), caller->principal);
    if (!owned.ok()) return WriteProblem(res, req, BookGoneProblem(id, owned.error()));
    const SavedPlanUse use = SavedPlanUseOf(found.value(), owned.value());
    const auto& planned = use.planned_by_month;
    const ActualsByMonth actual = SplitByCurrency(tagged.value());
    const auto compared = pricing::ComparePlanToActual(planned, actual.figures, kPlanCurrency);
    json answer =
        ComparisonJson(found.value(), tag_key.value(), !planned.empty(), actual, compared);
    auto classes =
        deps.actuals->ClassesTagged(tag_key.value(), std::to_string(id), found.value().team);
    if (!classes.ok()) return WriteProblem(res, req, classes.error());
    AddAcceleratorComparison(answer, found.value(), use, actual.figures, tagged.value(),
                             classes.value());
    WriteJson(res, answer);
}

json ImportJson(const ActualsImportRecord& i) {
    return {{"import_id", std::to_string(i.id)},
            {"team", i.team},
            {"imported_at", FormatTimestamp(i.imported_at_us)},
            {"imported_by", i.imported_by.empty() ? json(nullptr) : json(i.imported_by)},
            {"tag_key", i.tag_key},
            {"rows_read", i.rows_read},
            {"kept", i.kept},
            {"added", i.added},
            {"charges", i.charges}};
}

// GET /v1/actuals/imports: the imports of the admin key's team, or every team's for an org
// key, newest first, a page at a time (limit, cursor). Read keys are refused (403): what was
// imported by whom is the admins' to manage.
void ServeListImports(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    QueryParams params(req, {"limit", "cursor"});
    if (auto checked = params.Check(); !checked.ok())
        return WriteProblem(res, req, checked.error());
    if (!deps.keys || !deps.actuals) {
        return WriteProblem(res, req,
                            MakeError(ErrorCode::kDatabaseRequired,
                                      "actual spend is kept only in PostgreSQL mode: start "
                                      "gpucost with DATABASE_URL"));
    }
    auto caller = RequireKey(deps, req, res, KeyScope::kRead);
    if (!caller) return;
    const bool org = caller->scope == KeyScope::kOrg;
    if (!org && caller->scope != KeyScope::kAdmin) {
        return WriteFault(res, req, Fault::kForbidden,
                          "listing imports needs an admin key of the importing team "
                          "or an org key; key '" +
                              caller->name + "' has read scope");
    }
    // Paged by id, newest first: an import made between pages comes on no page of this walk.
    auto page = ReadPageRequest(params, "actuals-imports");
    if (!page.ok()) return WriteProblem(res, req, page.error());
    std::int64_t before = 0;  // none: from the newest
    if (page.value().after) {
        const std::string& text = *page.value().after;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), before);
        if (ec != std::errc() || end != text.data() + text.size() || before <= 0) {
            return WriteProblem(res, req,
                                MakeError(ErrorCode::kInvalidArgument,
                                          "is not a cursor from a previous page", "cursor"));
        }
    }
    const std::size_t n = page.value().limit;
    auto listed = deps.actuals->ListImports(org ? "" : caller->team, n + 1, before);
    if (!listed.ok()) return WriteProblem(res, req, listed.error());
    const auto& found = listed.value().first;
    json items = json::array();
    for (std::size_t i = 0; i < found.size() && i < n; ++i) items.push_back(ImportJson(found[i]));
    json next = found.size() > n
                    ? json(NextPageCursor("actuals-imports", std::to_string(found[n - 1].id)))
                    : json(nullptr);
    WriteJson(res, {{"items", std::move(items)},
                    {"limit", n},
                    {"next_cursor", std::move(next)},
                    {"total_count", listed.value().second}});
}

// DELETE /v1/actuals/imports/{id}: the import and the charges it stored first, by an admin of
// its team; plan vs actual reads as before it. Another team's import is 404.
void ServeDeleteImport(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    if (auto checked = QueryParams(req, {}).Check(); !checked.ok()) {
        return WriteProblem(res, req, checked.error());
    }
    auto write = BeginActualsWrite(deps, req, res);
    if (!write) return;
    const std::string text = req.matches[1].str();
    std::int64_t id = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc() || end != text.data() + text.size() || id <= 0) {
        return WriteProblem(
            res, req,
            MakeError(ErrorCode::kNotFound, "no actuals import with id '" + text + "'", "id"));
    }
    auto deleted = deps.actuals->DeleteImport(*write, id);
    if (!deleted.ok()) return WriteProblem(res, req, deleted.error());
    WriteStored(res, deleted.value());
}

}  // namespace

void AddActualsRoutes(RouteTable& routes, const Deps& deps) {
    routes.Post("/v1/actuals", Bind(deps, &ServeImport));
    routes.Get("/v1/actuals/imports", Bind(deps, &ServeListImports));
    routes.Delete(std::string("/v1/actuals/imports/") + kIdPattern, Bind(deps, &ServeDeleteImport));
    routes.Get(std::string("/v1/scenarios/") + kIdPattern + "/actuals",
               Bind(deps, &ServeScenarioActuals));
}

}  // namespace gpucost::http
