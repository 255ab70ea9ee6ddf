#include "service/storage/pg_price_book_store.hpp"

#include <nlohmann/json.hpp>

#include "service/storage/recorded_answer.hpp"

namespace gpucost::storage {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;
using pricing::Result;

// One version of a book with the book's own columns and the writer's key name.
constexpr char kBookColumns[] =
    "SELECT b.id, v.version, b.current_version, v.name, v.rules::text AS rules,"
    " (extract(epoch from b.created_at) * 1000000)::bigint AS created_at_us,"
    " (extract(epoch from v.written_at) * 1000000)::bigint AS written_at_us,"
    " coalesce(k.name, '') AS written_by, v.owned_capacity::text AS owned_capacity, b.team,"
    " coalesce((SELECT array_to_json(array_agg(sh.team ORDER BY sh.team))"
    " FROM price_book_shares sh WHERE sh.book_id = b.id)::text, '[]') AS shared_with"
    " FROM price_books b JOIN price_book_versions v ON v.book_id = b.id"
    " LEFT JOIN api_keys k ON k.id = v.written_by";

ports::StoredPriceBook BookFromRow(const pqxx::row& r) {
    ports::StoredPriceBook b;
    b.id = r["id"].as<std::string>();
    b.version = r["version"].as<std::int64_t>();
    b.latest_version = r["current_version"].as<std::int64_t>();
    b.name = r["name"].as<std::string>();
    b.rules_json = r["rules"].as<std::string>();
    b.created_at_us = r["created_at_us"].as<std::int64_t>();
    b.written_at_us = r["written_at_us"].as<std::int64_t>();
    b.written_by = r["written_by"].as<std::string>();
    b.owned_capacity_json = r["owned_capacity"].as<std::string>();
    b.team = r["team"].as<std::string>();
    std::vector<std::string> shared;
    for (const auto& t :
         nlohmann::json::parse(r["shared_with"].as<std::string>(), nullptr, false)) {
        if (t.is_string()) shared.push_back(t.get<std::string>());
    }
    b.shared_with = std::move(shared);
    return b;
}

pricing::Error NoBook(std::string_view id) {
    return MakeError(ErrorCode::kNotFound, "no price book with id '" + std::string(id) + "'", "id");
}

// The version just written or read, as the answer shows it.
ports::StoredPriceBook LoadVersion(pqxx::work& tx, std::string_view id, std::int64_t version) {
    auto rows = tx.exec_params(std::string(kBookColumns) + " WHERE b.id = $1 AND v.version = $2",
                               std::string(id), version);
    return BookFromRow(rows.at(0));
}

void InsertVersion(pqxx::work& tx, const ports::WriteRequest& request, std::string_view id,
                   std::int64_t version, const ports::StoredPriceBook& book) {
    tx.exec_params(
        "INSERT INTO price_book_versions (book_id, version, name, rules, written_by,"
        " owned_capacity) VALUES ($1, $2, $3, $4::jsonb, NULLIF($5, 0), $6::jsonb)",
        std::string(id), version, book.name, book.rules_json, request.principal.key_id,
        book.owned_capacity_json);
}

// Replaces the book's shares by `teams` (each an existing team, else kInvalidArgument on
// /shared_with/<i>); the owner's own team is not a share.
pricing::Status WriteShares(pqxx::work& tx, std::string_view id,
                            const std::vector<std::string>& teams) {
    tx.exec_params("DELETE FROM price_book_shares WHERE book_id = $1", std::string(id));
    for (std::size_t i = 0; i < teams.size(); ++i) {
        auto added = tx.exec_params(
            "INSERT INTO price_book_shares (book_id, team) SELECT $1, t.id FROM teams t"
            " WHERE t.id = $2 ON CONFLICT DO NOTHING RETURNING team",
            std::string(id), teams[i]);
        const bool known = !added.empty() ||
                           !tx.exec_params("SELECT 1 FROM teams WHERE id = $1", teams[i]).empty();
        if (!known) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "no team '" + teams[i] + "' (gpucost apikey create --team makes one)",
                             "/shared_with/" + std::to_string(i));
        }
    }
    return pricing::Ok{};
}

// The current version of a live book of the writer's team, locked for a change, after the
// If-Match check. Another team's book is not there for the writer (404), unless it is shared
// with the writer's team, which plans with it and may not change it (403).
Result<std::int64_t> LockForChange(pqxx::work& tx, const ports::WriteRequest& request,
                                   std::string_view id) {
    auto rows = tx.exec_params(
        "SELECT current_version, team, EXISTS (SELECT 1 FROM price_book_shares s WHERE"
        " s.book_id = b.id AND s.team = $2) AS shared FROM price_books b WHERE id = $1 AND"
        " deleted_at IS NULL FOR UPDATE OF b",
        std::string(id), request.principal.team);
    if (rows.empty()) return NoBook(id);
    if (rows[0]["team"].as<std::string>() != request.principal.team) {
        if (!rows[0]["shared"].as<bool>()) return NoBook(id);
        return MakeError(ErrorCode::kFailedPrecondition,
                         "price book '" + std::string(id) + "' belongs to team '" +
                             rows[0]["team"].as<std::string>() + "', which shares it with team '" +
                             request.principal.team + "' to plan with; only its team writes it",
                         ports::kOwnerField);
    }
    const auto current = rows[0]["current_version"].as<std::int64_t>();
    const std::string etag = ports::PriceBookEtag(current);
    if (request.if_match && !ports::IfMatchAccepts(*request.if_match, etag)) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "If-Match does not match the price book's current ETag " + etag +
                             "; it changed since you read it: read it again and reapply your "
                             "change",
                         ports::kIfMatchField);
    }
    return current;
}

// A book that live keys plan with by default is not deleted under them (their plans would
// turn to list prices unannounced): kFailedPrecondition (409) naming the keys. Runs after
// LockForChange, so a concurrent `apikey price-book` (which share-locks the book) is seen.
pricing::Status RefuseIfKeyDefault(pqxx::work& tx, std::string_view id) {
    auto keys = tx.exec_params(
        "SELECT 'gpc_' || prefix || ' (' || name || ')' FROM api_keys"
        " WHERE default_price_book = $1 AND revoked_at IS NULL ORDER BY id",
        std::string(id));
    if (keys.empty()) return pricing::Ok{};
    std::string named;
    for (const auto& k : keys) named += (named.empty() ? "" : ", ") + k[0].as<std::string>();
    return MakeError(ErrorCode::kFailedPrecondition,
                     "price book '" + std::string(id) + "' is the default book of API key(s) " +
                         named +
                         "; clear it first (gpucost apikey price-book PREFIX none) or name "
                         "another book",
                     "id");
}

// Version 1 of a new book: kFailedPrecondition on /id when the id is or was taken.
Result<ports::StoredPriceBook> CreateBook(pqxx::work& tx, const ports::WriteRequest& request,
                                          const ports::StoredPriceBook& draft) {
    auto inserted = tx.exec_params(
        "INSERT INTO price_books (id, team) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING"
        " RETURNING id",
        draft.id, request.principal.team);
    if (inserted.empty()) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "a price book with id '" + draft.id +
                             "' exists or existed (ids of deleted books are not reused); "
                             "PUT /v1/price-books/" +
                             draft.id + " writes a new version of it",
                         "/id");
    }
    InsertVersion(tx, request, draft.id, 1, draft);
    if (draft.shared_with) {
        if (auto shared = WriteShares(tx, draft.id, *draft.shared_with); !shared.ok()) {
            return shared.error();
        }
    }
    return LoadVersion(tx, draft.id, 1);
}

// The book's next version, after LockForChange's checks.
Result<ports::StoredPriceBook> WriteNextVersion(pqxx::work& tx, const ports::WriteRequest& request,
                                                std::string_view id,
                                                const ports::StoredPriceBook& next) {
    auto current = LockForChange(tx, request, id);
    if (!current.ok()) return current.error();
    const std::int64_t version = current.value() + 1;
    InsertVersion(tx, request, id, version, next);
    tx.exec_params("UPDATE price_books SET current_version = $2 WHERE id = $1", std::string(id),
                   version);
    if (next.shared_with) {
        if (auto shared = WriteShares(tx, id, *next.shared_with); !shared.ok()) {
            return shared.error();
        }
    }
    return LoadVersion(tx, id, version);
}

// Marks the book deleted, after LockForChange's checks and while no live key plans with it.
Result<std::monostate> MarkDeleted(pqxx::work& tx, const ports::WriteRequest& request,
                                   std::string_view id) {
    auto current = LockForChange(tx, request, id);
    if (!current.ok()) return current.error();
    if (auto unused = RefuseIfKeyDefault(tx, id); !unused.ok()) return unused.error();
    tx.exec_params("UPDATE price_books SET deleted_at = now() WHERE id = $1", std::string(id));
    return std::monostate{};
}

}  // namespace

Result<ports::StoredResponse> PgPriceBookStore::Create(const ports::WriteRequest& request,
                                                       const ports::StoredPriceBook& draft,
                                                       const BookEncoder& encode) {
    return session_.Run<ports::StoredResponse>(
        [&](pqxx::connection& conn) -> Result<ports::StoredResponse> {
            pqxx::work tx(conn);
            return AnswerOnce<ports::StoredPriceBook>(
                tx, request, [&] { return CreateBook(tx, request, draft); }, encode);
        });
}

Result<ports::StoredPriceBook> PgPriceBookStore::Get(std::string_view id,
                                                     std::optional<std::int64_t> version) {
    return session_.Run<ports::StoredPriceBook>(
        [&](pqxx::connection& conn) -> Result<ports::StoredPriceBook> {
            pqxx::read_transaction tx(conn);
            auto rows = tx.exec_params(
                std::string(kBookColumns) +
                    " WHERE b.id = $1 AND b.deleted_at IS NULL"
                    " AND v.version = coalesce(NULLIF($2, 0), b.current_version)",
                std::string(id), version.value_or(0));  // 0: none asked (versions start at 1)
            if (!rows.empty()) return BookFromRow(rows[0]);
            auto live = tx.exec_params(
                "SELECT current_version FROM price_books WHERE id = $1 AND deleted_at IS NULL",
                std::string(id));
            if (live.empty()) return NoBook(id);
            return MakeError(ErrorCode::kNotFound,
                             "price book '" + std::string(id) + "' has versions 1 to " +
                                 live[0]["current_version"].as<std::string>(),
                             "version");
        });
}

Result<std::vector<ports::StoredPriceBook>> PgPriceBookStore::List() {
    return session_.Run<std::vector<ports::StoredPriceBook>>(
        [&](pqxx::connection& conn) -> Result<std::vector<ports::StoredPriceBook>> {
            pqxx::read_transaction tx(conn);
            std::vector<ports::StoredPriceBook> out;
            for (const auto& r : tx.exec(std::string(kBookColumns) +
                                         " WHERE b.deleted_at IS NULL AND"
                                         " v.version = b.current_version ORDER BY b.id")) {
                out.push_back(BookFromRow(r));
            }
            return out;
        });
}

Result<ports::StoredResponse> PgPriceBookStore::Replace(const ports::WriteRequest& request,
                                                        std::string_view id,
                                                        const ports::StoredPriceBook& next,
                                                        const BookEncoder& encode) {
    return session_.Run<ports::StoredResponse>(
        [&](pqxx::connection& conn) -> Result<ports::StoredResponse> {
            pqxx::work tx(conn);
            return AnswerOnce<ports::StoredPriceBook>(
                tx, request, [&] { return WriteNextVersion(tx, request, id, next); }, encode);
        });
}

Result<ports::StoredResponse> PgPriceBookStore::Delete(const ports::WriteRequest& request,
                                                       std::string_view id) {
    return session_.Run<ports::StoredResponse>(
        [&](pqxx::connection& conn) -> Result<ports::StoredResponse> {
            pqxx::work tx(conn);
            return AnswerOnce<std::monostate>(
                tx, request, [&] { return MarkDeleted(tx, request, id); },
                [](const std::monostate&) { return ports::DeletedAnswer(); });
        });
}

}  // namespace gpucost::storage
