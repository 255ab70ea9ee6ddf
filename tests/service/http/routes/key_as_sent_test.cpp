#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "tests/service/http/routes/memory_fixture.hpp"

using gpucost::testing::MemoryFixture;

// An API key is compared as the client sent it. cpp-httplib 0.11.4 percent-decodes every field
// value, so a key with one byte written as %XX authenticated as the key itself.
TEST_SUITE("key_as_sent") {
    TEST_CASE("a key with a percent-encoded byte is not the key: 401") {
        MemoryFixture fx;
        auto client = fx.server->Client();
        auto plain = client.Get("/v1/price-books", fx.Auth(fx.reader));
        REQUIRE(plain);
        CHECK(plain->status == 200);
        for (std::size_t at : {std::size_t{4}, fx.reader.size() - 1}) {
            std::string encoded = fx.reader;
            char hex[4];
            std::snprintf(hex, sizeof(hex), "%%%02X", static_cast<unsigned char>(encoded[at]));
            encoded.replace(at, 1, hex);
            INFO(encoded);
            auto refused = client.Get("/v1/price-books", fx.Auth(encoded));
            REQUIRE(refused);
            CHECK(refused->status == 401);
        }
    }
}
