#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <httplib.h>

#include "pricing/error.hpp"

namespace gpucost::http {

// Typed, validated access to a request's query string. Construct with the parameters the
// route accepts; Check() reports the first unknown parameter (400). Type errors are 400
// (kMalformed) naming the parameter; range checks belong to the domain query's Validate().
class QueryParams {
public:
    QueryParams(const httplib::Request& req, std::set<std::string> allowed);

    // kMalformed for an unknown parameter, or more than kMaxParams values in all.
    [[nodiscard]] pricing::Status Check() const;

    // All values of a parameter; repeated parameters and comma-separated lists both work
    // (?provider=aws,gcp&provider=azure). Empty items are dropped.
    std::vector<std::string> List(const std::string& name) const;
    // The single value of a parameter; kMalformed when given more than once.
    [[nodiscard]] pricing::Result<std::optional<std::string>> One(const std::string& name) const;
    [[nodiscard]] pricing::Result<std::optional<int>> Int(const std::string& name) const;
    [[nodiscard]] pricing::Result<std::optional<double>> Double(const std::string& name) const;
    [[nodiscard]] pricing::Result<std::optional<bool>> Bool(const std::string& name) const;

    static constexpr std::size_t kMaxParams = 64;

private:
    const httplib::Request& req_;
    std::set<std::string> allowed_;
};

}  // namespace gpucost::http
