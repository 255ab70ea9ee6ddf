// Saved scenarios (PostgreSQL mode): a named plan request stored with the answer it had,
// re-evaluated on demand against current or as_of prices by the same planner functions the
// /v1/plans/* handlers call.
#include <algorithm>
#include <charconv>

#include "service/http/codec/field_table.hpp"
#include "service/http/codec/focus_codec.hpp"
#include "service/http/codec/idempotency.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_text.hpp"
#include "service/http/codec/page_cursor.hpp"
#include "service/http/codec/plan_codec.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/codec/timestamp.hpp"
#include "service/http/ports.hpp"
#include "service/http/route_table.hpp"
#include "service/http/routes/as_of.hpp"
#include "service/http/routes/auth.hpp"
#include "service/http/routes/plan_kinds.hpp"

namespace gpucost::http {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;
using pricing::Result;

constexpr std::string_view kScenarioListing = "scenarios";  // what its cursors are bound to

// The change report lists at most this many differing values (the rest are counted).
constexpr std::size_t kMaxChanges = 200;
constexpr int kMaxDiffDepth = 16;
constexpr std::size_t kMaxNameBytes = 200;
constexpr std::size_t kMaxTags = 20;
constexpr std::size_t kMaxTagChars = 40;

// Errors of the embedded plan request point into /request.
pricing::Error UnderRequest(pricing::Error e) {
    auto prefix = [](const std::string& field) {
        return field.empty() || field[0] != '/' ? std::string("/request") : "/request" + field;
    };
    e.field = prefix(e.field);
    for (auto& fe : e.errors) {
        fe.field = prefix(fe.field);
    }
    return e;
}

// Numbers and strings that differ between the saved and the new answer, by JSON pointer.
void Diff(const json& saved, const json& now, const std::string& pointer, int depth, json& changes,
          std::size_t& total) {
    if (depth > kMaxDiffDepth) {
        return;
    }
    auto record = [&](json entry) {
        ++total;
        if (changes.size() < kMaxChanges) {
            entry["path"] = pointer.empty() ? "/" : pointer;
            changes.push_back(std::move(entry));
        }
    };
    if (saved.is_object() && now.is_object()) {
        for (auto it = saved.begin(); it != saved.end(); ++it) {
            std::string key = it.key();
            std::string escaped;
            for (char c : key) {
                escaped += c == '~'   ? std::string("~0")
                           : c == '/' ? std::string("~1")
                                      : std::string(1, c);
            }
            if (now.contains(key)) {
                Diff(*it, now[key], pointer + "/" + escaped, depth + 1, changes, total);
            } else {
                record({{"saved", *it}, {"now", nullptr}});
            }
        }
        for (auto it = now.begin(); it != now.end(); ++it) {
            if (!saved.contains(it.key())) {
                record({{"saved", nullptr}, {"now", *it}});
            }
        }
        return;
    }
    if (saved.is_array() && now.is_array()) {
        std::size_t common = std::min(saved.size(), now.size());
        for (std::size_t i = 0; i < common; ++i) {
            Diff(saved[i], now[i], pointer + "/" + std::to_string(i), depth + 1, changes, total);
        }
        if (saved.size() != now.size()) {
            record({{"saved_length", saved.size()}, {"now_length", now.size()}});
        }
        return;
    }
    if (saved.is_number() && now.is_number()) {
        double a = saved.get<double>();
        double b = now.get<double>();
        if (a != b) {
            json entry = {{"saved", saved}, {"now", now}, {"delta", Num(b - a)}};
            entry["delta_percent"] = a != 0 ? Num((b - a) / std::abs(a) * 100.0) : json(nullptr);
            record(std::move(entry));
        }
        return;
    }
    if (saved != now) {
        record({{"saved", saved}, {"now", now}});
    }
}

json ScenarioJson(const Scenario& s, bool with_bodies) {
    json out = {{"id", std::to_string(s.id)},
                {"name", s.name},
                {"plan", s.plan_kind},
                {"created_at", FormatTimestamp(s.created_at_us)},
                {"created_by", s.created_by},
                {"team", s.team},
                {"tags", s.tags},
                {"catalog_version", s.catalog_version},
                {"catalog_revision", s.catalog_revision}};
    if (with_bodies) {
        out["request"] = json::parse(s.request_json, nullptr, false);
        out["saved_result"] = json::parse(s.saved_result_json, nullptr, false);
    }
    return out;
}

std::optional<std::int64_t> ParseScenarioId(const std::string& text) {
    std::int64_t id = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc() || end != text.data() + text.size() || id <= 0) {
        return std::nullopt;
    }
    return id;
}

bool NeedStore(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    if (deps.scenarios && deps.history && deps.health) {
        return true;
    }
    WriteProblem(res, req,
                 pricing::MakeError(pricing::ErrorCode::kDatabaseRequired,
                                    "saved scenarios are kept only in PostgreSQL mode: start "
                                    "gpucost with DATABASE_URL"));
    return false;
}

std::string CatalogRevisionOf(const pricing::Catalog& catalog) {
    return catalog.Describe().version;
}

// Characters (UTF-8 code points) in `text`.
std::size_t CodePoints(const std::string& text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
    }));
}

bool HasControl(const std::string& text) {
    return std::any_of(text.begin(), text.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u < 0x20U || u == 0x7FU;
    });
}

void CheckName(JsonReader& r, const std::string& name) {
    if (r.ok() && (name.empty() || name.size() > kMaxNameBytes)) {
        r.Fail(ErrorCode::kInvalidArgument, "name", "must be 1-200 characters");
    }
}

// Tags: at most 20, each 1-40 characters without control characters, no repeats.
void CheckTags(JsonReader& r, const std::vector<std::string>& tags) {
    if (r.ok() && tags.size() > kMaxTags) {
        r.Fail(ErrorCode::kInvalidArgument, "tags", "must hold at most 20 tags");
    }
    for (std::size_t i = 0; r.ok() && i < tags.size(); ++i) {
        const std::string& tag = tags[i];
        if (tag.empty() || CodePoints(tag) > kMaxTagChars || HasControl(tag)) {
            r.FailAt(ErrorCode::kInvalidArgument, "tags", i,
                     "a tag is 1-40 characters without control characters");
        } else if (std::find(tags.begin(), tags.begin() + static_cast<std::ptrdiff_t>(i), tag) !=
                   tags.begin() + static_cast<std::ptrdiff_t>(i)) {
            r.FailAt(ErrorCode::kInvalidArgument, "tags", i, "repeats tag '" + tag + "'");
        }
    }
}

// A scenario id from the path, or a 404 problem written and nullopt.
std::optional<std::int64_t> PathScenarioId(const httplib::Request& req, httplib::Response& res) {
    auto id = ParseScenarioId(req.matches[1].str());
    if (!id) {
        WriteProblem(res, req,
                     MakeError(ErrorCode::kNotFound,
                               "no scenario with id '" + req.matches[1].str() + "'", "id"));
    }
    return id;
}

// Scenario `id` when `caller` may read it, else the refusal written (RefuseRead: 401 without a
// key, 404 to another team's key) and nullopt: a confidential scenario (its request carries a
// price book or calibration) is its team's and org keys' only; any other is open to whoever
// may read /v1/.
std::optional<Scenario> ReadableScenario(const Deps& deps, const httplib::Request& req,
                                         httplib::Response& res, std::int64_t id,
                                         const std::optional<Principal>& caller) {
    auto found = deps.scenarios->GetScenario(id);
    if (!found.ok()) {
        WriteProblem(res, req, found.error());
        return std::nullopt;
    }
    if (found.value().confidential && !ReadsTeam(caller, found.value().team)) {
        RefuseRead(req, res, caller, "no scenario with id " + std::to_string(id));
        return std::nullopt;
    }
    return std::move(found).value();
}

// The change (PATCH, DELETE) common part: a database, a key of either scope, a scenario id.
std::optional<std::pair<WriteRequest, std::int64_t>> BeginChange(const Deps& deps,
                                                                 const httplib::Request& req,
                                                                 httplib::Response& res) {
    if (auto checked = QueryParams(req, {}).Check(); !checked.ok()) {
        WriteProblem(res, req, checked.error());
        return std::nullopt;
    }
    if (!NeedStore(deps, req, res)) {
        return std::nullopt;
    }
    auto principal = RequireKey(deps, req, res, KeyScope::kRead);
    if (!principal) {
        return std::nullopt;
    }
    auto id = PathScenarioId(req, res);
    if (!id) {
        return std::nullopt;
    }
    WriteRequest write;
    write.principal = *principal;
    if (!ReadRetryHeaders(req, res, write)) {
        return std::nullopt;
    }
    return std::make_pair(std::move(write), *id);
}

// PATCH takes a JSON merge patch (RFC 7396) or plain JSON; otherwise 415.
bool RequirePatchBody(const httplib::Request& req, httplib::Response& res) {
    std::string type = req.get_header_value("Content-Type");
    type = type.substr(0, type.find(';'));
    while (!type.empty() && type.back() == ' ') {
        type.pop_back();
    }
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (type == "application/merge-patch+json" || type == "application/json") {
        return true;
    }
    WriteFault(res, req, Fault::kUnsupportedMediaType,
               "send the change as Content-Type: application/merge-patch+json (or "
               "application/json)");
    return false;
}

}  // namespace

namespace {

void WriteScenario(httplib::Response& res, const Scenario& s, int status) {
    res.set_header("ETag", ScenarioEtag(s.version));
    WriteJson(res, ScenarioJson(s, /*with_bodies=*/true), status);
}

// A change's answer as recorded with its Idempotency-Key: the scenario after it.
StoredResponse ChangedScenarioAnswer(const Scenario& s) {
    return AnswerOf([&s](httplib::Response& r) { WriteScenario(r, s, 200); });
}

}  // namespace

namespace {

// What POST /v1/scenarios carries: the name, the plan kind, its request and tags.
struct ScenarioDraftBody {
    std::string name;
    const PlanKind* kind = nullptr;
    const json* request = nullptr;
    std::vector<std::string> tags;
};

// The draft's members as sent, read in this order; each row also makes its key known.
struct ScenarioDraftMembers {
    std::optional<std::string> name;
    std::optional<std::string> plan;
    const json* request = nullptr;
    std::optional<std::vector<std::string>> tags;
};
const auto kScenarioDraftFields = std::to_array<RequestField<ScenarioDraftMembers>>({
    {"name", &Optional<&ScenarioDraftMembers::name>},
    {"plan", &Optional<&ScenarioDraftMembers::plan>},
    {"request", [](JsonReader& r, std::string_view key,
                   ScenarioDraftMembers& m) { m.request = r.Object(key); }},
    {"tags", &Optional<&ScenarioDraftMembers::tags>},
});

pricing::Result<ScenarioDraftBody> ReadScenarioDraft(const json& body) {
    JsonReader r(body, "");
    r.OnlyKnown(RequestKeys(kScenarioDraftFields));
    ScenarioDraftMembers members;
    ReadFields(r, members, kScenarioDraftFields);
    auto& [name, kind, request, tags] = members;
    if (r.ok() && !name) {
        r.Fail(ErrorCode::kInvalidArgument, "name", "is required");
    }
    if (r.ok() && !kind) {
        r.Fail(ErrorCode::kInvalidArgument, "plan", "is required");
    }
    if (r.ok() && request == nullptr) {
        r.Fail(ErrorCode::kMalformed, "request", "is required: the body of the plan request");
    }
    if (r.ok()) {
        CheckName(r, *name);
    }
    if (tags) {
        CheckTags(r, *tags);
    }
    const PlanKind* found = r.ok() ? FindPlanKind(*kind) : nullptr;
    if (r.ok() && found == nullptr) {
        r.Fail(ErrorCode::kInvalidArgument, "plan",
               "unknown plan '" + kind->substr(0, 40) + "'; use one of: " + PlanKindNames());
    }
    if (!r.ok()) {
        return r.error();
    }
    return ScenarioDraftBody{*name, found, request, tags.value_or(std::vector<std::string>{})};
}

// A scenario saved with a key that has a default price book, by a request naming no book, is
// priced with that book as the live plan route prices it: the saved request names the book
// (`{"id": ...}`, its latest version whenever it is evaluated), so every later evaluation
// prices it the same way whichever key asks. `"price_book": null` keeps list prices.
json WithKeyDefaultBook(const json& request, const Principal& principal) {
    json out = request;
    if (!principal.default_price_book.empty() && out.is_object() && !out.contains("price_book")) {
        out["price_book"] = {{"id", principal.default_price_book}};
    }
    return out;
}

// POST /v1/scenarios: the plan answered as its live route answers it, saved with its request.
void ServeCreateScenario(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    if (auto checked = QueryParams(req, {}).Check(); !checked.ok()) {
        return WriteProblem(res, req, checked.error());
    }
    // Saving writes to the database: any valid key of a team (read or admin) may save, for its
    // team; an org key reads every team's and writes nothing.
    auto principal = RequireKey(deps, req, res, KeyScope::kRead);
    if (!principal) {
        return;
    }
    if (principal->scope == KeyScope::kOrg) {
        return WriteFault(res, req, Fault::kForbidden,
                          "an org key reads every team's scenarios and saves none; "
                          "save with a key of the team the scenario is for");
    }
    WriteRequest write;
    write.principal = *principal;
    if (!ReadRetryHeaders(req, res, write)) {
        return;
    }
    if (!RequireJsonBody(req, res)) {
        return;
    }
    auto body = ParseJsonBody(req.body);
    if (!body.ok()) {
        return WriteProblem(res, req, body.error());
    }
    auto draft_body = ReadScenarioDraft(body.value());
    if (!draft_body.ok()) {
        return WriteProblem(res, req, draft_body.error());
    }
    const ScenarioDraftBody& d = draft_body.value();
    const json request = WithKeyDefaultBook(*d.request, *principal);
    auto catalog = deps.history->Current();
    auto result = AnswerSavedPlan(*d.kind, request, catalog, deps, principal);
    if (!result.ok()) {
        return WriteProblem(res, req, UnderRequest(result.error()));
    }
    Scenario draft;
    draft.name = d.name;
    draft.plan_kind = std::string(d.kind->name);
    draft.request_json = request.dump();
    draft.saved_result_json = ToJsonText(result.value());
    draft.catalog_revision = deps.health->Health().revision;
    // The catalog the answer was computed on, as the answer itself names it.
    const json& answer = result.value();
    draft.catalog_version = answer.is_object() && answer.contains("catalog_version") &&
                                    answer["catalog_version"].is_string()
                                ? answer["catalog_version"].get<std::string>()
                                : CatalogRevisionOf(*catalog);
    draft.tags = d.tags;
    auto saved = deps.scenarios->SaveScenario(write, draft);
    if (!saved.ok()) {
        return WriteProblem(res, req, saved.error());
    }
    if (saved.value().replayed) {
        res.set_header("Idempotent-Replayed", "true");
    }
    res.set_header("Location", "/v1/scenarios/" + std::to_string(saved.value().id));
    WriteScenario(res, saved.value(), 201);
}

// GET /v1/scenarios' limit and cursor: the page size and the id the page starts after (a
// list paged by id: a scenario saved between pages is listed once, on the last page).
pricing::Result<std::pair<std::size_t, std::int64_t>> ReadScenarioPage(const QueryParams& params) {
    auto page = ReadPageRequest(params, kScenarioListing);
    if (!page.ok()) {
        return page.error();
    }
    std::int64_t after = 0;
    if (page.value().after) {
        auto parsed = ParseScenarioId(*page.value().after);
        if (!parsed) {
            return MakeError(ErrorCode::kInvalidArgument, "is not a cursor from a previous page",
                             "cursor");
        }
        after = *parsed;
    }
    return std::make_pair(page.value().limit, after);
}

// GET /v1/scenarios' filters: plan kind, tag, author (each non-empty when sent).
pricing::Result<ScenarioFilter> ReadScenarioFilter(const QueryParams& params) {
    ScenarioFilter filter;
    for (auto [name, target] : {std::pair<const char*, std::string*>{"plan", &filter.plan_kind},
                                {"tag", &filter.tag},
                                {"created_by", &filter.created_by}}) {
        auto value = params.One(name);
        if (!value.ok()) {
            return value.error();
        }
        if (value.value()) {
            if (value.value()->empty()) {
                return MakeError(ErrorCode::kInvalidArgument, "must not be empty", name);
            }
            *target = *value.value();
        }
    }
    if (!filter.plan_kind.empty() && FindPlanKind(filter.plan_kind) == nullptr) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "unknown plan; use one of: " + PlanKindNames(), "plan");
    }
    return filter;
}

// GET /v1/scenarios: saved scenarios, oldest first, filtered and paged by cursor.
void ServeListScenarios(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    QueryParams params(req, {"limit", "cursor", "plan", "tag", "created_by"});
    if (auto checked = params.Check(); !checked.ok()) {
        return WriteProblem(res, req, checked.error());
    }
    if (!NeedStore(deps, req, res)) {
        return;
    }
    auto page_at = ReadScenarioPage(params);
    if (!page_at.ok()) {
        return WriteProblem(res, req, page_at.error());
    }
    auto [n, after] = page_at.value();
    auto filter = ReadScenarioFilter(params);
    if (!filter.ok()) {
        return WriteProblem(res, req, filter.error());
    }
    filter.value().reader = CallerOf(deps, req);
    auto page = deps.scenarios->FindScenarios(filter.value(), n + 1, after);
    if (!page.ok()) {
        return WriteProblem(res, req, page.error());
    }
    json items = json::array();
    auto& list = page.value().items;
    bool more = list.size() > n;
    for (std::size_t i = 0; i < list.size() && i < n; ++i) {
        items.push_back(ScenarioJson(list[i], /*with_bodies=*/false));
    }
    json next = more ? json(NextPageCursor(kScenarioListing, std::to_string(list[n - 1].id)))
                     : json(nullptr);
    WriteJson(res, {{"limit", n},
                    {"total_count", page.value().total_count},
                    {"next_cursor", next},
                    {"items", std::move(items)}});
}

// GET /v1/scenarios/{id}.
void ServeGetScenario(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    if (auto checked = QueryParams(req, {}).Check(); !checked.ok()) {
        return WriteProblem(res, req, checked.error());
    }
    if (!NeedStore(deps, req, res)) {
        return;
    }
    auto id = PathScenarioId(req, res);
    if (!id) {
        return;
    }
    auto found = ReadableScenario(deps, req, res, *id, CallerOf(deps, req));
    if (!found) {
        return;
    }
    WriteScenario(res, *found, 200);
}

// The members a scenario's PATCH may change, read in this order.
const auto kScenarioPatchFields = std::to_array<RequestField<ScenarioChange>>({
    {"name", &Optional<&ScenarioChange::name>},
    {"tags", &Optional<&ScenarioChange::tags>},
});

// PATCH /v1/scenarios/{id}: a new name or tags (merge patch), by the owner or an admin.
void ServePatchScenario(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto begun = BeginChange(deps, req, res);
    if (!begun) {
        return;
    }
    auto& [write, id] = *begun;
    if (!RequirePatchBody(req, res)) {
        return;
    }
    auto body = ParseJsonBody(req.body);
    if (!body.ok()) {
        return WriteProblem(res, req, body.error());
    }
    JsonReader r(body.value(), "");
    r.OnlyKnown(RequestKeys(kScenarioPatchFields));
    ScenarioChange change;
    ReadFields(r, change, kScenarioPatchFields);
    // Merge patch: null removes a member. A scenario keeps a name; its tags can go.
    if (r.ok() && body.value().contains("name") && body.value()["name"].is_null()) {
        r.Fail(ErrorCode::kInvalidArgument, "name", "cannot be removed; send a new name");
    }
    if (r.ok() && body.value().contains("tags") && body.value()["tags"].is_null()) {
        change.tags = std::vector<std::string>{};
    }
    if (change.name) {
        CheckName(r, *change.name);
    }
    if (change.tags) {
        CheckTags(r, *change.tags);
    }
    if (!r.ok()) {
        return WriteProblem(res, req, r.error());
    }
    auto changed = deps.scenarios->UpdateScenario(write, id, change, &ChangedScenarioAnswer);
    if (!changed.ok()) {
        return WriteProblem(res, req, changed.error());
    }
    WriteStored(res, changed.value());
}

// Most tokens_done_b accepted, in billions: far beyond any run planned (the largest public
// pretraining runs are tens of trillions); a bound that catches unit mistakes (tokens sent
// as a plain count), not a limit on real runs. Judgement.
constexpr double kMaxTokensDoneB = 1e6;

// The progress body's members, read in this order (both required, checked before reading).
struct ProgressMembers {
    std::optional<double> tokens_done_b;
    std::optional<std::string> as_of;
};
const auto kProgressFields = std::to_array<RequestField<ProgressMembers>>({
    {"tokens_done_b", &Optional<&ProgressMembers::tokens_done_b>},
    {"as_of", &Optional<&ProgressMembers::as_of>},
});

// PUT /v1/scenarios/{id}/progress: {"tokens_done_b", "as_of"} of a training scenario, by its
// owner or an admin (as the scenario's other changes). Replaces the progress recorded before.
void ServePutProgress(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto begun = BeginChange(deps, req, res);
    if (!begun) return;
    auto& [write, id] = *begun;
    if (!RequireJsonBody(req, res)) return;
    auto body = ParseJsonBody(req.body);
    if (!body.ok()) return WriteProblem(res, req, body.error());
    JsonReader r(body.value(), "");
    r.OnlyKnown(RequestKeys(kProgressFields));
    r.Require("tokens_done_b");
    r.Require("as_of");
    ProgressMembers progress;
    ReadFields(r, progress, kProgressFields);
    const auto& [tokens_done_b, as_of] = progress;
    if (tokens_done_b && !(*tokens_done_b >= 0 && *tokens_done_b <= kMaxTokensDoneB)) {
        r.Fail(ErrorCode::kInvalidArgument, "tokens_done_b",
               "must be between 0 and 1000000 (billions of tokens)");
    }
    if (!r.ok()) return WriteProblem(res, req, r.error());
    auto at = ParseAsOf(*as_of, "/as_of");
    if (!at.ok()) return WriteProblem(res, req, at.error());
    auto found = ReadableScenario(deps, req, res, id, write.principal);
    if (!found) return;
    // Tokens done mean something against a training run's tokens only.
    if (found->plan_kind != "training") {
        return WriteProblem(
            res, req,
            MakeError(ErrorCode::kInvalidArgument,
                      "progress is recorded for training scenarios; scenario " +
                          std::to_string(id) + " is a '" + found->plan_kind + "' plan",
                      "/tokens_done_b"));
    }
    ScenarioChange change;
    change.progress = ScenarioProgress{*tokens_done_b, at.value()};
    auto changed = deps.scenarios->UpdateScenario(write, id, change, [](const Scenario& s) {
        return AnswerOf([&s](httplib::Response& answer) {
            answer.set_header("ETag", ScenarioEtag(s.version));
            WriteJson(answer,
                      {{"scenario_id", std::to_string(s.id)},
                       {"tokens_done_b", Num(s.progress->tokens_done_b)},
                       {"as_of", FormatTimestamp(s.progress->as_of_us)}},
                      200);
        });
    });
    if (!changed.ok()) return WriteProblem(res, req, changed.error());
    WriteStored(res, changed.value());
}

// DELETE /v1/scenarios/{id}, by the owner or an admin.
void ServeDeleteScenario(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto begun = BeginChange(deps, req, res);
    if (!begun) {
        return;
    }
    auto deleted = deps.scenarios->DeleteScenario(begun->first, begun->second);
    if (!deleted.ok()) {
        return WriteProblem(res, req, deleted.error());
    }
    WriteStored(res, deleted.value());
}

// The differences between the saved answer and today's, as `changes` (at most kMaxChanges) and
// their count. Which catalog each answer was read from is provenance, not a change of the plan:
// the evaluation names its own catalog_version, and an as_of catalog is named by its instant
// ("pg-r7@...") even where it holds the very prices the scenario was saved with. Answers saved
// before plans named their currency and pricing basis were in the same US dollars at list
// prices: members added since are not changes of the plan.
std::pair<json, std::size_t> ChangesSince(json saved, json now) {
    if (saved.is_object()) saved.erase("catalog_version");
    if (now.is_object()) now.erase("catalog_version");
    for (const char* added : {"currency", "pricing_basis"}) {
        if (saved.is_object() && now.is_object() && !saved.contains(added)) {
            now.erase(added);
        }
    }
    json changes = json::array();
    std::size_t total = 0;
    Diff(saved, now, "", 0, changes, total);
    return {std::move(changes), total};
}

// ?format=focus (or Accept: text/csv; profile="focus") on an evaluation: the saved request
// planned on current (or as_of) prices as FOCUS forecast rows, as the live plan route answers
// them, each row tagged with the scenario's id under kActualsTagKey, the tag actual spend is
// read by. Plan kinds without a forecast (spot) are 422 naming `format`.
void ServeScenarioFocus(const Deps& deps, const httplib::Request& req, httplib::Response& res,
                        const Scenario& s, const PlanKind& kind, json request,
                        std::shared_ptr<const pricing::Catalog> catalog,
                        const std::optional<Principal>& caller) {
    if (!kind.focus) {
        return WriteProblem(res, req,
                            MakeError(ErrorCode::kInvalidArgument,
                                      "a " + s.plan_kind +
                                          " plan has no FOCUS forecast (training, serving and "
                                          "rent-vs-buy plans have)",
                                      kFormatParam));
    }
    auto outcome =
        PlanSavedRequest(kind, std::move(request), std::move(catalog), deps, caller, s.id);
    if (!outcome.ok()) {
        return WriteProblem(res, req, outcome.error());
    }
    WriteCsv(res, outcome.value().focus({{kActualsTagKey, std::to_string(s.id)}}));
}

// POST /v1/scenarios/{id}/evaluate: the saved request answered again on current (or as_of)
// prices, beside the saved answer, with what changed (or as FOCUS rows: ServeScenarioFocus).
void ServeEvaluateScenario(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    QueryParams params(req, {kAsOfParam, kFormatParam});
    if (auto checked = params.Check(); !checked.ok()) {
        return WriteProblem(res, req, checked.error());
    }
    auto focus = WantsFocus(req);
    if (!focus.ok()) {
        return WriteProblem(res, req, focus.error());
    }
    if (!NeedStore(deps, req, res)) {
        return;
    }
    auto id = PathScenarioId(req, res);
    if (!id) {
        return;
    }
    auto catalog = CatalogForQuery(deps, params);
    if (!catalog.ok()) {
        return WriteProblem(res, req, catalog.error());
    }
    // The saved request is planned for the caller: its book and calibration only as far as
    // the caller may read them, so no one prices a book's current version it may not read.
    const auto caller = CallerOf(deps, req);
    auto found = ReadableScenario(deps, req, res, *id, caller);
    if (!found) {
        return;
    }
    const Scenario& s = *found;
    const PlanKind* kind = FindPlanKind(s.plan_kind);
    json request = json::parse(s.request_json, nullptr, false);
    json saved = json::parse(s.saved_result_json, nullptr, false);
    if (kind == nullptr || request.is_discarded() || saved.is_discarded()) {
        return WriteProblem(
            res, req,
            MakeError(ErrorCode::kFailedPrecondition,
                      "this scenario's plan kind '" + s.plan_kind + "' is no longer supported"));
    }
    if (focus.value()) {
        return ServeScenarioFocus(deps, req, res, s, *kind, std::move(request), catalog.value(),
                                  caller);
    }
    auto now = AnswerSavedPlan(*kind, request, catalog.value(), deps, caller, s.id);
    auto as_of = params.One(kAsOfParam);
    json out = {{"scenario", ScenarioJson(s, /*with_bodies=*/false)},
                {"evaluated_at", FormatTimestamp(NowUs())},
                {"as_of", as_of.ok() && as_of.value() ? json(*as_of.value()) : json(nullptr)},
                {"catalog_version", CatalogRevisionOf(*catalog.value())},
                {"saved_result", saved}};
    if (!now.ok()) {
        // The request no longer evaluates (an offering it names was retired, say): report it as
        // the answer instead of failing the call.
        out["result"] = nullptr;
        out["error"] = {{"code", pricing::ErrorCodeName(now.error().code)},
                        {"detail", now.error().message},
                        {"field", now.error().field}};
        out["changed"] = true;
        return WriteJson(res, out);
    }
    auto [changes, total] = ChangesSince(saved, now.value());
    out["result"] = now.value();
    out["changed"] = total > 0;
    out["change_count"] = total;
    out["changes"] = std::move(changes);
    WriteJson(res, out);
}

}  // namespace

void AddScenarioRoutes(RouteTable& routes, const Deps& deps) {
    const std::string one = std::string("/v1/scenarios/") + kIdPattern;
    routes.Post("/v1/scenarios", Bind(deps, &ServeCreateScenario));
    routes.Get("/v1/scenarios", Bind(deps, &ServeListScenarios));
    routes.Get(one, Bind(deps, &ServeGetScenario));
    routes.Patch(one, Bind(deps, &ServePatchScenario));
    routes.Delete(one, Bind(deps, &ServeDeleteScenario));
    routes.PostWithoutBody(one + "/evaluate", Bind(deps, &ServeEvaluateScenario));
    routes.Put(one + "/progress", Bind(deps, &ServePutProgress));
}

}  // namespace gpucost::http
