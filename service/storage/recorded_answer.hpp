#pragma once

#include <functional>
#include <optional>

#include <pqxx/pqxx>

#include "pricing/error.hpp"
#include "service/ports/catalog_store.hpp"

namespace gpucost::storage {

// The Idempotency-Key protocol every write shares (catalog writes, scenarios, price books,
// actual spend): the answer of a write is recorded with its key in the write's own
// transaction, so that a retry finds it exactly when the write committed, and a retry of the
// same request is answered the recorded answer instead of being judged again (an If-Match
// that the first attempt made stale, an id the first attempt took).

// What an earlier request with this Idempotency-Key recorded, read in the write's own
// transaction: nothing for a new key (or none sent), kInvalidArgument on field
// Idempotency-Key when the key came with another request (method, path or body).
pricing::Result<std::optional<ports::StoredResponse>> RecordedAnswer(
    pqxx::transaction_base& tx, const ports::WriteRequest& request);

// Records `answer` under the request's Idempotency-Key (none sent: nothing), in the write's
// transaction.
void RecordAnswer(pqxx::transaction_base& tx, const ports::WriteRequest& request,
                  const ports::StoredResponse& answer);

// RecordedAnswer after taking the key's transaction-scoped lock, so that two retries racing
// each other apply the write once: the second waits, then finds the first's record. For
// writes that hold no lock of their own that every write takes (the catalog writes hold
// catalog_state's).
pricing::Result<std::optional<ports::StoredResponse>> ClaimKey(pqxx::transaction_base& tx,
                                                               const ports::WriteRequest& request);

// Runs `write` in `tx` once per Idempotency-Key: a retry of the same request is answered what
// the first recorded (replayed), before anything of the write is judged; otherwise the
// write's result, as `encode` answers it, is recorded and committed with it. A failed write
// records nothing (a retry is judged again).
template <typename T>
pricing::Result<ports::StoredResponse> AnswerOnce(
    pqxx::work& tx, const ports::WriteRequest& request,
    const std::function<pricing::Result<T>()>& write,
    const std::function<ports::StoredResponse(const T&)>& encode) {
    auto recorded = ClaimKey(tx, request);
    if (!recorded.ok()) return recorded.error();
    if (recorded.value()) return *recorded.value();
    auto done = write();
    if (!done.ok()) return done.error();
    ports::StoredResponse answer = encode(done.value());
    RecordAnswer(tx, request, answer);
    tx.commit();
    return answer;
}

}  // namespace gpucost::storage
