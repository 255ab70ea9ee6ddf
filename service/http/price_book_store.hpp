#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pricing/error.hpp"
#include "service/http/catalog_store.hpp"

namespace gpucost::http {

// Port between the HTTP handlers and stored price books (PostgreSQL mode).
// Implemented in service/storage/price_book_store.*, wired in service/main.cpp; absent (null)
// in embedded mode, where /v1/price-books and "price_book": "<id>" answer 409
// database_required. Every version written is kept: PUT adds one, GET ?version= reads any.

// One version of a stored book.
struct StoredPriceBook {
    std::string id;                   // a slug: [a-z0-9._-]{1,200}
    std::int64_t version = 1;         // this version
    std::int64_t latest_version = 1;  // the one plans get
    std::string name;
    std::string rules_json;  // the rules as written: a JSON array (price_book_codec)
    std::string owned_capacity_json = "[]";  // owned capacity as written: a JSON array
    TimestampUs created_at_us = 0;           // when version 1 was written
    TimestampUs written_at_us = 0;           // when this version was written
    std::string written_by;                  // the writing key's name; empty when unknown
    std::string team = kDefaultTeam;         // the owner: its keys read it, its admins write it
    // The other teams whose keys may plan with the book, but not read it. A write without it
    // (nullopt) keeps the shares as they are.
    std::optional<std::vector<std::string>> shared_with;
};

// Whether `caller` reads book `b` (its rules and versions): a key of its team or an org key.
inline bool ReadsBook(const std::optional<Principal>& caller, const StoredPriceBook& b) {
    return ReadsTeam(caller, b.team);
}
// Whether `caller` plans with book `b`: a reader, or a key of a team the book is shared with.
inline bool PlansWithBook(const std::optional<Principal>& caller, const StoredPriceBook& b) {
    if (ReadsBook(caller, b)) return true;
    const auto& shared = b.shared_with;
    return caller && shared &&
           std::find(shared->begin(), shared->end(), caller->team) != shared->end();
}

// Strong entity tag of a book version: "\"b<version>\"".
std::string PriceBookEtag(std::int64_t version);

class PriceBookStore {
public:
    PriceBookStore() = default;
    virtual ~PriceBookStore() = default;
    PriceBookStore(const PriceBookStore&) = delete;
    PriceBookStore& operator=(const PriceBookStore&) = delete;
    PriceBookStore(PriceBookStore&&) = delete;
    PriceBookStore& operator=(PriceBookStore&&) = delete;

    // Each call is one transaction. kUnavailable when the database cannot be reached.
    // The writes answer as `encode` answers the version written (a delete: DeletedAnswer()),
    // with the Idempotency-Key protocol of the catalog writes: a retry of the same request is
    // answered the recorded answer (replayed) before the id, owner or If-Match is judged again.
    using BookEncoder = std::function<StoredResponse(const StoredPriceBook&)>;
    // Creates version 1 of `draft` (id, name, rules_json, owned_capacity_json, shared_with) by
    // request.principal, owned by its team; kFailedPrecondition on field "/id" when the id is
    // taken (also by a deleted book, or by another team's), kInvalidArgument on
    // "/shared_with/<i>" for a team that does not exist.
    [[nodiscard]] virtual pricing::Result<StoredResponse> Create(const WriteRequest& request,
                                                                 const StoredPriceBook& draft,
                                                                 const BookEncoder& encode) = 0;
    // The latest version, or `version`; kNotFound (field "id" or "version") for an unknown or
    // deleted book or a version it never had. Whoever asks: the caller checks ReadsBook or
    // PlansWithBook.
    [[nodiscard]] virtual pricing::Result<StoredPriceBook> Get(
        std::string_view id, std::optional<std::int64_t> version) = 0;
    // The latest version of every book not deleted, by id (every team's: the caller filters).
    [[nodiscard]] virtual pricing::Result<std::vector<StoredPriceBook>> List() = 0;
    // Writes the next version (name, rules_json, owned_capacity_json of `next`; its shares when
    // `next` names them), by an admin of the book's team: kNotFound for an unknown book or
    // another team's, kFailedPrecondition on kOwnerField (403) for a team the book is shared
    // with, on kIfMatchField when request.if_match names another version (412).
    [[nodiscard]] virtual pricing::Result<StoredResponse> Replace(const WriteRequest& request,
                                                                  std::string_view id,
                                                                  const StoredPriceBook& next,
                                                                  const BookEncoder& encode) = 0;
    // Marks the book deleted (its versions stay); kNotFound, kOwnerField, If-Match as Replace;
    // kFailedPrecondition (field "id", 409) while it is a live API key's default book.
    [[nodiscard]] virtual pricing::Result<StoredResponse> Delete(const WriteRequest& request,
                                                                 std::string_view id) = 0;
};

}  // namespace gpucost::http
