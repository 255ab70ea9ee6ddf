#include "service/ports/memory/recorded_answers.hpp"

namespace gpucost::ports {

pricing::Result<StoredResponse> RecordedAnswers::Once(
    const WriteRequest& request, const std::function<pricing::Result<StoredResponse>()>& write) {
    if (request.idempotency_key.empty()) return write();
    const auto key = std::make_pair(request.principal.key_id, request.idempotency_key);
    if (auto found = seen_.find(key); found != seen_.end()) {
        if (found->second.first != request.request_hash) {
            return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                      "this Idempotency-Key was already used with a different "
                                      "request; use a new key for a new request",
                                      "Idempotency-Key");
        }
        StoredResponse replay = found->second.second;
        replay.replayed = true;
        return replay;
    }
    auto answer = write();
    if (answer.ok()) seen_[key] = {request.request_hash, answer.value()};
    return answer;
}

}  // namespace gpucost::ports
