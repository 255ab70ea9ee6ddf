#include "pricing/error.hpp"

namespace gpucost::pricing {

const char* ErrorCodeName(ErrorCode code) {
    switch (code) {
        case ErrorCode::kInvalidArgument:
            return "invalid_argument";
        case ErrorCode::kMalformed:
            return "malformed_request";
        case ErrorCode::kNotFound:
            return "not_found";
        case ErrorCode::kFailedPrecondition:
            return "failed_precondition";
        case ErrorCode::kUnavailable:
            return "unavailable";
        case ErrorCode::kDatabaseRequired:
            return "database_required";
        case ErrorCode::kBudgetExceeded:
            return "request_budget_exceeded";
        case ErrorCode::kInternal:
            return "internal";
    }
    return "internal";
}

}  // namespace gpucost::pricing
