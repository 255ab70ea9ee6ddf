#include "pricing/plan/spot.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "pricing/calendar.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/money.hpp"
#include "pricing/plan/budget.hpp"

namespace gpucost::pricing::plan {
namespace {

// Request bounds: far beyond any real job, small enough that every product stays finite.
constexpr double kMaxJobHours = 1e6;
constexpr double kMaxUsdPerHour = 1e6;
// A tenth of a cent an hour: the cheapest real price is far above it, and a denormal on-demand
// price made the savings fraction infinite (written as null).
constexpr double kMinOnDemandUsdPerHour = 0.001;
constexpr double kMaxInterruptionsPerHour = 10.0;
constexpr double kMaxMinutes = 1440.0;
constexpr double kMaxDeadlineHours = 1e7;
constexpr int kMaxNodes = 4096;
// Above this ratio of expected spot time to job time the job practically never finishes.
constexpr double kMaxExpectedSlowdown = 1e6;
// One stretch's lost-time grid spans this many of its expected hours (see StretchSpread).
constexpr double kStretchSpanMeans = 40.0;
// Bound on how much finer than the deadline grid a stretch's grid may be.
constexpr int kMaxGridHalvings = 40;
// Grid masses below this are treated as empty at the tail of a lost-time distribution.
constexpr double kNegligibleMass = 1e-16;
// Stretches between checkpoints a job may be cut into (bounds the deadline computation's
// binary powers and keeps the count exact in a double).
constexpr double kMaxCheckpointStretches = 1e9;
// Monthly percentage used for the open Spot Advisor bucket (>20%); see the header.
constexpr double kOpenBucketPercentPerMonth = 30.0;

std::string Pct(double fraction) {
    return Fixed(fraction * 100.0, 1) + "%";
}

}  // namespace

std::optional<double> RepresentativePercentPerMonth(const SpotInterruptionBucket& bucket) {
    if (bucket.label == ">20%") {
        return kOpenBucketPercentPerMonth;
    }
    if (!(bucket.max_percent_per_month > bucket.min_percent_per_month) ||
        !(bucket.max_percent_per_month < 100.0) || bucket.min_percent_per_month < 0) {
        return std::nullopt;
    }
    return (bucket.min_percent_per_month + bucket.max_percent_per_month) / 2.0;
}

double InterruptionsPerHourFromMonthlyPercent(double percent_per_month) {
    return -std::log1p(-percent_per_month / 100.0) / kHoursPerMonth;
}

double YoungCheckpointIntervalHours(double checkpoint_hours, double interruptions_per_hour) {
    return std::sqrt(2.0 * checkpoint_hours / interruptions_per_hour);
}

double DalyCheckpointIntervalHours(double checkpoint_hours, double interruptions_per_hour) {
    const double m = 1.0 / interruptions_per_hour;
    if (checkpoint_hours >= 2.0 * m) {
        return m;
    }
    const double x = checkpoint_hours / (2.0 * m);
    return std::sqrt(2.0 * checkpoint_hours * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) -
           checkpoint_hours;
}

CheckpointLayout LayOutCheckpoints(double work_hours, double interval_hours,
                                   double checkpoint_hours) {
    CheckpointLayout layout;
    if (interval_hours >= work_hours) {
        layout.last_stretch_hours = work_hours;
    } else {
        layout.full_stretches = std::ceil(work_hours / interval_hours) - 1.0;
        layout.full_stretch_hours = interval_hours + checkpoint_hours;
        layout.last_stretch_hours = work_hours - layout.full_stretches * interval_hours;
    }
    layout.failure_free_hours = work_hours + layout.full_stretches * checkpoint_hours;
    return layout;
}

namespace {

// Daly's exact expectation of one stretch of `stretch_hours` with restart time R: a failed
// attempt is followed by a restart that is itself repeated until it runs R hours unbroken.
double ExpectedStretchHours(double stretch_hours, double mean_hours_between, double restart_hours) {
    return mean_hours_between * std::exp(restart_hours / mean_hours_between) *
           std::expm1(stretch_hours / mean_hours_between);
}

// Lost time as masses on the grid 0, h, 2h, ... (cells + 1 points); mass beyond the last
// point has missed the deadline and is dropped.
using LostTime = std::vector<double>;

// Adds `mass` at `hours`, split between the two nearest grid points so its mean is kept.
void Deposit(LostTime& grid, double cell_hours, double hours, double mass) {
    const double position = hours / cell_hours;
    const double last = static_cast<double>(grid.size() - 1);
    if (!(position <= last)) {
        return;
    }
    const double lower = std::floor(position);
    const double upper_share = position - lower;
    const auto i = static_cast<std::size_t>(lower);
    grid[i] += mass * (1.0 - upper_share);
    if (upper_share > 0) {
        grid[i + 1] += mass * upper_share;
    }
}

// Mean of an exponential of rate `rate` conditioned on falling in [0, width).
double TruncatedExponentialMean(double rate, double width) {
    const double x = rate * width;
    if (x < 1e-4) {
        return width / 2.0 - rate * width * width / 12.0;
    }
    return 1.0 / rate - width / std::expm1(x);
}

// Time lost by one failed attempt at a stretch of `hours`: exponential truncated to it.
LostTime FailedAttempt(std::size_t cells, double cell_hours, double rate, double hours) {
    LostTime grid(cells + 1, 0.0);
    const double span = std::min(hours, cell_hours * static_cast<double>(cells));
    const double total = -std::expm1(-rate * hours);
    for (std::size_t k = 0; cell_hours * static_cast<double>(k) < span; ++k) {
        const double lo = cell_hours * static_cast<double>(k);
        const double hi = std::min(lo + cell_hours, hours);
        const double mass = std::exp(-rate * lo) * -std::expm1(-rate * (hi - lo)) / total;
        Deposit(grid, cell_hours, lo + TruncatedExponentialMean(rate, hi - lo), mass);
    }
    return grid;
}

// Index one past the last grid point holding more than kNegligibleMass: the tails of
// geometric sums hold ever smaller masses across the whole grid that cannot change a
// probability at double precision, and skipping them keeps the convolutions short.
std::size_t Support(const LostTime& a) {
    std::size_t n = a.size();
    while (n > 1 && a[n - 1] <= kNegligibleMass) {
        --n;
    }
    return n;
}

// Distribution of a + a' (a' an independent copy of a), cut at the grid's end: Convolve(a, a)
// with each pair of different points taken once and doubled, half the multiplications (the
// squarings of SumOfCopies are half of its convolutions).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2,fma", "default")))  // as Convolve
#endif
LostTime
ConvolveSelf(const LostTime& a) {
    LostTime sum(a.size(), 0.0);
    const std::size_t n = Support(a);
    const double* mass = a.data();
    for (std::size_t i = 0; i < n && 2 * i < sum.size(); ++i) {
        const double twice = 2.0 * mass[i];
        double* out = sum.data() + i;
        out[i] += mass[i] * mass[i];
        const std::size_t nj = std::min(n, sum.size() - i);
        for (std::size_t j = i + 1; j < nj; ++j) {
            out[j] += twice * mass[j];
        }
    }
    return sum;
}

// Distribution of a + b, cut at the grid's end. Most of a deadline probability's work: built
// twice, for the baseline x86-64 and for AVX2 with FMA (four products per instruction, picked
// at run time where the processor has them), since the service is built without -march.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2,fma", "default")))
#endif
LostTime
Convolve(const LostTime& a, const LostTime& b) {
    LostTime sum(a.size(), 0.0);
    const std::size_t na = Support(a);
    const std::size_t nb = Support(b);
    // Plain pointers: this loop is most of a deadline probability's work, and unoptimised
    // (Debug) builds pay a call per vector index.
    const double* b_mass = b.data();
    for (std::size_t i = 0; i < na; ++i) {
        const std::size_t nj = std::min(nb, sum.size() - i);
        const double a_mass = a[i];
        double* out = sum.data() + i;
        for (std::size_t j = 0; j < nj; ++j) {
            out[j] += a_mass * b_mass[j];
        }
    }
    return sum;
}

// Sum of a geometric number of independent `cost`s (failures before the first success, each
// attempt succeeding with probability `success`): g = success * delta + (1 - success) cost * g.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2,fma", "default")))  // as Convolve
#endif
LostTime
GeometricSum(const LostTime& cost, double success) {
    LostTime g(cost.size(), 0.0);
    if (cost.empty()) {
        return g;  // no grid: nothing to sum (also keeps GCC's null-dereference check quiet)
    }
    const double failure = 1.0 - success;
    const double self = 1.0 - failure * cost[0];
    g[0] = success / self;
    const std::size_t nc = Support(cost);
    const double* c = cost.data();
    double* out = g.data();
    for (std::size_t i = 1; i < g.size(); ++i) {
        // Four running sums, so that the compiler may keep them in one vector register (a
        // single sum is a chain it must not reorder).
        double sums[4] = {0, 0, 0, 0};
        const std::size_t nj = std::min(i + 1, nc);
        std::size_t j = 1;
        for (; j + 4 <= nj; j += 4) {
            for (std::size_t lane = 0; lane < 4; ++lane) {
                sums[lane] += c[j + lane] * out[i - j - lane];
            }
        }
        for (; j < nj; ++j) {
            sums[0] += c[j] * out[i - j];
        }
        out[i] = failure * ((sums[0] + sums[1]) + (sums[2] + sums[3])) / self;
    }
    return g;
}

// Distribution shifted later by `hours`.
LostTime Shift(const LostTime& a, double cell_hours, double hours) {
    LostTime shifted(a.size(), 0.0);
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] > 0) {
            Deposit(shifted, cell_hours, cell_hours * static_cast<double>(i) + hours, a[i]);
        }
    }
    return shifted;
}

// Lost time of one stretch of `hours`: failed attempts, each followed by a full restart.
LostTime StretchLostTime(std::size_t cells, double cell_hours, const InterruptedRun& run,
                         double hours) {
    const double rate = run.interruptions_per_hour;
    LostTime restart(cells + 1, 0.0);
    if (restart.empty()) {
        return restart;  // no grid (keeps GCC's null-dereference check quiet, as GeometricSum)
    }
    restart[0] = 1.0;
    if (run.restart_hours > 0) {
        const LostTime broken_restarts =
            GeometricSum(FailedAttempt(cells, cell_hours, rate, run.restart_hours),
                         std::exp(-rate * run.restart_hours));
        restart = Shift(broken_restarts, cell_hours, run.restart_hours);
    }
    const LostTime failure = Convolve(FailedAttempt(cells, cell_hours, rate, hours), restart);
    return GeometricSum(failure, std::exp(-rate * hours));
}

// A lost-time distribution on `cells` cells of `cell_hours`. Cells are the
// deadline grid (slack / cells) halved j times: fine enough for one stretch's lost time, and
// doubled (Coarsen) as sums grow, so the spread that putting masses on the grid adds is paid
// once per doubling of the sum rather than once per interruption.
struct Spread {
    double cell_hours = 0;
    LostTime mass;
};

// Doubles the cell width keeping every mean: point 2k stays at k, point 2k + 1 lies halfway
// between k and k + 1 and is split evenly.
void Coarsen(Spread& a) {
    LostTime merged(a.mass.size(), 0.0);
    for (std::size_t i = 0; i < a.mass.size(); ++i) {
        const std::size_t k = i / 2;
        if (i % 2 == 0) {
            merged[k] += a.mass[i];
        } else {
            merged[k] += 0.5 * a.mass[i];
            merged[k + 1] += 0.5 * a.mass[i];
        }
    }
    a.cell_hours *= 2.0;
    a.mass = std::move(merged);
}

// Distribution of a + b on a common grid, coarsened until the sum fits or the grid reaches
// the deadline (`deadline_cell_hours`), past which mass is dropped as missing it.
Spread Combine(Spread a, Spread b, double deadline_cell_hours) {
    while (a.cell_hours < b.cell_hours) {
        Coarsen(a);
    }
    while (b.cell_hours < a.cell_hours) {
        Coarsen(b);
    }
    const std::size_t last = a.mass.size() - 1;
    while (Support(a.mass) + Support(b.mass) - 2 > last && a.cell_hours < deadline_cell_hours) {
        Coarsen(a);
        Coarsen(b);
    }
    return Spread{a.cell_hours, a.mass == b.mass ? ConvolveSelf(a.mass) : Convolve(a.mass, b.mass)};
}

// Distribution of the sum of `count` independent copies of `a` (binary powers).
Spread SumOfCopies(Spread a, double count, double deadline_cell_hours) {
    Spread sum{a.cell_hours, LostTime(a.mass.size(), 0.0)};
    if (sum.mass.empty()) {
        return sum;
    }
    sum.mass[0] = 1.0;
    auto n = static_cast<unsigned long long>(count);
    while (n > 0) {
        if ((n & 1ULL) != 0) {
            sum = Combine(sum, a, deadline_cell_hours);
        }
        n >>= 1ULL;
        if (n > 0) {
            a = Combine(a, a, deadline_cell_hours);
        }
    }
    return sum;
}

// One stretch's lost time on the finest deadline-grid cell whose grid still spans
// kStretchSpanMeans times the stretch's expected hours plus an expected restart: a geometric
// sum's tail decays exponentially on the scale of its mean, so the mass cut there is far
// below double precision.
Spread StretchSpread(const InterruptedRun& run, double hours, double deadline_cell_hours,
                     std::size_t cells) {
    const double m = 1.0 / run.interruptions_per_hour;
    const double expected_restart_hours = m * std::expm1(run.restart_hours / m);
    const double span = kStretchSpanMeans * (ExpectedStretchHours(hours, m, run.restart_hours) +
                                             expected_restart_hours + hours + run.restart_hours);
    double cell_hours = deadline_cell_hours;
    for (int halvings = 0;
         halvings < kMaxGridHalvings && cell_hours * static_cast<double>(cells) / 2.0 >= span;
         ++halvings) {
        cell_hours /= 2.0;
    }
    return Spread{cell_hours, StretchLostTime(cells, cell_hours, run, hours)};
}

}  // namespace

double ExpectedHoursWithInterruptions(const InterruptedRun& run) {
    if (run.interruptions_per_hour <= 0) {
        return run.work_hours;
    }
    const CheckpointLayout layout =
        LayOutCheckpoints(run.work_hours, run.interval_hours, run.checkpoint_hours);
    const double m = 1.0 / run.interruptions_per_hour;
    double hours = ExpectedStretchHours(layout.last_stretch_hours, m, run.restart_hours);
    if (layout.full_stretches > 0) {
        hours += layout.full_stretches *
                 ExpectedStretchHours(layout.full_stretch_hours, m, run.restart_hours);
    }
    return hours;
}

double ExpectedHoursWithInterruptions(double work_hours, double interruptions_per_hour,
                                      double checkpoint_hours, double restart_hours,
                                      double interval_hours) {
    return ExpectedHoursWithInterruptions(InterruptedRun{
        work_hours, interruptions_per_hour, checkpoint_hours, restart_hours, interval_hours});
}

namespace {

// Lost time of `run` (laid out as `layout`) on `cells` cells reaching `horizon_hours`, past
// which mass is dropped.
// REQUIRES: interruptions_per_hour > 0, horizon_hours > 0, cells >= 1.
Spread LostTimeSpread(const InterruptedRun& run, const CheckpointLayout& layout,
                      double horizon_hours, std::size_t cells) {
    const double horizon_cell_hours = horizon_hours / static_cast<double>(cells);
    Spread lost = StretchSpread(run, layout.last_stretch_hours, horizon_cell_hours, cells);
    if (layout.full_stretches > 0) {
        lost = Combine(
            lost,
            SumOfCopies(StretchSpread(run, layout.full_stretch_hours, horizon_cell_hours, cells),
                        layout.full_stretches, horizon_cell_hours),
            horizon_cell_hours);
    }
    return lost;
}

// Cells of the lost-time grid under a run-time factor: kRunTimeGridCellsPerSigma per sigma x
// deadline of the horizon, within kMinRunTimeGridCells .. kDeadlineGridCells.
std::size_t RunTimeGridCells(double horizon_hours, double deadline_hours, double sigma) {
    const double cells =
        std::ceil(kRunTimeGridCellsPerSigma * horizon_hours / (sigma * deadline_hours));
    return static_cast<std::size_t>(std::clamp(cells, static_cast<double>(kMinRunTimeGridCells),
                                               static_cast<double>(kDeadlineGridCells)));
}

}  // namespace

double NormalCdf(double z) {
    return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double SpotDeadlineProbability(double deadline_hours, const InterruptedRun& run) {
    const double rate = run.interruptions_per_hour;
    const CheckpointLayout layout =
        LayOutCheckpoints(run.work_hours, run.interval_hours, run.checkpoint_hours);
    const double slack_hours = deadline_hours - layout.failure_free_hours;
    if (slack_hours < 0) {
        return 0.0;
    }
    if (rate <= 0) {
        return 1.0;
    }
    if (slack_hours == 0) {
        return std::exp(-rate * layout.failure_free_hours);  // not a single interruption
    }
    const Spread lost = LostTimeSpread(run, layout, slack_hours, kDeadlineGridCells);
    // Each grid mass stands for a hat of one cell either side of its point (that is how
    // Deposit spread it), so a point on the deadline itself counts half. Finer grids end
    // before the deadline and count whole.
    double probability = 0;
    for (double mass : lost.mass) {
        probability += mass;
    }
    if (lost.cell_hours >= slack_hours / static_cast<double>(kDeadlineGridCells)) {
        probability -= 0.5 * lost.mass.back();
    }
    return std::clamp(probability, 0.0, 1.0);
}

double RunTimeDeadlineProbability(double deadline_hours, double expected_hours,
                                  double run_time_sigma) {
    if (!(run_time_sigma > 0)) {
        return expected_hours <= deadline_hours ? 1.0 : 0.0;
    }
    if (!(expected_hours > 0)) {
        return 1.0;
    }
    return NormalCdf(std::log(deadline_hours / expected_hours) / run_time_sigma);
}

double SpotDeadlineProbability(double deadline_hours, const InterruptedRun& run,
                               double run_time_sigma) {
    if (!(run_time_sigma > 0)) {
        return SpotDeadlineProbability(deadline_hours, run);
    }
    const CheckpointLayout layout =
        LayOutCheckpoints(run.work_hours, run.interval_hours, run.checkpoint_hours);
    const double failure_free = layout.failure_free_hours;
    const double latest_hours = deadline_hours * std::exp(kRunTimeSigmasCounted * run_time_sigma);
    if (run.interruptions_per_hour <= 0 || !(latest_hours > failure_free)) {
        // No lost time; or even the failure-free run is beyond every run-time factor counted
        // (the answer is then at most Phi(-kRunTimeSigmasCounted)).
        return RunTimeDeadlineProbability(deadline_hours, failure_free, run_time_sigma);
    }
    // T = E (T0 + L): the interrupted run's hours on the lost-time grid, each weighted by the
    // chance that the run-time factor E brings it within the deadline.
    const double horizon_hours = latest_hours - failure_free;
    const Spread lost =
        LostTimeSpread(run, layout, horizon_hours,
                       RunTimeGridCells(horizon_hours, deadline_hours, run_time_sigma));
    double probability = 0;
    for (std::size_t i = 0; i < lost.mass.size(); ++i) {
        if (lost.mass[i] > 0) {
            const double hours = failure_free + lost.cell_hours * static_cast<double>(i);
            probability +=
                lost.mass[i] * RunTimeDeadlineProbability(deadline_hours, hours, run_time_sigma);
        }
    }
    return std::clamp(probability, 0.0, 1.0);
}

const char* SpotRecommendationName(SpotRecommendation recommendation) {
    switch (recommendation) {
        case SpotRecommendation::kSpot:
            return "spot";
        case SpotRecommendation::kOnDemand:
            return "on_demand";
        case SpotRecommendation::kMixed:
            return "mixed";
    }
    return "on_demand";
}

Status SpotPlanRequest::Validate() const {
    FieldChecker check;
    if (!job_hours) {
        check.Fail("/job_hours", "is required (or give a training workload)");
    }
    check.Range(job_hours, "/job_hours", 0, kMaxJobHours, /*lo_open=*/true);
    check.Range(on_demand_usd_per_hour, "/on_demand_usd_per_hour", kMinOnDemandUsdPerHour,
                kMaxUsdPerHour);
    check.Range(spot_usd_per_hour, "/spot_usd_per_hour", 0, kMaxUsdPerHour);
    check.Range(interruptions_per_hour, "/interruptions_per_hour", 0, kMaxInterruptionsPerHour);
    check.Range(checkpoint_minutes, "/checkpoint_minutes", 0, kMaxMinutes, true);
    check.Range(restart_minutes, "/restart_minutes", 0, kMaxMinutes);
    check.Range(checkpoint_interval_hours, "/checkpoint_interval_hours", 0, kMaxJobHours, true);
    check.Range(max_spot_usd_per_hour, "/max_spot_usd_per_hour", 0, kMaxUsdPerHour);
    check.Range(deadline_hours, "/deadline_hours", 0, kMaxDeadlineHours, true);
    check.Range(required_deadline_probability, "/required_deadline_probability", 0, 1, true);
    check.Range(min_savings_fraction, "/min_savings_fraction", 0, 1);
    check.IntRange(nodes, "/nodes", 1, kMaxNodes);
    if (start_date && !DaysFromIsoDate(*start_date)) {
        check.Fail("/start_date", "must be a date written YYYY-MM-DD");
    }
    if (!on_demand_usd_per_hour && !on_demand_offering_id && !spot_offering_id) {
        check.Fail("/on_demand_usd_per_hour",
                   "is required unless on_demand_offering_id or spot_offering_id is given");
    }
    if (!spot_usd_per_hour && !spot_offering_id) {
        check.Fail("/spot_usd_per_hour", "is required unless spot_offering_id is given");
    }
    if (!interruptions_per_hour && !spot_offering_id) {
        check.Fail("/interruptions_per_hour", "is required unless spot_offering_id is given");
    }
    return check.Done();
}

std::optional<Offering> FindOnDemandTwin(const Catalog& catalog, const Offering& spot) {
    for (const Offering& o : catalog.Offerings()) {
        if (o.price_type == PriceType::kOnDemand && o.provider == spot.provider &&
            o.instance_type == spot.instance_type && o.region == spot.region) {
            return o;
        }
    }
    return std::nullopt;
}

namespace {

Result<std::optional<Offering>> FindSpotOffering(const SpotPlanRequest& request,
                                                 const Catalog& catalog) {
    if (!request.spot_offering_id) {
        return std::optional<Offering>{};
    }
    auto found = catalog.FindOffering(*request.spot_offering_id);
    if (!found.ok()) {
        return MakeError(ErrorCode::kNotFound,
                         "no offering '" + request.spot_offering_id->substr(0, 200) + "'",
                         "/spot_offering_id");
    }
    if (found.value().price_type != PriceType::kSpot) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "offering '" + found.value().id + "' is not a spot offering",
                         "/spot_offering_id");
    }
    return std::optional<Offering>{found.value()};
}

// The plan prices the same job hours on `nodes` instances of either offering: instances with
// other accelerators, or another number of them, would not run the job in those hours.
void WarnOnDifferentHardware(const Offering& spot, const Offering& on_demand, SpotPlan& plan) {
    if (spot.accelerator == on_demand.accelerator &&
        spot.accelerator_count == on_demand.accelerator_count) {
        return;
    }
    auto hardware = [](const Offering& o) {
        return o.instance_type + " (" + std::to_string(o.accelerator_count) + " x " +
               o.accelerator + ")";
    };
    plan.warnings.push_back(
        {"/on_demand_offering_id",
         "the spot instance " + hardware(spot) + " and the on-demand instance " +
             hardware(on_demand) +
             " hold different hardware, yet both are priced for the same job hours on the "
             "same number of instances; compare offerings of the same instance shape, or give "
             "on_demand_usd_per_hour for the equivalent capacity"});
}

// A figure given in the request wins over the named spot offering's catalog figure; when they
// differ by more than kOverrideTolerance of the larger, the answer names both.
void WarnOnOverride(const std::string& field, const std::string& what, double given,
                    double catalog_value, const std::string& catalog_text, SpotPlan& plan) {
    if (std::abs(given - catalog_value) <=
        kOverrideTolerance * std::max(std::abs(given), std::abs(catalog_value))) {
        return;
    }
    plan.warnings.push_back({field, field.substr(1) + " " + what + " overrides " + catalog_text +
                                        "; the plan uses the value given"});
}

// Per-instance prices: a value in the request wins over an offering.
// A spot price observed before the on-demand price it is compared with misses any price change
// in between: AWS cut P4/P5 on-demand prices by up to 45 % in June 2025, and the catalog's p5
// spot price predates that cut, so the saving compares prices of different times.
void WarnOnOlderSpotPrice(const std::optional<Offering>& spot, const Offering& on_demand,
                          SpotPlan& plan) {
    if (!spot) return;
    const auto spot_day = DaysFromIsoDate(spot->price.as_of);
    const auto on_demand_day = DaysFromIsoDate(on_demand.price.as_of);
    if (!spot_day || !on_demand_day || *spot_day >= *on_demand_day) return;
    plan.warnings.push_back(
        {"/spot_offering_id",
         spot->id + ": the spot price is dated " + spot->price.as_of +
             (spot->price.as_of_estimated ? " (estimated)" : "") + ", " +
             std::to_string(*on_demand_day - *spot_day) + " days before the on-demand price (" +
             on_demand.id + ", " + on_demand.price.as_of +
             ") it is compared with; a list-price change in between is not in it, so the "
             "saving may be wrong: check the current spot price"});
}

// A named (or found) offering whose catalog price is NaN, infinite or out of range: the plan
// cannot price it, and a comparison with it would be no comparison.
Error UnusablePrice(const Offering& o, const std::string& field) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "offering '" + o.id +
                         "' has no usable price (not a finite number of USD/h from 0 to "
                         "1000000); name another or give the price",
                     field);
}

Status ResolvePrices(const SpotPlanRequest& request, const Catalog& catalog,
                     const std::optional<Offering>& spot_offering, SpotPlan& plan) {
    if (spot_offering && !request.spot_usd_per_hour &&
        !IsUsableUsdPerHour(spot_offering->price.usd_per_hour)) {
        return UnusablePrice(*spot_offering, "/spot_offering_id");
    }
    plan.spot_usd_per_hour =
        request.spot_usd_per_hour.value_or(spot_offering ? spot_offering->price.usd_per_hour : 0);
    if (request.spot_usd_per_hour && spot_offering) {
        WarnOnOverride("/spot_usd_per_hour", UsdText(*request.spot_usd_per_hour, 4) + "/h",
                       *request.spot_usd_per_hour, spot_offering->price.usd_per_hour,
                       "the catalog's spot price of " + spot_offering->id + ", " +
                           UsdText(spot_offering->price.usd_per_hour, 4) + "/h (as of " +
                           spot_offering->price.as_of + ")",
                       plan);
    }
    if (request.on_demand_usd_per_hour) {
        plan.on_demand_usd_per_hour = *request.on_demand_usd_per_hour;
        return Ok{};
    }
    std::optional<Offering> on_demand;
    if (request.on_demand_offering_id) {
        auto found = catalog.FindOffering(*request.on_demand_offering_id);
        if (!found.ok()) {
            return MakeError(ErrorCode::kNotFound,
                             "no offering '" + request.on_demand_offering_id->substr(0, 200) + "'",
                             "/on_demand_offering_id");
        }
        if (found.value().price_type == PriceType::kSpot) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "offering '" + found.value().id + "' is a spot offering",
                             "/on_demand_offering_id");
        }
        on_demand = found.value();
        if (spot_offering) {
            WarnOnDifferentHardware(*spot_offering, *on_demand, plan);
        }
    } else {
        on_demand = FindOnDemandTwin(catalog, *spot_offering);
        if (!on_demand) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "the catalog has no on-demand offering of " +
                                 spot_offering->instance_type + " in " + spot_offering->region +
                                 "; give on_demand_usd_per_hour or on_demand_offering_id",
                             "/on_demand_usd_per_hour");
        }
    }
    if (!IsUsableUsdPerHour(on_demand->price.usd_per_hour)) {
        return UnusablePrice(*on_demand, "/on_demand_offering_id");
    }
    plan.on_demand_usd_per_hour = on_demand->price.usd_per_hour;
    plan.on_demand_offering_id = on_demand->id;
    WarnOnOlderSpotPrice(spot_offering, *on_demand, plan);
    return Ok{};
}

// Per-instance interruption rate, from the request or the offering's Spot Advisor bucket.
Status ResolveInterruptionRate(const SpotPlanRequest& request,
                               const std::optional<Offering>& spot_offering, SpotPlan& plan) {
    Assumptions& echo = plan.assumptions;
    if (request.interruptions_per_hour) {
        plan.interruptions_per_hour = *request.interruptions_per_hour;
        const std::optional<double> percent =
            spot_offering && spot_offering->spot_interruption
                ? RepresentativePercentPerMonth(*spot_offering->spot_interruption)
                : std::nullopt;
        if (percent) {
            const double catalog_rate = InterruptionsPerHourFromMonthlyPercent(*percent);
            WarnOnOverride("/interruptions_per_hour",
                           Fixed(plan.interruptions_per_hour, 6) + " per instance-hour",
                           plan.interruptions_per_hour, catalog_rate,
                           "the rate of " + spot_offering->id + "'s Spot Advisor bucket " +
                               spot_offering->spot_interruption->label + ", " +
                               Fixed(catalog_rate, 6) + " per instance-hour (" +
                               Fixed(*percent, 1) + "% a month)",
                           plan);
        }
        echo.push_back(Echo("interruptions_per_hour", plan.interruptions_per_hour, "1/h",
                            "interruptions per instance-hour", true, ""));
        return Ok{};
    }
    std::optional<double> percent;
    if (spot_offering->spot_interruption) {
        percent = RepresentativePercentPerMonth(*spot_offering->spot_interruption);
    }
    if (!percent) {
        // As training plans do: the worst bucket, said in a warning and echoed.
        plan.interruptions_per_hour =
            InterruptionsPerHourFromMonthlyPercent(kDefaultUnknownSpotPercentPerMonth);
        plan.interruption_percent_per_month_range = SpotRange{0.0, kOpenBucketUpperPercentPerMonth};
        plan.warnings.push_back(
            {"/spot_offering_id",
             spot_offering->id +
                 ": no Spot Advisor interruption data; planned at the worst "
                 "bucket (" +
                 Fixed(kDefaultUnknownSpotPercentPerMonth, 0) +
                 "% a month), as training plans do; give interruptions_per_hour if you know "
                 "better"});
        echo.push_back({"interruption_percent_per_month", kDefaultUnknownSpotPercentPerMonth,
                        "percent",
                        "monthly share of spot instances interrupted, assumed: the offering has "
                        "no Spot Advisor bucket",
                        "default: the worst bucket (>20%), conservative; as training plans "
                        "(unknown_spot_percent_per_month)"});
        echo.push_back({"interruptions_per_hour", plan.interruptions_per_hour, "1/h",
                        "interruptions per instance-hour: -ln(1 - p/100) / 730",
                        "derived (Poisson interruptions, 730 h per month)"});
        return Ok{};
    }
    plan.interruption_bucket = spot_offering->spot_interruption->label;
    plan.interruption_percent_per_month_range =
        SpotRange{spot_offering->spot_interruption->min_percent_per_month,
                  std::min(spot_offering->spot_interruption->max_percent_per_month,
                           kOpenBucketUpperPercentPerMonth)};
    plan.interruptions_per_hour = InterruptionsPerHourFromMonthlyPercent(*percent);
    echo.push_back({"interruption_percent_per_month", *percent, "percent",
                    "representative monthly share of spot instances interrupted, for bucket " +
                        *plan.interruption_bucket,
                    "AWS Spot Advisor bucket via the catalog; midpoint of spotinfo's bucket "
                    "bounds, 30 for the open >20% bucket (judgement)"});
    echo.push_back({"interruptions_per_hour", plan.interruptions_per_hour, "1/h",
                    "interruptions per instance-hour: -ln(1 - p/100) / 730",
                    "derived (Poisson interruptions, 730 h per month)"});
    return Ok{};
}

// Checkpoint and restart times, the checkpoint interval (Daly unless given) and its layout.
Status ChooseCheckpoints(const SpotPlanRequest& request, SpotPlan& plan) {
    Assumptions& echo = plan.assumptions;
    const double lambda = plan.cluster_interruptions_per_hour;
    const double work = plan.job_hours;
    plan.checkpoint_hours = request.checkpoint_minutes.value_or(kDefaultCheckpointMinutes) / 60.0;
    plan.restart_hours = request.restart_minutes.value_or(kDefaultRestartMinutes) / 60.0;
    echo.push_back(Echo("checkpoint_minutes", plan.checkpoint_hours * 60.0, "min",
                        "time to write one checkpoint", request.checkpoint_minutes.has_value(),
                        "default: judgement (sharded checkpoint of a large model to fast "
                        "shared storage)"));
    echo.push_back(Echo("restart_minutes", plan.restart_hours * 60.0, "min",
                        "time from an interruption until work resumes (new capacity, container, "
                        "NCCL init, checkpoint read); an interrupted restart starts over",
                        request.restart_minutes.has_value(), "default: judgement"));
    if (lambda > 0) {
        plan.mean_hours_between_interruptions = 1.0 / lambda;
        plan.young_checkpoint_interval_hours =
            YoungCheckpointIntervalHours(plan.checkpoint_hours, lambda);
        plan.checkpoint_interval_hours = request.checkpoint_interval_hours.value_or(
            DalyCheckpointIntervalHours(plan.checkpoint_hours, lambda));
        echo.push_back(Echo("checkpoint_interval_hours", plan.checkpoint_interval_hours, "h",
                            "hours of work between checkpoints",
                            request.checkpoint_interval_hours.has_value(),
                            "Daly 2006 higher-order optimum (Young 1974 first order shown as "
                            "young_checkpoint_interval_hours)"));
    } else {
        // Without interruptions no intermediate checkpoint is worth taking.
        plan.checkpoint_interval_hours = work;
    }
    plan.checkpoint_interval_hours = std::min(plan.checkpoint_interval_hours, work);
    if (work / plan.checkpoint_interval_hours > kMaxCheckpointStretches) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "the checkpoint interval cuts the job into more than 10^9 stretches; "
                         "lengthen checkpoint_interval_hours or checkpoint_minutes",
                         request.checkpoint_interval_hours ? "/checkpoint_interval_hours"
                                                           : "/checkpoint_minutes");
    }
    const CheckpointLayout layout =
        LayOutCheckpoints(work, plan.checkpoint_interval_hours, plan.checkpoint_hours);
    plan.checkpoints = layout.full_stretches;
    plan.failure_free_hours = layout.failure_free_hours;
    return Ok{};
}

InterruptedRun RunOf(const SpotPlan& plan) {
    return InterruptedRun{plan.job_hours, plan.cluster_interruptions_per_hour,
                          plan.checkpoint_hours, plan.restart_hours,
                          plan.checkpoint_interval_hours};
}

// The expected cost and deadline probability at both ends of the interruption share's range,
// with the plan's checkpoint interval and the request's `run_time_sigma`; said in the reasoning.
void PriceRange(SpotPlan& plan, double run_time_sigma) {
    if (!plan.interruption_percent_per_month_range) return;
    const SpotRange percent = *plan.interruption_percent_per_month_range;
    const double nodes = static_cast<double>(plan.nodes);
    auto run_at = [&](double p) {
        InterruptedRun run = RunOf(plan);
        run.interruptions_per_hour = InterruptionsPerHourFromMonthlyPercent(p) * nodes;
        return run;
    };
    const double low_hours = ExpectedHoursWithInterruptions(run_at(percent.low));
    const double high_hours = ExpectedHoursWithInterruptions(run_at(percent.high));
    if (!std::isfinite(low_hours) || !std::isfinite(high_hours) ||
        high_hours > plan.job_hours * kMaxExpectedSlowdown) {
        plan.interruption_percent_per_month_range.reset();
        return;
    }
    plan.expected_spot_cost_usd_range = SpotRange{low_hours * plan.spot_cluster_usd_per_hour,
                                                  high_hours * plan.spot_cluster_usd_per_hour};
    // Probabilities near 1 need more digits to differ.
    auto probability = [](double p) { return Fixed(p * 100.0, p >= 0.9995 ? 4 : 1) + "%"; };
    std::string text =
        "; over the interruption share's range of " + Fixed(percent.low, 0) + "-" +
        Fixed(percent.high, 0) + "% a month (" +
        (plan.interruption_bucket ? "bucket " + *plan.interruption_bucket
                                  : std::string("no bucket: any")) +
        (percent.high == kOpenBucketUpperPercentPerMonth
             ? ", the open end taken at " + Fixed(kOpenBucketUpperPercentPerMonth, 0) + "%"
             : std::string()) +
        "), spot is expected to cost " + UsdText(plan.expected_spot_cost_usd_range->low) + "-" +
        UsdText(plan.expected_spot_cost_usd_range->high);
    if (plan.deadline_hours) {
        plan.spot_deadline_probability_range = SpotRange{
            SpotDeadlineProbability(*plan.deadline_hours, run_at(percent.high), run_time_sigma),
            SpotDeadlineProbability(*plan.deadline_hours, run_at(percent.low), run_time_sigma)};
        text += " and to finish by the deadline with probability " +
                probability(plan.spot_deadline_probability_range->low) + "-" +
                probability(plan.spot_deadline_probability_range->high);
    }
    plan.reasoning += text + ".";
    plan.assumptions.push_back({"open_bucket_upper_percent_per_month",
                                kOpenBucketUpperPercentPerMonth, "percent",
                                "upper end of the open >20% bucket (and of an unknown one) for "
                                "the ranges",
                                "judgement: AWS publishes no figure above 20%; spotinfo's 100% "
                                "would make a run endless"});
}

// Money as answers state it (pricing/money.hpp): both costs to the cent, and the saving their
// difference in cents, so that the three figures shown agree exactly; the saving as a share of
// the on-demand cost when there is one to share (owned capacity can leave none).
void StateCosts(SpotPlan& plan, long long on_demand_cents, long long spot_cents) {
    plan.expected_spot_cost_usd = FromCents(spot_cents);
    plan.on_demand_cost_usd = FromCents(on_demand_cents);
    plan.expected_savings_usd = FromCents(on_demand_cents - spot_cents);
    plan.expected_savings_fraction.reset();
    if (on_demand_cents > 0) {
        plan.expected_savings_fraction = plan.expected_savings_usd / plan.on_demand_cost_usd;
    }
}

Status PriceExpectedRun(const SpotPlanRequest& request, SpotPlan& plan) {
    const double work = plan.job_hours;
    plan.expected_spot_hours = ExpectedHoursWithInterruptions(RunOf(plan));
    if (!std::isfinite(plan.expected_spot_hours) ||
        plan.expected_spot_hours > work * kMaxExpectedSlowdown) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "at this interruption rate a stretch between checkpoints almost never "
                         "completes (expected spot time over a million times the job length); "
                         "shorten checkpoint_interval_hours",
                         request.checkpoint_interval_hours ? "/checkpoint_interval_hours"
                                                           : "/interruptions_per_hour");
    }
    // Interruptions arrive at a constant rate whatever the job is doing, so their expected
    // number is the rate times the expected run (Wald).
    plan.expected_interruptions = plan.cluster_interruptions_per_hour * plan.expected_spot_hours;
    plan.expected_overhead_fraction = plan.expected_spot_hours / work - 1.0;
    plan.on_demand_hours = work;
    StateCosts(plan, ToCents(work * plan.on_demand_cluster_usd_per_hour),
               ToCents(plan.expected_spot_hours * plan.spot_cluster_usd_per_hour));
    return Ok{};
}

// The hour (since 1970-01-01 UTC) the job starts, for owned capacity to cover: the start
// date's first hour. nullopt without a date (neither start_date nor today).
std::optional<double> JobStartHour(const SpotPlanRequest& request) {
    const std::optional<BudgetStart> begins = StartOfBudget(request.start_date, request.today);
    if (!begins) return std::nullopt;
    return static_cast<double>(begins->day) * kHoursPerDay;
}

// The job's start date as echoed, when it matters: given, or owned capacity to place.
void EchoStartDate(const SpotPlanRequest& request, SpotPlan& plan) {
    if (!request.start_date && request.owned_capacity.empty()) return;
    const std::optional<BudgetStart> begins = StartOfBudget(request.start_date, request.today);
    if (!begins) return;
    plan.start_date = IsoDateFromDays(begins->day);
    plan.start_date_source = begins->source;
}

// Owned capacity covering the on-demand path's run (job_hours on `nodes` instances of the
// on-demand offering from the start date): those hours are paid whether used or not, so the
// on-demand path pays only the rest, by the hour at the effective price; the saving spot
// offers is measured against that marginal cost (it may be negative). A job longer than the
// reservation pays its remaining hours in full.
void ApplyOwnedCapacity(const SpotPlanRequest& request, SpotPlan& plan) {
    const std::optional<double> start_hour = JobStartHour(request);
    if (request.owned_capacity.empty() || !plan.on_demand_offering_id || !start_hour) return;
    const OwnedCover cover = CoverRun(request.owned_capacity, *plan.on_demand_offering_id,
                                      plan.nodes, *start_hour, *start_hour + plan.job_hours);
    if (cover.instance_hours <= 0) return;
    const double run_instance_hours = plan.job_hours * plan.nodes;
    double uncovered_instance_hours = run_instance_hours - cover.instance_hours;
    if (uncovered_instance_hours < kOwnedHoursResidue) uncovered_instance_hours = 0;
    plan.owned =
        SpotOwnedUse{cover.instance_hours, RoundToCents(cover.sunk_usd), plan.on_demand_cost_usd};
    StateCosts(plan, ToCents(uncovered_instance_hours * plan.on_demand_usd_per_hour),
               ToCents(plan.expected_spot_cost_usd));
}

// The mixed plan's on-demand tail, (1 - f) x work hours after f x E[T] hours on spot (see
// ExpectedMixedCost), as owned capacity covers it: those instance-hours at the on-demand
// price come off the mixed cost.
double OwnedMixedTailUsd(const SpotPlanRequest& request, const SpotPlan& plan,
                         double deadline_hours) {
    const std::optional<double> start_hour = JobStartHour(request);
    if (!plan.owned || !start_hour) return 0;
    const double spot_share = MixedSpotShare(plan, deadline_hours);
    const double switch_hour = *start_hour + spot_share * plan.expected_spot_hours;
    const OwnedCover cover =
        CoverRun(request.owned_capacity, *plan.on_demand_offering_id, plan.nodes, switch_hour,
                 switch_hour + (1.0 - spot_share) * plan.job_hours);
    return cover.instance_hours * plan.on_demand_usd_per_hour;
}

// What owned capacity did to the on-demand path, for the reasoning: what it covers and at
// what cost the rest is paid, or that the book's entries cover none of this job.
std::string OwnedText(const SpotPlanRequest& request, const SpotPlan& plan) {
    if (request.owned_capacity.empty()) return "";
    if (!plan.owned) {
        return "; the price book's owned capacity covers none of the on-demand path's hours (" +
               (plan.on_demand_offering_id
                    ? "no entry of " + *plan.on_demand_offering_id + " from " +
                          plan.start_date.value_or("the start date") + " for " +
                          Fixed(plan.job_hours, 1) + " h"
                    : std::string("the on-demand price was given, not an offering")) +
               "), so every hour is priced at the effective price";
    }
    const double run_instance_hours = plan.job_hours * plan.nodes;
    const double rest = std::max(0.0, run_instance_hours - plan.owned->instance_hours);
    std::string out =
        "; owned capacity (the price book's owned_capacity) covers " +
        Fixed(plan.owned->instance_hours, 1) + " of the on-demand path's " +
        Fixed(run_instance_hours, 1) + " instance-hours from " +
        plan.start_date.value_or("the start date") +
        " at no marginal cost (paid whether used or not: " + UsdText(plan.owned->sunk_usd) +
        " at the commitment's rate)";
    out += rest > kOwnedHoursResidue ? "; the job outlasts it, and the other " + Fixed(rest, 1) +
                                           " instance-hours are paid on demand at " +
                                           UsdText(plan.on_demand_usd_per_hour) + "/h: "
                                     : ": ";
    out += UsdText(plan.on_demand_cost_usd) + " at the margin against " +
           UsdText(plan.owned->without_owned_cost_usd) +
           " without it, and spot's saving is measured "
           "against the marginal cost";
    return out;
}

void Recommend(const SpotPlanRequest& request, double required, bool spot_meets_deadline,
               bool on_demand_meets_deadline, SpotPlan& plan) {
    const double work = plan.job_hours;
    const double min_savings = request.min_savings_fraction.value_or(kDefaultMinSavingsFraction);
    plan.assumptions.push_back(Echo("min_savings_fraction", min_savings, "fraction",
                                    "smallest expected saving for which spot is recommended",
                                    request.min_savings_fraction.has_value(),
                                    "default: judgement"));
    const std::string saving_text =
        "expected saving " + UsdText(plan.expected_savings_usd) +
        (plan.expected_savings_fraction ? " (" + Pct(*plan.expected_savings_fraction) + ")"
                                        : std::string()) +
        " after " + Pct(plan.expected_overhead_fraction) +
        " expected overhead from checkpoints, lost work and restarts";
    if (request.max_spot_usd_per_hour && plan.spot_usd_per_hour > *request.max_spot_usd_per_hour) {
        plan.recommendation = SpotRecommendation::kOnDemand;
        plan.reasoning = "the spot price " + UsdText(plan.spot_usd_per_hour) +
                         "/h is above your maximum " + UsdText(*request.max_spot_usd_per_hour) +
                         "/h";
    } else if (plan.expected_savings_usd <= 0) {
        plan.recommendation = SpotRecommendation::kOnDemand;
        plan.reasoning = plan.owned
                             ? "running on owned capacity beats spot: on-demand costs " +
                                   UsdText(plan.on_demand_cost_usd) +
                                   " at the margin against spot's expected " +
                                   UsdText(plan.expected_spot_cost_usd) + " (" + saving_text + ")"
                             : "spot costs more than on-demand once interruptions are "
                               "priced in (" +
                                   saving_text + ")";
    } else if (!spot_meets_deadline && !on_demand_meets_deadline) {
        plan.recommendation = SpotRecommendation::kOnDemand;
        plan.reasoning =
            request.run_time_sigma > 0
                ? "neither meets the deadline with probability " + Pct(required) +
                      ": on-demand finishes by it with probability " +
                      Pct(*plan.on_demand_deadline_probability) + ", spot " +
                      Pct(*plan.spot_deadline_probability) + " (" + saving_text +
                      "); on-demand is the likelier, and more nodes or a later deadline would "
                      "meet it"
                : "neither meets the deadline; on-demand is the faster (" + Fixed(work, 1) +
                      " h without interruptions)";
    } else if (!spot_meets_deadline) {
        const double deadline = *request.deadline_hours;
        plan.mixed_slack_hours = deadline - plan.failure_free_hours;
        plan.expected_mixed_cost_usd =
            ExpectedMixedCost(plan, deadline) - OwnedMixedTailUsd(request, plan, deadline);
        const double mixed_saving = plan.on_demand_cost_usd - *plan.expected_mixed_cost_usd;
        plan.expected_mixed_savings_fraction = mixed_saving / plan.on_demand_cost_usd;
        const std::string slack_text =
            *plan.mixed_slack_hours >= 0
                ? Fixed(*plan.mixed_slack_hours, 1) +
                      " h of lost work and restarts once all checkpoints are written"
                : "less than the " + Fixed(plan.checkpoints, 0) + " checkpoints alone take (" +
                      Fixed(plan.failure_free_hours - work, 1) +
                      " h), so the job moves to on-demand before the end";
        const std::string mixed_text =
            "starting on spot and moving to on-demand once hours elapsed + remaining work "
            "hours reach the deadline (" +
            Fixed(deadline - work, 1) +
            " h allowed for checkpoints, lost work and restarts: " + slack_text +
            ") is expected to cost " + UsdText(*plan.expected_mixed_cost_usd) + ", saving " +
            UsdText(mixed_saving) + " (" + Pct(*plan.expected_mixed_savings_fraction) + ")";
        if (*plan.expected_mixed_savings_fraction >= min_savings) {
            plan.recommendation = SpotRecommendation::kMixed;
            plan.reasoning = "spot alone finishes by the deadline with probability " +
                             Pct(*plan.spot_deadline_probability) + " (< " + Pct(required) + ", " +
                             saving_text + "); " + mixed_text;
        } else {
            plan.recommendation = SpotRecommendation::kOnDemand;
            plan.reasoning = "spot alone finishes by the deadline with probability " +
                             Pct(*plan.spot_deadline_probability) + " (< " + Pct(required) +
                             "), and " + mixed_text + ", below the " + Pct(min_savings) +
                             " worth the operational risk of spot";
        }
    } else if (plan.expected_savings_fraction.value_or(0) < min_savings) {
        plan.recommendation = SpotRecommendation::kOnDemand;
        plan.reasoning = "the " + saving_text + " is below the " + Pct(min_savings) +
                         " worth the operational risk of spot";
    } else {
        plan.recommendation = SpotRecommendation::kSpot;
        plan.reasoning = saving_text;
        if (plan.spot_deadline_probability) {
            plan.reasoning += "; finishes by the deadline with probability " +
                              Pct(*plan.spot_deadline_probability);
        }
    }
    if (plan.nodes > 1) {
        plan.reasoning += " (" + std::to_string(plan.nodes) + " instances: cluster rates " +
                          UsdText(plan.spot_cluster_usd_per_hour) + "/h spot, " +
                          UsdText(plan.on_demand_cluster_usd_per_hour) +
                          "/h on-demand; the job is interrupted when any instance is)";
    }
    const bool different_hardware =
        std::any_of(plan.warnings.begin(), plan.warnings.end(),
                    [](const FieldError& w) { return w.field == "/on_demand_offering_id"; });
    if (different_hardware) {
        plan.reasoning +=
            "; the two offerings hold different hardware, so this compares "
            "prices, not the same job (see warnings)";
    }
}

}  // namespace

double MixedSpotShare(const SpotPlan& plan, double deadline_hours) {
    const double work = plan.job_hours;
    const double overhead = plan.expected_spot_hours - work;
    const double allowance = std::max(0.0, deadline_hours - work);
    return overhead > 0 ? std::min(1.0, allowance / overhead) : 1.0;
}

double ExpectedMixedCost(const SpotPlan& plan, double deadline_hours) {
    const double work = plan.job_hours;
    const double spot_share = MixedSpotShare(plan, deadline_hours);
    return spot_share * plan.expected_spot_hours * plan.spot_cluster_usd_per_hour +
           (1.0 - spot_share) * work * plan.on_demand_cluster_usd_per_hour;
}

Result<SpotPlan> PlanSpot(const SpotPlanRequest& request, const Catalog& catalog) {
    if (auto valid = request.Validate(); !valid.ok()) {
        return valid.error();
    }
    SpotPlan plan;
    plan.catalog_version = catalog.Describe().version;
    plan.job_hours = *request.job_hours;
    plan.nodes = request.nodes;
    auto spot_offering = FindSpotOffering(request, catalog);
    if (!spot_offering.ok()) {
        return spot_offering.error();
    }
    if (spot_offering.value()) {
        plan.spot_offering_id = spot_offering.value()->id;
    }
    if (auto s = ResolvePrices(request, catalog, spot_offering.value(), plan); !s.ok()) {
        return s.error();
    }
    if (auto s = ResolveInterruptionRate(request, spot_offering.value(), plan); !s.ok()) {
        return s.error();
    }
    const double nodes = static_cast<double>(plan.nodes);
    plan.spot_cluster_usd_per_hour = plan.spot_usd_per_hour * nodes;
    plan.on_demand_cluster_usd_per_hour = plan.on_demand_usd_per_hour * nodes;
    plan.cluster_interruptions_per_hour = plan.interruptions_per_hour * nodes;
    plan.assumptions.push_back({"cluster_interruptions_per_hour",
                                plan.cluster_interruptions_per_hour, "1/h",
                                "interruptions of the whole job: nodes x per instance (the job "
                                "stops when any instance is interrupted)",
                                "derived (independent Poisson processes add)"});
    if (auto s = ChooseCheckpoints(request, plan); !s.ok()) {
        return s.error();
    }
    if (auto s = PriceExpectedRun(request, plan); !s.ok()) {
        return s.error();
    }
    EchoStartDate(request, plan);
    ApplyOwnedCapacity(request, plan);
    const double required =
        request.required_deadline_probability.value_or(kDefaultRequiredDeadlineProbability);
    bool spot_meets_deadline = true;
    bool on_demand_meets_deadline = true;
    if (request.deadline_hours) {
        const double deadline = *request.deadline_hours;
        plan.deadline_hours = deadline;
        const double sigma = request.run_time_sigma;
        plan.spot_deadline_probability = SpotDeadlineProbability(deadline, RunOf(plan), sigma);
        plan.on_demand_deadline_probability =
            RunTimeDeadlineProbability(deadline, plan.job_hours, sigma);
        spot_meets_deadline = *plan.spot_deadline_probability >= required;
        // Exact hours meet the deadline by their length (whatever `required` is).
        on_demand_meets_deadline = sigma > 0 ? *plan.on_demand_deadline_probability >= required
                                             : plan.job_hours <= deadline;
        plan.assumptions.push_back(
            Echo("required_deadline_probability", required, "fraction",
                 "probability of finishing by the deadline that counts as meeting it",
                 request.required_deadline_probability.has_value(), "default: judgement"));
        plan.assumptions.push_back(
            {"deadline_grid_cells", static_cast<double>(kDeadlineGridCells), "cells",
             "cells of the grids on which lost time is convolved (means kept exactly; "
             "coarsened by doubling up to the deadline)",
             "definition (matches a seeded simulation within 0.015 in the tests)"});
    }
    Recommend(request, required, spot_meets_deadline, on_demand_meets_deadline, plan);
    plan.reasoning += OwnedText(request, plan);
    if (!request.owned_capacity.empty() && !plan.owned) {
        plan.warnings.push_back(OwnedCoversNothing(
            request.owned_capacity,
            "the on-demand path's hours from " + plan.start_date.value_or("the start date")));
    }
    PriceRange(plan, request.run_time_sigma);
    return plan;
}

}  // namespace gpucost::pricing::plan
