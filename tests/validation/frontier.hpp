#pragma once

#include <string>

#include "pricing/catalog.hpp"

namespace gpucost::validation {

// gpucost_validate --frontier DIR: every tests/data/frontier-format row of DIR/*.jsonl (one JSON
// object per line: id, class, split, endpoint, request, metric, published, source, note) sent
// through the service's own request codec and estimator as POST /v1/estimates/<endpoint> would
// be, printed with predicted, published and the signed error, then the median and p90 absolute
// error per split (fit, holdout) and class. A row the service refuses is printed with its
// problem and counted as unanswered. Exit 0; 1 when a line is not a row (a missing member, an
// unknown metric); 2 when DIR holds no .jsonl file. No accuracy targets are enforced here.
int RunFrontier(const std::string& directory, const pricing::Catalog& catalog);

}  // namespace gpucost::validation
