#include "pricing/deadline.hpp"

#include <string>

namespace gpucost::pricing {

Deadline Deadline::After(std::chrono::milliseconds budget) {
    Deadline d;
    d.at_ = Clock::now() + budget;
    d.budget_ = budget;
    return d;
}

Status Deadline::Check() const {
    if (!Passed()) return Ok{};
    return MakeError(ErrorCode::kBudgetExceeded,
                     "this request needs more than the " + std::to_string(budget_.count()) +
                         " ms of computing one request may use (--request-budget-ms); ask for "
                         "less (fewer node_counts, accelerators or price book rules, a smaller "
                         "limit) or retry when the server is less busy");
}

}  // namespace gpucost::pricing
