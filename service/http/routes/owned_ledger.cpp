#include "service/http/routes/owned_ledger.hpp"

#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "pricing/calendar.hpp"
#include "pricing/money.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_text.hpp"
#include "service/http/ports.hpp"

namespace gpucost::http {
namespace {

using json = nlohmann::json;

// Scenarios read per page while the ledger's holdings are gathered.
constexpr std::size_t kScenariosPerPage = 500;

double NumberAt(const json& object, const char* key) {
    if (!object.is_object()) return 0;
    auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<double>() : 0;
}

std::optional<double> HourOfDate(const json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_string()) {
        return std::nullopt;
    }
    const auto day = pricing::DaysFromIsoDate(object[key].get<std::string>());
    if (!day) return std::nullopt;
    return static_cast<double>(*day) * pricing::kHoursPerDay;
}

// The stored book a saved request plans with (by id, or {id, version}); empty for none or an
// inline book.
std::string BookIdOf(const json& request) {
    if (!request.is_object() || !request.contains("price_book")) return {};
    const json& named = request["price_book"];
    if (named.is_string()) return named.get<std::string>();
    if (named.is_object() && !named.contains("rules") && !named.contains("owned_capacity") &&
        named.contains("id") && named["id"].is_string()) {
        return named["id"].get<std::string>();
    }
    return {};
}

// Every team's saved scenarios planning with `book_id` (a book's capacity and commitments are
// one, whoever plans on them), in the order saved (by id) and up to `before_scenario_id`, each
// handed to `visit` with its saved answer.
pricing::Status ForEachScenarioOnBook(
    const Deps& deps, const std::string& book_id, std::optional<std::int64_t> before_scenario_id,
    const std::function<void(const Scenario&, const json& saved_answer)>& visit) {
    ports::ScenarioFilter every;
    every.reader = Principal{};
    every.reader->scope = ports::KeyScope::kOrg;
    std::int64_t after = 0;
    for (;;) {
        auto page = deps.scenarios->FindScenarios(every, kScenariosPerPage, after);
        if (!page.ok()) return page.error();
        for (const Scenario& s : page.value().items) {
            after = s.id;
            if (before_scenario_id && s.id >= *before_scenario_id) return pricing::Ok{};
            const json request = json::parse(s.request_json, nullptr, false);
            if (pricing::IdKey(BookIdOf(request)) != pricing::IdKey(book_id)) continue;
            visit(s, json::parse(s.saved_result_json, nullptr, false));
        }
        if (page.value().items.size() < kScenariosPerPage) return pricing::Ok{};
    }
}

// Each saved scenario planning with `book_id` whose saved recommendation ran on owned
// capacity, in the order saved (by id), up to `before_scenario_id`.
pricing::Status GatherHoldings(const Deps& deps, const std::string& book_id,
                               std::optional<std::int64_t> before_scenario_id,
                               OwnedLedgerView& out) {
    return ForEachScenarioOnBook(
        deps, book_id, before_scenario_id, [&](const Scenario& s, const json& answer) {
            auto holding = HoldingOfAnswer(s.plan_kind, answer, std::to_string(s.id));
            if (!holding) return;
            out.holdings.push_back(std::move(*holding));
            out.teams.push_back(s.team);
        });
}

// What a plan answer's recommendation (of plan kind `kind`) runs: its offering and nodes over
// its run (training: the budget's start date for its expected hours; serving: the budget
// window). nullopt without a recommendation or budget, or for another kind.
std::optional<pricing::OwnedHolding> RunOfAnswer(std::string_view kind, const json& answer,
                                                 std::string holder) {
    if (!answer.is_object() || !answer.contains("recommendation") || !answer.contains("budget")) {
        return std::nullopt;
    }
    const json& r = answer["recommendation"];
    const json& b = answer["budget"];
    if (!r.is_object() || !r.contains("offering") || !r["offering"].is_object() ||
        !r["offering"].contains("id") || !r["offering"]["id"].is_string()) {
        return std::nullopt;
    }
    const std::optional<double> start = HourOfDate(b, "start_date");
    if (!start) return std::nullopt;
    double end = *start;
    if (kind == "training") {
        end = *start + NumberAt(r, "expected_wall_clock_hours");
    } else if (kind == "inference") {
        const std::optional<double> last = HourOfDate(b, "end_date");
        if (!last) return std::nullopt;
        end = *last;
    } else {
        return std::nullopt;
    }
    return pricing::OwnedHolding{std::move(holder), r["offering"]["id"].get<std::string>(),
                                 static_cast<int>(NumberAt(r, "nodes")), *start, end};
}

// The value a saved answer echoes under `assumptions` as `name`, if it does.
std::optional<double> EchoedValue(const json& answer, std::string_view name) {
    if (!answer.is_object() || !answer.contains("assumptions")) return std::nullopt;
    const json& echoes = answer["assumptions"];
    if (!echoes.is_array()) return std::nullopt;
    for (const json& a : echoes) {
        if (a.is_object() && a.value("name", "") == name && a.contains("value") &&
            a["value"].is_number()) {
            return a["value"].get<double>();
        }
    }
    return std::nullopt;
}

json HoldersJson(const OwnedLedgerView& ledger) {
    json out = json::array();
    for (std::size_t i = 0; i < ledger.ledger.draws.size(); ++i) {
        const pricing::OwnedDraw& d = ledger.ledger.draws[i];
        out.push_back({{"scenario_id", d.holder},
                       {"team", ledger.teams[i]},
                       {"offering_id", d.offering_id},
                       {"instance_hours", Num(d.instance_hours)},
                       {"sunk_usd", Num(pricing::RoundToCents(d.sunk_usd))}});
    }
    return out;
}

// Per month and offering the book owns: reserved, held ahead of the plan (and by whom), got by
// the plan, and left unused.
json MonthsJson(const pricing::PriceBook& book, const OwnedLedgerView& ledger,
                const pricing::OwnedDraw& got) {
    json out = json::array();
    for (const auto& [month, offerings] : pricing::OwnedHoursByMonth(book.owned_capacity)) {
        for (const auto& [offering_id, reserved] : offerings) {
            double held = 0;
            json held_by = json::array();
            for (const pricing::OwnedDraw& d : ledger.ledger.draws) {
                auto it = d.instance_hours_by_month.find(month);
                if (pricing::IdKey(d.offering_id) != pricing::IdKey(offering_id) ||
                    it == d.instance_hours_by_month.end() || it->second <= 0) {
                    continue;
                }
                held += it->second;
                held_by.push_back({{"scenario_id", d.holder}, {"instance_hours", Num(it->second)}});
            }
            double mine = 0;
            if (pricing::IdKey(got.offering_id) == pricing::IdKey(offering_id)) {
                auto it = got.instance_hours_by_month.find(month);
                if (it != got.instance_hours_by_month.end()) mine = it->second;
            }
            out.push_back(
                {{"month", month},
                 {"offering_id", offering_id},
                 {"reserved_instance_hours", Num(reserved)},
                 {"held_instance_hours", Num(pricing::StatedOwnedHours(held))},
                 {"held_by", std::move(held_by)},
                 {"got_instance_hours", Num(mine)},
                 {"unused_instance_hours",
                  Num(std::max(0.0, pricing::StatedOwnedHours(reserved - held - mine)))}});
        }
    }
    return out;
}

// The `owned_ledger` member of an answer whose recommendation runs as `mine` does.
json LedgerJson(const PricingView& view, const std::optional<pricing::OwnedHolding>& mine) {
    const pricing::PriceBook& book = view.priced->Book();
    const OwnedLedgerView& ledger = *view.ledger;
    pricing::OwnedDraw got;
    if (mine) got = pricing::DrawInOrder(ledger.ledger.left, {*mine}).draws.front();
    double held = 0;
    for (const pricing::OwnedDraw& d : ledger.ledger.draws) held += d.instance_hours;
    return {{"book_id", book.id},
            {"book_version", book.version},
            {"order",
             "saved scenarios draw the book's owned capacity in the order they were "
             "saved (by id); this plan draws after " +
                 ledger.position},
            {"held_by", HoldersJson(ledger)},
            {"held_instance_hours", Num(pricing::StatedOwnedHours(held))},
            {"got_instance_hours", Num(got.instance_hours)},
            {"months", MonthsJson(book, ledger, got)}};
}

}  // namespace

std::optional<pricing::OwnedHolding> HoldingOfAnswer(std::string_view kind, const json& answer,
                                                     std::string holder) {
    if (!answer.is_object() || !answer.contains("recommendation")) return std::nullopt;
    const json& r = answer["recommendation"];
    if (!r.is_object() || !r.contains("owned") || !r["owned"].is_object()) return std::nullopt;
    return RunOfAnswer(kind, answer, std::move(holder));
}

pricing::Result<std::vector<PlannedRun>> PlannedRunsOf(const Deps& deps,
                                                       const std::string& book_id) {
    std::vector<PlannedRun> out;
    if (!deps.scenarios) return out;
    auto every = ForEachScenarioOnBook(
        deps, book_id, std::nullopt, [&](const Scenario& s, const json& answer) {
            auto run = RunOfAnswer(s.plan_kind, answer, std::to_string(s.id));
            if (run) {
                out.push_back({std::to_string(s.id), s.plan_kind, s.team, std::move(*run),
                               EchoedValue(answer, "efficiency_spread_fraction")});
            }
        });
    if (!every.ok()) return every.error();
    return out;
}

pricing::Result<std::shared_ptr<const OwnedLedgerView>> LedgerOf(
    const Deps& deps, const pricing::PriceBook& book,
    std::optional<std::int64_t> before_scenario_id) {
    if (book.id.empty() || book.owned_capacity.empty() || !deps.scenarios) {
        return std::shared_ptr<const OwnedLedgerView>();
    }
    auto ledger = std::make_shared<OwnedLedgerView>();
    ledger->position =
        before_scenario_id ? "the scenarios saved before it" : "every saved scenario";
    if (auto gathered = GatherHoldings(deps, book.id, before_scenario_id, *ledger);
        !gathered.ok()) {
        return gathered.error();
    }
    ledger->ledger = pricing::DrawInOrder(book.owned_capacity, ledger->holdings);
    return std::shared_ptr<const OwnedLedgerView>(std::move(ledger));
}

pricing::Status UseOwnedLedger(const Deps& deps, PricingView& view,
                               std::optional<std::int64_t> before_scenario_id) {
    if (!view.priced) return pricing::Ok{};
    auto ledger = LedgerOf(deps, view.priced->Book(), before_scenario_id);
    if (!ledger.ok()) return ledger.error();
    view.ledger = std::move(ledger).value();
    return pricing::Ok{};
}

void AddOwnedLedger(PlanOutcome& outcome, const PricingView& view, std::string_view kind) {
    if (!view.ledger || !outcome.json_text) return;
    outcome.json_text = [inner = std::move(outcome.json_text), view, kind = std::string(kind)](
                            AssumptionDetail detail, std::optional<std::string> next_cursor) {
        std::string text = inner(detail, std::move(next_cursor));
        const json answer = json::parse(text, nullptr, false);
        if (!answer.is_object() || text.empty() || text.back() != '}') return text;
        const json member = LedgerJson(view, HoldingOfAnswer(kind, answer, "this plan"));
        text.insert(text.size() - 1, ",\"owned_ledger\":" + ToJsonText(member));
        return text;
    };
}

}  // namespace gpucost::http
