#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"
#include "pricing/price_book.hpp"

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
// Spot offerings without a Spot Advisor bucket (GCP, Azure, marketplaces: 45 of the catalog's
// 49 spot offerings) are planned as if in the worst bucket (>20 %, 30 % a month; see
// RepresentativePercentPerMonth), by training plans and spot plans alike; conservative.
inline constexpr double kDefaultUnknownSpotPercentPerMonth = 30.0;
// Upper end of the open >20 % Spot Advisor bucket for the ranges a spot plan gives: spotinfo
// bounds it at 100 %, where a run never ends. Half of the instances in a month, a stated
// assumption: AWS publishes no figure above 20 %, and operators of p5/p4d capacity report
// interruptions several times a month, not continuous loss; judgement.
inline constexpr double kOpenBucketUpperPercentPerMonth = 50.0;
// A deadline counts as met when the probability of finishing by it is at least this.
inline constexpr double kDefaultRequiredDeadlineProbability = 0.9;
// Below this expected saving, spot's operational risk is not worth it (recommendation
// on_demand). Judgement.
inline constexpr double kDefaultMinSavingsFraction = 0.10;

// spot_usd_per_hour or interruptions_per_hour given next to a spot offering whose catalog
// figure differs by more than this share of the larger draws a warning naming both.
// Judgement: beyond rounding of a quoted price.
inline constexpr double kOverrideTolerance = 0.01;

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

// How a job of `work_hours` is cut into stretches between checkpoints: every stretch but the
// last is `interval_hours` of work followed by a checkpoint of `checkpoint_hours`; the last
// stretch is the remaining work (0 < last <= interval) and writes no checkpoint, since the
// job's result is saved as part of the work. An interval covering the whole job gives one
// stretch and no checkpoint.
struct CheckpointLayout {
    double full_stretches = 0;      // stretches of interval + checkpoint hours
    double full_stretch_hours = 0;  // interval_hours + checkpoint_hours
    double last_stretch_hours = 0;  // remaining work, no checkpoint
    double failure_free_hours = 0;  // work + full_stretches x checkpoint
};
// REQUIRES: work_hours > 0, interval_hours > 0, checkpoint_hours >= 0, all finite.
CheckpointLayout LayOutCheckpoints(double work_hours, double interval_hours,
                                   double checkpoint_hours);

// The interrupted run both the expected time and the deadline probability describe:
// interruptions arrive as a Poisson process at `interruptions_per_hour` (of the whole job,
// whatever it is doing), a stretch interrupted before it ends is lost and run again after a
// restart of `restart_hours`, and a restart interrupted before it ends starts over.
struct InterruptedRun {
    double work_hours = 0;
    double interruptions_per_hour = 0;
    double checkpoint_hours = 0;
    double restart_hours = 0;
    double interval_hours = 0;  // hours of work between checkpoints
};

// Expected wall-clock hours of `run` (see InterruptedRun and CheckpointLayout): Daly's exact
// expectation per stretch of s hours, M * e^(R/M) * (e^(s/M) - 1) with M = 1 / rate, summed
// over the stretches. With no interruptions the answer is exactly work_hours. Returns +inf
// when the expectation overflows.
// REQUIRES: every field finite, work_hours > 0, interval_hours > 0, others >= 0.
double ExpectedHoursWithInterruptions(const InterruptedRun& run);
// The same, by position (kept for callers that hold the five numbers).
double ExpectedHoursWithInterruptions(double work_hours, double interruptions_per_hour,
                                      double checkpoint_hours, double restart_hours,
                                      double interval_hours);

// Cells of the grids on which SpotDeadlineProbability spreads lost time. A stretch's lost
// time sits on a grid fine enough for it; sums of stretches coarsen it by doubling until it
// spans 0 .. deadline - failure-free hours. Every step keeps means exactly; the spread it adds
// is paid per doubling, not per interruption (checked against a seeded simulation up to
// thousands of interruptions in tests/pricing/plan/spot_test.cpp and docs/planning.md).
inline constexpr std::size_t kDeadlineGridCells = 2048;

// Probability that `run` finishes within `deadline_hours`, from the distribution of its lost
// time (not a normal or Poisson approximation): per stretch of s hours the number of failed
// attempts is geometric with success e^(-rate s), each failed attempt loses an exponential
// time truncated to s plus a restart whose own failed attempts are geometric with success
// e^(-rate R); the stretches' lost times are convolved (squaring for the identical full
// stretches) on grids of kDeadlineGridCells cells (see there), the last reaching deadline -
// failure-free hours.
// 0 when even a failure-free run is too long; 1 with no interruptions and enough time.
// Non-decreasing in the deadline. Bounded work: O(cells^2 log stretches).
// REQUIRES: the preconditions of ExpectedHoursWithInterruptions; deadline_hours finite.
double SpotDeadlineProbability(double deadline_hours, const InterruptedRun& run);

// Where a run's hours are an estimate, its real hours are the estimate times a run-time factor
// E, log-normal with median 1 and ln E ~ N(0, sigma^2) (sigma = ln(1 + efficiency spread) /
// z90, the log-normal that widens the plans' cost p10-p90), independent of interruptions.
// Run-time factors beyond this many sigmas are not counted: Phi(-6) is 1e-9, below every
// probability the plans print.
inline constexpr double kRunTimeSigmasCounted = 6.0;
// Under a run-time factor the lost time only needs a grid fine beside the factor's own spread
// (sigma x deadline hours): this many cells per sigma x deadline of the grid's span, at least
// kMinRunTimeGridCells, at most kDeadlineGridCells. At 32 a cell is 1/32 sigma: Phi moves by at
// most 0.0125 across one, and the masses keep their means (checked against a simulation that
// draws the work, tests/pricing/plan/spot_test.cpp). Definition; a dense plan's grid has about
// 350 cells rather than 2,048, some 30 times less work per distribution.
inline constexpr double kRunTimeGridCellsPerSigma = 32;
inline constexpr std::size_t kMinRunTimeGridCells = 64;
// The standard normal distribution function, Phi.
double NormalCdf(double z);
// Probability that a run expected to take `expected_hours` (no interruptions) finishes within
// `deadline_hours`: Phi(ln(deadline / expected) / sigma); 1 or 0 by the expected hours when
// sigma is 0.
double RunTimeDeadlineProbability(double deadline_hours, double expected_hours,
                                  double run_time_sigma);
// SpotDeadlineProbability of a run whose work hours are an estimate: its interrupted hours
// T0 + L (failure-free hours plus lost time, the distribution above, carried on a grid
// reaching deadline x e^(kRunTimeSigmasCounted sigma)) scaled by the run-time factor E,
// P(E (T0 + L) <= D) = sum over the grid of P(L = l) Phi(ln(D / (T0 + l)) / sigma). Scaling
// the lost time with the work keeps its mean exact (interruptions arrive per hour run); its
// own spread, which E also stretches, is narrow beside E's. The plain probability at sigma 0.
double SpotDeadlineProbability(double deadline_hours, const InterruptedRun& run,
                               double run_time_sigma);

// What a spot plan is asked. Prices and the interruption rate are per instance, given
// directly or read from offerings: the spot offering supplies its price and its Spot Advisor
// bucket; the on-demand price comes from `on_demand_offering_id` or, when absent, from the
// spot offering's on-demand twin (same provider, instance type and region). The job runs on
// `nodes` instances: the cluster's rate is nodes x the price, and any one instance being
// interrupted interrupts the job, so the job's interruption rate is nodes x the per-instance
// rate (independent Poisson processes add).
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
    // The job's first day (YYYY-MM-DD), for owned capacity to cover: the job runs from its
    // start (00:00 UTC) for job_hours. Default: `today`.
    std::optional<std::string> start_date;
    // Today's date (YYYY-MM-DD) as the caller's clock says; the default start date.
    std::string today;
    // Capacity already owned (a price book's owned_capacity, set by the caller from the book,
    // validated there): a reservation is on-demand capacity, so the on-demand path's hours it
    // covers (of on_demand_offering_id or the spot offering's twin) cost nothing at the margin.
    std::vector<OwnedCapacity> owned_capacity;
    // sigma of the job's run-time factor (kRunTimeSigmasCounted): 0 for job_hours given, taken
    // as exact; set by PlanSpotForTraining from the estimate's own error, so that both
    // deadline probabilities count it. Not a request field.
    double run_time_sigma = 0;

    // Ranges and combinations; reports every failing field as a JSON pointer
    // ("/job_hours"), kInvalidArgument.
    [[nodiscard]] Status Validate() const;
};

// A figure's range: at the lower and upper end of what it depends on.
struct SpotRange {
    double low = 0;
    double high = 0;
};

// What owned capacity covers of the on-demand path: its job_hours on `nodes` instances of the
// on-demand offering from the start date. Those hours are paid whether used or not (sunk),
// so on_demand_cost_usd is the marginal bill for the rest (at the effective on-demand price),
// and the saving spot offers is measured against it.
struct SpotOwnedUse {
    double instance_hours = 0;          // of the on-demand run, covered
    double sunk_usd = 0;                // those hours at the commitments' usd_per_hour
    double without_owned_cost_usd = 0;  // the on-demand bill had nothing been owned
};

enum class SpotRecommendation { kSpot, kOnDemand, kMixed };
// "spot", "on_demand", "mixed".
const char* SpotRecommendationName(SpotRecommendation recommendation);

struct SpotPlan {
    std::string catalog_version;  // the catalog snapshot the offerings' prices came from
    double job_hours = 0;
    int nodes = 1;
    double on_demand_usd_per_hour = 0;          // per instance
    double spot_usd_per_hour = 0;               // per instance
    double on_demand_cluster_usd_per_hour = 0;  // nodes x on_demand_usd_per_hour
    double spot_cluster_usd_per_hour = 0;       // nodes x spot_usd_per_hour
    double interruptions_per_hour = 0;          // per instance
    double cluster_interruptions_per_hour = 0;  // of the whole job: nodes x per instance
    std::optional<double> mean_hours_between_interruptions;  // of the job; none without
    std::optional<std::string> interruption_bucket;          // when taken from an offering
    // When the rate comes from the offering's bucket (or, without one, the worst-bucket
    // default) rather than the request: the monthly interruption share's bounds (the bucket's,
    // the open bucket's up to kOpenBucketUpperPercentPerMonth; without a bucket 0 to that),
    // and the expected spot cost and deadline probability at each, with the same checkpoint
    // interval. Nullopt when a bound makes the run endless (expected time not finite).
    std::optional<SpotRange> interruption_percent_per_month_range;
    std::optional<SpotRange> expected_spot_cost_usd_range;
    std::optional<SpotRange> spot_deadline_probability_range;  // with a deadline
    double checkpoint_hours = 0;
    double restart_hours = 0;
    // Hours of work between checkpoints; equals job_hours when no intermediate checkpoint
    // is worth taking (no interruptions, or an interval longer than the job).
    double checkpoint_interval_hours = 0;
    std::optional<double> young_checkpoint_interval_hours;
    double checkpoints = 0;         // checkpoints written in a failure-free run
    double failure_free_hours = 0;  // job hours plus those checkpoints
    double expected_interruptions = 0;
    double expected_overhead_fraction = 0;  // expected spot hours / job hours - 1
    double expected_spot_hours = 0;
    double expected_spot_cost_usd = 0;
    double on_demand_hours = 0;
    // The on-demand bill; with owned capacity covering some of it, the marginal bill (see
    // SpotOwnedUse).
    double on_demand_cost_usd = 0;
    double expected_savings_usd = 0;  // on_demand_cost_usd - expected_spot_cost_usd
    // Of the on-demand cost; null when that is 0 (owned capacity covers the whole run).
    std::optional<double> expected_savings_fraction;
    // The job's first day and where it came from ("request" or "today"); null when the plan
    // neither was given a start date nor had owned capacity to place.
    std::optional<std::string> start_date;
    std::optional<std::string> start_date_source;
    // Owned capacity's share of the on-demand path; null when it covers none (the reasoning
    // says so when the book owns capacity).
    std::optional<SpotOwnedUse> owned;
    std::optional<double> deadline_hours;
    std::optional<double> spot_deadline_probability;
    std::optional<double> on_demand_deadline_probability;
    // When spot alone misses the deadline too often and on-demand meets it, the mixed plan
    // (start on spot, move to on-demand once hours elapsed + remaining work reach the
    // deadline) is weighed. Its slack: hours of lost work and restarts a spot run writing all
    // its checkpoints can absorb, deadline - failure_free_hours (negative: the checkpoints
    // alone overrun the deadline, so every run moves to on-demand before the end).
    std::optional<double> mixed_slack_hours;
    // Its expected cost (see ExpectedMixedCost) and saving against on-demand; the mixed
    // recommendation needs that saving to reach min_savings_fraction.
    std::optional<double> expected_mixed_cost_usd;
    std::optional<double> expected_mixed_savings_fraction;
    SpotRecommendation recommendation = SpotRecommendation::kOnDemand;
    std::string reasoning;
    std::optional<std::string> spot_offering_id;
    std::optional<std::string> on_demand_offering_id;
    Assumptions assumptions;
    // Inputs that disagree, kept as given: an on-demand offering with other accelerators, or
    // another number per instance, than the spot offering (the same job hours and node count
    // priced on both); spot_usd_per_hour or interruptions_per_hour overriding the spot
    // offering's catalog price or bucket rate.
    std::vector<FieldError> warnings;
};

// Expected cost of the mixed plan, to first order: the run's expected overhead over the
// work (checkpoints, lost work, restarts: E[T] - W) accrues in proportion to the work done, so
// the deadline's allowance D - W is used up after the share f = min(1, (D - W) / (E[T] - W))
// of the job; that share runs on spot (f x E[T] hours), the rest of the work on on-demand
// ((1 - f) x W hours). Cost = f E[T] x spot cluster USD/h + (1 - f) W x on-demand cluster
// USD/h. Within 1.5 % of the on-demand cost of a seeded simulation of the switch rule in
// tests/pricing/plan/spot_test.cpp. REQUIRES: W <= deadline_hours, plan priced (E[T] set).
double ExpectedMixedCost(const SpotPlan& plan, double deadline_hours);
// The share f of the job the mixed plan runs on spot (see ExpectedMixedCost).
double MixedSpotShare(const SpotPlan& plan, double deadline_hours);

// Plans `request` against `catalog` (used only when offerings are named). kInvalidArgument
// for invalid inputs (see Validate), kNotFound for an unknown offering id,
// kFailedPrecondition when a named offering is of the wrong price type or carries no
// interruption bucket and no rate was given, or when the expected spot time would be more
// than a million times the job length (checkpoint interval far too long for the rate).
[[nodiscard]] Result<SpotPlan> PlanSpot(const SpotPlanRequest& request, const Catalog& catalog);

// The on-demand offering with the same provider, instance type and region as `spot`, if any.
std::optional<Offering> FindOnDemandTwin(const Catalog& catalog, const Offering& spot);

}  // namespace gpucost::pricing::plan
