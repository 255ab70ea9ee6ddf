#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "pricing/error.hpp"
#include "service/ports/write_request.hpp"

namespace gpucost::ports {

// The Idempotency-Key protocol of every write, held in memory: the answer recorded under the
// calling key's id and the Idempotency-Key, replayed to a retry of the same request before
// anything of the write is judged again; the key with another request is kInvalidArgument on
// field Idempotency-Key (as storage/recorded_answer.* does in the write's transaction).
class RecordedAnswers {
public:
    // What `write` answers (recorded), or the recorded answer (replayed). A failed write
    // records nothing.
    pricing::Result<StoredResponse> Once(
        const WriteRequest& request, const std::function<pricing::Result<StoredResponse>()>& write);

private:
    std::map<std::pair<std::int64_t, std::string>, std::pair<std::string, StoredResponse>> seen_;
};

}  // namespace gpucost::ports
