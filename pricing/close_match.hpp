#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpucost::pricing {

// Levenshtein distance between two ids (ids are short: one row of the table at a time).
std::size_t EditDistance(std::string_view a, std::string_view b);

// Up to `limit` of `candidates` ranked for an unknown `query`, case-insensitively: by edit
// distance, where an id that contains the query (or is contained in it) counts as distance 1,
// then ids that start with the query before others at the same distance ("h100" lists
// h100-sxm before h800), then by id. Every candidate takes part.
std::vector<std::string> NearestIds(std::string_view query,
                                    const std::vector<std::string>& candidates, std::size_t limit);

// NearestIds' ranking, keeping only reasonably close ids: at most a third of the longer id
// changed, or one containing the other; nearest first.
std::vector<std::string> CloseMatches(std::string_view query,
                                      const std::vector<std::string>& candidates,
                                      std::size_t limit = 3);

}  // namespace gpucost::pricing
