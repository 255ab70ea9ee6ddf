#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/error.hpp"

namespace gpucost::http {

// Typed reads of one JSON object of a request body, each failure recorded against a JSON
// pointer. `object` must outlive the reader. The first failure is kept: a wrong type is kMalformed (400); an integer out of
// the int range is kInvalidArgument (422). A null member counts as absent.
class JsonReader {
public:
    JsonReader(const nlohmann::json& object, std::string pointer);

    std::optional<double> Number(const std::string& key);
    std::optional<int> Int(const std::string& key);
    std::optional<std::string> String(const std::string& key);
    std::optional<bool> Bool(const std::string& key);
    // An array of strings (at most kMaxJsonArrayLength by the parser).
    std::optional<std::vector<std::string>> Strings(const std::string& key);
    // A nested object, or nullptr when absent (or on a type error, which is recorded).
    const nlohmann::json* Object(const std::string& key);
    // Fails (kMalformed) on the first member not in `known`.
    void OnlyKnown(const std::vector<std::string>& known);
    // Fails (kInvalidArgument, 422) when `key` is absent or null: a missing field is a
    // well-formed request with an invalid value, the same status in every endpoint.
    void Require(const std::string& key);
    // The member, or nullptr when absent or null (no type check).
    const nlohmann::json* Member(const std::string& key) const;
    // Records a failure found by the caller.
    void Fail(pricing::ErrorCode code, const std::string& key, const std::string& detail);

    std::string PointerOf(const std::string& key) const;
    bool ok() const { return !error_.has_value(); }
    const pricing::Error& error() const { return *error_; }

private:
    const nlohmann::json& object_;
    std::string pointer_;
    std::optional<pricing::Error> error_;
};

}  // namespace gpucost::http
