#pragma once

#include <optional>
#include <string>

#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"

namespace gpucost::pricing::plan {

// Hours in an average month (8760 / 12). Used wherever a monthly figure meets an hourly one.
inline constexpr double kHoursPerMonth = 730.0;

// Defaults of spot planning. Each is echoed under `assumptions` with its source.
//
// Checkpoint write time: writing a sharded training checkpoint to fast shared storage takes
// minutes (e.g. a 70B-parameter model with Adam state is ~1.1 TB; at ~5 GB/s per node that is
// a few minutes). Judgement; override per job.
inline constexpr double kDefaultCheckpointMinutes = 5.0;
// Restart/requeue time after an interruption: getting new capacity, pulling the container,
// re-initialising NCCL and reading the last checkpoint. Judgement; override per job.
inline constexpr double kDefaultRestartMinutes = 10.0;
// A deadline counts as met when the probability of finishing by it is at least this.
inline constexpr double kDefaultRequiredDeadlineProbability = 0.9;
// Below this expected saving, spot's operational risk is not worth it (recommendation
// on_demand). Judgement.
inline constexpr double kDefaultMinSavingsFraction = 0.10;

// Representative monthly interruption percentage of an AWS Spot Advisor bucket: the midpoint
// of the bucket's bounds as spotinfo states them (<5%: 0..5 -> 2.5; 5-10%: 5..11 -> 8;
// 10-15%: 11..16 -> 13.5; 15-20%: 16..22 -> 19). The open bucket >20% (22..100) uses 30, a
// judgement: its midpoint (61) would call most p5 capacity unusable, which operators do not
// report. Returns nullopt for a bucket it does not know.
std::optional<double> RepresentativePercentPerMonth(const SpotInterruptionBucket& bucket);

// Interruption rate per instance-hour from a monthly interruption percentage, treating
// interruptions as a Poisson process: P(interrupted within a month) = p, so
// rate = -ln(1 - p) / kHoursPerMonth. REQUIRES: 0 <= percent_per_month < 100.
double InterruptionsPerHourFromMonthlyPercent(double percent_per_month);

// Young's first-order optimal checkpoint interval sqrt(2 * C * MTBF), in hours of work
// between checkpoints. REQUIRES: checkpoint_hours > 0, interruptions_per_hour > 0.
double YoungCheckpointIntervalHours(double checkpoint_hours, double interruptions_per_hour);

// Daly's higher-order optimum (Daly 2006, "A higher order estimate of the optimum checkpoint
// interval for restart dumps", FGCS 22(3)): for C < 2M,
// sqrt(2CM) * (1 + sqrt(C/2M)/3 + (C/2M)/9) - C, else M. Same preconditions as Young.
double DalyCheckpointIntervalHours(double checkpoint_hours, double interruptions_per_hour);

// Expected wall-clock hours to finish `work_hours` of failure-free work when interruptions
// arrive as a Poisson process at `interruptions_per_hour`, a checkpoint taking
// `checkpoint_hours` is written after every `interval_hours` of work, and each interruption
// costs `restart_hours` plus the work since the last checkpoint. Daly's exact expectation
// per segment, M * e^(R/M) * (e^((tau + C)/M) - 1), times the number of segments (no
// checkpoint is written when the interval covers the whole job). With no interruptions the
// answer is exactly work_hours. Returns +inf when the expectation overflows.
// REQUIRES: every argument finite, work_hours > 0, interval_hours > 0, others >= 0.
double ExpectedHoursWithInterruptions(double work_hours, double interruptions_per_hour,
                                      double checkpoint_hours, double restart_hours,
                                      double interval_hours);

// What a spot plan is asked. Prices and the interruption rate are for the whole job (all its
// instances together). Either give prices and the rate directly, or name offerings: the spot
// offering supplies its price and its Spot Advisor bucket; the on-demand price comes from
// `on_demand_offering_id` or, when absent, from the spot offering's on-demand twin (same
// provider, instance type and region). `nodes` multiplies offering prices and the rate.
struct SpotPlanRequest {
    std::optional<double> job_hours;  // failure-free hours of work
    std::optional<double> on_demand_usd_per_hour;
    std::optional<double> spot_usd_per_hour;
    std::optional<double> interruptions_per_hour;
    std::optional<std::string> spot_offering_id;
    std::optional<std::string> on_demand_offering_id;
    int nodes = 1;
    std::optional<double> checkpoint_minutes;
    std::optional<double> restart_minutes;
    std::optional<double> checkpoint_interval_hours;  // override of the Daly optimum
    std::optional<double> max_spot_usd_per_hour;      // spot is not used above this price
    std::optional<double> deadline_hours;
    std::optional<double> required_deadline_probability;
    std::optional<double> min_savings_fraction;

    // Ranges and combinations; reports every failing field as a JSON pointer
    // ("/job_hours"), kInvalidArgument.
    [[nodiscard]] Status Validate() const;
};

enum class SpotRecommendation { kSpot, kOnDemand, kMixed };
// "spot", "on_demand", "mixed".
const char* SpotRecommendationName(SpotRecommendation recommendation);

struct SpotPlan {
    double job_hours = 0;
    double on_demand_usd_per_hour = 0;
    double spot_usd_per_hour = 0;
    double interruptions_per_hour = 0;
    std::optional<double> mean_hours_between_interruptions;  // none without interruptions
    std::optional<std::string> interruption_bucket;          // when taken from an offering
    double checkpoint_hours = 0;
    double restart_hours = 0;
    // Hours of work between checkpoints; equals job_hours when no intermediate checkpoint
    // is worth taking (no interruptions, or an interval longer than the job).
    double checkpoint_interval_hours = 0;
    std::optional<double> young_checkpoint_interval_hours;
    double checkpoints = 0;  // checkpoints written in a failure-free run
    double expected_interruptions = 0;
    double expected_overhead_fraction = 0;  // expected spot hours / job hours - 1
    double expected_spot_hours = 0;
    double expected_spot_cost_usd = 0;
    double on_demand_hours = 0;
    double on_demand_cost_usd = 0;
    double expected_savings_usd = 0;
    double expected_savings_fraction = 0;  // of the on-demand cost
    std::optional<double> deadline_hours;
    std::optional<double> spot_deadline_probability;
    std::optional<double> on_demand_deadline_probability;
    // For `mixed`: hours of lost time the job can absorb before it must move to on-demand.
    std::optional<double> mixed_slack_hours;
    SpotRecommendation recommendation = SpotRecommendation::kOnDemand;
    std::string reasoning;
    std::optional<std::string> spot_offering_id;
    std::optional<std::string> on_demand_offering_id;
    Assumptions assumptions;
};

// Probability that a spot job finishes by `deadline_hours`, each interruption costing on
// average `average_loss_hours` (restart + half a segment): the run tolerates
// k = floor((deadline - failure-free hours) / loss) interruptions, takes failure-free + k x
// loss hours with k of them, and makes it when Poisson(rate x that time) <= k. When one
// interruption costs more than the mean time between them (rate x loss >= 1) the estimate
// is made non-decreasing in the deadline by taking the best over smaller k (first 256).
// 0 when even a failure-free run is too long; 1 with no interruptions and enough time.
double SpotDeadlineProbability(double deadline_hours, double failure_free_hours,
                               double interruptions_per_hour, double average_loss_hours);

// P(N <= k) for N ~ Poisson(mean); normal approximation for means above 10^4. Bounded work.
double PoissonCdf(double k, double mean);

// Plans `request` against `catalog` (used only when offerings are named). kInvalidArgument
// for invalid inputs (see Validate), kNotFound for an unknown offering id,
// kFailedPrecondition when a named offering is of the wrong price type or carries no
// interruption bucket and no rate was given, or when the expected spot time would be more
// than a million times the job length (checkpoint interval far too long for the rate).
[[nodiscard]] Result<SpotPlan> PlanSpot(const SpotPlanRequest& request, const Catalog& catalog);

// The on-demand offering with the same provider, instance type and region as `spot`, if any.
std::optional<Offering> FindOnDemandTwin(const Catalog& catalog, const Offering& spot);

}  // namespace gpucost::pricing::plan
