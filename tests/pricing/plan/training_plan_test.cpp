#include "pricing/plan/training_plan.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "pricing/calendar.hpp"
#include "pricing/catalog_loader.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "pricing/money.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_stages.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::plan;

namespace {

std::shared_ptr<const InMemoryCatalog> Sample() {
    auto r = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(r.ok());
    return r.value();
}

// The sample catalog with every price multiplied by `factor`.
std::shared_ptr<const InMemoryCatalog> Scaled(const Catalog& base, double factor) {
    std::vector<Offering> offerings = base.Offerings().Copy();
    for (auto& o : offerings) {
        o.price.usd_per_hour *= factor;
    }
    auto r = InMemoryCatalog::Build(base.Accelerators(), offerings, "scaled", "test", 0);
    REQUIRE(r.ok());
    return r.value();
}

// A 7B-parameter model on 20B tokens in bf16.
TrainingPlanRequest SevenB() {
    TrainingPlanRequest r;
    r.workload.model.params_b = 7;
    r.workload.tokens_b = 20;
    r.workload.precision = Precision::kBf16;
    r.constraints.max_total_accelerators = 64;
    r.limit = kMaxPlanLimit;
    return r;
}

std::string KeyOf(const TrainingPlanOption& o) {
    return o.offering->id + "@" + std::to_string(o.nodes);
}

// Checks that `judged`, within `budget_usd` on average but not at its p90, has the log-normal
// budget_probability of `sigma` (median its expected bill) and misses budget_confidence by it.
void CheckMissesBudgetConfidence(const TrainingPlanOption& judged, double budget_usd,
                                 double sigma) {
    REQUIRE(judged.budget_probability.has_value());
    const double z = std::log(budget_usd / judged.expected_cost_usd) / sigma;
    CHECK(*judged.budget_probability == doctest::Approx(0.5 * std::erfc(-z / std::sqrt(2.0))));
    CHECK(*judged.budget_probability > 0.5);
    CHECK(*judged.budget_probability < kDefaultBudgetConfidence);
    CHECK_FALSE(judged.within_budget);
    REQUIRE(judged.violations.size() == 1);
    CHECK(judged.violations[0].constraint == "budget_confidence");
    CHECK(judged.violations[0].limit == kDefaultBudgetConfidence);
}

// The option of `plan` with key `key` (KeyOf), or null when it is not listed.
const TrainingPlanOption* FindOption(const TrainingPlan& plan, const std::string& key) {
    for (const auto& o : plan.options) {
        if (KeyOf(o) == key) return &o;
    }
    return nullptr;
}

const PlanReference& Ref() {
    return gpucost::testing::SamplePlanReference();
}

Result<TrainingPlan> Plan(const TrainingPlanRequest& request, const Catalog& catalog) {
    return PlanTraining(request, catalog, Ref());
}

std::size_t Skipped(const TrainingPlan& plan, const std::string& reason) {
    for (const auto& [name, count] : plan.skipped) {
        if (name == reason) {
            return count;
        }
    }
    FAIL("no skip reason " << reason);
    return 0;
}

// The sample catalog plus copies of the p5 on-demand offering under `extra` (id suffix,
// price type, USD/h).
std::shared_ptr<const InMemoryCatalog> WithP5Variants(
    const std::vector<std::tuple<std::string, PriceType, double>>& extra) {
    auto base = Sample();
    std::vector<Offering> offerings = base->Offerings().Copy();
    auto found = base->FindOffering("aws-p5.48xlarge-us-east-1-on-demand");
    REQUIRE(found.ok());
    const Offering p5 = found.value();
    for (const auto& [suffix, type, usd] : extra) {
        Offering o = p5;
        o.id = "aws-p5.48xlarge-us-east-1-" + suffix;
        o.price_type = type;
        o.price.usd_per_hour = usd;
        offerings.push_back(o);
    }
    auto r = InMemoryCatalog::Build(base->Accelerators(), offerings, "variants", "test", 0);
    REQUIRE(r.ok());
    return r.value();
}

}  // namespace

TEST_SUITE("plan_training") {
    TEST_CASE("the node-count ladder is powers of two within the accelerator bounds") {
        CHECK(CandidateNodeCounts(8, 1, 64) == std::vector<int>{1, 2, 4, 8});
        CHECK(CandidateNodeCounts(8, 20, 64) == std::vector<int>{4, 8});
        CHECK(CandidateNodeCounts(1, 1, 7) == std::vector<int>{1, 2, 4});
        CHECK(CandidateNodeCounts(16, 1, 8).empty());
    }

    TEST_CASE("explicit node counts replace the ladder") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.constraints.node_counts = {3, 1, 3, 6};
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        std::vector<int> nodes;
        for (const auto& o : plan.value().options) {
            nodes.push_back(o.nodes);
        }
        std::sort(nodes.begin(), nodes.end());
        CHECK(nodes == std::vector<int>{1, 3, 6});
        CHECK(plan.value().estimates == 4);  // 3 counts + 1 re-run for the assumption echo
    }

    TEST_CASE("a plan is the same whatever number of threads its shape estimates run on") {
        // Shapes sharing an accelerator and count per node are worked out by one thread and
        // counted in the candidates' order afterwards, so options, counts, skip reasons and
        // their examples must not depend on how the work was spread.
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.max_total_accelerators = 256;
        r.include_infeasible = true;
        r.constraints.deadline_hours = 200;
        auto one = Plan(r, *catalog);
        REQUIRE(one.ok());
        REQUIRE(one.value().options.size() > 4);
        for (int threads : {2, 3, 16}) {
            CAPTURE(threads);
            r.estimate_threads = threads;
            auto many = Plan(r, *catalog);
            REQUIRE(many.ok());
            const TrainingPlan& a = one.value();
            const TrainingPlan& b = many.value();
            CHECK(a.estimates == b.estimates);
            CHECK(a.hardware_shapes == b.hardware_shapes);
            CHECK(a.skipped == b.skipped);
            CHECK(a.skipped_examples == b.skipped_examples);
            CHECK(a.reasoning == b.reasoning);
            REQUIRE(a.options.size() == b.options.size());
            for (std::size_t i = 0; i < a.options.size(); ++i) {
                CHECK(KeyOf(a.options[i]) == KeyOf(b.options[i]));
                CHECK(a.options[i].wall_clock_hours == b.options[i].wall_clock_hours);
                CHECK(a.options[i].expected_cost_usd == b.options[i].expected_cost_usd);
            }
        }
        // A workload error is the plan's error with any number of threads.
        r.workload.lora_rank = 8;  // only valid with an adapter mode
        r.estimate_threads = 1;
        auto bad_one = Plan(r, *catalog);
        r.estimate_threads = 4;
        auto bad_many = Plan(r, *catalog);
        REQUIRE_FALSE(bad_one.ok());
        REQUIRE_FALSE(bad_many.ok());
        CHECK(bad_one.error().message == bad_many.error().message);
        CHECK(bad_one.error().field == bad_many.error().field);
    }

    TEST_CASE("shapes differing only in scale-out share their one-node estimate") {
        auto base = Sample();
        std::vector<Offering> offerings = base->Offerings().Copy();
        Offering slow = offerings.front();  // p5 on demand, 3200 Gbit/s
        REQUIRE(slow.id == "aws-p5.48xlarge-us-east-1-on-demand");
        slow.id = "aws-p5.48xlarge-slow-net";
        slow.scale_out_gbit_per_s = 400;
        offerings.push_back(slow);
        auto catalog = InMemoryCatalog::Build(base->Accelerators(), offerings, "t", "t", 0);
        REQUIRE(catalog.ok());
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.constraints.node_counts = {1, 2};
        auto plan = Plan(r, *catalog.value());
        REQUIRE(plan.ok());
        CHECK(plan.value().hardware_shapes == 2);
        CHECK(plan.value().estimates == 4);  // 3 counts + 1 re-run for the assumption echo
        // And sharing is exact: a fresh one-node estimate with the slow network agrees.
        estimate::ClusterSpec cluster;
        cluster.accelerator = base->FindAccelerator("h100-sxm").value();
        cluster.accelerator_count = 8;
        cluster.accelerators_per_node = 8;
        cluster.scale_out_gbit_per_s_per_node = 400;
        auto fresh = estimate::EstimateTraining(r.workload, cluster);
        REQUIRE(fresh.ok());
        for (const auto& o : plan.value().options) {
            if (o.nodes == 1) {
                CHECK(o.wall_clock_hours == fresh.value().wall_clock_hours);
            } else {
                CHECK(o.wall_clock_hours != fresh.value().wall_clock_hours);
            }
        }
    }

    TEST_CASE("the quantile factor combines log-normal spreads in quadrature") {
        CHECK(CostQuantileFactor(0.2, 0) == doctest::Approx(1.2));
        CHECK(CostQuantileFactor(0, 0.05) == doctest::Approx(1.05));
        // sigma = sqrt(ln(1.2)^2 + ln(1.05)^2) / z; factor = exp(z sigma).
        CHECK(CostQuantileFactor(0.2, 0.05) ==
              doctest::Approx(std::exp(std::hypot(std::log(1.2), std::log(1.05)))));
    }

    TEST_CASE("every option is priced as wall-clock hours x nodes x the offering's hourly price") {
        auto catalog = Sample();
        auto plan = Plan(SevenB(), *catalog);
        REQUIRE(plan.ok());
        const TrainingPlan& p = plan.value();
        REQUIRE(p.total_count > 0);
        CHECK(p.options.size() == p.total_count);
        for (const auto& o : p.options) {
            CHECK(o.cluster_usd_per_hour ==
                  doctest::Approx(o.offering->price.usd_per_hour * o.nodes));
            CHECK(o.cost_usd == doctest::Approx(o.wall_clock_hours * o.cluster_usd_per_hour));
            CHECK(o.total_accelerators == o.nodes * o.offering->accelerator_count);
            CHECK(o.parallelism.tensor * o.parallelism.pipeline * o.parallelism.data ==
                  o.total_accelerators);
            CHECK(o.cost_usd_p10 < o.cost_usd_p50);
            CHECK(o.cost_usd_p50 < o.cost_usd_p90);
            CHECK(o.cost_usd_p50 == doctest::Approx(o.expected_cost_usd));
            if (o.offering->price_type == PriceType::kSpot) {
                CHECK(o.expected_cost_usd > o.cost_usd);
                CHECK(o.interruptions_per_hour.has_value());
            } else {
                CHECK(o.expected_cost_usd == o.cost_usd);
            }
        }
        // The options are sorted by expected cost.
        for (std::size_t i = 1; i < p.options.size(); ++i) {
            CHECK(p.options[i - 1].expected_cost_usd <= p.options[i].expected_cost_usd);
        }
        // One estimate per (shape, node count), not per offering: the two p5 offerings share
        // one shape and so the same wall-clock hours at each node count.
        CHECK(p.hardware_shapes == 3);
        for (const auto& a : p.options) {
            for (const auto& b : p.options) {
                if (a.offering->instance_type == b.offering->instance_type && a.nodes == b.nodes) {
                    CHECK(a.wall_clock_hours == b.wall_clock_hours);
                }
            }
        }
    }

    TEST_CASE("a spot option's expected time follows the spot model for its bucket and nodes") {
        auto catalog = Sample();
        auto plan = Plan(SevenB(), *catalog);
        REQUIRE(plan.ok());
        for (const auto& o : plan.value().options) {
            if (o.offering->price_type != PriceType::kSpot) {
                continue;
            }
            const double rate = InterruptionsPerHourFromMonthlyPercent(30) * o.nodes;  // >20%
            CHECK(*o.interruptions_per_hour == doctest::Approx(rate));
            const double c = kDefaultCheckpointMinutes / 60.0;
            CHECK(o.expected_wall_clock_hours ==
                  doctest::Approx(ExpectedHoursWithInterruptions(
                      o.wall_clock_hours, rate, c, kDefaultRestartMinutes / 60.0,
                      DalyCheckpointIntervalHours(c, rate))));
        }
    }

    // A spot option finishing "in time" on the mean missed the deadline about
    // as often as not; the spot plan's own model gave 0.61 for the recommendation it made.
    TEST_CASE("a spot option expected in time but likely late misses the deadline by probability") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        // Long enough that a run on the >20 % bucket is interrupted more than 1 time in 10.
        r.workload.tokens_b = 400;
        r.constraints.price_types = {PriceType::kSpot, PriceType::kOnDemand};
        r.constraints.accelerators = {"h100-sxm"};
        auto free = Plan(r, *catalog);
        REQUIRE(free.ok());
        const TrainingPlanOption* spot = nullptr;
        for (const auto& o : free.value().options) {
            if (o.interruptions_per_hour && o.expected_wall_clock_hours > o.wall_clock_hours) {
                spot = &o;
                break;
            }
        }
        REQUIRE(spot != nullptr);
        CHECK_FALSE(spot->deadline_probability.has_value());  // no deadline, no probability
        // A deadline just past the expected finish: met on the mean, not 9 times in 10.
        r.constraints.deadline_hours = spot->expected_wall_clock_hours * 1.001;
        r.include_infeasible = true;
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        const TrainingPlanOption* judged = FindOption(plan.value(), KeyOf(*spot));
        REQUIRE(judged != nullptr);
        REQUIRE(judged->deadline_probability.has_value());
        // The spot plan, asked about the same run, gives the same probability.
        SpotPlanRequest same;
        same.job_hours = judged->wall_clock_hours;
        same.spot_usd_per_hour = judged->offering->price.usd_per_hour;
        same.on_demand_usd_per_hour = judged->offering->price.usd_per_hour * 2;
        same.interruptions_per_hour = *judged->interruptions_per_hour / judged->nodes;
        same.nodes = judged->nodes;
        same.deadline_hours = r.constraints.deadline_hours;
        // It counts the plan's run-time spread as well: the spot plan's model at the same sigma.
        same.run_time_sigma = RunTimeSigma(kDefaultEfficiencySpreadFraction);
        auto spot_plan = PlanSpot(same, *catalog);
        REQUIRE(spot_plan.ok());
        CHECK(*judged->deadline_probability ==
              doctest::Approx(*spot_plan.value().spot_deadline_probability));
        CHECK(*judged->deadline_probability < kDefaultDeadlineConfidence);
        CHECK_FALSE(judged->meets_deadline);
        REQUIRE(judged->violations.size() == 1);
        CHECK(judged->violations[0].constraint == "deadline_confidence");
        // Never recommended; on-demand options finish in time with the probability of their
        // log-normal run time.
        REQUIRE(plan.value().recommendation.has_value());
        CHECK(*plan.value().recommendation->deadline_probability >= kDefaultDeadlineConfidence);
        const double sigma = RunTimeSigma(kDefaultEfficiencySpreadFraction);
        for (const auto& o : plan.value().options) {
            if (!o.interruptions_per_hour) {
                const double z =
                    std::log(*r.constraints.deadline_hours / o.expected_wall_clock_hours) / sigma;
                CHECK(*o.deadline_probability ==
                      doctest::Approx(0.5 * std::erfc(-z / std::sqrt(2.0))));
            }
        }
        bool echoed = false;
        for (const auto& a : plan.value().assumptions) {
            echoed = echoed || (a.name.view() == "deadline_confidence" && a.value == 0.9);
        }
        CHECK(echoed);

        // A confidence the option reaches makes it feasible again.
        r.constraints.deadline_confidence = *judged->deadline_probability * 0.5;
        auto lenient = Plan(r, *catalog);
        REQUIRE(lenient.ok());
        for (const auto& o : lenient.value().options) {
            if (KeyOf(o) == KeyOf(*spot)) CHECK(o.meets_deadline);
        }
    }

    TEST_CASE("when only confidence binds, the answer names the likeliest option's probability") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        // Long enough that a run on the >20 % bucket is interrupted more than 1 time in 10.
        r.workload.tokens_b = 400;
        r.constraints.price_types = {PriceType::kSpot};
        r.constraints.accelerators = {"h100-sxm"};
        r.constraints.max_total_accelerators = 8;
        auto free = Plan(r, *catalog);
        REQUIRE(free.ok());
        REQUIRE(free.value().options.size() == 1);
        const TrainingPlanOption only = free.value().options.front();
        r.constraints.deadline_hours = only.expected_wall_clock_hours * 1.001;
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        CHECK_FALSE(plan.value().recommendation.has_value());
        REQUIRE(plan.value().binding_constraints.size() == 1);
        const BindingConstraint& b = plan.value().binding_constraints.front();
        CHECK(b.constraint == "deadline_confidence");
        CHECK(b.limit == kDefaultDeadlineConfidence);
        CHECK(b.best_value < kDefaultDeadlineConfidence);
        CHECK(b.shortfall == doctest::Approx(kDefaultDeadlineConfidence - b.best_value));
        CHECK(b.message.find("probability") != std::string::npos);
    }

    // 70B on 15T tokens recommended 64 GPUs for 8.4 years and listed a
    // 172-year option.
    TEST_CASE(
        "without a deadline no option over 180 days is listed, and when none is left the "
        "answer says what each provider's fastest option would take") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.workload.tokens_b = 200000;  // years on any sample offering
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        const TrainingPlan& p = plan.value();
        CHECK(p.options.empty());
        CHECK_FALSE(p.recommendation.has_value());
        REQUIRE(p.max_wall_clock_days.has_value());
        CHECK(*p.max_wall_clock_days == kDefaultMaxWallClockDays);
        CHECK(Skipped(p, "over_max_wall_clock") > 0);
        REQUIRE_FALSE(p.beyond_max_wall_clock.empty());
        std::set<std::string> providers;
        for (const auto& o : p.beyond_max_wall_clock) {
            CHECK(o.expected_wall_clock_hours > kDefaultMaxWallClockDays * 24);
            CHECK(providers.insert(o.offering->provider).second);  // one per provider
            CHECK(p.reasoning.find(o.offering->instance_type) != std::string::npos);
        }
        CHECK(p.reasoning.find("No option finishes within 180 days") == 0);
        CHECK(p.reasoning.find("years") != std::string::npos);
        bool echoed = false;
        for (const auto& a : p.assumptions) {
            echoed = echoed || (a.name.view() == "max_wall_clock_days" && a.value == 180);
        }
        CHECK(echoed);
    }

    TEST_CASE("max_wall_clock_days filters options; a deadline alone sets no ceiling") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.workload.tokens_b = 2000;
        r.constraints.max_wall_clock_days = 36500;
        auto all = Plan(r, *catalog);
        REQUIRE(all.ok());
        double slowest = 0;
        for (const auto& o : all.value().options) {
            slowest = std::max(slowest, o.expected_wall_clock_hours);
        }
        r.constraints.max_wall_clock_days = slowest / 24.0 / 2.0;
        auto capped = Plan(r, *catalog);
        REQUIRE(capped.ok());
        std::size_t kept = 0;
        for (const auto& o : all.value().options) {
            kept += o.expected_wall_clock_hours <= slowest / 2.0 ? 1U : 0U;
        }
        CHECK(capped.value().total_count == kept);
        CHECK(Skipped(capped.value(), "over_max_wall_clock") == all.value().total_count - kept);
        for (const auto& o : capped.value().options) {
            CHECK(o.expected_wall_clock_hours <= slowest / 2.0);
        }
        CHECK(capped.value().beyond_max_wall_clock.empty());  // some options remain
        CHECK(capped.value().reasoning.find("max_wall_clock_days") != std::string::npos);

        // A deadline replaces the default ceiling: the slow options are listed as missing it.
        r.constraints.max_wall_clock_days.reset();
        r.constraints.deadline_hours = slowest / 2.0;
        r.include_infeasible = true;
        auto with_deadline = Plan(r, *catalog);
        REQUIRE(with_deadline.ok());
        CHECK_FALSE(with_deadline.value().max_wall_clock_days.has_value());
        CHECK(with_deadline.value().total_count == all.value().total_count);
    }

    // With the run-time spread (the default) and without it (efficiency_spread_fraction 0: the
    // interruption model alone).
    TEST_CASE("the cheap deadline bounds never exceed the distribution, and shown ones are close") {
        for (double spread : {0.0, kDefaultEfficiencySpreadFraction}) {
            TrainingPlanRequest r = SevenB();
            r.efficiency_spread_fraction = spread;
            const training_stages::PricingSettings settings =
                training_stages::SettingsFor(r, false);
            int tight = 0;
            for (double deadline : {100.0, 400.0, 720.0}) {
                r.constraints.deadline_hours = deadline;
                training_stages::DeadlineProbabilities probabilities(r, settings);
                for (double work : {20.0, 95.0, 190.0, 370.0, 550.0, 675.0}) {
                    for (double rate : {0.0005, 0.004, 0.03, 0.12}) {
                        TrainingPlanOption o;
                        o.wall_clock_hours = work;
                        o.interruptions_per_hour = rate;
                        o.expected_wall_clock_hours =
                            ExpectedHoursWithInterruptions(training_stages::RunOf(o, settings));
                        const double bound = probabilities.LowerBound(o, 2.0);  // every bound
                        const double exact = probabilities.Of(o);
                        // A reachable target stops at the cheap bounds once they reach it, and
                        // never says less than the target where all four together reach it.
                        const double stopped = probabilities.LowerBound(o, 0.9);
                        CHECK(stopped <= bound);
                        CHECK((stopped >= 0.9) == (bound >= 0.9));
                        CAPTURE(spread);
                        CAPTURE(deadline);
                        CAPTURE(work);
                        CAPTURE(rate);
                        CHECK(bound <= exact + 0.015);  // the grid's own error (spot.hpp)
                        TrainingPlanOption shown = o;
                        probabilities.Fill(shown);
                        CHECK(std::abs(*shown.deadline_probability - exact) < 1e-6);
                        tight += bound >= 1 - 1e-6 ? 1 : 0;
                        // Far from the deadline, the bound through the run-time factor's
                        // quantiles still clears a 0.9 confidence without the distribution.
                        if (spread > 0 && work * 2.0 < deadline && rate <= 0.004) {
                            CHECK(stopped >= 0.9);
                        }
                    }
                }
            }
            if (spread == 0) {
                CHECK(tight > 10);  // the bound spares most far-from-deadline runs the distribution
            }
        }
    }

    // The default plan recommended an unverified price dated by estimate and
    // 543 days old; max_price_age_days only warned.
    TEST_CASE("verified_only and constraints.max_price_age_days leave such prices out, counted") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.today = "2026-11-27";
        auto all = Plan(r, *catalog);
        REQUIRE(all.ok());
        bool any_unverified = false;
        bool any_old = false;
        for (const auto& o : all.value().options) {
            any_unverified = any_unverified || !o.offering->price.verified;
            any_old = any_old || (o.price_age_days && *o.price_age_days > 180);
        }
        REQUIRE(any_unverified);
        REQUIRE(any_old);
        r.constraints.verified_only = true;
        auto verified = Plan(r, *catalog);
        REQUIRE(verified.ok());
        REQUIRE_FALSE(verified.value().options.empty());
        for (const auto& o : verified.value().options) CHECK(o.offering->price.verified);
        CHECK(Skipped(verified.value(), "unverified_price") > 0);
        r.constraints.verified_only = false;
        r.constraints.max_price_age_days = 180;
        auto fresh = Plan(r, *catalog);
        REQUIRE(fresh.ok());
        REQUIRE_FALSE(fresh.value().options.empty());
        for (const auto& o : fresh.value().options) {
            REQUIRE(o.price_age_days.has_value());
            CHECK(*o.price_age_days <= 180);
        }
        CHECK(Skipped(fresh.value(), "price_too_old") > 0);
        r.constraints.max_price_age_days = -1;
        CHECK_FALSE(Plan(r, *catalog).ok());
    }

    TEST_CASE("a trusted price within the tolerance is recommended over a cheaper untrusted one") {
        auto base = Sample();
        auto found = base->FindOffering("aws-p5.48xlarge-us-east-1-on-demand");
        REQUIRE(found.ok());
        auto catalog_with = [&](double trusted_usd) {
            std::vector<Offering> offerings = base->Offerings().Copy();
            Offering untrusted = found.value();
            untrusted.id = "aws-p5.48xlarge-us-east-1-untrusted";
            untrusted.price.usd_per_hour = 1.0;
            untrusted.price.verified = false;
            untrusted.price.as_of = "2026-11-20";
            Offering trusted = untrusted;
            trusted.id = "aws-p5.48xlarge-us-east-1-trusted";
            trusted.price.usd_per_hour = trusted_usd;
            trusted.price.verified = true;
            offerings.push_back(untrusted);
            offerings.push_back(trusted);
            auto built = InMemoryCatalog::Build(base->Accelerators(), offerings, "t", "test", 0);
            REQUIRE(built.ok());
            return built.value();
        };
        TrainingPlanRequest r = SevenB();
        r.today = "2026-11-27";
        r.constraints.accelerators = {"h100-sxm"};
        r.constraints.node_counts = {1};
        auto near = catalog_with(1.0 * (1 + kTrustedPriceToleranceFraction) * 0.99);
        auto plan = Plan(r, *near);
        REQUIRE(plan.ok());
        REQUIRE(plan.value().cheapest.has_value());
        CHECK(plan.value().cheapest->offering->id == "aws-p5.48xlarge-us-east-1-untrusted");
        REQUIRE(plan.value().recommendation.has_value());
        CHECK(plan.value().recommendation->offering->id == "aws-p5.48xlarge-us-east-1-trusted");
        CHECK(plan.value().cheapest_trusted->offering->id == "aws-p5.48xlarge-us-east-1-trusted");
        CHECK(plan.value().reasoning.find("unverified") != std::string::npos);
        CHECK(plan.value().reasoning.find("trusted_price_tolerance_fraction") != std::string::npos);
        // Beyond the tolerance the cheapest stays first, and the reasoning says why.
        auto far = catalog_with(1.0 * (1 + kTrustedPriceToleranceFraction) * 1.05);
        auto dear = Plan(r, *far);
        REQUIRE(dear.ok());
        CHECK(dear.value().recommendation->offering->id == "aws-p5.48xlarge-us-east-1-untrusted");
        CHECK(dear.value().reasoning.find("so it stays first") != std::string::npos);
        bool echoed = false;
        for (const auto& a : dear.value().assumptions) {
            echoed = echoed || a.name.view() == "trusted_price_tolerance_fraction";
        }
        CHECK(echoed);
    }

    // Budgets were judged on the expected cost, so a spot plan whose p90 bill
    // ran over the budget was still "within budget".
    TEST_CASE("a spot option within budget on average but not at p90 misses budget_confidence") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.price_types = {PriceType::kSpot, PriceType::kOnDemand};
        r.constraints.accelerators = {"h100-sxm"};
        auto free = Plan(r, *catalog);
        REQUIRE(free.ok());
        const TrainingPlanOption* spot = nullptr;
        for (const auto& o : free.value().options) {
            if (o.interruptions_per_hour) {
                spot = &o;
                break;
            }
        }
        REQUIRE(spot != nullptr);
        CHECK_FALSE(spot->budget_probability.has_value());  // no budget, no probability
        REQUIRE(spot->cost_usd_p90 > spot->expected_cost_usd);
        // Between the expected bill and its p90: met on the mean, not 9 times in 10.
        r.constraints.budget_usd = (spot->expected_cost_usd + spot->cost_usd_p90) / 2;
        r.include_infeasible = true;
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        const TrainingPlanOption* judged = FindOption(plan.value(), KeyOf(*spot));
        REQUIRE(judged != nullptr);
        // By hand: log-normal with median the expected bill and sigma = ln(p90 / p50) / z90.
        CheckMissesBudgetConfidence(
            *judged, *r.constraints.budget_usd,
            std::log(judged->cost_usd_p90 / judged->expected_cost_usd) / kZ90);
        if (plan.value().recommendation) {
            CHECK(*plan.value().recommendation->budget_probability >= kDefaultBudgetConfidence);
        }
        // On-demand options bill a fixed rate for hours that are an estimate: the same
        // log-normal, with the list price's spread in place of spot's.
        for (const auto& o : plan.value().options) {
            if (!o.interruptions_per_hour) {
                const double s = std::log(o.cost_usd_p90 / o.expected_cost_usd) / kZ90;
                const double zo = std::log(*r.constraints.budget_usd / o.expected_cost_usd) / s;
                CHECK(s ==
                      doctest::Approx(std::log(CostQuantileFactor(kDefaultEfficiencySpreadFraction,
                                                                  kDefaultPriceSpreadFraction)) /
                                      kZ90));
                CHECK(*o.budget_probability ==
                      doctest::Approx(0.5 * std::erfc(-zo / std::sqrt(2.0))));
            }
        }
        bool echoed = false;
        for (const auto& a : plan.value().assumptions) {
            echoed = echoed || (a.name.view() == "budget_confidence" && a.value == 0.9);
        }
        CHECK(echoed);
        // At its p90 the budget is met with probability 0.9; at 0.5 the expected cost decides.
        r.constraints.budget_usd = spot->cost_usd_p90 * (1 + 1e-9);
        auto at_p90 = Plan(r, *catalog);
        REQUIRE(at_p90.ok());
        for (const auto& o : at_p90.value().options) {
            if (KeyOf(o) == KeyOf(*spot)) {
                CHECK(*o.budget_probability == doctest::Approx(0.9));
                CHECK(o.within_budget);
            }
        }
        r.constraints.budget_usd = (spot->expected_cost_usd + spot->cost_usd_p90) / 2;
        r.constraints.budget_confidence = 0.5;
        auto at_median = Plan(r, *catalog);
        REQUIRE(at_median.ok());
        for (const auto& o : at_median.value().options) {
            if (KeyOf(o) == KeyOf(*spot)) CHECK(o.within_budget);
        }
        // When only it binds, the answer names the likeliest option's probability.
        r.constraints.budget_confidence.reset();
        r.constraints.price_types = {PriceType::kSpot};
        r.constraints.node_counts = {spot->nodes};
        r.constraints.providers = {spot->offering->provider};
        r.constraints.regions = {spot->offering->region};
        r.include_infeasible = false;
        auto binding = Plan(r, *catalog);
        REQUIRE(binding.ok());
        CHECK_FALSE(binding.value().recommendation.has_value());
        REQUIRE(binding.value().binding_constraints.size() == 1);
        const BindingConstraint& b = binding.value().binding_constraints.front();
        CHECK(b.constraint == "budget_confidence");
        CHECK(b.best_value < kDefaultBudgetConfidence);
        CHECK(b.message.find("stay within the budget") != std::string::npos);
    }

    TEST_CASE("budget_confidence must be above 0 and at most 1") {
        auto catalog = Sample();
        for (double bad : {0.0, -0.1, 1.5}) {
            TrainingPlanRequest r = SevenB();
            r.constraints.budget_usd = 100;
            r.constraints.budget_confidence = bad;
            auto plan = Plan(r, *catalog);
            REQUIRE_FALSE(plan.ok());
            CHECK(plan.error().field == "/constraints/budget_confidence");
        }
    }

    TEST_CASE("deadline_confidence must be above 0 and at most 1") {
        auto catalog = Sample();
        for (double bad : {0.0, -0.1, 1.5}) {
            TrainingPlanRequest r = SevenB();
            r.constraints.deadline_hours = 100;
            r.constraints.deadline_confidence = bad;
            auto plan = Plan(r, *catalog);
            REQUIRE_FALSE(plan.ok());
            CHECK(plan.error().field == "/constraints/deadline_confidence");
        }
    }

    TEST_CASE("a higher price never lowers any option's cost") {
        auto catalog = Sample();
        auto base = Plan(SevenB(), *catalog);
        auto dear = Scaled(*catalog, 1.5);
        auto higher = Plan(SevenB(), *dear);
        REQUIRE(base.ok());
        REQUIRE(higher.ok());
        REQUIRE(base.value().total_count == higher.value().total_count);
        std::map<std::string, double> base_cost;
        for (const auto& o : base.value().options) {
            base_cost[KeyOf(o)] = o.expected_cost_usd;
        }
        for (const auto& o : higher.value().options) {
            CHECK(o.expected_cost_usd >= base_cost.at(KeyOf(o)));
        }
        CHECK(higher.value().cheapest->expected_cost_usd >=
              base.value().cheapest->expected_cost_usd);
    }

    // An on-demand option's budget_probability was 1 whenever its expected total fitted, while
    // its own cost_usd_p90 (the run-time and list price spreads) ran over the budget.
    TEST_CASE(
        "an on-demand option within budget on average but not at p90 misses budget_confidence") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.price_types = {PriceType::kOnDemand};
        r.constraints.accelerators = {"h100-sxm"};
        auto free = Plan(r, *catalog);
        REQUIRE(free.ok());
        REQUIRE(free.value().recommendation.has_value());
        const TrainingPlanOption& cheapest = *free.value().recommendation;
        REQUIRE(cheapest.cost_usd_p90 > cheapest.expected_cost_usd);
        r.constraints.budget_usd = (cheapest.expected_cost_usd + cheapest.cost_usd_p90) / 2;
        r.include_infeasible = true;
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        const TrainingPlanOption* judged = FindOption(plan.value(), KeyOf(cheapest));
        REQUIRE(judged != nullptr);
        CheckMissesBudgetConfidence(*judged, *r.constraints.budget_usd,
                                    std::log(CostQuantileFactor(kDefaultEfficiencySpreadFraction,
                                                                kDefaultPriceSpreadFraction)) /
                                        kZ90);
    }

    TEST_CASE("a later deadline never removes feasible options, and an earlier one never adds") {
        auto catalog = Sample();
        TrainingPlanRequest base = SevenB();
        base.include_infeasible = true;
        auto all = Plan(base, *catalog);
        REQUIRE(all.ok());
        std::vector<double> hours;
        for (const auto& o : all.value().options) {
            hours.push_back(o.expected_wall_clock_hours);
        }
        std::sort(hours.begin(), hours.end());
        REQUIRE(hours.size() >= 3);
        std::set<std::string> previous;
        for (double deadline : {hours.front() * 0.5, hours[hours.size() / 3],
                                hours[hours.size() / 2], hours.back() * 2}) {
            TrainingPlanRequest r = base;
            r.constraints.deadline_hours = deadline;
            auto plan = Plan(r, *catalog);
            REQUIRE(plan.ok());
            CHECK(plan.value().total_count == all.value().total_count);
            std::set<std::string> meeting;
            for (const auto& o : plan.value().options) {
                REQUIRE(o.deadline_probability.has_value());
                CHECK(o.Feasible() == (*o.deadline_probability >= kDefaultDeadlineConfidence));
                if (!o.interruptions_per_hour) {
                    // In time 9 runs in 10 under the run-time spread: expected by deadline / 1.2.
                    CHECK(o.Feasible() ==
                          (o.expected_wall_clock_hours * (1.0 + kDefaultEfficiencySpreadFraction) <=
                           deadline * (1.0 + 1e-12)));
                }
                if (o.Feasible()) {
                    meeting.insert(KeyOf(o));
                }
            }
            CHECK(std::includes(meeting.begin(), meeting.end(), previous.begin(), previous.end()));
            CHECK(plan.value().feasible_count == meeting.size());
            previous = meeting;
        }
    }

    TEST_CASE("options, cheapest, fastest and the Pareto front hold only feasible options") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        auto all = Plan(r, *catalog);
        REQUIRE(all.ok());
        std::vector<double> hours;
        for (const auto& o : all.value().options) {
            hours.push_back(o.expected_wall_clock_hours);
        }
        std::sort(hours.begin(), hours.end());
        r.constraints.deadline_hours = hours[hours.size() / 2];
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        const TrainingPlan& p = plan.value();
        CHECK(p.total_count == p.feasible_count);
        CHECK(p.infeasible_count > 0);
        for (const auto* list : {&p.options, &p.pareto_front, &p.best_by_provider}) {
            for (const auto& o : *list) {
                CHECK(o.Feasible());
                CHECK(o.expected_wall_clock_hours <= *r.constraints.deadline_hours);
                CHECK(*o.deadline_probability >= kDefaultDeadlineConfidence);
            }
        }
        REQUIRE(p.cheapest.has_value());
        CHECK(p.cheapest->Feasible());
        CHECK(p.fastest->Feasible());
        REQUIRE(p.recommendation.has_value());
        CHECK(KeyOf(*p.recommendation) == KeyOf(*p.cheapest));
        CHECK(p.reasoning.find("Recommended: ") == 0);
        CHECK(p.binding_constraints.empty());

        // include_infeasible adds the rest, each listing what it violates.
        r.include_infeasible = true;
        auto with_rest = Plan(r, *catalog);
        REQUIRE(with_rest.ok());
        CHECK(with_rest.value().total_count == p.feasible_count + p.infeasible_count);
        std::size_t violating = 0;
        for (const auto& o : with_rest.value().options) {
            if (!o.Feasible()) {
                ++violating;
                REQUIRE(o.violations.size() == 1);
                if (o.expected_wall_clock_hours <= *r.constraints.deadline_hours) {
                    // In time on average, not with the confidence asked for.
                    CHECK(o.violations[0].constraint == "deadline_confidence");
                    CHECK(o.violations[0].value == *o.deadline_probability);
                    CHECK(o.violations[0].limit == kDefaultDeadlineConfidence);
                    continue;
                }
                CHECK(o.violations[0].constraint == "deadline_hours");
                CHECK(o.violations[0].value == o.expected_wall_clock_hours);
                CHECK(o.violations[0].limit == *r.constraints.deadline_hours);
            }
        }
        CHECK(violating == p.infeasible_count);
    }

    TEST_CASE("when nothing is feasible the answer says which constraint binds and by how much") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        auto all = Plan(r, *catalog);
        REQUIRE(all.ok());
        const double fastest = all.value().fastest->expected_wall_clock_hours;
        r.constraints.deadline_hours = fastest * 0.5;
        auto none = Plan(r, *catalog);
        REQUIRE(none.ok());
        CHECK_FALSE(none.value().cheapest.has_value());
        CHECK_FALSE(none.value().fastest.has_value());
        CHECK_FALSE(none.value().recommendation.has_value());
        CHECK(none.value().options.empty());
        REQUIRE(none.value().binding_constraints.size() == 1);
        const BindingConstraint& b = none.value().binding_constraints[0];
        CHECK(b.constraint == "deadline_hours");
        CHECK(b.best_value == doctest::Approx(fastest));
        CHECK(b.shortfall == doctest::Approx(fastest * 0.5));
        CHECK(b.others_met);
        CHECK(none.value().reasoning.find("No option meets every constraint") == 0);
        CHECK(none.value().reasoning.find("deadline_hours") != std::string::npos);
    }

    // A deadline that many options meet, all of them over a budget no option meets: only
    // the budget binds. Listing the deadline with "the fastest option takes ..." named the
    // quickest of the options that miss it, hours over the deadline, while options days
    // inside it existed (and relaxing the deadline never helps).
    TEST_CASE("a constraint that some option meets is not listed as binding when another binds") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        auto all = Plan(r, *catalog);
        REQUIRE(all.ok());
        const double fastest_h = all.value().fastest->expected_wall_clock_hours;
        const double cheapest_usd = all.value().cheapest->expected_cost_usd;
        double slowest_h = 0;
        for (const auto& o : all.value().options) {
            slowest_h = std::max(slowest_h, o.expected_wall_clock_hours);
        }
        REQUIRE(slowest_h > 2 * fastest_h);
        r.constraints.deadline_hours = (fastest_h + slowest_h) / 2;  // some miss it
        r.constraints.budget_usd = cheapest_usd * 0.5;               // every option misses it
        auto none = Plan(r, *catalog);
        REQUIRE(none.ok());
        REQUIRE(none.value().feasible_count == 0);
        REQUIRE(none.value().binding_constraints.size() == 1);
        const BindingConstraint& b = none.value().binding_constraints[0];
        CHECK(b.constraint == "budget_usd");
        CHECK(b.others_met);  // the cheapest option within the deadline
        CHECK(none.value().reasoning.find("deadline_hours") == std::string::npos);
    }

    TEST_CASE(
        "a constraint no option meets, with none meeting the others, is measured on all options") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        auto all = Plan(r, *catalog);
        REQUIRE(all.ok());
        const double fastest_h = all.value().fastest->expected_wall_clock_hours;
        const double cheapest_usd = all.value().cheapest->expected_cost_usd;
        r.constraints.deadline_hours = fastest_h * 0.5;
        r.constraints.budget_usd = 0;  // a zero budget is a limit, not a ratio's denominator
        auto none = Plan(r, *catalog);
        REQUIRE(none.ok());
        REQUIRE(none.value().binding_constraints.size() == 2);
        for (const BindingConstraint& b : none.value().binding_constraints) {
            CHECK_FALSE(b.others_met);
            CHECK(b.message.find("inf") == std::string::npos);
            if (b.constraint == "deadline_hours") {
                CHECK(b.best_value == doctest::Approx(fastest_h));
            } else {
                CHECK(b.best_value == doctest::Approx(cheapest_usd));
            }
        }
    }

    TEST_CASE("a single feasible option is called the only one, not 'the lowest of 1 options'") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.constraints.node_counts = {2};
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        REQUIRE(plan.value().feasible_count == 1);
        CHECK(plan.value().reasoning.find("the only option that meets every constraint") !=
              std::string::npos);
        CHECK(plan.value().reasoning.find("of 1 options") == std::string::npos);
    }

    TEST_CASE("adding a constraint never adds options") {
        auto catalog = Sample();
        auto keys = [&](const TrainingPlanRequest& r) {
            auto plan = Plan(r, *catalog);
            REQUIRE(plan.ok());
            std::set<std::string> out;
            for (const auto& o : plan.value().options) {
                out.insert(KeyOf(o));
            }
            return out;
        };
        const TrainingPlanRequest base = SevenB();
        const std::set<std::string> all = keys(base);
        REQUIRE(all.size() > 4);
        auto full = Plan(base, *catalog);
        REQUIRE(full.ok());
        std::vector<double> hours;
        std::vector<double> costs;
        for (const auto& o : full.value().options) {
            hours.push_back(o.expected_wall_clock_hours);
            costs.push_back(o.expected_cost_usd);
        }
        std::sort(hours.begin(), hours.end());
        std::sort(costs.begin(), costs.end());
        const double median_hours = hours[hours.size() / 2];
        const double median_cost = costs[costs.size() / 2];
        std::vector<TrainingPlanRequest> narrower(6, base);
        narrower[0].constraints.deadline_hours = median_hours;
        narrower[1].constraints.budget_usd = median_cost;
        narrower[2].constraints.providers = {"aws"};
        narrower[3].constraints.price_types = {PriceType::kOnDemand};
        narrower[4].constraints.max_total_accelerators = 8;
        narrower[5].constraints.regions = {"us-east-1"};
        for (const auto& r : narrower) {
            const std::set<std::string> fewer = keys(r);
            CHECK(fewer.size() < all.size());
            CHECK(std::includes(all.begin(), all.end(), fewer.begin(), fewer.end()));
        }
        // Two constraints together allow no more than either alone.
        TrainingPlanRequest both = narrower[0];
        both.constraints.budget_usd = median_cost;
        const std::set<std::string> two = keys(both);
        for (const auto* one : {&narrower[0], &narrower[1]}) {
            const std::set<std::string> single = keys(*one);
            CHECK(std::includes(single.begin(), single.end(), two.begin(), two.end()));
        }
    }

    TEST_CASE("no option exceeds its offering's capacity or max_total_accelerators") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.include_infeasible = true;
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        for (const auto& o : plan.value().options) {
            CHECK(o.nodes <= Ref().CapacityOf(*o.offering).max_instances);
            CHECK(o.nodes <= o.max_instances);
            CHECK(o.total_accelerators <= 64);
        }
        CHECK(Skipped(plan.value(), "over_capacity") == 0);  // the ladder stops at capacity
        r.constraints.node_counts = {16};
        r.constraints.max_total_accelerators = 256;
        r.constraints.providers = {"aws"};
        auto over = Plan(r, *catalog);
        REQUIRE(over.ok());
        CHECK(over.value().options.empty());
        CHECK(Skipped(over.value(), "over_capacity") == 2);  // both p5 offerings: 8 at most
        CHECK(over.value().estimates == 0);                  // never estimated
    }

    TEST_CASE("multi-node plans on independent hosts use the internet-grade bandwidth") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"lambda"};
        r.constraints.node_counts = {1, 2, 4};
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        REQUIRE_FALSE(plan.value().options.empty());
        std::map<int, double> hours;
        for (const auto& o : plan.value().options) {
            CHECK(o.independent_hosts);
            REQUIRE(o.scale_out_gbit_per_s.has_value());
            CHECK(*o.scale_out_gbit_per_s == kIndependentHostsGbitPerS);
            hours[o.nodes] = o.wall_clock_hours;
        }
        // The same count estimated as one cluster at the internet-grade bandwidth agrees.
        estimate::ClusterSpec cluster;
        cluster.accelerator = catalog->FindAccelerator("h100-sxm").value();
        cluster.accelerator_count = 4;
        cluster.accelerators_per_node = 1;
        cluster.scale_out_gbit_per_s_per_node = kIndependentHostsGbitPerS;
        auto fresh = estimate::EstimateTraining(r.workload, cluster);
        REQUIRE(fresh.ok());
        REQUIRE(hours.count(4) == 1);
        CHECK(hours[4] == doctest::Approx(fresh.value().wall_clock_hours));
        bool warned = false;
        for (const auto& w : plan.value().warnings) {
            warned = warned || w.detail.find("independent hosts") != std::string::npos;
        }
        CHECK(warned ==
              (plan.value().recommendation->nodes > 1 || plan.value().fastest->nodes > 1));
    }

    TEST_CASE(
        "training plans skip accelerators offered for inference only, counted and explained") {
        auto catalog = Sample();
        PlanReference reference = Ref();
        AcceleratorWorkloads inference_only;
        inference_only.training = false;
        inference_only.source = "TEST VENDOR DOC";
        reference.workloads["tpu-v5e"] = inference_only;
        auto plan = PlanTraining(SevenB(), *catalog, reference);
        REQUIRE(plan.ok());
        for (const auto& o : plan.value().options) {
            CHECK(o.offering->accelerator != "tpu-v5e");
        }
        CHECK(Skipped(plan.value(), "not_for_training") == 1);
        bool explained = false;
        for (const auto& [reason, text] : plan.value().skipped_examples) {
            explained = explained || (reason == "not_for_training" &&
                                      text.find("TEST VENDOR DOC") != std::string::npos);
        }
        CHECK(explained);
    }

    TEST_CASE("commitments are priced only when asked, and then bill whole terms") {
        auto catalog = WithP5Variants(
            {{"commit-1y", PriceType::kCommit1y, 30.0}, {"commit-3y", PriceType::kCommit3y, 20.0}});
        TrainingPlanRequest r = SevenB();
        r.include_infeasible = true;
        auto unasked = Plan(r, *catalog);
        REQUIRE(unasked.ok());
        for (const auto& o : unasked.value().options) {
            CHECK(o.offering->price_type != PriceType::kCommit1y);
            CHECK(o.offering->price_type != PriceType::kCommit3y);
        }
        CHECK(Skipped(unasked.value(), "price_type_not_requested") == 2);

        r.constraints.price_types = {PriceType::kCommit1y, PriceType::kCommit3y};
        auto asked = Plan(r, *catalog);
        REQUIRE(asked.ok());
        REQUIRE_FALSE(asked.value().options.empty());
        for (const auto& o : asked.value().options) {
            const double term =
                o.offering->price_type == PriceType::kCommit1y ? kCommit1yHours : kCommit3yHours;
            CHECK(o.expected_cost_usd >= term * o.offering->price.usd_per_hour * o.nodes);
            CHECK(o.billed_hours == term);  // these runs are shorter than a term
            REQUIRE(o.unused_committed_hours.has_value());
            CHECK(*o.unused_committed_hours == doctest::Approx(term - o.expected_wall_clock_hours));
            CHECK(o.cost_usd_p10 <= o.cost_usd_p50);
            CHECK(o.cost_usd_p50 <= o.cost_usd_p90);
        }
        CHECK(training_stages::BilledHours(PriceType::kCommit1y, 9000, {}) == 2 * kCommit1yHours);
    }

    TEST_CASE("capacity blocks bill whole blocks within their length and instance limits") {
        OfferingCapacity blocks;
        blocks.min_block_hours = 24;
        blocks.max_block_hours = 4368;
        CHECK(training_stages::BilledHours(PriceType::kCapacityBlock, 1.5, blocks) == 24);
        CHECK(training_stages::BilledHours(PriceType::kCapacityBlock, 25, blocks) == 48);
        CHECK(training_stages::BilledHours(PriceType::kCapacityBlock, 335.5, blocks) == 336);
        // AWS terminates a block's instances 30 minutes before it ends: a 336 h run needs more.
        CHECK(training_stages::BilledHours(PriceType::kCapacityBlock, 336, blocks) == 3 * 168);
        CHECK(training_stages::BilledHours(PriceType::kCapacityBlock, 23.6, blocks) == 48);
        CHECK(training_stages::BilledHours(PriceType::kCapacityBlock, 337, blocks) ==
              3 * 168);  // 7-day steps past 14 days
        CHECK(training_stages::BilledHours(PriceType::kOnDemand, 1.5, blocks) == 1.5);

        auto catalog = WithP5Variants({{"capacity-block", PriceType::kCapacityBlock, 31.0}});
        TrainingPlanRequest r = SevenB();
        r.constraints.price_types = {PriceType::kCapacityBlock};
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        REQUIRE_FALSE(plan.value().options.empty());
        for (const auto& o : plan.value().options) {
            CHECK(o.nodes <= 4);  // capacity blocks: 4 instances in the sample reference
            CHECK(o.billed_hours >= 24);
            CHECK(o.billed_hours <= 4368);
            CHECK(o.expected_cost_usd == doctest::Approx(o.billed_hours * 31.0 * o.nodes));
        }
        // A run longer than the longest block is not sold as one.
        TrainingPlanRequest longer = r;
        longer.workload.tokens_b = 2000;
        longer.constraints.node_counts = {1};
        auto too_long = Plan(longer, *catalog);
        REQUIRE(too_long.ok());
        CHECK(too_long.value().options.empty());
        CHECK(Skipped(too_long.value(), "over_capacity") == 1);
    }

    TEST_CASE("each offering is priced and judged as if it were the only one of its shape") {
        // Offerings of one shape, price type and capacity share every figure but those of
        // their own price, so the planner works the shared ones out once per node count.
        // Variants of the p5 offerings that share only some of it (another spot bucket,
        // another instance type and so capacity record, another date) and prices on both
        // sides of the budget: a plan of all of them must list each variant's options exactly
        // as a plan where it is the only p5 offering does, and count them the same.
        using Variant = std::pair<std::string, std::function<void(Offering&)>>;
        const auto price = [](double usd) {
            return [usd](Offering& o) { o.price.usd_per_hour = usd; };
        };
        const auto spot = [](const char* bucket, double usd) {
            return [bucket, usd](Offering& o) {
                o.spot_interruption = ParseSpotInterruptionBucket(bucket);
                o.price.usd_per_hour = usd;
            };
        };
        const std::string on_demand_id = "aws-p5.48xlarge-us-east-1-on-demand";
        const std::string spot_id = "aws-p5.48xlarge-us-east-1-spot";
        const std::vector<std::pair<std::string, Variant>> all = {
            {on_demand_id, {"as-sold", [](Offering&) {}}},
            {on_demand_id, {"cheap", price(40)}},
            {on_demand_id, {"dear", price(160)}},
            {on_demand_id, {"dearer", price(400)}},
            {on_demand_id, {"same-price", price(160)}},
            {on_demand_id,
             {"other-type",
              [](Offering& o) {
                  o.instance_type = "p5.48xlarge-other";  // no capacity rule: another record
                  o.price.usd_per_hour = 50;
              }}},
            {on_demand_id,
             {"old",
              [](Offering& o) {
                  o.price.as_of = "2024-01-01";
                  o.price.usd_per_hour = 45;
              }}},
            {on_demand_id, {"estimated", [](Offering& o) { o.price.as_of_estimated = true; }}},
            {spot_id, {"as-sold", [](Offering&) {}}},
            {spot_id, {"calm-cheap", spot("<5%", 20)}},
            {spot_id, {"calm-dear", spot("<5%", 90)}},
            {spot_id, {"middling", spot("10-15%", 20)}},
            {spot_id, {"stormy", spot(">20%", 20)}},
            {spot_id, {"unknown", [](Offering& o) { o.spot_interruption.reset(); }}},
        };
        // The sample without its p5 offerings, plus `list`.
        const auto catalog_of = [](const std::vector<std::pair<std::string, Variant>>& list) {
            auto sample = Sample();
            std::vector<Offering> offerings;
            for (const Offering& o : sample->Offerings()) {
                if (o.instance_type != "p5.48xlarge") offerings.push_back(o);
            }
            for (const auto& [base_id, variant] : list) {
                auto found = sample->FindOffering(base_id);
                REQUIRE(found.ok());
                Offering o = found.value();
                o.id = base_id + "-" + variant.first;
                variant.second(o);
                offerings.push_back(o);
            }
            auto r = InMemoryCatalog::Build(sample->Accelerators(), offerings, "v", "test", 0);
            REQUIRE(r.ok());
            return r.value();
        };
        const auto everything = catalog_of(all);

        TrainingPlanRequest r = SevenB();
        r.today = "2026-11-27";
        r.include_infeasible = true;
        r.constraints.price_types = {PriceType::kOnDemand, PriceType::kSpot};
        // A budget and deadline that split the variants: the medians of their options.
        auto open = Plan(r, *everything);
        REQUIRE(open.ok());
        std::vector<double> costs;
        std::vector<double> hours;
        for (const auto& o : open.value().options) {
            if (o.offering->instance_type.rfind("p5.48xlarge", 0) != 0) continue;
            costs.push_back(o.ExpectedTotalUsd());
            hours.push_back(o.expected_wall_clock_hours);
        }
        REQUIRE(costs.size() > 20);
        std::sort(costs.begin(), costs.end());
        std::sort(hours.begin(), hours.end());
        r.constraints.budget_usd = costs[costs.size() / 2];
        r.constraints.deadline_hours = hours[hours.size() / 2];
        auto together = Plan(r, *everything);
        REQUIRE(together.ok());
        const auto rest_catalog = catalog_of({});
        const auto base = Plan(r, *rest_catalog);
        REQUIRE(base.ok());

        std::map<std::string, const TrainingPlanOption*> listed;
        for (const auto& o : together.value().options) listed[KeyOf(o)] = &o;
        std::set<std::pair<bool, bool>> verdicts;  // (meets_deadline, within_budget) seen
        std::set<double> spot_rates;               // per instance-hour
        std::size_t feasible = base.value().feasible_count;
        std::size_t infeasible = base.value().infeasible_count;
        for (const auto& entry : all) {
            const std::string id = entry.first + "-" + entry.second.first;
            CAPTURE(id);
            const auto alone_catalog = catalog_of({entry});  // the options point into it
            auto alone = Plan(r, *alone_catalog);
            REQUIRE(alone.ok());
            feasible += alone.value().feasible_count - base.value().feasible_count;
            infeasible += alone.value().infeasible_count - base.value().infeasible_count;
            std::size_t seen = 0;
            for (const auto& a : alone.value().options) {
                if (a.offering->id != id) continue;
                ++seen;
                CAPTURE(a.nodes);
                REQUIRE(listed.count(KeyOf(a)) == 1);
                const TrainingPlanOption& t = *listed[KeyOf(a)];
                CHECK(t.expected_wall_clock_hours == a.expected_wall_clock_hours);
                CHECK(t.cost_usd == a.cost_usd);
                CHECK(t.expected_cost_usd == a.expected_cost_usd);
                CHECK(t.cost_usd_p10 == a.cost_usd_p10);
                CHECK(t.cost_usd_p90 == a.cost_usd_p90);
                CHECK(t.billed_hours == a.billed_hours);
                CHECK(t.max_instances == a.max_instances);
                CHECK(t.interruptions_per_hour == a.interruptions_per_hour);
                CHECK(t.price_age_days == a.price_age_days);
                CHECK(t.price_state == a.price_state);
                CHECK(t.deadline_probability == a.deadline_probability);
                CHECK(t.budget_probability == a.budget_probability);
                CHECK(t.meets_deadline == a.meets_deadline);
                CHECK(t.within_budget == a.within_budget);
                verdicts.emplace(a.meets_deadline, a.within_budget);
                if (a.interruptions_per_hour)
                    spot_rates.insert(*a.interruptions_per_hour / a.nodes);
            }
            CHECK(seen > 0);
        }
        CHECK(together.value().feasible_count == feasible);
        CHECK(together.value().infeasible_count == infeasible);
        // The variants fall on every side of both constraints, at several spot rates.
        CHECK(verdicts.size() == 4);
        CHECK(spot_rates.size() >= 3);
    }

    TEST_CASE("a time tie breaks by cost and a cost tie by time") {
        // Same shape, different prices: same hours, so the fastest is the cheaper one.
        auto catalog = WithP5Variants({{"dearer", PriceType::kOnDemand, 99.0}});
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        const auto& fastest = *plan.value().fastest;
        for (const auto& o : plan.value().options) {
            if (o.expected_wall_clock_hours == fastest.expected_wall_clock_hours) {
                CHECK(fastest.expected_cost_usd <= o.expected_cost_usd);
            }
        }
        CHECK(fastest.offering->id == "aws-p5.48xlarge-us-east-1-on-demand");
        TrainingPlanOption a = fastest;
        TrainingPlanOption b = fastest;
        b.expected_wall_clock_hours += 1;
        CHECK(training_stages::Before(a, b, TrainingPlanSort::kExpectedCost));
        CHECK_FALSE(training_stages::Before(b, a, TrainingPlanSort::kExpectedCost));
        b = fastest;
        b.expected_cost_usd += 1;
        CHECK(training_stages::Before(a, b, TrainingPlanSort::kTime));
        CHECK_FALSE(training_stages::Before(b, a, TrainingPlanSort::kTime));
    }

    TEST_CASE("every option carries its price's provenance and old or estimated prices warn") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.today = "2026-11-20";
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(plan.value().catalog_version == catalog->Describe().version);
        for (const auto& o : plan.value().options) {
            REQUIRE(o.price_age_days.has_value());
        }
        const TrainingPlanOption& rec = *plan.value().recommendation;
        CHECK(*rec.price_age_days ==
              *DaysFromIsoDate("2026-11-20") - *DaysFromIsoDate(rec.offering->price.as_of));
        const bool old = static_cast<double>(*rec.price_age_days) > kDefaultMaxPriceAgeDays;
        bool age_warning = false;
        for (const auto& w : plan.value().warnings) {
            age_warning = age_warning || w.detail.find("days old") != std::string::npos;
        }
        CHECK(age_warning ==
              (old || (static_cast<double>(plan.value().fastest->price_age_days.value_or(0)) >
                       kDefaultMaxPriceAgeDays)));
        // A stricter age warns about any price older than it.
        r.max_price_age_days = 0;
        auto strict = Plan(r, *catalog);
        REQUIRE(strict.ok());
        bool strict_warning = false;
        for (const auto& w : strict.value().warnings) {
            strict_warning = strict_warning || w.detail.find("days old") != std::string::npos;
        }
        CHECK(strict_warning ==
              (*rec.price_age_days > 0 || plan.value().fastest->price_age_days.value_or(0) > 0));
    }

    TEST_CASE("the budget view spreads spend by calendar month and splits storage and egress") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.constraints.node_counts = {1};
        r.start_date = "2026-01-31";
        r.data.stored_gb = 1000;
        r.data.egress_gb = 100;
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        REQUIRE(plan.value().budget.has_value());
        const BudgetView& b = *plan.value().budget;
        const TrainingPlanOption& rec = *plan.value().recommendation;
        CHECK(b.start_date == "2026-01-31");
        CHECK(b.compute_usd == doctest::Approx(rec.expected_cost_usd));
        REQUIRE(b.storage_usd.has_value());
        // Money to the cent (pricing/money.hpp): each part within half a cent of its figure,
        // and the months adding up to the total exactly in cents.
        CHECK(std::abs(*b.storage_usd -
                       1000 * 0.023 * rec.expected_wall_clock_hours / kHoursPerMonth) <= 0.005);
        CHECK(*b.egress_usd == doctest::Approx(100 * 0.09));
        long long month_cents = 0;
        for (const auto& m : b.monthly) {
            month_cents += ToCents(m.usd);
        }
        CHECK(month_cents == ToCents(b.total_usd));
        CHECK(ToCents(b.compute_usd) + ToCents(*b.storage_usd) + ToCents(*b.egress_usd) ==
              ToCents(b.total_usd));
        CHECK(b.total_usd == doctest::Approx(b.compute_usd + *b.storage_usd + *b.egress_usd));
        REQUIRE_FALSE(b.monthly.empty());
        CHECK(b.monthly.front().month == "2026-01");
        if (rec.expected_wall_clock_hours > 24) {
            CHECK(b.monthly.front().usd ==
                  doctest::Approx(rec.cluster_usd_per_hour * 24 +
                                  *b.storage_usd * 24 / rec.expected_wall_clock_hours));
        }
    }

    TEST_CASE("the echo describes the hardware behind the options, never a stand-in") {
        auto catalog = Sample();
        auto plan = Plan(SevenB(), *catalog);
        REQUIRE(plan.ok());
        std::set<std::string> names;
        for (const auto& a : plan.value().assumptions) {
            names.insert(a.name.str());
        }
        CHECK(names.count("estimator.peak_tflops") == 0);
        CHECK(names.count("estimator.accelerators_per_node") == 0);
        CHECK(names.count("hardware.h100-sxm.peak_tflops") == 1);
        for (const auto& a : plan.value().assumptions) {
            if (a.name == "hardware.h100-sxm.peak_tflops") {
                CHECK(a.value == 989);
            }
        }
    }

    // The echo once took the workload-level constants from whichever cluster ran first: a
    // plan recommending Trainium showed an A100's attention efficiency (0.6) and an 8-chip
    // scale-up domain, figures neither shown option used.
    TEST_CASE("the echo's estimator figures are those of the recommendation's own estimate") {
        auto catalog = Sample();
        auto plan = Plan(SevenB(), *catalog);
        REQUIRE(plan.ok());
        REQUIRE(plan.value().recommendation.has_value());
        const TrainingPlanOption& rec = *plan.value().recommendation;
        estimate::ClusterSpec cluster;
        cluster.accelerator = catalog->FindAccelerator(rec.offering->accelerator).value();
        cluster.accelerators_per_node = rec.offering->accelerator_count;
        cluster.accelerator_count = rec.total_accelerators;
        cluster.scale_out_gbit_per_s_per_node = rec.scale_out_gbit_per_s;
        auto used = estimate::EstimateTraining(SevenB().workload, cluster);
        REQUIRE(used.ok());
        CHECK(used.value().wall_clock_hours == doctest::Approx(rec.wall_clock_hours));
        std::map<std::string, double> echoed;
        for (const auto& a : plan.value().assumptions) {
            echoed[a.name.str()] = a.value;
        }
        const std::string hw = "hardware." + rec.offering->accelerator + ".";
        int compared = 0;
        for (const auto& a : used.value().assumptions) {
            const std::string name = a.name.str();
            if (auto it = echoed.find("estimator." + name); it != echoed.end()) {
                CHECK_MESSAGE(it->second == a.value, name);
                ++compared;
            }
            if (name == "attention_efficiency" || name == "scale_up_domain" ||
                name == "gemm_max_efficiency") {
                CHECK(echoed.count("estimator." + name) == 0);
                REQUIRE(echoed.count(hw + name) == 1);
                CHECK(echoed[hw + name] == a.value);
            }
        }
        CHECK(compared > 20);
    }

    TEST_CASE("unknown ids in constraints name the field with close matches; case is ignored") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"AWS"};
        r.constraints.accelerators = {"H100-SXM"};
        r.constraints.regions = {"US-EAST-1"};
        auto fine = Plan(r, *catalog);
        REQUIRE(fine.ok());
        REQUIRE_FALSE(fine.value().options.empty());
        r.constraints.providers = {"aws", "lamda"};
        r.constraints.accelerators = {"h100"};
        r.constraints.regions = {"us-east1"};
        auto bad = Plan(r, *catalog);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().code == ErrorCode::kInvalidArgument);
        REQUIRE(bad.error().errors.size() == 3);
        CHECK(bad.error().errors[0].field == "/constraints/providers/1");
        CHECK(bad.error().errors[0].detail.find("lambda") != std::string::npos);
        CHECK(bad.error().errors[1].field == "/constraints/regions/0");
        CHECK(bad.error().errors[1].detail.find("us-east-1") != std::string::npos);
        CHECK(bad.error().errors[2].field == "/constraints/accelerators/0");
        CHECK(bad.error().errors[2].detail.find("h100-sxm") != std::string::npos);
    }

    TEST_CASE("the Pareto front holds exactly the options nothing beats on cost and time") {
        auto catalog = Sample();
        auto plan = Plan(SevenB(), *catalog);
        REQUIRE(plan.ok());
        const auto& options = plan.value().options;
        auto dominated = [&](const TrainingPlanOption& a) {
            return std::any_of(options.begin(), options.end(), [&](const auto& b) {
                return b.expected_cost_usd <= a.expected_cost_usd &&
                       b.expected_wall_clock_hours <= a.expected_wall_clock_hours &&
                       (b.expected_cost_usd < a.expected_cost_usd ||
                        b.expected_wall_clock_hours < a.expected_wall_clock_hours);
            });
        };
        std::set<std::string> front;
        for (const auto& o : plan.value().pareto_front) {
            CHECK_FALSE(dominated(o));
            front.insert(KeyOf(o));
        }
        for (const auto& o : options) {
            if (front.count(KeyOf(o)) == 0) {
                CHECK(dominated(o));
            }
        }
        CHECK(KeyOf(plan.value().pareto_front.front()) == KeyOf(*plan.value().fastest));
        CHECK(plan.value().pareto_front.back().expected_cost_usd ==
              plan.value().cheapest->expected_cost_usd);
    }

    TEST_CASE(
        "a catalog copied into more regions counts every copy and ranks the originals first") {
        // Each offering again under a new id and region at the same price: every option ties
        // with its copy on cost and time, so counts double and the summaries keep the
        // original (its id sorts first), whether or not the infeasible options are listed.
        auto base = Sample();
        std::vector<Offering> offerings = base->Offerings().Copy();
        for (const Offering& o : base->Offerings()) {
            Offering copy = o;
            copy.id += "-copy";
            copy.region += "-copy";
            offerings.push_back(copy);
        }
        auto built = InMemoryCatalog::Build(base->Accelerators(), offerings, "copied", "test", 0);
        REQUIRE(built.ok());
        const auto& copied = *built.value();
        TrainingPlanRequest r = SevenB();
        auto all = Plan(r, *base);
        REQUIRE(all.ok());
        REQUIRE(all.value().options.size() >= 4);
        // A budget between the options' costs: some feasible, some not.
        r.constraints.budget_usd =
            all.value().options[all.value().options.size() / 2].ExpectedTotalUsd();
        for (bool listed : {false, true}) {
            CAPTURE(listed);
            r.include_infeasible = listed;
            auto original = Plan(r, *base);
            auto twice = Plan(r, copied);
            REQUIRE(original.ok());
            REQUIRE(twice.ok());
            const TrainingPlan& a = original.value();
            const TrainingPlan& b = twice.value();
            REQUIRE(a.feasible_count > 0);
            REQUIRE(a.infeasible_count > 0);
            CHECK(b.feasible_count == 2 * a.feasible_count);
            CHECK(b.infeasible_count == 2 * a.infeasible_count);
            CHECK(b.total_count == 2 * a.total_count);
            REQUIRE(b.pareto_front.size() == a.pareto_front.size());
            for (std::size_t i = 0; i < a.pareto_front.size(); ++i) {
                CHECK(KeyOf(b.pareto_front[i]) == KeyOf(a.pareto_front[i]));
            }
            CHECK(KeyOf(*b.cheapest) == KeyOf(*a.cheapest));
            CHECK(KeyOf(*b.fastest) == KeyOf(*a.fastest));
            REQUIRE(b.options.size() >= 2);
            CHECK(b.options[1].offering->id == b.options[0].offering->id + "-copy");
            for (const TrainingPlanOption& o : b.options) {
                CHECK(o.Feasible() == o.violations.empty());
            }
        }
    }

    TEST_CASE("sort, limit and offset page through the same ordering") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.sort = TrainingPlanSort::kTime;
        auto all = Plan(r, *catalog);
        REQUIRE(all.ok());
        REQUIRE(all.value().total_count >= 4);
        r.limit = 2;
        r.offset = 2;
        auto page = Plan(r, *catalog);
        REQUIRE(page.ok());
        REQUIRE(page.value().options.size() == 2);
        CHECK(KeyOf(page.value().options[0]) == KeyOf(all.value().options[2]));
        CHECK(KeyOf(page.value().options[1]) == KeyOf(all.value().options[3]));
        r.offset = 100000;
        CHECK(Plan(r, *catalog).value().options.empty());
    }

    TEST_CASE("constraints filter offerings and the budget decides") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.constraints.budget_usd = 1.0;
        r.include_infeasible = true;
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        REQUIRE_FALSE(plan.value().options.empty());
        for (const auto& o : plan.value().options) {
            CHECK(o.offering->id == "aws-p5.48xlarge-us-east-1-on-demand");
            CHECK_FALSE(o.within_budget);
            CHECK_FALSE(o.Feasible());
        }
        CHECK_FALSE(plan.value().fastest.has_value());
        CHECK_FALSE(plan.value().cheapest.has_value());
        CHECK(plan.value().feasible_count == 0);
        CHECK(Skipped(plan.value(), "filtered") == 3);
        REQUIRE(plan.value().binding_constraints.size() == 1);
        CHECK(plan.value().binding_constraints[0].constraint == "budget_usd");
    }

    TEST_CASE("hardware without the precision or the memory is skipped with a reason") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.workload.precision = Precision::kFp8;  // TPU v5e has no fp8
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(Skipped(plan.value(), "precision_unsupported") == 1);

        TrainingPlanRequest huge = SevenB();
        huge.workload.model.params_b = 1000;
        huge.constraints.max_total_accelerators = 16;
        auto none = Plan(huge, *catalog);
        REQUIRE(none.ok());
        CHECK(none.value().total_count == 0);
        CHECK(Skipped(none.value(), "does_not_fit") == 4);
        REQUIRE_FALSE(none.value().skipped_examples.empty());
    }

    TEST_CASE("spot options with very slow checkpoints stay finite or are left out") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.price_types = {PriceType::kSpot};
        r.checkpoint_minutes = 1440;
        r.restart_minutes = 1440;
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(Skipped(plan.value(), "spot_impractical") + plan.value().options.size() > 0);
        for (const auto& o : plan.value().options) {
            CHECK(std::isfinite(o.expected_cost_usd));
            CHECK(o.expected_wall_clock_hours <= o.wall_clock_hours * 1e3);
            CHECK(o.expected_wall_clock_hours > o.wall_clock_hours);
        }
    }

    TEST_CASE("an invalid workload or plan field is an error naming the field") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.workload.tokens_b = -1;
        auto bad = Plan(r, *catalog);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().field == "/tokens_b");

        TrainingPlanRequest p = SevenB();
        p.limit = 0;
        p.constraints.deadline_hours = -1;
        p.start_date = "2026-02-30";
        auto invalid = Plan(p, *catalog);
        REQUIRE_FALSE(invalid.ok());
        CHECK(invalid.error().errors.size() == 3);
    }

    TEST_CASE("slices sold in fixed sizes are planned only at those sizes") {
        auto catalog = Sample();
        PlanReferenceCsv csv = gpucost::testing::SamplePlanReferenceCsv();
        csv.capacity_csv += "gcp,tpu-v5e,*,64,true,,,TEST SLICES,,4|8|16\n";
        csv.capacity_csv.replace(csv.capacity_csv.find("source,notes\n"), 13,
                                 "source,notes,instance_counts\n");
        auto reference = LoadPlanReference(csv);
        REQUIRE(reference.ok());
        TrainingPlanRequest r = SevenB();
        r.constraints.accelerators = {"tpu-v5e"};
        auto plan = PlanTraining(r, *catalog, reference.value());
        REQUIRE(plan.ok());
        REQUIRE_FALSE(plan.value().options.empty());
        for (const auto& o : plan.value().options) {
            CHECK((o.nodes == 4 || o.nodes == 8 || o.nodes == 16));
        }
        r.constraints.node_counts = {2, 3};
        auto unsold = PlanTraining(r, *catalog, reference.value());
        REQUIRE(unsold.ok());
        CHECK(unsold.value().options.empty());
        CHECK(Skipped(unsold.value(), "size_not_sold") == 1);
        CHECK(unsold.value().skipped_examples.size() == 1);
        // Counts that are not ascending, or above the capacity, are refused when loading.
        PlanReferenceCsv bad = csv;
        bad.capacity_csv.replace(bad.capacity_csv.find("4|8|16"), 6, "8|4|99");
        CHECK_FALSE(LoadPlanReference(bad).ok());
    }

    TEST_CASE("bounds that leave no instance count are an error or a counted, explained skip") {
        auto catalog = Sample();
        TrainingPlanRequest above_default = SevenB();
        above_default.constraints.max_total_accelerators.reset();
        above_default.constraints.min_total_accelerators = kDefaultMaxPlanAccelerators + 1;
        auto refused = Plan(above_default, *catalog);
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().field == "/constraints/min_total_accelerators");

        TrainingPlanRequest small = SevenB();
        small.constraints.providers = {"aws"};
        small.constraints.max_total_accelerators = 4;  // p5 has 8 per instance
        auto plan = Plan(small, *catalog);
        REQUIRE(plan.ok());
        CHECK(Skipped(plan.value(), "does_not_fit") == 0);
        bool explained = false;
        for (const auto& [reason, text] : plan.value().skipped_examples) {
            explained =
                explained || (reason == "filtered" &&
                              text.find("8 accelerators per instance") != std::string::npos);
        }
        CHECK(explained);
    }

    TEST_CASE("storage and egress count in the budget and the ranking") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        auto compute_only = Plan(r, *catalog);
        REQUIRE(compute_only.ok());
        const TrainingPlanOption cheapest = *compute_only.value().cheapest;
        CHECK_FALSE(cheapest.data_cost_usd.has_value());

        r.data.stored_gb = 100000;
        r.data.egress_gb = 10;
        auto with_data = Plan(r, *catalog);
        REQUIRE(with_data.ok());
        for (const auto& o : with_data.value().options) {
            REQUIRE(o.data_cost_usd.has_value());
            CHECK(
                *o.data_cost_usd ==
                doctest::Approx(100000 * 0.023 * o.expected_wall_clock_hours / 730.0 + 10 * 0.09));
        }
        // A budget between the compute bill and compute + data is not met.
        const double data_usd = 100000 * 0.023 * cheapest.expected_wall_clock_hours / 730.0 + 0.9;
        r.constraints.budget_usd = cheapest.expected_cost_usd + data_usd / 2;
        r.constraints.node_counts = {cheapest.nodes};
        auto over = Plan(r, *catalog);
        REQUIRE(over.ok());
        CHECK(over.value().feasible_count == 0);
        REQUIRE(over.value().binding_constraints.size() == 1);
        CHECK(over.value().binding_constraints[0].best_value ==
              doctest::Approx(cheapest.expected_cost_usd + data_usd));
    }

    TEST_CASE("qlora is planned only where its kernels run; int8 and fp4 training warn") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.workload.mode = estimate::TrainingMode::kQlora;
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(Skipped(plan.value(), "mode_unsupported") == 1);  // the TPU v5e offering
        for (const auto& o : plan.value().options) {
            CHECK(o.offering->accelerator != "tpu-v5e");
        }
        CHECK(estimate::RunsQlora("NVIDIA"));
        CHECK(estimate::RunsQlora("AMD"));
        CHECK_FALSE(estimate::RunsQlora("Google"));

        TrainingPlanRequest int8 = SevenB();
        int8.workload.precision = Precision::kInt8;
        auto warned = Plan(int8, *catalog);
        REQUIRE(warned.ok());
        bool caveat = false;
        for (const auto& w : warned.value().warnings) {
            caveat =
                caveat || (w.field == "/precision" && w.detail.find("int8") != std::string::npos);
        }
        CHECK(caveat);
        auto bf16 = Plan(SevenB(), *catalog);
        REQUIRE(bf16.ok());
        for (const auto& w : bf16.value().warnings) {
            CHECK(w.field != "/precision");
        }
    }

    TEST_CASE("price warnings name the option they are about") {
        auto catalog = Sample();
        auto plan = Plan(SevenB(), *catalog);
        REQUIRE(plan.ok());
        const TrainingPlan& p = plan.value();
        for (const auto& w : p.warnings) {
            if (w.field == "/recommendation/offering") {
                CHECK(w.detail.rfind(p.recommendation->offering->id, 0) == 0);
            } else if (w.field == "/fastest/offering") {
                CHECK(w.detail.rfind(p.fastest->offering->id, 0) == 0);
            }
        }
    }

    TEST_CASE("the reasoning calls only a reserved price a fixed cost") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.efficiency_spread_fraction = 0;
        r.price_spread_fraction = 0;
        auto hourly = Plan(r, *catalog);
        REQUIRE(hourly.ok());
        CHECK(hourly.value().reasoning.find("fixed cost") == std::string::npos);
        CHECK(hourly.value().reasoning.find("no spread") != std::string::npos);
        auto committed = WithP5Variants({{"commit-1y", PriceType::kCommit1y, 50.0}});
        r.constraints.price_types = {PriceType::kCommit1y};
        auto term = Plan(r, *committed);
        REQUIRE(term.ok());
        CHECK(term.value().reasoning.find("a fixed cost") != std::string::npos);
    }

    TEST_CASE("owned capacity covers a run first at no marginal cost; the rest pays") {
        auto catalog = Sample();
        const std::string p5 = "aws-p5.48xlarge-us-east-1-on-demand";
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.constraints.node_counts = {2};
        r.workload.tokens_b = 100;  // a run of days
        r.today = "2026-11-27";
        r.start_date = "2026-12-01";
        auto find = [&](const TrainingPlan& plan) -> const TrainingPlanOption& {
            for (const auto& o : plan.options) {
                if (o.offering->id == p5) return o;
            }
            FAIL("no p5 option");
            return plan.options.front();
        };
        auto list = Plan(r, *catalog);
        REQUIRE(list.ok());
        const TrainingPlanOption listed = find(list.value());
        CHECK_FALSE(listed.owned.has_value());
        const double run_hours = listed.expected_wall_clock_hours;
        REQUIRE(run_hours > 48);
        // One of the two instances owned from the start for half the run (whole days: a
        // reservation ending mid-run), at 30 USD an hour paid whether used or not.
        const double owned_days = std::floor(run_hours / 2 / 24);
        const double owned_hours = owned_days * 24;
        const long long start = *DaysFromIsoDate("2026-12-01");
        r.owned_capacity = {{p5, 1, "2026-11-01",
                             IsoDateFromDays(start + static_cast<long long>(owned_days)), 30.0}};
        // And a reservation of another offering, which covers nothing of this one.
        r.owned_capacity.push_back(
            {"aws-p5.48xlarge-us-east-1-spot", 2, "2026-12-01", "2027-12-01", 5.0});
        auto partly = Plan(r, *catalog);
        REQUIRE(partly.ok());
        const TrainingPlanOption& o = find(partly.value());
        REQUIRE(owned_hours > 0);
        REQUIRE(o.owned.has_value());
        CHECK(o.owned->instance_hours == doctest::Approx(owned_hours));
        CHECK(o.owned->sunk_usd == doctest::Approx(owned_hours * 30));
        CHECK(o.owned->without_owned_cost_usd == doctest::Approx(listed.expected_cost_usd));
        // The rest at the effective price: (2 x run - owned) instance-hours.
        CHECK(o.expected_cost_usd ==
              doctest::Approx((2 * run_hours - owned_hours) * o.offering->price.usd_per_hour));
        CHECK(o.FullyLoadedCostUsd() == doctest::Approx(o.expected_cost_usd + owned_hours * 30));
        // Both instances owned for a year: the whole run is sunk, so it ranks first at 0.
        r.owned_capacity = {{p5, 4, "2026-12-01", "2027-12-01", 30.0}};
        r.constraints.price_types = {PriceType::kOnDemand, PriceType::kSpot};
        auto covered = Plan(r, *catalog);
        REQUIRE(covered.ok());
        const TrainingPlan& c = covered.value();
        REQUIRE(c.recommendation.has_value());
        CHECK(c.recommendation->offering->id == p5);
        CHECK(c.recommendation->expected_cost_usd == 0);
        CHECK(c.recommendation->owned->instance_hours == doctest::Approx(2 * run_hours));
        CHECK(c.reasoning.find("Owned capacity") != std::string::npos);
        REQUIRE(c.budget.has_value());
        CHECK(c.budget->total_usd == 0);
        CHECK(*c.budget->owned_usd == doctest::Approx(FromCents(ToCents(2 * run_hours * 30))));
    }

    TEST_CASE("the budget months pay only what owned capacity leaves uncovered") {
        auto catalog = Sample();
        const std::string p5 = "aws-p5.48xlarge-us-east-1-on-demand";
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.constraints.node_counts = {1};
        r.today = "2026-11-27";
        // The run starts on the last day of December; December is owned.
        r.start_date = "2026-12-31";
        r.owned_capacity = {{p5, 1, "2026-12-01", "2027-01-01", 30.0}};
        auto plan = Plan(r, *catalog);
        REQUIRE(plan.ok());
        const TrainingPlan& p = plan.value();
        REQUIRE(p.recommendation.has_value());
        REQUIRE(p.recommendation->offering->id == p5);
        REQUIRE(p.recommendation->expected_wall_clock_hours > 24);
        REQUIRE(p.budget.has_value());
        REQUIRE(p.budget->monthly.size() == 2);
        CHECK(p.budget->monthly[0].usd == 0);
        CHECK(p.budget->monthly[1].usd == doctest::Approx(p.budget->total_usd));
        CHECK(p.budget->total_usd ==
              doctest::Approx(FromCents(ToCents(p.recommendation->expected_cost_usd))));
        CHECK(*p.budget->owned_usd == doctest::Approx(24 * 30));
    }
}

TEST_SUITE("plan_training uncertainty") {
    TEST_CASE("a mixture-of-experts run's time spread is the estimator's measured MoE error") {
        auto catalog = Sample();
        auto spread_of = [](const TrainingPlan& plan) {
            for (const auto& a : plan.assumptions) {
                if (a.name.view() == "efficiency_spread_fraction") return a.value;
            }
            FAIL("no efficiency_spread_fraction echo");
            return 0.0;
        };
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        auto dense = Plan(r, *catalog);
        REQUIRE(dense.ok());
        CHECK(spread_of(dense.value()) == doctest::Approx(kDefaultEfficiencySpreadFraction));
        // A Mixtral-sized MoE (47B parameters, 13B active: experts derived).
        r.workload.model.params_b = 47;
        r.workload.model.active_params_b = 13;
        r.workload.tokens_b = 5;
        auto moe = Plan(r, *catalog);
        REQUIRE(moe.ok());
        CHECK(spread_of(moe.value()) == doctest::Approx(kMoeEfficiencySpreadFraction));
        REQUIRE(moe.value().recommendation.has_value());
        const TrainingPlanOption& o = *moe.value().recommendation;
        // An on-demand option: run time and list price as independent log-normals.
        const double ratio = std::exp(std::hypot(std::log1p(kMoeEfficiencySpreadFraction),
                                                 std::log1p(kDefaultPriceSpreadFraction)));
        CHECK(o.cost_usd_p90 / o.cost_usd_p50 == doctest::Approx(ratio).epsilon(1e-3));
        // A spread the request gives is used as given.
        r.efficiency_spread_fraction = 0.2;
        auto given = Plan(r, *catalog);
        REQUIRE(given.ok());
        CHECK(spread_of(given.value()) == doctest::Approx(0.2));
    }
}

TEST_SUITE("plan_training run-time risk") {
    TEST_CASE("the share of runs a run-time spread puts past a deadline") {
        // The median misses half the time; the 90th percentile (1 + spread) one run in ten.
        CHECK(RunTimeLateFraction(100, 100, 0.2) == doctest::Approx(0.5));
        CHECK(RunTimeLateFraction(100, 120, 0.2) == doctest::Approx(0.1));
        CHECK(RunTimeLateFraction(100, 140, 0.4) == doctest::Approx(0.1));
        // Without a spread it is whether the expected time fits.
        CHECK(RunTimeLateFraction(100, 99, 0) == doctest::Approx(1.0));
        CHECK(RunTimeLateFraction(100, 101, 0) == doctest::Approx(0.0));
    }

    // A fixed-price option's deadline_probability was 1 whenever its expected time fitted: one
    // expected at 1/1.1 of the deadline was recommended as certain where a quarter of runs,
    // under the plan's own run-time spread, would miss it.
    TEST_CASE("a fixed-price option's deadline probability counts the run-time spread") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        auto open = Plan(r, *catalog);
        REQUIRE(open.ok());
        REQUIRE(open.value().recommendation.has_value());
        CHECK(open.value().reasoning.find("past the deadline") == std::string::npos);
        const std::string key = KeyOf(*open.value().recommendation);
        const double expected_hours = open.value().recommendation->expected_wall_clock_hours;
        // A deadline 10 % beyond the cheapest option's expected time: a quarter of its runs miss.
        r.constraints.deadline_hours = 1.1 * expected_hours;
        r.include_infeasible = true;
        auto tight = Plan(r, *catalog);
        REQUIRE(tight.ok());
        const TrainingPlanOption* judged = FindOption(tight.value(), key);
        REQUIRE(judged != nullptr);
        const double sigma = std::log1p(kDefaultEfficiencySpreadFraction) / kZ90;
        const double late = 0.5 * std::erfc(std::log(1.1) / sigma / std::sqrt(2.0));
        CHECK(late == doctest::Approx(0.251).epsilon(0.01));
        CHECK(judged->deadline_probability.value_or(1.0) == doctest::Approx(1.0 - late));
        CHECK_FALSE(judged->meets_deadline);
        REQUIRE(judged->violations.size() == 1);
        CHECK(judged->violations[0].constraint == "deadline_confidence");
        // What is recommended finishes in time 9 runs in 10, and the reasoning says the spread.
        if (tight.value().recommendation) {
            const TrainingPlanOption& o = *tight.value().recommendation;
            CHECK(*o.deadline_probability >= kDefaultDeadlineConfidence);
            CHECK(o.expected_wall_clock_hours * (1.0 + kDefaultEfficiencySpreadFraction) <=
                  *r.constraints.deadline_hours);
            const double o_late =
                0.5 *
                std::erfc(std::log(*r.constraints.deadline_hours / o.expected_wall_clock_hours) /
                          sigma / std::sqrt(2.0));
            const std::string said = "that spread alone puts about " + Fixed(100.0 * o_late, 1) +
                                     "% of runs past the deadline, counted in that probability.";
            CAPTURE(tight.value().reasoning);
            CHECK(tight.value().reasoning.find("It finishes by the deadline with probability " +
                                               Fixed(100.0 * *o.deadline_probability, 1) + "%") !=
                  std::string::npos);
            CHECK((tight.value().reasoning.find(said) != std::string::npos) ==
                  (Fixed(100.0 * o_late, 1) != "0.0"));
        }
        // Without a spread (efficiency_spread_fraction 0) the expected time alone decides.
        r.efficiency_spread_fraction = 0.0;
        auto exact = Plan(r, *catalog);
        REQUIRE(exact.ok());
        REQUIRE(exact.value().recommendation.has_value());
        CHECK(KeyOf(*exact.value().recommendation) == key);
        CHECK(*exact.value().recommendation->deadline_probability == 1.0);
        // A deadline far beyond it: nothing to say.
        r.efficiency_spread_fraction.reset();
        r.constraints.deadline_hours = 10.0 * expected_hours;
        auto loose = Plan(r, *catalog);
        REQUIRE(loose.ok());
        CHECK(loose.value().reasoning.find("past the deadline") == std::string::npos);
    }
}

TEST_SUITE("plan_training deadline") {
    // Budgets of 0 only: a deadline that has passed already, so no test depends on the speed
    // of the machine.
    TEST_CASE("a plan whose deadline has passed is kBudgetExceeded, with no options") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        REQUIRE(Plan(r, *catalog).ok());
        r.deadline = Deadline::After(std::chrono::milliseconds(0));
        auto plan = Plan(r, *catalog);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().code == ErrorCode::kBudgetExceeded);
    }

    TEST_CASE("the estimate stage stops on every thread at the deadline and answers no outcomes") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.estimate_threads = 4;
        training_stages::Tally tally;
        const training_stages::Candidates candidates =
            training_stages::SelectCandidates(r, *catalog, Ref(), tally);
        REQUIRE(candidates.shapes.size() > 1);
        auto estimated = training_stages::EstimateShapes(r, candidates, tally);
        REQUIRE(estimated.ok());
        CHECK(estimated.value().estimates > 0);

        r.deadline = Deadline::After(std::chrono::milliseconds(0));
        training_stages::Tally late_tally;
        auto late = training_stages::EstimateShapes(r, candidates, late_tally);
        REQUIRE_FALSE(late.ok());
        CHECK(late.error().code == ErrorCode::kBudgetExceeded);
        // Nothing was counted as skipped for shapes the threads never reached.
        for (const auto& [reason, count] : late_tally.counts()) CHECK_MESSAGE(count == 0, reason);
    }
}
