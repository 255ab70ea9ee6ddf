#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gpucost::pricing {

// Expected failure categories of the domain core. The HTTP layer maps each to one status
// (service/http/codec/problem.cpp); adding an enumerator without a mapping row fails to compile.
enum class ErrorCode {
    kInvalidArgument,     // a value is out of range or inconsistent (HTTP 422)
    kMalformed,           // the request shape is wrong: type, missing key, syntax (HTTP 400)
    kNotFound,            // an id names nothing (HTTP 404)
    kFailedPrecondition,  // the request is valid but cannot be satisfied (HTTP 409)
    kUnavailable,         // a dependency is down; retry later (HTTP 503)
    kDatabaseRequired,    // the feature needs the database this process runs without (HTTP 409);
                          // retrying cannot help, unlike kUnavailable
    kBudgetExceeded,      // the request ran past its computing budget (deadline.hpp); retry
                          // later or ask for less (HTTP 503)
    kInternal,            // a bug; details only in the log (HTTP 500)
};

// Stable machine-readable name of a code, e.g. "invalid_argument".
const char* ErrorCodeName(ErrorCode code);

// One problem with one field. `field` is a JSON pointer ("/hardware/count") or a query
// parameter name ("limit"); empty when no single field is to blame.
struct FieldError {
    std::string field;
    std::string detail;
    bool operator==(const FieldError&) const = default;
};

// An expected failure. `message` is safe to show to callers; `errors` lists every field
// that failed when validation reports several at once.
struct Error {
    ErrorCode code = ErrorCode::kInternal;
    std::string message;
    std::string field;
    std::vector<FieldError> errors;
};

// Either a value or an Error (C++20 stand-in for std::expected).
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

    bool ok() const { return std::holds_alternative<T>(state_); }
    const T& value() const& { return std::get<T>(state_); }
    T& value() & { return std::get<T>(state_); }
    T&& value() && { return std::get<T>(std::move(state_)); }
    const Error& error() const { return std::get<Error>(state_); }

private:
    std::variant<T, Error> state_;
};

// Result<void>: success carries nothing.
struct Ok {};
using Status = Result<Ok>;

inline Error MakeError(ErrorCode code, std::string message, std::string field = {}) {
    Error e{code, std::move(message), std::move(field), {}};
    if (!e.field.empty()) {
        e.errors.push_back({e.field, e.message});
    }
    return e;
}

}  // namespace gpucost::pricing
