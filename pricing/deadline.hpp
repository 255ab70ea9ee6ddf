#pragma once

#include <chrono>
#include <optional>

#include "pricing/error.hpp"

namespace gpucost::pricing {

// How long one request may compute. Plans and estimates check it between their stages (and the
// training plan's estimate threads between shape groups) and give up with kBudgetExceeded
// rather than hold a worker, and the CPUs the other requests share, past it: a request that
// runs out is answered with no figures at all, never with those of the stages it finished.
// The default deadline never passes (the core's own callers: tools, benchmarks, tests).
class Deadline {
public:
    using Clock = std::chrono::steady_clock;

    Deadline() = default;
    // `budget` from now. A budget of 0 has passed already: the first check fails.
    static Deadline After(std::chrono::milliseconds budget);

    bool Passed() const { return at_.has_value() && Clock::now() >= *at_; }
    // Ok while time is left; else kBudgetExceeded naming the budget.
    [[nodiscard]] Status Check() const;
    std::chrono::milliseconds budget() const { return budget_; }

private:
    std::optional<Clock::time_point> at_;
    std::chrono::milliseconds budget_{0};
};

}  // namespace gpucost::pricing
