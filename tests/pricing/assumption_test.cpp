#include "pricing/assumption.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>

using gpucost::pricing::Assumption;
using gpucost::pricing::AssumptionText;
using gpucost::pricing::SourceOf;

TEST_SUITE("assumption") {
    TEST_CASE("a literal text is referred to, a text made at run time is owned") {
        AssumptionText literal = "goodput";
        CHECK(literal.is_literal());
        CHECK(literal == "goodput");
        CHECK(literal.view().data() == AssumptionText("goodput").view().data());

        std::string made = "catalog: ";
        made += "NVIDIA datasheet";
        AssumptionText owned = made;
        made.assign("changed afterwards");
        CHECK_FALSE(owned.is_literal());
        CHECK(owned == "catalog: NVIDIA datasheet");
        CHECK(owned.str() == "catalog: NVIDIA datasheet");
    }

    TEST_CASE("a choice between literals of different lengths is copied; of one length, kept") {
        for (bool given : {true, false}) {
            // Different lengths decay to a pointer whose storage is unknown: copied.
            AssumptionText copied = given ? "request" : "default value";
            CHECK_FALSE(copied.is_literal());
            CHECK(copied == (given ? "request" : "default value"));
            // Equal lengths stay an array: one of the two literals, referred to.
            AssumptionText kept = given ? "request" : "default";
            CHECK(kept.is_literal());
            CHECK(kept == (given ? "request" : "default"));
        }
    }

    TEST_CASE("copies share an owned text; a moved-from text is empty") {
        AssumptionText original = std::string("formatted 0.75");
        AssumptionText copy = original;
        CHECK(copy.view().data() == original.view().data());
        AssumptionText moved = std::move(original);
        CHECK(moved == "formatted 0.75");
        CHECK(original.empty());  // NOLINT(bugprone-use-after-move): the documented state
        {
            AssumptionText scoped = std::string("short-lived");
            copy = scoped;
        }
        CHECK(copy == "short-lived");
    }

    TEST_CASE("SourceOf says request when the caller gave the value, else the default's source") {
        CHECK(SourceOf(true, "paper") == "request");
        CHECK(SourceOf(true, "paper").is_literal());
        CHECK(SourceOf(false, "paper") == "paper");
        CHECK(SourceOf(false, std::string("made")) == "made");
    }

    TEST_CASE("an assumption copies as a value") {
        Assumption a{"pue", 1.2, "ratio", "datacentre power usage effectiveness",
                     SourceOf(false, std::string("default ") + "1.2")};
        Assumption b = a;
        b.value = 1.4;
        CHECK(a.value == 1.2);
        CHECK(b.name == "pue");
        CHECK(b.source == "default 1.2");
    }
}
