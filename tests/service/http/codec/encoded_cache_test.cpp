#include "service/http/codec/encoded_cache.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <string>

#include "pricing/offering.hpp"
#include "service/http/codec/json_codec.hpp"

using gpucost::http::AssumptionDetail;
using gpucost::http::EncodeAssumptions;
using gpucost::pricing::Assumption;
using gpucost::pricing::Assumptions;

namespace {

// What the answer held before the texts were cached: the DOM's own encoding.
std::string Reference(const Assumptions& as) {
    return gpucost::http::ToJson(as).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

TEST_SUITE("encoded_cache") {
    TEST_CASE("assumptions encode as the DOM does, literal or made texts, first time or cached") {
        std::string made_source = "catalog: ";
        made_source += "vendor \"datasheet\"\n";
        Assumptions as = {
            {"goodput", 0.85, "fraction", "productive share", "paper"},
            {"peak_tflops", 989.0, "TFLOP/s", "dense peak at bf16", made_source},
            {"quoted", 1e-7, "s", "a \"quoted\" description\twith a tab", "default"},
        };
        for (int round = 0; round < 2; ++round) {
            CAPTURE(round);
            CHECK(EncodeAssumptions(as, AssumptionDetail::kFull) == Reference(as));
        }
    }

    TEST_CASE("assumptions alike but for one text never share an encoding") {
        // Same name, unit, source and description length; only the description differs.
        Assumptions first = {{"x", 1, "s", "description A", "src"}};
        Assumptions second = {{"x", 1, "s", std::string("description B"), "src"}};
        Assumptions third = {{"x", 1, "s", std::string("description C"), "src"}};
        CHECK(EncodeAssumptions(first, AssumptionDetail::kFull) == Reference(first));
        CHECK(EncodeAssumptions(second, AssumptionDetail::kFull) == Reference(second));
        CHECK(EncodeAssumptions(third, AssumptionDetail::kFull) == Reference(third));
        CHECK(EncodeAssumptions(second, AssumptionDetail::kFull) == Reference(second));
    }

    TEST_CASE("summary keeps name, unit and value; none is an empty array") {
        Assumptions as = {{"goodput", 0.85, "fraction", "productive share", "paper"}};
        CHECK(EncodeAssumptions(as, AssumptionDetail::kSummary) ==
              R"([{"name":"goodput","unit":"fraction","value":0.85}])");
        CHECK(EncodeAssumptions(as, AssumptionDetail::kFull) ==
              R"([{"description":"productive share","name":"goodput","source":"paper",)"
              R"("unit":"fraction","value":0.85}])");
        CHECK(EncodeAssumptions(as, AssumptionDetail::kNone) == "[]");
    }

    TEST_CASE("an offering listed before the cache filled is still served from it after") {
        // The cache's answer for a key does not change while the catalog version does not, so
        // a changed offering under the same version shows whether the text came from the
        // cache. Clearing the whole cache when full (the old behaviour) lost it.
        const std::string version = "cache-test-version";
        gpucost::pricing::Offering listed;
        listed.id = "listed-first";
        listed.price.usd_per_hour = 1.0;
        std::string first;
        gpucost::http::AppendOfferingJson(first, version, listed, "2026-12-06");
        for (std::size_t i = 0; i < gpucost::http::kMaxCachedTexts; ++i) {
            gpucost::pricing::Offering other;
            other.id = "other-" + std::to_string(i);
            std::string ignored;
            gpucost::http::AppendOfferingJson(ignored, version, other, "2026-12-06");
        }
        listed.price.usd_per_hour = 2.0;  // not what the cache holds
        std::string again;
        gpucost::http::AppendOfferingJson(again, version, listed, "2026-12-06");
        CHECK(again == first);
    }
}
