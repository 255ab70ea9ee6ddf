#include "service/http/codec/price_book_codec.hpp"

#include <set>
#include <utility>

#include "pricing/calendar.hpp"
#include "pricing/money.hpp"
#include "service/http/codec/field_table.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_reader.hpp"
#include "service/http/codec/json_text.hpp"
#include "service/http/codec/plan_codec.hpp"
#include "service/http/codec/timestamp.hpp"

namespace gpucost::http {
namespace {

constexpr char kPointer[] = "/price_book";

// The price types a rule applies to (empty: any); an unknown one is 422 naming its element.
void RulePriceTypes(JsonReader& r, std::string_view key, pricing::PriceBookRule& rule) {
    auto types = r.Strings(key);
    if (!types) return;
    for (std::size_t i = 0; i < types->size(); ++i) {
        auto type = pricing::ParsePriceType((*types)[i]);
        if (!type) {
            r.FailAt(pricing::ErrorCode::kInvalidArgument, key, i,
                     "unknown price type '" + (*types)[i] +
                         "' (on_demand, spot, commit_1y, commit_3y, capacity_block)");
            return;
        }
        rule.price_types.push_back(*type);
    }
}

// The members of a book, of each of its rules and of each owned capacity entry (read in this
// order; any other member is refused).
const auto kRuleFields = std::to_array<RequestField<pricing::PriceBookRule>>({
    {"provider", &Optional<&pricing::PriceBookRule::provider>},
    {"instance_family", &Optional<&pricing::PriceBookRule::instance_family>},
    {"accelerator", &Optional<&pricing::PriceBookRule::accelerator>},
    {"region", &Optional<&pricing::PriceBookRule::region>},
    {"discount_fraction", &Optional<&pricing::PriceBookRule::discount_fraction>},
    {"offering_id", &Optional<&pricing::PriceBookRule::offering_id>},
    {"usd_per_hour", &Optional<&pricing::PriceBookRule::usd_per_hour>},
    {"price_types", &RulePriceTypes},
    {"valid_from", &Optional<&pricing::PriceBookRule::valid_from>},
    {"valid_until", &Optional<&pricing::PriceBookRule::valid_until>},
});
const auto kOwnedFields = std::to_array<RequestField<pricing::OwnedCapacity>>({
    {"offering_id", &Required<&pricing::OwnedCapacity::offering_id>},
    {"nodes", &Required<&pricing::OwnedCapacity::nodes>},
    {"start_date", &Required<&pricing::OwnedCapacity::start_date>},
    {"end_date", &Required<&pricing::OwnedCapacity::end_date>},
    {"usd_per_hour", &Required<&pricing::OwnedCapacity::usd_per_hour>},
});
const auto kBookFields = std::to_array<RequestField<pricing::PriceBook>>({
    {"name", &Required<&pricing::PriceBook::name>},
    {"id", [](JsonReader& r, std::string_view key,
              pricing::PriceBook& book) { book.id = r.String(key).value_or(""); }},
    {"version", &OrDefault<&pricing::PriceBook::version, 1>},
    {"currency",
     [](JsonReader& r, std::string_view key, pricing::PriceBook& book) {
         book.currency = r.String(key).value_or(pricing::kBookCurrencyDefault);
     }},
    {"rules", nullptr},           // read apart, element by element (DecodeList)
    {"owned_capacity", nullptr},  // the same
});

// One element of a list of objects read by its table; errors name `at` and its members.
template <typename T, std::size_t N>
pricing::Result<T> DecodeElement(const json& value, const std::string& at,
                                 const std::array<RequestField<T>, N>& fields) {
    if (!value.is_object()) {
        return pricing::MakeError(pricing::ErrorCode::kMalformed, at + ": must be an object", at);
    }
    T element;
    if (auto read = ReadNested(&value, at, element, fields); !read.ok()) return read.error();
    return element;
}

pricing::Result<pricing::PriceBookRule> DecodeRule(const json& value, const std::string& at) {
    return DecodeElement(value, at, kRuleFields);
}

pricing::Result<pricing::OwnedCapacity> DecodeOwned(const json& value, const std::string& at) {
    return DecodeElement(value, at, kOwnedFields);
}

// The array member `key` of a book, each element decoded by `decode` at `<pointer>/key/<i>`;
// more than `max_items` elements is refused before any is decoded (`too_many` says how to
// do without them).
template <typename T, typename Decode>
pricing::Status DecodeList(const json& book, const std::string& pointer, const char* key,
                           std::size_t max_items, const std::string& too_many, Decode decode,
                           std::vector<T>& out) {
    auto it = book.find(key);
    if (it == book.end() || it->is_null()) return pricing::Ok{};
    if (!it->is_array()) {
        return pricing::MakeError(pricing::ErrorCode::kMalformed,
                                  pointer + "/" + key + ": must be an array", pointer + "/" + key);
    }
    if (it->size() > max_items) {
        return pricing::MakeError(
            pricing::ErrorCode::kInvalidArgument,
            pointer + "/" + key + ": at most " + std::to_string(max_items) + " " + key + too_many,
            pointer + "/" + key);
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
        auto one = decode((*it)[i], pointer + "/" + key + "/" + std::to_string(i));
        if (!one.ok()) return one.error();
        out.push_back(std::move(one).value());
    }
    return pricing::Ok{};
}

}  // namespace

pricing::Result<pricing::PriceBook> DecodePriceBook(const json& value, const std::string& pointer,
                                                    std::size_t max_rules) {
    JsonReader r(value, pointer);
    r.OnlyKnown(RequestKeys(kBookFields));
    pricing::PriceBook book;
    ReadFields(r, book, kBookFields);
    // A book of owned capacity alone needs no rules.
    if (value.is_object() && !value.contains("owned_capacity")) r.Require("rules");
    if (!r.ok()) return r.error();
    const std::string store_it =
        max_rules < pricing::kMaxPriceBookRules
            ? " in a book given inline; store a larger one (POST /v1/price-books, up to " +
                  std::to_string(pricing::kMaxPriceBookRules) + " rules) and name it by id"
            : "";
    if (auto rules =
            DecodeList(value, pointer, "rules", max_rules, store_it, DecodeRule, book.rules);
        !rules.ok()) {
        return rules.error();
    }
    if (auto owned = DecodeList(value, pointer, "owned_capacity", pricing::kMaxOwnedCapacity, "",
                                DecodeOwned, book.owned_capacity);
        !owned.ok()) {
        return owned.error();
    }
    return book;
}

namespace {

json PriceEntry(const std::string& id, const pricing::AppliedPrice& p) {
    return {{"offering_id", id},
            {"list_usd_per_hour", Num(pricing::RoundToMicroUsd(p.list_usd_per_hour))},
            {"usd_per_hour", Num(pricing::RoundToMicroUsd(p.effective_usd_per_hour))},
            {"rule", p.rule_index ? json(*p.rule_index) : json(nullptr)}};
}

// Adds list_usd_per_hour beside usd_per_hour in every offering object of the answer and
// collects the ids seen.
void AnnotateOfferings(json& node, const pricing::PricedCatalog& priced,
                       std::set<std::string>& seen) {
    if (node.is_array()) {
        for (json& item : node) AnnotateOfferings(item, priced, seen);
        return;
    }
    if (!node.is_object()) return;
    auto id = node.find("id");
    if (id != node.end() && id->is_string() && node.contains("usd_per_hour")) {
        if (const pricing::AppliedPrice* p = priced.PriceOf(id->get<std::string>())) {
            node["list_usd_per_hour"] = Num(pricing::RoundToMicroUsd(p->list_usd_per_hour));
            seen.insert(id->get<std::string>());
        }
    }
    for (auto& [key, child] : node.items()) {
        if (key != "assumptions") AnnotateOfferings(child, priced, seen);
    }
}

json BookEcho(const pricing::PricedCatalog& priced, const std::set<std::string>& ids) {
    const pricing::PriceBook& book = priced.Book();
    json warnings = json::array();
    for (const pricing::FieldError& w : priced.Warnings()) {
        warnings.push_back({{"field", w.field}, {"detail", w.detail}});
    }
    json prices = json::array();
    for (const std::string& id : ids) {
        if (const pricing::AppliedPrice* p = priced.PriceOf(id))
            prices.push_back(PriceEntry(id, *p));
    }
    return {{"id", book.id.empty() ? json(nullptr) : json(book.id)},
            {"name", book.name},
            {"version", book.version},
            {"currency", book.currency},
            {"priced_on", priced.PricedOn() ? json(*priced.PricedOn()) : json(nullptr)},
            {"rules_matched", priced.MatchesPerRule()},
            {"warnings", std::move(warnings)},
            {"prices", std::move(prices)}};
}

}  // namespace

pricing::Result<std::optional<pricing::PriceBook>> TakePriceBook(json& body) {
    auto it = body.find("price_book");
    if (it == body.end()) return std::optional<pricing::PriceBook>{};
    json value = std::move(*it);
    body.erase(it);
    if (value.is_null()) return std::optional<pricing::PriceBook>{};
    if (value.is_string()) {
        return pricing::MakeError(pricing::ErrorCode::kDatabaseRequired,
                                  "stored price books (by id) need database mode (start gpucost "
                                  "with DATABASE_URL); give the book inline as an object",
                                  kPointer);
    }
    if (!value.is_object()) {
        return pricing::MakeError(pricing::ErrorCode::kMalformed,
                                  "price_book: must be an object (an inline book)", kPointer);
    }
    auto book = DecodePriceBook(value, kPointer, kMaxInlinePriceBookRules);
    if (!book.ok()) return book.error();
    return std::optional<pricing::PriceBook>(std::move(book).value());
}

std::optional<std::string> PlanPricingDay(const json& body,
                                          const std::optional<std::string>& as_of) {
    // A start date that is not a date is the plan's own fault to report, not the book's.
    auto start = body.find("start_date");
    if (start != body.end() && start->is_string() &&
        pricing::DaysFromIsoDate(start->get<std::string>())) {
        return start->get<std::string>();
    }
    if (!as_of) return std::nullopt;
    auto at = ParseAsOf(*as_of, "as_of");  // checked before: the catalog is taken as of it
    if (!at.ok()) return std::nullopt;
    return FormatTimestamp(at.value()).substr(0, kIsoDateChars);  // its UTC day
}

pricing::Result<PricingView> ViewThroughBook(std::shared_ptr<const pricing::Catalog> base,
                                             std::optional<pricing::PriceBook> book,
                                             const std::optional<std::string>& priced_on) {
    if (!book) return PricingView{std::move(base), nullptr};
    auto priced = pricing::ApplyPriceBook(std::move(base), std::move(*book),
                                          priced_on.value_or(TodayUtcDate()));
    if (!priced.ok()) return priced.error();
    return PricingView{priced.value(), priced.value()};
}

const std::vector<pricing::OwnedCapacity>& OwnedOf(const PricingView& view) {
    static const std::vector<pricing::OwnedCapacity> kNothingOwned;
    if (view.ledger) return view.ledger->ledger.left;
    return view.priced ? view.priced->Book().owned_capacity : kNothingOwned;
}

pricing::Assumptions WithBookAssumptions(const pricing::Assumptions& assumptions,
                                         const PricingView& view) {
    pricing::Assumptions out = assumptions;
    if (view.priced) {
        for (pricing::Assumption& a : view.priced->BookAssumptions()) out.push_back(std::move(a));
    }
    return out;
}

std::string MarkPricingBasis(std::string answer_json, const PricingView& view,
                             const std::vector<std::string>& named_offering_ids) {
    if (!view.priced) {
        return answer_json;  // the plan encoders write "pricing_basis":"list" themselves
    }
    json answer = json::parse(answer_json);
    std::set<std::string> ids;
    AnnotateOfferings(answer, *view.priced, ids);
    for (const std::string& id : named_offering_ids) {
        auto offering = view.priced->FindOffering(id);
        if (offering.ok()) ids.insert(offering.value().id);
    }
    answer["pricing_basis"] = "price_book";
    answer["price_book"] = BookEcho(*view.priced, ids);
    if (view.from_key_default) answer["price_book"]["from_key_default"] = true;
    return ToJsonText(answer);
}

}  // namespace gpucost::http
