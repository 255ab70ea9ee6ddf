#include "pricing/deadline.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

using gpucost::pricing::Deadline;
using gpucost::pricing::ErrorCode;

TEST_SUITE("deadline") {
    TEST_CASE("a default deadline never passes; a budget of 0 has passed already") {
        const Deadline none;
        CHECK_FALSE(none.Passed());
        CHECK(none.Check().ok());
        const Deadline spent = Deadline::After(std::chrono::milliseconds(0));
        CHECK(spent.Passed());
        REQUIRE_FALSE(spent.Check().ok());
        CHECK(spent.Check().error().code == ErrorCode::kBudgetExceeded);
    }

    TEST_CASE("a budget far in the future has time left; the error names the budget") {
        // An hour: no machine is that slow, so no clock margin is at stake.
        CHECK(Deadline::After(std::chrono::hours(1)).Check().ok());
        const Deadline spent = Deadline::After(std::chrono::milliseconds(0));
        const std::string message = spent.Check().error().message;
        CHECK(message.find("0 ms") != std::string::npos);
        CHECK(message.find("--request-budget-ms") != std::string::npos);
        CHECK(std::string(gpucost::pricing::ErrorCodeName(ErrorCode::kBudgetExceeded)) ==
              "request_budget_exceeded");
    }
}
