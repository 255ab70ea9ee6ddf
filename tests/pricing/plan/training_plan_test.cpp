#include "pricing/plan/training_plan.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "pricing/catalog_loader.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "pricing/plan/spot.hpp"
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
    std::vector<Offering> offerings = base.Offerings();
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
    r.constraints.max_accelerators = 64;
    r.limit = kMaxPlanLimit;
    return r;
}

std::string KeyOf(const TrainingPlanOption& o) {
    return o.offering->id + "@" + std::to_string(o.nodes);
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
        auto plan = PlanTraining(r, *catalog);
        REQUIRE(plan.ok());
        std::vector<int> nodes;
        for (const auto& o : plan.value().options) {
            nodes.push_back(o.nodes);
        }
        std::sort(nodes.begin(), nodes.end());
        CHECK(nodes == std::vector<int>{1, 3, 6});
        CHECK(plan.value().estimates == 4);  // 3 counts + 1 re-run for the assumption echo
    }

    TEST_CASE("shapes differing only in scale-out share their one-node estimate") {
        auto base = Sample();
        std::vector<Offering> offerings = base->Offerings();
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
        auto plan = PlanTraining(r, *catalog.value());
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
        auto plan = PlanTraining(SevenB(), *catalog);
        REQUIRE(plan.ok());
        const TrainingPlan& p = plan.value();
        REQUIRE(p.total_options > 0);
        CHECK(p.options.size() == p.total_options);
        for (const auto& o : p.options) {
            CHECK(o.usd_per_hour == doctest::Approx(o.offering->price.usd_per_hour * o.nodes));
            CHECK(o.cost_usd == doctest::Approx(o.wall_clock_hours * o.usd_per_hour));
            CHECK(o.accelerators == o.nodes * o.offering->accelerator_count);
            CHECK(o.parallelism.tensor * o.parallelism.pipeline * o.parallelism.data ==
                  o.accelerators);
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
        auto plan = PlanTraining(SevenB(), *catalog);
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

    TEST_CASE("a higher price never lowers any option's cost") {
        auto catalog = Sample();
        auto base = PlanTraining(SevenB(), *catalog);
        auto dear = Scaled(*catalog, 1.5);
        auto higher = PlanTraining(SevenB(), *dear);
        REQUIRE(base.ok());
        REQUIRE(higher.ok());
        REQUIRE(base.value().total_options == higher.value().total_options);
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

    TEST_CASE("a later deadline never removes options or feasible ones") {
        auto catalog = Sample();
        auto all = PlanTraining(SevenB(), *catalog);
        REQUIRE(all.ok());
        std::vector<double> hours;
        for (const auto& o : all.value().options) {
            hours.push_back(o.expected_wall_clock_hours);
        }
        std::sort(hours.begin(), hours.end());
        REQUIRE(hours.size() >= 3);
        const double shortest = *std::min_element(hours.begin(), hours.end());
        const double longest = *std::max_element(hours.begin(), hours.end());
        std::set<std::string> previous;
        for (double deadline : {shortest * 0.5, hours[hours.size() / 3], hours[hours.size() / 2],
                                longest * 2}) {
            TrainingPlanRequest r = SevenB();
            r.constraints.deadline_hours = deadline;
            auto plan = PlanTraining(r, *catalog);
            REQUIRE(plan.ok());
            CHECK(plan.value().total_options == all.value().total_options);
            std::set<std::string> meeting;
            for (const auto& o : plan.value().options) {
                if (o.meets_deadline) {
                    meeting.insert(KeyOf(o));
                }
            }
            CHECK(std::includes(meeting.begin(), meeting.end(), previous.begin(), previous.end()));
            CHECK(plan.value().feasible_options == meeting.size());
            previous = meeting;
        }
        TrainingPlanRequest impossible = SevenB();
        impossible.constraints.deadline_hours = hours.front() * 0.5;
        auto none = PlanTraining(impossible, *catalog);
        CHECK_FALSE(none.value().cheapest.has_value());
        CHECK(none.value().fastest.has_value());
    }

    TEST_CASE("the Pareto front holds exactly the options nothing beats on cost and time") {
        auto catalog = Sample();
        auto plan = PlanTraining(SevenB(), *catalog);
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

    TEST_CASE("sort, limit and offset page through the same ordering") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.sort = TrainingPlanSort::kTime;
        auto all = PlanTraining(r, *catalog);
        REQUIRE(all.ok());
        REQUIRE(all.value().total_options >= 4);
        r.limit = 2;
        r.offset = 2;
        auto page = PlanTraining(r, *catalog);
        REQUIRE(page.ok());
        REQUIRE(page.value().options.size() == 2);
        CHECK(KeyOf(page.value().options[0]) == KeyOf(all.value().options[2]));
        CHECK(KeyOf(page.value().options[1]) == KeyOf(all.value().options[3]));
        r.offset = 100000;
        CHECK(PlanTraining(r, *catalog).value().options.empty());
    }

    TEST_CASE("constraints filter offerings and the budget flags options") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.providers = {"aws"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.constraints.budget_usd = 1.0;
        auto plan = PlanTraining(r, *catalog);
        REQUIRE(plan.ok());
        for (const auto& o : plan.value().options) {
            CHECK(o.offering->id == "aws-p5.48xlarge-us-east-1-on-demand");
            CHECK_FALSE(o.within_budget);
        }
        CHECK_FALSE(plan.value().fastest.has_value());
        CHECK(plan.value().skipped[0].first == "filtered");
        CHECK(plan.value().skipped[0].second == 3);
    }

    TEST_CASE("hardware without the precision or the memory is skipped with a reason") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.workload.precision = Precision::kFp8;  // TPU v5e has no fp8
        auto plan = PlanTraining(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(plan.value().skipped[1].first == "precision_unsupported");
        CHECK(plan.value().skipped[1].second == 1);

        TrainingPlanRequest huge = SevenB();
        huge.workload.model.params_b = 1000;
        huge.constraints.max_accelerators = 16;
        auto none = PlanTraining(huge, *catalog);
        REQUIRE(none.ok());
        CHECK(none.value().total_options == 0);
        CHECK(none.value().skipped[2].first == "does_not_fit");
        CHECK(none.value().skipped[2].second == 4);
        REQUIRE_FALSE(none.value().skipped_examples.empty());
    }

    TEST_CASE("spot options with very slow checkpoints stay finite or are left out") {
        auto catalog = Sample();
        TrainingPlanRequest r = SevenB();
        r.constraints.price_types = {PriceType::kSpot};
        r.checkpoint_minutes = 1440;
        r.restart_minutes = 1440;
        auto plan = PlanTraining(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(plan.value().skipped[3].first == "spot_impractical");
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
        auto bad = PlanTraining(r, *catalog);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().field == "/tokens_b");

        TrainingPlanRequest p = SevenB();
        p.limit = 0;
        p.constraints.providers = {"ibm"};
        p.constraints.deadline_hours = -1;
        auto invalid = PlanTraining(p, *catalog);
        REQUIRE_FALSE(invalid.ok());
        CHECK(invalid.error().errors.size() == 3);
    }
}
