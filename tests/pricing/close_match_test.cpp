#include "pricing/close_match.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using gpucost::pricing::CloseMatches;
using gpucost::pricing::EditDistance;
using gpucost::pricing::NearestIds;

TEST_SUITE("close_match") {
    TEST_CASE("edit distance counts inserts, deletes and substitutions") {
        CHECK(EditDistance("h100", "h100") == 0);
        CHECK(EditDistance("h100", "h800") == 1);
        CHECK(EditDistance("h100", "h100-sxm") == 4);
        CHECK(EditDistance("", "abc") == 3);
        CHECK(EditDistance("kitten", "sitting") == 3);
    }

    TEST_CASE("close matches rank by edit distance and containment") {
        const std::vector<std::string> ids = {"h100-sxm", "h100-pcie", "h200-sxm", "a10"};
        auto close = CloseMatches("h100", ids);
        REQUIRE(close.size() >= 2);
        CHECK(close[0].rfind("h100", 0) == 0);
        CHECK(CloseMatches("zzzzzz", ids).empty());
    }

    TEST_CASE("an id that starts with the query comes before its neighbours at the same distance") {
        // The accelerator ids users abbreviate: "h100" means one of the H100 parts, not the
        // H800 one letter away; "h200" the H200, not B200 or GH200.
        const std::vector<std::string> accelerators = {"a10",  "a100-sxm",  "b200",     "gh200",
                                                       "h20",  "h100-pcie", "h100-sxm", "h200-sxm",
                                                       "h800", "mi300x"};
        auto h100 = NearestIds("h100", accelerators, 5);
        REQUIRE(h100.size() == 5);
        CHECK(h100[0] == "h100-pcie");
        CHECK(h100[1] == "h100-sxm");
        auto h200 = NearestIds("H200", accelerators, 5);
        CHECK(h200.front() == "h200-sxm");
        // Every candidate takes part in NearestIds, however far.
        CHECK(NearestIds("zzzzzz", accelerators, 3).size() == 3);
        CHECK(NearestIds("h100", accelerators, 100).size() == accelerators.size());
    }
}
