#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "pricing/catalog_loader.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::plan;

namespace {

// Warnings other than the one on a spot price dated before its on-demand comparison (the
// sample's p5 spot price predates its on-demand one).
std::vector<FieldError> ApartFromSpotDate(const std::vector<FieldError>& warnings) {
    std::vector<FieldError> out;
    for (const auto& w : warnings) {
        if (w.field != "/spot_offering_id") out.push_back(w);
    }
    return out;
}

std::shared_ptr<const InMemoryCatalog> Sample() {
    auto r = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(r.ok());
    return r.value();
}

// A worked example: 100 h on a p5 at $98.32/h on demand or $30/h spot, one
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

// A job of `job_hours` at $10/h on demand or $2/h spot, interrupted `rate` times an hour, with
// its checkpoint and restart minutes and a deadline: the cases replayed by simulation below.
SpotPlanRequest SimulatedCase(double job_hours, double rate, double checkpoint_minutes,
                              double restart_minutes, double deadline_hours) {
    SpotPlanRequest r;
    r.job_hours = job_hours;
    r.on_demand_usd_per_hour = 10;
    r.spot_usd_per_hour = 2;
    r.interruptions_per_hour = rate;
    r.checkpoint_minutes = checkpoint_minutes;
    r.restart_minutes = restart_minutes;
    r.deadline_hours = deadline_hours;
    return r;
}

struct Simulated {
    double deadline_probability = 0;
    double mean_hours = 0;
};

// Hours until an unbroken stretch of `hours` completes: an interrupted attempt loses its
// time and is followed by a restart, itself repeated until it runs unbroken.
double SimulateStretch(std::mt19937_64& rng, double rate, double hours, double restart_hours) {
    std::exponential_distribution<double> next(rate);
    double elapsed = 0;
    for (;;) {
        const double gap = next(rng);
        if (gap >= hours) {
            return elapsed + hours;
        }
        elapsed += gap;
        for (;;) {
            const double restart_gap = next(rng);
            if (restart_gap >= restart_hours) {
                elapsed += restart_hours;
                break;
            }
            elapsed += restart_gap;
        }
    }
}

// Replays the plan's run `runs` times: stretches of interval + checkpoint hours, the last
// one the remaining work without checkpoint (written out here, not taken from the code).
Simulated Simulate(std::mt19937_64& rng, const SpotPlan& p, double deadline_hours, int runs) {
    const double tau = p.checkpoint_interval_hours;
    const double full = tau < p.job_hours ? std::ceil(p.job_hours / tau) - 1.0 : 0.0;
    const double last = p.job_hours - full * tau;
    Simulated out;
    for (int i = 0; i < runs; ++i) {
        double t = 0;
        for (double k = 0; k < full; k += 1.0) {
            t += SimulateStretch(rng, p.cluster_interruptions_per_hour, tau + p.checkpoint_hours,
                                 p.restart_hours);
        }
        t += SimulateStretch(rng, p.cluster_interruptions_per_hour, last, p.restart_hours);
        out.mean_hours += t / runs;
        out.deadline_probability += t <= deadline_hours ? 1.0 / runs : 0.0;
    }
    return out;
}

// Replays the mixed plan `runs` times: before each attempt at a stretch (a decision point)
// the job moves to on-demand if elapsed hours + the work left after the last checkpoint, plus
// the checkpoint that stretch would write, pass the deadline. Returns the mean cost: spot
// hours elapsed x spot rate + work left x on-demand rate.
double SimulateMixedCost(std::mt19937_64& rng, const SpotPlan& p, double deadline_hours, int runs) {
    const double tau = p.checkpoint_interval_hours;
    const double full = tau < p.job_hours ? std::ceil(p.job_hours / tau) - 1.0 : 0.0;
    const double last = p.job_hours - full * tau;
    std::exponential_distribution<double> next(p.cluster_interruptions_per_hour);
    double mean = 0;
    for (int i = 0; i < runs; ++i) {
        double t = 0;
        double saved = 0;  // work behind the last checkpoint
        bool moved = false;
        for (double k = 0; k <= full && !moved; k += 1.0) {
            const bool is_last = k == full;
            const double work = is_last ? last : tau;
            const double stretch = is_last ? last : tau + p.checkpoint_hours;
            for (;;) {
                if (t + (p.job_hours - saved) + (is_last ? 0.0 : p.checkpoint_hours) >
                    deadline_hours) {
                    moved = true;
                    break;
                }
                const double gap = next(rng);
                if (gap >= stretch) {
                    t += stretch;
                    saved += work;
                    break;
                }
                t += gap;
                for (double r = next(rng); r < p.restart_hours; r = next(rng)) t += r;
                t += p.restart_hours;
            }
        }
        mean += (t * p.spot_cluster_usd_per_hour +
                 (p.job_hours - saved) * p.on_demand_cluster_usd_per_hour) /
                runs;
    }
    return mean;
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
        // 103 stretches of 1.016944 h, each 10 * e^0.01 * (e^0.1016944 - 1) = 1.08121 h, and a
        // last stretch of 0.404722 h without checkpoint: 10 * e^0.01 * (e^0.0404722 - 1).
        CHECK(p.checkpoints == 103);
        CHECK(p.failure_free_hours == doctest::Approx(105.15));
        CHECK(p.expected_spot_hours == doctest::Approx(111.7817820911));
        CHECK(p.expected_overhead_fraction == doctest::Approx(0.1178178209));
        CHECK(p.expected_spot_cost_usd == doctest::Approx(3353.4534627322));
        CHECK(p.on_demand_cost_usd == doctest::Approx(9832.0));
        CHECK(p.expected_savings_usd == doctest::Approx(6478.5465372678));
        CHECK(*p.expected_savings_fraction == doctest::Approx(0.6589245868));
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
        CHECK(plan.value().expected_savings_usd ==
              doctest::Approx(100.0 * (98.32 - 30)).epsilon(1e-12));
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

    TEST_CASE("the deadline probability and the expected time match a seeded simulation") {
        // Each case goes through PlanSpot (the service's own interval and layout); the
        // simulation then replays that run 20000 times (5000 for the long one). Standard error
        // of a probability is at most 0.0035 (0.0071) and of the mean a fraction of a percent,
        // so the tolerances (0.015 (0.025) absolute on the probability, 1 % on the mean) fail
        // on a wrong model, not on noise.
        auto catalog = Sample();
        struct Case {
            double job_hours, rate, checkpoint_minutes, restart_minutes, deadline_hours;
            int runs;
        };
        const Case cases[] = {
            {100, 1.0, 5, 10, 201.4, 20000},  // the issue's example (default minutes)
            {100, 1.0, 5, 10, 185, 20000},    // the same near its median
            {100, 0.1, 3, 6, 108, 20000},     // the tight deadline of the mixed case below
            {20, 0.05, 5, 30, 21, 20000},     // few interruptions: the atom of none dominates
            {10, 0.5, 30, 20, 40, 20000},     // checkpoint as long as a third of the MTBF
            {500, 0.02, 10, 15, 540, 20000},  // a long job at a low rate
            {1000, 1.0, 5, 10, 1856, 5000},   // ~1800 interruptions (sd of P at most 0.0071)
        };
        std::mt19937_64 rng(20261123);
        for (const Case& c : cases) {
            const SpotPlanRequest r = SimulatedCase(c.job_hours, c.rate, c.checkpoint_minutes,
                                                    c.restart_minutes, c.deadline_hours);
            auto plan = PlanSpot(r, *catalog);
            REQUIRE(plan.ok());
            const SpotPlan& p = plan.value();
            const Simulated sim = Simulate(rng, p, c.deadline_hours, c.runs);
            INFO("job " << c.job_hours << " h, rate " << c.rate << ", deadline " << c.deadline_hours
                        << ": analytic " << *p.spot_deadline_probability << " simulated "
                        << sim.deadline_probability << "; mean " << p.expected_spot_hours << " vs "
                        << sim.mean_hours);
            CHECK(std::abs(*p.spot_deadline_probability - sim.deadline_probability) <
                  (c.runs < 20000 ? 0.025 : 0.015));
            CHECK(std::abs(p.expected_spot_hours / sim.mean_hours - 1.0) < 0.01);
        }
    }

    // A job timed by the estimator was taken as exact: both deadline probabilities ignored the
    // estimate's own error. With a run-time sigma the work itself is drawn log-normal here and
    // the run replayed with the plan's interval (the model scales the interrupted hours
    // instead: within the grid's tolerance plus a little, these cases say).
    TEST_CASE("with a run-time spread the deadline probabilities match a simulation of the work") {
        auto catalog = Sample();
        struct Case {
            double job_hours, rate, deadline_hours, spread;
        };
        const Case cases[] = {
            {100, 1.0, 201.4, 0.20},  // the issue's example: interruptions dominate
            {100, 0.1, 120, 0.20},    // a tight deadline at a modest rate
            {500, 0.02, 600, 0.40},   // a long job, the mixture-of-experts spread
            {20, 0.05, 21, 0.20},     // few interruptions: the run-time factor dominates
        };
        constexpr int kRuns = 20000;
        std::mt19937_64 rng(20261207);
        for (const Case& c : cases) {
            SpotPlanRequest r = SimulatedCase(c.job_hours, c.rate, 5, 10, c.deadline_hours);
            auto exact = PlanSpot(r, *catalog);
            REQUIRE(exact.ok());
            r.run_time_sigma = RunTimeSigma(c.spread);
            auto plan = PlanSpot(r, *catalog);
            REQUIRE(plan.ok());
            const SpotPlan& p = plan.value();
            std::normal_distribution<double> z(0.0, r.run_time_sigma);
            double in_time = 0;
            double on_demand_in_time = 0;
            for (int i = 0; i < kRuns; ++i) {
                SpotPlan drawn = p;
                drawn.job_hours = c.job_hours * std::exp(z(rng));
                in_time += Simulate(rng, drawn, c.deadline_hours, 1).deadline_probability;
                on_demand_in_time += drawn.job_hours <= c.deadline_hours ? 1.0 : 0.0;
            }
            INFO("job " << c.job_hours << " h, rate " << c.rate << ", deadline " << c.deadline_hours
                        << ", spread " << c.spread << ": analytic " << *p.spot_deadline_probability
                        << " simulated " << in_time / kRuns << "; without the spread "
                        << *exact.value().spot_deadline_probability);
            CHECK(std::abs(*p.spot_deadline_probability - in_time / kRuns) < 0.02);
            CHECK(std::abs(*p.on_demand_deadline_probability - on_demand_in_time / kRuns) < 0.015);
            // The spread pulls a likely finish down and an unlikely one up (faster runs too).
            const double without = *exact.value().spot_deadline_probability;
            CHECK((*p.spot_deadline_probability < without) == (without > 0.5));
            CHECK(*p.on_demand_deadline_probability < 1.0);
            CHECK(*exact.value().on_demand_deadline_probability == 1.0);
        }
        // At sigma 0 the probability is the interruption model's alone, to the digit.
        const InterruptedRun run{100, 1.0, 5.0 / 60, 10.0 / 60, 0.5};
        CHECK(SpotDeadlineProbability(201.4, run, 0.0) == SpotDeadlineProbability(201.4, run));
    }

    // With the spread counted, a deadline 5 % past an estimated job is met 9 times in 10 by
    // neither path: the answer stays on-demand (the likelier) and says both chances and the
    // saving given up.
    TEST_CASE(
        "when neither path meets the deadline under the run-time spread, the answer says so") {
        auto catalog = Sample();
        SpotPlanRequest r;
        r.job_hours = 100;
        r.on_demand_usd_per_hour = 10;
        r.spot_usd_per_hour = 2;
        r.interruptions_per_hour = 0.01;
        r.deadline_hours = 105;
        r.run_time_sigma = RunTimeSigma(kDefaultEfficiencySpreadFraction);
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        const SpotPlan& p = plan.value();
        CHECK(*p.on_demand_deadline_probability ==
              doctest::Approx(RunTimeDeadlineProbability(105, 100, r.run_time_sigma)));
        CHECK(*p.on_demand_deadline_probability < 0.9);
        CHECK(*p.spot_deadline_probability < *p.on_demand_deadline_probability);
        CHECK(p.recommendation == SpotRecommendation::kOnDemand);
        CAPTURE(p.reasoning);
        CHECK(p.reasoning.find("neither meets the deadline with probability 90.0%: on-demand "
                               "finishes by it with probability ") != std::string::npos);
        CHECK(p.reasoning.find("expected saving") != std::string::npos);
        // Taken as exact, the same hours meet it on-demand for certain.
        r.run_time_sigma = 0;
        auto exact = PlanSpot(r, *catalog);
        REQUIRE(exact.ok());
        CHECK(*exact.value().on_demand_deadline_probability == 1.0);
    }

    TEST_CASE("the issue's high-rate example now finishes by 201.4 h almost surely") {
        auto catalog = Sample();
        SpotPlanRequest r;
        r.job_hours = 100;
        r.on_demand_usd_per_hour = 10;
        r.spot_usd_per_hour = 2;
        r.interruptions_per_hour = 1;
        r.deadline_hours = 201.4;
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        // Expected 183 h with a standard deviation of about 6 h: 201.4 h is 3 sd out.
        CHECK(plan.value().expected_spot_hours < 190);
        CHECK(*plan.value().spot_deadline_probability > 0.99);
        CHECK(plan.value().recommendation == SpotRecommendation::kSpot);
    }

    TEST_CASE(
        "the deadline probability is 0 before the failure-free run and 1 without interruptions") {
        const InterruptedRun run{100, 0.1, 0.05, 0.1, 1.0};
        const CheckpointLayout layout = LayOutCheckpoints(100, 1.0, 0.05);
        CHECK(layout.full_stretches == 99);
        CHECK(layout.last_stretch_hours == doctest::Approx(1.0));
        CHECK(layout.failure_free_hours == doctest::Approx(104.95));
        CHECK(SpotDeadlineProbability(104.9, run) == 0.0);
        // Exactly the failure-free time: only a run with no interruption at all makes it.
        CHECK(SpotDeadlineProbability(104.95, run) == doctest::Approx(std::exp(-10.495)));
        InterruptedRun calm = run;
        calm.interruptions_per_hour = 0;
        CHECK(SpotDeadlineProbability(104.95, calm) == 1.0);
        CHECK(SpotDeadlineProbability(1e6, run) == doctest::Approx(1.0));
    }

    TEST_CASE("a later deadline never lowers the probability of finishing") {
        for (InterruptedRun run :
             {InterruptedRun{100, 0.1, 0.05, 0.1, 1.0}, InterruptedRun{10, 0.9, 0.1, 0.5, 0.5},
              InterruptedRun{10, 1.5, 0.2, 1.0, 10}, InterruptedRun{1000, 0.01, 0.1, 0.2, 14}}) {
            const double start =
                LayOutCheckpoints(run.work_hours, run.interval_hours, run.checkpoint_hours)
                    .failure_free_hours;
            double previous = 0;
            for (double deadline = start; deadline <= start + 60; deadline += 10) {
                const double p = SpotDeadlineProbability(deadline, run);
                CHECK(p >= previous - 1e-9);
                previous = p;
            }
        }
    }

    TEST_CASE("nodes scale given prices and the interruption rate to the cluster") {
        auto catalog = Sample();
        SpotPlanRequest one = IssueExample();
        SpotPlanRequest four = IssueExample();
        four.nodes = 4;
        auto a = PlanSpot(one, *catalog);
        auto b = PlanSpot(four, *catalog);
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(b.value().spot_usd_per_hour == doctest::Approx(30));
        CHECK(b.value().spot_cluster_usd_per_hour == doctest::Approx(120));
        CHECK(b.value().on_demand_cluster_usd_per_hour == doctest::Approx(4 * 98.32));
        CHECK(b.value().cluster_interruptions_per_hour == doctest::Approx(0.4));
        CHECK(b.value().on_demand_cost_usd == doctest::Approx(4 * 9832.0));
        // Four instances are interrupted four times as often: more overhead per job hour.
        CHECK(b.value().expected_overhead_fraction > a.value().expected_overhead_fraction);
        CHECK(b.value().expected_spot_cost_usd ==
              doctest::Approx(b.value().expected_spot_hours * 120));
        CHECK(b.value().reasoning.find("4 instances") != std::string::npos);
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
        // 108 h - 105.15 h failure-free (100 h work + 103 checkpoints x 3 min).
        CHECK(*plan.value().mixed_slack_hours == doctest::Approx(108 - 105.15));
        // 8 h of allowance over 11.78 h expected overhead: 67.9 % of the job on spot.
        const double share = 8.0 / (plan.value().expected_spot_hours - 100);
        CHECK(*plan.value().expected_mixed_cost_usd ==
              doctest::Approx(share * plan.value().expected_spot_hours * 30 +
                              (1 - share) * 100 * 98.32));
        CHECK(*plan.value().expected_mixed_savings_fraction ==
              doctest::Approx(0.4474).epsilon(1e-3));
        CHECK(plan.value().reasoning.find("moving to on-demand") != std::string::npos);
    }

    TEST_CASE("a mixed plan that moves to on-demand almost at once saves too little") {
        auto catalog = Sample();
        SpotPlanRequest r = IssueExample();
        r.deadline_hours = 100.5;  // 103 checkpoints x 3 min = 5.15 h alone exceed the 0.5 h
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        const SpotPlan& p = plan.value();
        CHECK(*p.expected_savings_fraction > 0.5);  // spot to the end would save 65.9 %
        CHECK(*p.mixed_slack_hours == doctest::Approx(100.5 - 105.15));
        CHECK(*p.expected_mixed_savings_fraction == doctest::Approx(0.028).epsilon(0.05));
        CHECK(p.recommendation == SpotRecommendation::kOnDemand);
        CHECK(p.reasoning.find("below the 10.0%") != std::string::npos);
        CHECK(p.reasoning.find("less than the 103 checkpoints alone take (5.2 h)") !=
              std::string::npos);
    }

    TEST_CASE("the expected mixed cost matches a seeded simulation of the switch rule") {
        auto catalog = Sample();
        std::mt19937_64 rng(20261123);
        // Simulated savings: 4.0 %, 45.4 %, 65.3 % of the on-demand cost.
        for (double deadline : {100.5, 108.0, 115.0}) {
            CAPTURE(deadline);
            SpotPlanRequest r = IssueExample();
            auto plan = PlanSpot(r, *catalog);
            REQUIRE(plan.ok());
            const double analytic = ExpectedMixedCost(plan.value(), deadline);
            const double simulated = SimulateMixedCost(rng, plan.value(), deadline, 4000);
            CHECK(std::abs(analytic - simulated) < 0.015 * plan.value().on_demand_cost_usd);
        }
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
        CHECK(plan.value().spot_usd_per_hour == doctest::Approx(20.9934));
        CHECK(plan.value().spot_cluster_usd_per_hour == doctest::Approx(2 * 20.9934));
        CHECK(plan.value().on_demand_cluster_usd_per_hour == doctest::Approx(2 * 55.04));
        CHECK(*plan.value().on_demand_offering_id == "aws-p5.48xlarge-us-east-1-on-demand");
        CHECK(*plan.value().interruption_bucket == ">20%");
        CHECK(plan.value().interruptions_per_hour ==
              doctest::Approx(InterruptionsPerHourFromMonthlyPercent(30)));
        CHECK(plan.value().cluster_interruptions_per_hour ==
              doctest::Approx(2 * InterruptionsPerHourFromMonthlyPercent(30)));
        bool echoed = false;
        for (const auto& a : plan.value().assumptions) {
            echoed = echoed || a.name == "interruption_percent_per_month";
        }
        CHECK(echoed);
    }

    // 100 job hours on one 8-GPU p5 spot instance against one 1-GPU Lambda instance: the
    // comparison said on-demand was cheaper, pricing eight times less hardware for the same
    // hours, with nothing said.
    TEST_CASE("an on-demand offering of other hardware than the spot one draws a warning") {
        auto catalog = Sample();
        SpotPlanRequest r;
        r.job_hours = 100;
        r.spot_offering_id = "aws-p5.48xlarge-us-east-1-spot";
        auto twin = PlanSpot(r, *catalog);
        REQUIRE(twin.ok());
        CHECK(ApartFromSpotDate(twin.value().warnings).empty());
        r.on_demand_offering_id = "aws-p5.48xlarge-us-east-1-on-demand";  // same shape, named
        CHECK(ApartFromSpotDate(PlanSpot(r, *catalog).value().warnings).empty());
        r.on_demand_offering_id = "lambda-gpu_1x_h100-us-on-demand";
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        const auto warnings = ApartFromSpotDate(plan.value().warnings);
        REQUIRE(warnings.size() == 1);
        CHECK(warnings[0].field == "/on_demand_offering_id");
        CHECK(warnings[0].detail.find("p5.48xlarge (8 x h100-sxm)") != std::string::npos);
        CHECK(warnings[0].detail.find("gpu_1x_h100 (1 x h100-sxm)") != std::string::npos);
        CHECK(plan.value().reasoning.find("different hardware") != std::string::npos);
        CHECK(plan.value().on_demand_usd_per_hour == doctest::Approx(4.29));  // kept as given
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

    // The p5 spot price predates the June-2025 on-demand cut it is compared with.
    TEST_CASE("a spot price dated before the on-demand price it is compared with is warned about") {
        auto catalog = Sample();
        SpotPlanRequest r;
        r.job_hours = 100;
        r.spot_offering_id = "aws-p5.48xlarge-us-east-1-spot";
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        REQUIRE(plan.value().warnings.size() == 1);
        const FieldError& w = plan.value().warnings[0];
        CHECK(w.field == "/spot_offering_id");
        CHECK(w.detail.find("557 days before the on-demand price "
                            "(aws-p5.48xlarge-us-east-1-on-demand, 2026-11-09)") !=
              std::string::npos);
        r.on_demand_usd_per_hour = 55.04;  // a number has no date to compare
        CHECK(PlanSpot(r, *catalog).value().warnings.empty());
    }

    // The spot plan refused (409) 45 of 49 catalog spot offerings that training
    // plans priced at the worst bucket.
    TEST_CASE(
        "a spot offering without a bucket is planned at the worst bucket, as training "
        "plans do") {
        auto base = Sample();
        std::vector<Offering> offerings = base->Offerings().Copy();
        Offering bare = base->FindOffering("aws-p5.48xlarge-us-east-1-spot").value();
        bare.id = "aws-p5.48xlarge-us-east-1-spot-nobucket";
        bare.spot_interruption.reset();
        offerings.push_back(bare);
        auto built = InMemoryCatalog::Build(base->Accelerators(), offerings, "t", "test", 0);
        REQUIRE(built.ok());
        SpotPlanRequest r;
        r.job_hours = 100;
        r.nodes = 2;
        r.spot_offering_id = bare.id;
        auto plan = PlanSpot(r, *built.value());
        REQUIRE(plan.ok());
        const SpotPlan& p = plan.value();
        CHECK_FALSE(p.interruption_bucket.has_value());
        CHECK(p.interruptions_per_hour == doctest::Approx(InterruptionsPerHourFromMonthlyPercent(
                                              kDefaultUnknownSpotPercentPerMonth)));
        CHECK(p.cluster_interruptions_per_hour == doctest::Approx(2 * p.interruptions_per_hour));
        bool warned = false;
        for (const auto& w : p.warnings) {
            warned = warned || w.detail.find(
                                   "no Spot Advisor interruption data; planned at the "
                                   "worst bucket (30% a month)") != std::string::npos;
        }
        CHECK(warned);
        bool echoed = false;
        for (const auto& a : p.assumptions) {
            echoed = echoed || (a.name.view() == "interruption_percent_per_month" && a.value == 30);
        }
        CHECK(echoed);
    }

    // The open >20 % bucket was read as 30 %/month and a 0.9999995 chance
    // reported without a range.
    TEST_CASE("a bucket's rate gives ranges over its bounds, the open bucket up to 50 %") {
        auto catalog = Sample();
        SpotPlanRequest r;
        r.job_hours = 336;
        r.nodes = 8;
        r.deadline_hours = 384;
        r.spot_offering_id = "aws-p5.48xlarge-us-east-1-spot";
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        const SpotPlan& p = plan.value();
        REQUIRE(p.interruption_percent_per_month_range.has_value());
        CHECK(p.interruption_percent_per_month_range->low == 22);
        CHECK(p.interruption_percent_per_month_range->high == kOpenBucketUpperPercentPerMonth);
        REQUIRE(p.expected_spot_cost_usd_range.has_value());
        CHECK(p.expected_spot_cost_usd_range->low < p.expected_spot_cost_usd);
        CHECK(p.expected_spot_cost_usd < p.expected_spot_cost_usd_range->high);
        REQUIRE(p.spot_deadline_probability_range.has_value());
        CHECK(p.spot_deadline_probability_range->low < *p.spot_deadline_probability);
        CHECK(*p.spot_deadline_probability < p.spot_deadline_probability_range->high);
        CHECK(p.reasoning.find("22-50% a month") != std::string::npos);
        bool echoed = false;
        for (const auto& a : p.assumptions) {
            echoed = echoed || a.name.view() == "open_bucket_upper_percent_per_month";
        }
        CHECK(echoed);
        // A rate given by the caller has no bucket to range over.
        r.interruptions_per_hour = 0.001;
        auto given = PlanSpot(r, *catalog);
        REQUIRE(given.ok());
        CHECK_FALSE(given.value().interruption_percent_per_month_range.has_value());
        CHECK_FALSE(given.value().spot_deadline_probability_range.has_value());
    }

    TEST_CASE("a price or rate given over the spot offering's catalog figure is named") {
        auto catalog = Sample();
        SpotPlanRequest r;
        r.job_hours = 100;
        r.spot_offering_id = "aws-p5.48xlarge-us-east-1-spot";
        CHECK(ApartFromSpotDate(PlanSpot(r, *catalog).value().warnings).empty());
        r.spot_usd_per_hour = 20.9934;  // the catalog's own price
        CHECK(ApartFromSpotDate(PlanSpot(r, *catalog).value().warnings).empty());
        r.spot_usd_per_hour = 10;
        r.interruptions_per_hour = 0.1;
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        const SpotPlan& p = plan.value();
        CHECK(p.spot_usd_per_hour == 10);  // the value given is used
        const auto warnings = ApartFromSpotDate(p.warnings);
        REQUIRE(warnings.size() == 2);
        CHECK(warnings[0].field == "/spot_usd_per_hour");
        CHECK(warnings[0].detail.find("$10.0000/h overrides") != std::string::npos);
        CHECK(warnings[0].detail.find("$20.9934/h") != std::string::npos);
        CHECK(warnings[1].field == "/interruptions_per_hour");
        CHECK(warnings[1].detail.find("0.100000 per instance-hour overrides") != std::string::npos);
        CHECK(warnings[1].detail.find("bucket >20%, 0.000489 per instance-hour (30.0% a month)") !=
              std::string::npos);
        CHECK(p.reasoning.find("different hardware") == std::string::npos);
    }

    TEST_CASE("a denormal on-demand price is refused, not answered with an infinite saving") {
        auto catalog = Sample();
        SpotPlanRequest r = IssueExample();
        r.on_demand_usd_per_hour = 5e-324;
        auto plan = PlanSpot(r, *catalog);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().field == "/on_demand_usd_per_hour");
    }
}

TEST_SUITE("plan_spot_owned") {
    // 100 h on two p5 instances from 2026-12-01, no interruptions (spot costs exactly
    // 100 h x 2 x $20.9934 = $4,198.68), one p5 on-demand instance owned for the first two days.
    SpotPlanRequest OwnedExample(int owned_nodes, const std::string& end_date) {
        SpotPlanRequest r;
        r.job_hours = 100;
        r.spot_offering_id = "aws-p5.48xlarge-us-east-1-spot";
        r.interruptions_per_hour = 0;
        r.nodes = 2;
        r.start_date = "2026-12-01";
        r.today = "2026-11-27";
        r.owned_capacity = {
            {"aws-p5.48xlarge-us-east-1-on-demand", owned_nodes, "2026-12-01", end_date, 30}};
        return r;
    }

    TEST_CASE("owned hours of the on-demand path cost nothing at the margin; the rest is paid") {
        auto catalog = Sample();
        auto plan = PlanSpot(OwnedExample(1, "2026-12-03"), *catalog);
        REQUIRE(plan.ok());
        const SpotPlan& p = plan.value();
        CHECK(p.expected_spot_cost_usd == doctest::Approx(4198.68));
        // One owned instance for 48 h of the 100 h: 48 of 200 instance-hours covered; the
        // other 152 at $55.04: $8,366.08 (without it 200 x $55.04 = $11,008).
        REQUIRE(p.owned.has_value());
        CHECK(p.owned->instance_hours == doctest::Approx(48));
        CHECK(p.owned->sunk_usd == doctest::Approx(1440));
        CHECK(p.owned->without_owned_cost_usd == doctest::Approx(11008));
        CHECK(p.on_demand_cost_usd == doctest::Approx(8366.08));
        CHECK(p.expected_savings_usd == doctest::Approx(8366.08 - 4198.68));
        CHECK(*p.expected_savings_fraction == doctest::Approx(4167.40 / 8366.08));
        CHECK(p.recommendation == SpotRecommendation::kSpot);
        CHECK(*p.start_date == "2026-12-01");
        CHECK(*p.start_date_source == "request");
        CHECK(p.reasoning.find("covers 48.0 of the on-demand path's 200.0 instance-hours") !=
              std::string::npos);
        CHECK(p.reasoning.find("the other 152.0 instance-hours are paid on demand") !=
              std::string::npos);
    }

    TEST_CASE("owned capacity covering the whole run beats spot, and the answer says so") {
        auto catalog = Sample();
        auto plan = PlanSpot(OwnedExample(2, "2027-01-01"), *catalog);
        REQUIRE(plan.ok());
        const SpotPlan& p = plan.value();
        REQUIRE(p.owned.has_value());
        CHECK(p.owned->instance_hours == doctest::Approx(200));
        CHECK(p.owned->sunk_usd == doctest::Approx(6000));
        CHECK(p.on_demand_cost_usd == 0);
        CHECK(p.expected_savings_usd == doctest::Approx(-4198.68));
        CHECK_FALSE(p.expected_savings_fraction.has_value());
        CHECK(p.recommendation == SpotRecommendation::kOnDemand);
        CHECK(p.reasoning.find("running on owned capacity beats spot") != std::string::npos);
        // A negative saving reads as money: "-$4,199", not "$-4198.68".
        CHECK(p.reasoning.find("expected saving -$4,199") != std::string::npos);
        CHECK(p.reasoning.find("$-") == std::string::npos);
    }

    TEST_CASE("owned capacity outside the job's window covers nothing, and is said to") {
        auto catalog = Sample();
        SpotPlanRequest r = OwnedExample(2, "2027-01-01");
        r.start_date.reset();
        r.today = "2027-02-01";  // the job starts after the reservation ends
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        CHECK_FALSE(plan.value().owned.has_value());
        CHECK(plan.value().on_demand_cost_usd == doctest::Approx(11008));
        CHECK(*plan.value().start_date == "2027-02-01");
        CHECK(*plan.value().start_date_source == "today");
        CHECK(plan.value().reasoning.find("covers none of the on-demand path's hours") !=
              std::string::npos);
    }

    TEST_CASE("the mixed plan's on-demand tail uses owned capacity too") {
        auto catalog = Sample();
        SpotPlanRequest r = IssueExample();
        r.on_demand_usd_per_hour.reset();
        r.spot_offering_id = "aws-p5.48xlarge-us-east-1-spot";
        r.spot_usd_per_hour = 10;
        r.deadline_hours = 108;
        r.start_date = "2026-12-01";
        // Owned from the fifth day (hour 96): the last 12 h of the on-demand tail (from ~76 h
        // on spot to 108 h) run on it.
        r.owned_capacity = {
            {"aws-p5.48xlarge-us-east-1-on-demand", 1, "2026-12-05", "2027-01-01", 30}};
        auto plan = PlanSpot(r, *catalog);
        REQUIRE(plan.ok());
        const SpotPlan& p = plan.value();
        REQUIRE(p.expected_mixed_cost_usd.has_value());
        const double share = 8.0 / (p.expected_spot_hours - 100);
        const double switch_hour = share * p.expected_spot_hours;
        const double tail = (1 - share) * 100;
        REQUIRE(switch_hour < 96);  // the tail starts before the reservation: only part covered
        CHECK(switch_hour + tail == doctest::Approx(108));
        CHECK(*p.expected_mixed_cost_usd ==
              doctest::Approx(share * p.expected_spot_hours * 10 + (tail - 12) * 55.04));
        // The on-demand path: 100 h, of which the 4 h from hour 96 are owned.
        REQUIRE(p.owned.has_value());
        CHECK(p.owned->instance_hours == doctest::Approx(4));
        CHECK(p.on_demand_cost_usd == doctest::Approx(96 * 55.04));
        CHECK(p.recommendation == SpotRecommendation::kMixed);
    }

    TEST_CASE("a start date that is not a date is refused naming it") {
        auto catalog = Sample();
        SpotPlanRequest r = OwnedExample(1, "2026-12-03");
        r.start_date = "December";
        auto plan = PlanSpot(r, *catalog);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().field == "/start_date");
    }
}
