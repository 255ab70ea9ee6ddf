#include "pricing/plan/spot.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "pricing/catalog_loader.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::plan;

namespace {

std::shared_ptr<const InMemoryCatalog> Sample() {
    auto r = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(r.ok());
    return r.value();
}

// The example of issue 4: 100 h on a p5 at $98.32/h on demand or $30/h spot, one
// interruption per 10 h, 3 min checkpoints, 6 min restarts.
SpotPlanRequest IssueExample() {
    SpotPlanRequest r;
    r.job_hours = 100;
    r.on_demand_usd_per_hour = 98.32;
    r.spot_usd_per_hour = 30;
    r.interruptions_per_hour = 0.1;
    r.checkpoint_minutes = 3;
    r.restart_minutes = 6;
    return r;
}

}  // namespace

TEST_SUITE("plan_spot") {
    TEST_CASE("Young's interval is sqrt(2 C MTBF) and Daly's adds the higher-order terms") {
        // C = 0.05 h, MTBF = 10 h: sqrt(2 * 0.05 * 10) = 1 h.
        CHECK(YoungCheckpointIntervalHours(0.05, 0.1) == doctest::Approx(1.0));
        // x = C / 2M = 0.0025: 1 * (1 + 0.05/3 + 0.0025/9) - 0.05 = 0.966944...
        CHECK(DalyCheckpointIntervalHours(0.05, 0.1) == doctest::Approx(0.9669444444));
        // C >= 2M: Daly's interval is the MTBF itself.
        CHECK(DalyCheckpointIntervalHours(3.0, 1.0) == doctest::Approx(1.0));
    }

    TEST_CASE("a monthly interruption share becomes a Poisson rate per hour") {
        // 30 % a month: -ln(0.7) / 730 = 4.88596e-4 per hour.
        CHECK(InterruptionsPerHourFromMonthlyPercent(30) == doctest::Approx(4.88595813614702e-4));
        CHECK(InterruptionsPerHourFromMonthlyPercent(0) == 0.0);
        auto bucket = ParseSpotInterruptionBucket("<5%");
        REQUIRE(bucket);
        CHECK(*RepresentativePercentPerMonth(*bucket) == doctest::Approx(2.5));
        auto open = ParseSpotInterruptionBucket(">20%");
        REQUIRE(open);
        CHECK(*RepresentativePercentPerMonth(*open) == doctest::Approx(30));
    }

    TEST_CASE("the issue's example: Daly interval, 11.8 % overhead and 65.9 % savings") {
        auto catalog = Sample();
        auto plan = PlanSpot(IssueExample(), *catalog);
        REQUIRE(plan.ok());
        const SpotPlan& p = plan.value();
        CHECK(p.checkpoint_interval_hours == doctest::Approx(0.9669444444));
        CHECK(*p.young_checkpoint_interval_hours == doctest::Approx(1.0));
        // 103.42 segments of 1.0169 h, each 10 * e^0.01 * (e^0.101694 - 1) = 1.08121 h.
        CHECK(p.expected_spot_hours == doctest::Approx(111.8171561694));
        CHECK(p.expected_overhead_fraction == doctest::Approx(0.1181715617));
        CHECK(p.expected_spot_cost_usd == doctest::Approx(3354.5146850813));
        CHECK(p.on_demand_cost_usd == doctest::Approx(9832.0));
        CHECK(p.expected_savings_usd == doctest::Approx(6477.4853149187));
        CHECK(p.expected_savings_fraction == doctest::Approx(0.6588166512));
        CHECK(p.recommendation == SpotRecommendation::kSpot);
        // The first-order estimate W (1 + C/tau) / (1 - lambda (R + (tau + C)/2)) = 111.98 h
        // agrees within a few tenths of a percent.
        CHECK(std::abs(p.expected_spot_hours - 111.9849) / 111.9849 < 0.005);
    }

    TEST_CASE("spot with zero interruptions saves exactly the price difference") {
        auto catalog = Sample();
        SpotPlanRequest r = IssueExample();
        r.interruptions_per_hour = 0;
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(plan.value().expected_overhead_fraction == 0.0);
        CHECK(plan.value().expected_spot_hours == 100.0);
        CHECK(plan.value().expected_savings_usd == doctest::Approx(100.0 * (98.32 - 30)).epsilon(1e-12));
        CHECK_FALSE(plan.value().young_checkpoint_interval_hours.has_value());
    }

    TEST_CASE("a higher spot price or interruption rate never lowers the expected spot cost") {
        auto catalog = Sample();
        double previous_cost = 0;
        for (double price : {10.0, 20.0, 30.0, 60.0, 98.0}) {
            SpotPlanRequest r = IssueExample();
            r.spot_usd_per_hour = price;
            auto plan = PlanSpot(r, *catalog);
            REQUIRE(plan.ok());
            CHECK(plan.value().expected_spot_cost_usd >= previous_cost);
            previous_cost = plan.value().expected_spot_cost_usd;
        }
        previous_cost = 0;
        for (double rate : {0.0, 0.001, 0.01, 0.1, 0.5, 2.0}) {
            SpotPlanRequest r = IssueExample();
            r.interruptions_per_hour = rate;
            auto plan = PlanSpot(r, *catalog);
            REQUIRE(plan.ok());
            CHECK(plan.value().expected_spot_cost_usd >= previous_cost);
            previous_cost = plan.value().expected_spot_cost_usd;
        }
    }

    TEST_CASE("the Daly interval is no worse than nearby intervals") {
        auto catalog = Sample();
        auto best = PlanSpot(IssueExample(), *catalog);
        REQUIRE(best.ok());
        for (double interval : {0.5, 0.8, 1.2, 2.0}) {
            SpotPlanRequest r = IssueExample();
            r.checkpoint_interval_hours = interval;
            auto plan = PlanSpot(r, *catalog);
            REQUIRE(plan.ok());
            CHECK(plan.value().expected_spot_hours >= best.value().expected_spot_hours - 1e-9);
        }
    }

    TEST_CASE("the deadline probability counts Poisson interruptions over the run they allow") {
        // D = 120 h: failure-free 105.17 h, average loss 0.6085 h, so 24 interruptions are
        // tolerable; the run then takes 119.77 h: P(Poisson(11.977) <= 24) = 0.999332.
        CHECK(SpotDeadlineProbability(120, 105.1709278943, 0.1, 0.6084722222) ==
              doctest::Approx(0.9993319387));
        CHECK(SpotDeadlineProbability(100, 105, 0.1, 0.6) == 0.0);
        CHECK(SpotDeadlineProbability(200, 105, 0.0, 0.6) == 1.0);
        CHECK(PoissonCdf(0, 2.0) == doctest::Approx(std::exp(-2.0)));
        CHECK(PoissonCdf(3, 2.0) == doctest::Approx(std::exp(-2.0) * (1 + 2 + 2 + 4.0 / 3)));
        CHECK(PoissonCdf(1e9, 5e5) == doctest::Approx(1.0));
        CHECK(PoissonCdf(5e5, 5e5) == doctest::Approx(0.5).epsilon(0.01));
        CHECK(PoissonCdf(-1, 3) == 0.0);
    }

    TEST_CASE("a later deadline never lowers the probability of finishing") {
        struct Case {
            double failure_free, rate, loss;
        };
        for (Case c : {Case{105.17, 0.1, 0.61}, Case{10, 0.9, 2}, Case{10, 1.5, 1},
                       Case{1, 3, 5}, Case{1000, 0.01, 0.3}}) {
            double previous = 0;
            for (double deadline = c.failure_free; deadline <= c.failure_free + 200;
                 deadline += 0.25) {
                double p = SpotDeadlineProbability(deadline, c.failure_free, c.rate, c.loss);
                CHECK(p >= previous - 1e-12);
                previous = p;
            }
        }
    }

    TEST_CASE("a tight deadline turns a good saving into a mixed recommendation") {
        auto catalog = Sample();
        SpotPlanRequest r = IssueExample();
        r.deadline_hours = 108;  // failure-free spot run needs 105.2 h
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(*plan.value().spot_deadline_probability < 0.9);
        CHECK(*plan.value().on_demand_deadline_probability == 1.0);
        CHECK(plan.value().recommendation == SpotRecommendation::kMixed);
        CHECK(*plan.value().mixed_slack_hours == doctest::Approx(8.0));
        CHECK(plan.value().reasoning.find("move to on-demand") != std::string::npos);
    }

    TEST_CASE("small savings, a price above the cap, or a loss recommend on-demand") {
        auto catalog = Sample();
        SpotPlanRequest r = IssueExample();
        r.spot_usd_per_hour = 85;  // saves ~3 %
        CHECK(PlanSpot(r, *catalog).value().recommendation == SpotRecommendation::kOnDemand);
        r.spot_usd_per_hour = 95;  // costs more than on-demand after overhead
        auto loss = PlanSpot(r, *catalog);
        CHECK(loss.value().expected_savings_usd < 0);
        CHECK(loss.value().recommendation == SpotRecommendation::kOnDemand);
        r = IssueExample();
        r.max_spot_usd_per_hour = 25;
        auto capped = PlanSpot(r, *catalog);
        CHECK(capped.value().recommendation == SpotRecommendation::kOnDemand);
        CHECK(capped.value().reasoning.find("maximum") != std::string::npos);
    }

    TEST_CASE("a spot offering supplies its price, its bucket's rate and its on-demand twin") {
        auto catalog = Sample();
        SpotPlanRequest r;
        r.job_hours = 100;
        r.spot_offering_id = "aws-p5.48xlarge-us-east-1-spot";
        r.nodes = 2;
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(plan.value().spot_usd_per_hour == doctest::Approx(2 * 20.9934));
        CHECK(plan.value().on_demand_usd_per_hour == doctest::Approx(2 * 55.04));
        CHECK(*plan.value().on_demand_offering_id == "aws-p5.48xlarge-us-east-1-on-demand");
        CHECK(*plan.value().interruption_bucket == ">20%");
        CHECK(plan.value().interruptions_per_hour ==
              doctest::Approx(2 * InterruptionsPerHourFromMonthlyPercent(30)));
        bool echoed = false;
        for (const auto& a : plan.value().assumptions) {
            echoed = echoed || a.name == "interruption_percent_per_month";
        }
        CHECK(echoed);
    }

    TEST_CASE("wrong offerings and out-of-range values name the field") {
        auto catalog = Sample();
        SpotPlanRequest r;
        r.job_hours = 10;
        r.spot_offering_id = "aws-p5.48xlarge-us-east-1-on-demand";
        auto wrong = PlanSpot(r, *catalog);
        REQUIRE_FALSE(wrong.ok());
        CHECK(wrong.error().code == ErrorCode::kFailedPrecondition);
        CHECK(wrong.error().field == "/spot_offering_id");
        r.spot_offering_id = "nope";
        CHECK(PlanSpot(r, *catalog).error().code == ErrorCode::kNotFound);

        SpotPlanRequest bad = IssueExample();
        bad.job_hours = -1;
        bad.checkpoint_minutes = std::nan("");
        bad.nodes = 0;
        auto invalid = PlanSpot(bad, *catalog);
        REQUIRE_FALSE(invalid.ok());
        CHECK(invalid.error().code == ErrorCode::kInvalidArgument);
        CHECK(invalid.error().field == "/job_hours");
        CHECK(invalid.error().errors.size() == 3);

        SpotPlanRequest missing;
        missing.job_hours = 5;
        auto none = PlanSpot(missing, *catalog);
        REQUIRE_FALSE(none.ok());
        CHECK(none.error().errors.size() == 3);
    }

    TEST_CASE("an interval far too long for the rate is refused rather than overflowing") {
        auto catalog = Sample();
        SpotPlanRequest r = IssueExample();
        r.job_hours = 1e6;
        r.interruptions_per_hour = 10;
        r.checkpoint_interval_hours = 1e5;
        auto plan = PlanSpot(r, *catalog);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().field == "/checkpoint_interval_hours");
    }
}
