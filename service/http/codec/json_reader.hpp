#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/error.hpp"

namespace gpucost::http {

// Typed reads of one JSON object of a request body, each failure recorded against a JSON
// pointer. `object` must outlive the reader. The first failure is kept: a wrong type is kMalformed
// (400); an integer out of the int range is kInvalidArgument (422). A null member counts as absent.
class JsonReader {
public:
    JsonReader(const nlohmann::json& object, std::string pointer);

    std::optional<double> Number(std::string_view key);
    std::optional<int> Int(std::string_view key);
    std::optional<std::string> String(std::string_view key);
    std::optional<bool> Bool(std::string_view key);
    // An array of strings (at most kMaxJsonArrayLength by the parser).
    std::optional<std::vector<std::string>> Strings(std::string_view key);
    // A nested object, or nullptr when absent (or on a type error, which is recorded).
    const nlohmann::json* Object(std::string_view key);
    // Fails (kMalformed) on the first member not in `known`.
    void OnlyKnown(std::initializer_list<std::string_view> known);
    void OnlyKnown(const std::vector<std::string>& known);
    // Fails (kInvalidArgument, 422) when `key` is absent or null: a missing field is a
    // well-formed request with an invalid value, the same status in every endpoint.
    void Require(std::string_view key);
    // The member, or nullptr when absent or null (no type check).
    const nlohmann::json* Member(std::string_view key) const;
    // Records a failure found by the caller.
    void Fail(pricing::ErrorCode code, std::string_view key, const std::string& detail);
    // Same, naming element `index` of the array at `key` (`<pointer>/<key>/<index>`).
    void FailAt(pricing::ErrorCode code, std::string_view key, std::size_t index,
                const std::string& detail);

    std::string PointerOf(std::string_view key) const;
    bool ok() const { return !error_.has_value(); }
    const pricing::Error& error() const { return *error_; }

private:
    template <typename Keys>
    void CheckKnown(const Keys& known);

    const nlohmann::json& object_;
    std::string pointer_;
    std::optional<pricing::Error> error_;
};

}  // namespace gpucost::http
