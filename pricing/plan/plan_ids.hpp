#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/error.hpp"

namespace gpucost::pricing::plan {

// Ids in plan constraints compare case-insensitively with the catalog's: each is replaced by
// the catalog's spelling. An id the catalog does not know is a kInvalidArgument naming its
// pointer (`<prefix>/accelerators/0`) with up to three close matches (edit distance), every
// unknown id listed in `errors`.
struct ConstraintIds {
    std::vector<std::string>* providers = nullptr;
    std::vector<std::string>* regions = nullptr;
    std::vector<std::string>* accelerators = nullptr;
};
[[nodiscard]] Status ResolveConstraintIds(const ConstraintIds& ids, const Catalog& catalog,
                                          const std::string& prefix = "/constraints");

}  // namespace gpucost::pricing::plan
