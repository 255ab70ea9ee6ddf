// Stored price books (database mode): decode -> validate against the catalog ->
// PriceBookStore port; and the resolution of a plan's `price_book` (inline or by id).
#include "service/http/routes/price_book_routes.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "service/http/codec/field_table.hpp"
#include "service/http/codec/idempotency.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_reader.hpp"
#include "service/http/codec/page_cursor.hpp"
#include "service/http/codec/price_book_codec.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/codec/timestamp.hpp"
#include "service/http/ports.hpp"
#include "service/http/route_table.hpp"
#include "service/http/routes/auth.hpp"

namespace gpucost::http {

namespace {

using pricing::ErrorCode;
using pricing::MakeError;
using pricing::Result;

constexpr char kPlanPointer[] = "/price_book";
constexpr std::size_t kMaxIdBytes = 200;  // the price_books.id column's check

bool IsBookId(const std::string& id) {
    return !id.empty() && id.size() <= kMaxIdBytes && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
    });
}

// Where a stored book keeps its currency: a version has no column for it (rules and owned
// capacity are JSON arrays as written), so a book not in USD stamps it on each of its rules
// and owned entries as stored, and reading lifts it back to the book. A USD book, and every
// book stored before books had a currency, stamps nothing.
constexpr char kCurrencyMember[] = "currency";

std::string StoredList(json list, const std::string& currency) {
    if (currency != pricing::kBookCurrencyDefault && list.is_array()) {
        for (json& element : list) {
            if (element.is_object()) element[kCurrencyMember] = currency;
        }
    }
    return list.dump();
}

// A stored version's rules and owned capacity as written, and the currency lifted off them.
struct WrittenLists {
    json rules;
    json owned_capacity;
    std::string currency = pricing::kBookCurrencyDefault;
};

WrittenLists ListsOf(const StoredPriceBook& stored) {
    WrittenLists out{json::parse(stored.rules_json, nullptr, false),
                     json::parse(stored.owned_capacity_json, nullptr, false)};
    for (json* list : {&out.rules, &out.owned_capacity}) {
        if (!list->is_array()) continue;
        for (json& element : *list) {
            auto it = element.is_object() ? element.find(kCurrencyMember) : element.end();
            if (it == element.end()) continue;
            if (it->is_string()) out.currency = it->get<std::string>();
            element.erase(it);
        }
    }
    return out;
}

// The stored version as a pricing::PriceBook (its id and version echoed by every answer it
// prices); errors name `pointer`/... as the inline book's do.
Result<pricing::PriceBook> BookOf(const StoredPriceBook& stored, const std::string& pointer) {
    WrittenLists lists = ListsOf(stored);
    json written = {
        {"name", stored.name}, {"rules", std::move(lists.rules)}, {"currency", lists.currency}};
    const json& owned = lists.owned_capacity;
    if (owned.is_array() && !owned.empty()) written["owned_capacity"] = owned;
    auto book = DecodePriceBook(written, pointer);
    if (!book.ok()) return book.error();
    book.value().id = stored.id;
    book.value().version = static_cast<int>(stored.version);
    return book;
}

// Where a plan names a stored book: by id (a string: the latest version), or as a reference
// object {"id", "version"} (that version; the latest without `version`). An object with
// `name` or `rules` is an inline book.
struct StoredBookRef {
    std::string id;
    std::optional<std::int64_t> version;
    bool is_object = false;  // faults name /price_book/id and /price_book/version
};

bool NamesStoredBook(const json& value) {
    return value.is_string() ||
           (value.is_object() && value.contains("id") && !value.contains("name") &&
            !value.contains("rules") && !value.contains("owned_capacity"));
}

// A stored book named by an object: its members, read in this order.
const auto kStoredBookRefFields = std::to_array<RequestField<StoredBookRef>>({
    {"id", [](JsonReader& r, std::string_view key,
              StoredBookRef& ref) { ref.id = r.String(key).value_or(""); }},
    {"version",
     [](JsonReader& r, std::string_view key, StoredBookRef& ref) {
         if (auto version = r.Int(key)) {
             if (*version < 1 && r.ok()) {
                 r.Fail(ErrorCode::kInvalidArgument, key,
                        "must be an integer >= 1 (versions start at 1); leave it out for the "
                        "latest");
             }
             ref.version = *version;
         }
     }},
});

Result<StoredBookRef> ReadStoredBookRef(const json& value) {
    if (value.is_string()) return StoredBookRef{value.get<std::string>(), std::nullopt, false};
    JsonReader r(value, kPlanPointer);
    r.OnlyKnown(RequestKeys(kStoredBookRefFields));
    StoredBookRef ref{"", std::nullopt, true};
    ReadFields(r, ref, kStoredBookRefFields);
    if (!r.ok()) return r.error();
    return ref;
}

// The stored book `ref` names, for a plan; an id with no live book, or a version it never
// had, is the request's fault (422 on /price_book, /price_book/id or /price_book/version),
// not a missing resource.
// A book `caller` may not plan with (another team's, not shared with the caller's) is not there
// for it: the same answer as an unknown id.
Result<pricing::PriceBook> StoredBookForPlan(const Deps& deps, const StoredBookRef& ref,
                                             const std::optional<Principal>& caller) {
    auto stored = IsBookId(ref.id)
                      ? deps.price_books->Get(ref.id, ref.version)
                      : Result<StoredPriceBook>(MakeError(ErrorCode::kNotFound, "", "id"));
    if (stored.ok() && !PlansWithBook(caller, stored.value())) {
        stored = MakeError(ErrorCode::kNotFound, "", "id");
    }
    if (!stored.ok()) {
        const pricing::Error& e = stored.error();
        if (e.code != ErrorCode::kNotFound) return e;
        if (e.field == "version") {
            return MakeError(
                ErrorCode::kInvalidArgument,
                "no version " + std::to_string(ref.version.value_or(0)) + ": " + e.message,
                std::string(kPlanPointer) + "/version");
        }
        return MakeError(ErrorCode::kInvalidArgument,
                         "no price book with id '" + ref.id.substr(0, kMaxIdBytes) +
                             "' (GET /v1/price-books lists them)",
                         ref.is_object ? std::string(kPlanPointer) + "/id" : kPlanPointer);
    }
    return BookOf(stored.value(), kPlanPointer);
}

// The calling key's default book (docs/database.md, "A team key's default book"): none
// without a database, a key, or a default.
Result<std::optional<pricing::PriceBook>> KeyDefaultBook(const Deps& deps,
                                                         const httplib::Request& req) {
    if (!deps.keys || !deps.price_books) return std::optional<pricing::PriceBook>{};
    auto key = BearerKey(req);
    auto principal = key ? deps.keys->Authenticate(*key) : std::nullopt;
    if (!principal || principal->default_price_book.empty()) {
        return std::optional<pricing::PriceBook>{};
    }
    auto book = deps.price_books->Get(principal->default_price_book, std::nullopt);
    if (book.ok() && !PlansWithBook(principal, book.value())) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "the API key's default price book '" + principal->default_price_book +
                             "' is no longer shared with team '" + principal->team +
                             "'; name a price_book, or send \"price_book\": null for list prices",
                         kPlanPointer);
    }
    if (!book.ok()) {
        if (book.error().code != ErrorCode::kNotFound) return book.error();
        return MakeError(ErrorCode::kFailedPrecondition,
                         "the API key's default price book '" + principal->default_price_book +
                             "' is gone; name a price_book, or send \"price_book\": null for "
                             "list prices",
                         kPlanPointer);
    }
    auto priced = BookOf(book.value(), kPlanPointer);
    if (!priced.ok()) return priced.error();
    return std::optional<pricing::PriceBook>(std::move(priced).value());
}

}  // namespace

// `price_book` taken out of `body`, a stored book's id or reference resolved (database mode).
Result<std::optional<pricing::PriceBook>> ResolvePlanBook(const Deps& deps, json& body,
                                                          const std::optional<Principal>& caller) {
    auto it = body.find("price_book");
    if (it == body.end() || !NamesStoredBook(*it)) {
        return TakePriceBook(body);  // inline or absent
    }
    json value = std::move(*it);
    body.erase(it);
    if (!deps.price_books) {
        return MakeError(ErrorCode::kDatabaseRequired,
                         "stored price books (by id) need database mode (start gpucost with "
                         "DATABASE_URL); give the book inline as an object",
                         kPlanPointer);
    }
    auto ref = ReadStoredBookRef(value);
    if (!ref.ok()) return ref.error();
    auto book = StoredBookForPlan(deps, ref.value(), caller);
    if (!book.ok()) return book.error();
    return std::optional<pricing::PriceBook>(std::move(book).value());
}

std::optional<PlanBook> TakePlanPriceBook(const Deps& deps, json& body, const httplib::Request& req,
                                          httplib::Response& res) {
    auto it = body.find("price_book");
    if (it == body.end()) {
        auto book = KeyDefaultBook(deps, req);
        if (!book.ok()) {
            WriteProblem(res, req, book.error());
            return std::nullopt;
        }
        const bool from_default = book.value().has_value();
        return PlanBook{std::move(book).value(), from_default};
    }
    std::optional<Principal> caller;
    if (NamesStoredBook(*it) && deps.price_books) {
        caller = RequireKey(deps, req, res, KeyScope::kRead);
        if (!caller) return std::nullopt;
    }
    auto book = ResolvePlanBook(deps, body, caller);
    if (!book.ok()) {
        WriteProblem(res, req, book.error());
        return std::nullopt;
    }
    return PlanBook{std::move(book).value(), false};
}

namespace {

json BookJson(const StoredPriceBook& b) {
    WrittenLists lists = ListsOf(b);
    return {{"id", b.id},
            {"name", b.name},
            {"version", b.version},
            {"latest_version", b.latest_version},
            {"currency", lists.currency},
            {"rules", std::move(lists.rules)},
            {"owned_capacity", std::move(lists.owned_capacity)},
            {"created_at", FormatTimestamp(b.created_at_us)},
            {"written_at", FormatTimestamp(b.written_at_us)},
            {"written_by", b.written_by.empty() ? json(nullptr) : json(b.written_by)},
            {"team", b.team},
            {"shared_with", b.shared_with.value_or(std::vector<std::string>{})}};
}

void WriteBook(httplib::Response& res, const StoredPriceBook& b, int status) {
    res.set_header("ETag", PriceBookEtag(b.version));
    WriteJson(res, BookJson(b), status);
}

// The common start of every /v1/price-books call: no query parameters but `allowed`, a
// database, and a key of `scope`. On failure writes the problem and returns nullopt.
std::optional<WriteRequest> BeginBookCall(const Deps& deps, const httplib::Request& req,
                                          httplib::Response& res, KeyScope scope,
                                          std::set<std::string> allowed = {}) {
    if (auto checked = QueryParams(req, std::move(allowed)).Check(); !checked.ok()) {
        WriteProblem(res, req, checked.error());
        return std::nullopt;
    }
    if (deps.keys && !deps.price_books) {
        WriteProblem(res, req,
                     MakeError(ErrorCode::kDatabaseRequired,
                               "stored price books need the price book store (database mode)"));
        return std::nullopt;
    }
    auto principal = RequireKey(deps, req, res, scope);  // 409 database_required without one
    if (!principal) return std::nullopt;
    WriteRequest write;
    write.principal = *principal;
    if (req.has_header("If-Match")) write.if_match = req.get_header_value("If-Match");
    return write;
}

// The start of a write: BeginBookCall with an admin key, then the Idempotency-Key.
std::optional<WriteRequest> BeginBookWrite(const Deps& deps, const httplib::Request& req,
                                           httplib::Response& res) {
    auto write = BeginBookCall(deps, req, res, KeyScope::kAdmin);
    if (!write || !ReadRetryHeaders(req, res, *write)) return std::nullopt;
    return write;
}

// A written version's answer as recorded with the Idempotency-Key.
PriceBookStore::BookEncoder BookAnswer(int status) {
    return [status](const StoredPriceBook& b) {
        return AnswerOf([&](httplib::Response& r) { WriteBook(r, b, status); });
    };
}

// A written book's members, read in this order ("id" first: only POST sends it); the name,
// currency, rules and owned capacity are decoded apart (DecodePriceBook).
const auto kWrittenBookFields = std::to_array<RequestField<StoredPriceBook>>({
    {"id", [](JsonReader& r, std::string_view key,
              StoredPriceBook& b) { b.id = r.String(key).value_or(""); }},
    {"name"},
    {"currency"},
    {"rules"},
    {"owned_capacity"},
    {"shared_with", &Optional<&StoredPriceBook::shared_with>},
});

// A written book (POST or PUT body: name, rules and owned capacity, and for POST its id) decoded
// and checked
// against the current catalog as a plan would apply it; errors name /name, /rules/<i>/...
Result<StoredPriceBook> DecodeWrittenBook(const Deps& deps, const json& body, bool with_id) {
    JsonReader r(body, "");
    std::vector<std::string> known = RequestKeys(kWrittenBookFields);
    if (with_id) {
        r.OnlyKnown(known);
        r.Require("id");
    } else {
        known.erase(known.begin());  // PUT names the book in its path, not its body
        r.OnlyKnown(known);
    }
    StoredPriceBook out;
    ReadFields(r, out, kWrittenBookFields);
    if (r.ok() && with_id && !IsBookId(out.id)) {
        r.Fail(ErrorCode::kInvalidArgument, "id",
               "must be 1-200 characters of a-z, 0-9, '.', '-' and '_'");
    }
    if (!r.ok()) return r.error();
    json rules_only = body;
    rules_only.erase("shared_with");  // who plans with the book, not a part of it
    auto book = DecodePriceBook(rules_only, "");
    if (!book.ok()) return book.error();
    if (auto valid = book.value().Validate(""); !valid.ok()) return valid.error();
    auto applied = pricing::ApplyPriceBook(deps.catalog(), book.value());
    if (!applied.ok()) {
        pricing::Error e = applied.error();  // names /price_book/...: this body is the book
        auto reroot = [](std::string& field) {
            if (field.rfind(kPlanPointer, 0) == 0) field.erase(0, sizeof(kPlanPointer) - 1);
        };
        reroot(e.field);
        for (auto& fe : e.errors) reroot(fe.field);
        return e;
    }
    out.name = book.value().name;
    out.rules_json = StoredList(body.value("rules", json::array()), book.value().currency);
    out.owned_capacity_json =
        StoredList(body.value("owned_capacity", json::array()), book.value().currency);
    return out;
}

std::optional<json> ReadBody(const httplib::Request& req, httplib::Response& res) {
    if (!RequireJsonBody(req, res)) return std::nullopt;
    auto body = ParseJsonBody(req.body);
    if (!body.ok()) {
        WriteProblem(res, req, body.error());
        return std::nullopt;
    }
    return std::move(body).value();
}

void ServeCreate(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto write = BeginBookWrite(deps, req, res);
    if (!write) return;
    auto body = ReadBody(req, res);
    if (!body) return;
    auto draft = DecodeWrittenBook(deps, *body, /*with_id=*/true);
    if (!draft.ok()) return WriteProblem(res, req, draft.error());
    auto created = deps.price_books->Create(*write, draft.value(), BookAnswer(201));
    if (!created.ok()) return WriteProblem(res, req, created.error());
    res.set_header("Location", "/v1/price-books/" + draft.value().id);
    WriteStored(res, created.value());
}

// GET /v1/price-books: the books the key reads (its team's; every team's for an org key), by
// id, a page at a time (paged by id: a book stored between pages is listed once, or after the
// walk's position not at all).
void ServeList(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto caller = BeginBookCall(deps, req, res, KeyScope::kRead, {"limit", "cursor"});
    if (!caller) return;
    auto page = ReadPageRequest(QueryParams(req, {"limit", "cursor"}), "price-books");
    if (!page.ok()) return WriteProblem(res, req, page.error());
    auto books = deps.price_books->List();
    if (!books.ok()) return WriteProblem(res, req, books.error());
    // By id as bytes compare, as the cursor's position does (the database's collation may
    // order punctuation otherwise).
    std::sort(books.value().begin(), books.value().end(),
              [](const StoredPriceBook& a, const StoredPriceBook& b) { return a.id < b.id; });
    json items = json::array();
    std::size_t total_count = 0;
    json next_cursor = nullptr;
    for (const StoredPriceBook& b : books.value()) {
        if (!ReadsBook(caller->principal, b)) continue;
        ++total_count;
        if (page.value().after && b.id <= *page.value().after) continue;
        if (items.size() < page.value().limit) {
            items.push_back(BookJson(b));
        } else if (next_cursor.is_null()) {
            next_cursor = NextPageCursor("price-books", items.back()["id"].get<std::string>());
        }
    }
    WriteJson(res, {{"items", std::move(items)},
                    {"limit", page.value().limit},
                    {"next_cursor", std::move(next_cursor)},
                    {"total_count", total_count}});
}

// GET /v1/price-books/{id}: its team's keys and org keys read it; a team it is shared with
// plans with it and is refused its rules (403); to any other team it does not exist (404).
void ServeGet(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto caller = BeginBookCall(deps, req, res, KeyScope::kRead, {"version"});
    if (!caller) return;
    auto version = QueryParams(req, {"version"}).Int("version");
    if (!version.ok()) return WriteProblem(res, req, version.error());
    if (version.value() && *version.value() < 1) {
        return WriteProblem(
            res, req,
            MakeError(ErrorCode::kInvalidArgument,
                      "version must be an integer >= 1 (versions start at 1)", "version"));
    }
    const std::string id = req.matches[1].str();
    auto book = deps.price_books->Get(id, version.value());
    if (book.ok() && !ReadsBook(caller->principal, book.value())) {
        if (PlansWithBook(caller->principal, book.value())) {
            return WriteFault(res, req, Fault::kForbidden,
                              "price book '" + id + "' is shared with team '" +
                                  caller->principal.team +
                                  "' to plan with; its rules are its team's to read");
        }
        book = MakeError(ErrorCode::kNotFound, "no price book with id '" + id + "'", "id");
    }
    if (!book.ok()) return WriteProblem(res, req, book.error());
    WriteBook(res, book.value(), 200);
}

void ServeReplace(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto write = BeginBookWrite(deps, req, res);
    if (!write) return;
    auto body = ReadBody(req, res);
    if (!body) return;
    auto next = DecodeWrittenBook(deps, *body, /*with_id=*/false);
    if (!next.ok()) return WriteProblem(res, req, next.error());
    auto replaced =
        deps.price_books->Replace(*write, req.matches[1].str(), next.value(), BookAnswer(200));
    if (!replaced.ok()) return WriteProblem(res, req, replaced.error());
    WriteStored(res, replaced.value());
}

void ServeDelete(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto write = BeginBookWrite(deps, req, res);
    if (!write) return;
    auto deleted = deps.price_books->Delete(*write, req.matches[1].str());
    if (!deleted.ok()) return WriteProblem(res, req, deleted.error());
    WriteStored(res, deleted.value());
}

}  // namespace

void AddPriceBookRoutes(RouteTable& routes, const Deps& deps) {
    const std::string one = std::string("/v1/price-books/") + kIdPattern;
    routes.Post("/v1/price-books", Bind(deps, &ServeCreate));
    routes.Get("/v1/price-books", Bind(deps, &ServeList));
    routes.Get(one, Bind(deps, &ServeGet));
    routes.Put(one, Bind(deps, &ServeReplace));
    routes.Delete(one, Bind(deps, &ServeDelete));
}

}  // namespace gpucost::http
