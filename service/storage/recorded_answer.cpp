#include "service/storage/recorded_answer.hpp"

namespace gpucost::storage {

pricing::Result<std::optional<ports::StoredResponse>> RecordedAnswer(
    pqxx::transaction_base& tx, const ports::WriteRequest& request) {
    if (request.idempotency_key.empty()) {
        return std::optional<ports::StoredResponse>();
    }
    auto seen = tx.exec_params(
        "SELECT request_hash, status, response_body, etag FROM idempotency_keys"
        " WHERE api_key_id = $1 AND key = $2",
        request.principal.key_id, request.idempotency_key);
    if (seen.empty()) {
        return std::optional<ports::StoredResponse>();
    }
    if (seen[0]["request_hash"].as<std::string>() != request.request_hash) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  "this Idempotency-Key was already used with a different "
                                  "request; use a new key for a new request",
                                  "Idempotency-Key");
    }
    return std::optional<ports::StoredResponse>(ports::StoredResponse{
        seen[0]["status"].as<int>(), seen[0]["response_body"].as<std::string>(),
        seen[0]["etag"].as<std::string>(), true});
}

void RecordAnswer(pqxx::transaction_base& tx, const ports::WriteRequest& request,
                  const ports::StoredResponse& answer) {
    if (request.idempotency_key.empty()) {
        return;
    }
    tx.exec_params(
        "INSERT INTO idempotency_keys (api_key_id, key, request_hash, status,"
        " response_body, etag) VALUES ($1, $2, $3, $4, $5, $6)",
        request.principal.key_id, request.idempotency_key, request.request_hash, answer.status,
        answer.body, answer.etag);
}

pricing::Result<std::optional<ports::StoredResponse>> ClaimKey(pqxx::transaction_base& tx,
                                                               const ports::WriteRequest& request) {
    if (request.idempotency_key.empty()) {
        return std::optional<ports::StoredResponse>();
    }
    tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext($2))",
                   static_cast<int>(request.principal.key_id), request.idempotency_key);
    return RecordedAnswer(tx, request);
}

}  // namespace gpucost::storage
