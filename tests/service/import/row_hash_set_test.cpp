#include "service/import/row_hash_set.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <set>

using gpucost::import::RowHashSet;

TEST_CASE("a row hash set answers as std::set does, through growth, for 0 and clustered keys") {
    RowHashSet set;
    std::set<std::uint64_t> expected;
    // Keys that share their low bits or their high bits, 0 (the table's empty marker), all
    // ones, and each inserted twice: 300,000 distinct keys grow the table many times.
    std::uint64_t x = 88172645463325252ULL;  // xorshift64
    for (int i = 0; i < 100000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        for (std::uint64_t key : {x, std::uint64_t(i) << 40, std::uint64_t(i), ~std::uint64_t(0)}) {
            const bool added = expected.insert(key).second;
            CHECK(set.Insert(key) == added);
            CHECK_FALSE(set.Insert(key));
        }
    }
    CHECK(set.size() == expected.size());
    CHECK(expected.count(0) == 1);
    CHECK_FALSE(set.Insert(0));
}
