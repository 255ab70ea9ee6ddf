// Stages 3 and 4 of a training plan: each (offering, node count) billed as the provider
// bills it within what one customer can buy, then checked against the constraints.

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "pricing/calendar.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_stages.hpp"

namespace gpucost::pricing::plan::training_stages {
namespace {

// Spot options whose expected time exceeds this multiple of the failure-free time are left
// out (counted as spot_impractical): checkpoints too slow for the interruption rate.
constexpr double kMaxSpotSlowdown = 1e3;

// A bound clears an option's deadline without the full distribution only when it beats the
// confidence by this much: the grid's probability is within 0.015 of the run's (spot.hpp,
// tested against a simulation), so a cleared option never shows a probability below the
// confidence. Definition (a computing shortcut; answers do not depend on it).
constexpr double kDeadlineBoundMargin = 0.05;

// The run-time factor's quantiles (in sigmas) at which a spot option's deadline bound splits
// the deadline between the factor and the interruptions (DeadlineProbabilities::LowerBound):
// Phi(z) from 0.84 to 0.99997, so a bound clears targets up to 0.99997 (confidences up to 0.95
// with the margin above); a higher one takes the distribution. Definition (a computing
// shortcut; answers do not depend on it).
constexpr std::array<double, 7> kRunTimeBoundSigmas = {1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0};

// log E[e^(theta Z)] for an exponential time Z of `rate` truncated to [0, width]:
// rate / (rate - theta) * (1 - e^-(rate - theta) width) / (1 - e^-rate width).
double TruncatedExponentialLogMgf(double rate, double width, double theta) {
    const double d = rate - theta;
    const double integral =
        std::abs(d * width) < 1e-12 ? width : -std::expm1(-d * width) / d;  // (1-e^-dw)/d
    return std::log(rate * integral / -std::expm1(-rate * width));
}

// log E[e^(theta L)] of one stretch's lost time L (see StretchLostVariance below): N failed
// attempts before the first success (success q = e^(-rate s)), so
// E[e^(theta L)] = q / (1 - (1 - q) E[e^(theta (X + Y))]); +inf where that diverges.
double StretchLostLogMgf(double rate, double hours, double restart_hours, double theta) {
    double log_w = TruncatedExponentialLogMgf(rate, hours, theta);
    if (restart_hours > 0) {
        const double fail_restart = -std::expm1(-rate * restart_hours);
        const double g =
            fail_restart * std::exp(TruncatedExponentialLogMgf(rate, restart_hours, theta));
        if (!(g < 1)) return std::numeric_limits<double>::infinity();
        log_w += theta * restart_hours + (-rate * restart_hours) - std::log1p(-g);
    }
    const double fail = -std::expm1(-rate * hours);
    const double g = fail * std::exp(log_w);
    if (!(g < 1)) return std::numeric_limits<double>::infinity();
    return -rate * hours - std::log1p(-g);
}

// Chernoff's bound P(L > t) <= min over theta of E[e^(theta L)] e^(-theta t), L the run's lost
// time (a sum over independent stretches); the exponent is convex in theta, minimised by a
// golden-section search over where it is finite.
double ChernoffLateBound(const InterruptedRun& run, const CheckpointLayout& layout, double t) {
    const double rate = run.interruptions_per_hour;
    auto exponent = [&](double theta) {
        double k = StretchLostLogMgf(rate, layout.last_stretch_hours, run.restart_hours, theta);
        if (layout.full_stretches > 0) {
            k += layout.full_stretches *
                 StretchLostLogMgf(rate, layout.full_stretch_hours, run.restart_hours, theta);
        }
        return std::isfinite(k) ? k - theta * t : std::numeric_limits<double>::infinity();
    };
    double hi = rate;  // the largest theta where the exponent is finite, within 2x
    for (int i = 0; i < 200 && std::isfinite(exponent(2 * hi)); ++i) hi *= 2;
    double lo_ok = 0;
    double hi_bad = 2 * hi;
    for (int i = 0; i < 60; ++i) {
        const double mid = 0.5 * (lo_ok + hi_bad);
        (std::isfinite(exponent(mid)) ? lo_ok : hi_bad) = mid;
    }
    constexpr double kGolden = 0.6180339887498949;
    double a = 0;
    double b = lo_ok;
    for (int i = 0; i < 80; ++i) {
        const double c = b - kGolden * (b - a);
        const double d = a + kGolden * (b - a);
        if (exponent(c) < exponent(d)) {
            b = d;
        } else {
            a = c;
        }
    }
    return std::min(1.0, std::exp(std::min(exponent(0.5 * (a + b)), 0.0)));
}

// First two moments of an exponential time of `rate` truncated to [0, width].
struct Moments {
    double mean = 0;
    double second = 0;
    double Variance() const { return std::max(0.0, second - mean * mean); }
};
Moments TruncatedExponential(double rate, double width) {
    const double x = rate * width;
    if (x < 1e-4) {  // series: the closed forms cancel
        return {width / 2 - rate * width * width / 12,
                width * width / 3 - rate * width * width * width / 12};
    }
    const double tail = std::exp(-x) / -std::expm1(-x);  // e^-x / (1 - e^-x)
    return {1 / rate - width * tail, 2 / (rate * rate) - (width * width + 2 * width / rate) * tail};
}

// Variance of one stretch's lost time in the model of SpotDeadlineProbability: a geometric
// number N of failed attempts (success e^(-rate s)), each losing a truncated exponential X
// and a restart Y = R plus a geometric number of failed restarts, each a truncated
// exponential on [0, R]. Compound sums: Var = E[N] Var[W] + Var[N] E[W]^2, W = X + Y.
double StretchLostVariance(double rate, double hours, double restart_hours) {
    const Moments x = TruncatedExponential(rate, hours);
    double y_mean = restart_hours;
    double y_var = 0;
    if (restart_hours > 0) {
        const Moments z = TruncatedExponential(rate, restart_hours);
        const double m_mean = std::expm1(rate * restart_hours);
        const double m_var = std::exp(rate * restart_hours) * m_mean;
        y_mean += m_mean * z.mean;
        y_var = m_mean * z.Variance() + m_var * z.mean * z.mean;
    }
    const double n_mean = std::expm1(rate * hours);
    const double n_var = std::exp(rate * hours) * n_mean;
    const double w_mean = x.mean + y_mean;
    return n_mean * (x.Variance() + y_var) + n_var * w_mean * w_mean;
}

// An option's storage and egress at its provider's list prices; nullopt without `data` or
// without a price on record.
std::optional<double> DataCostUsd(const TrainingDataSizes& data, const DataPrice* price,
                                  double expected_hours) {
    if ((!data.stored_gb && !data.egress_gb) || price == nullptr) {
        return std::nullopt;
    }
    return DataCostsFor(data, *price, expected_hours).TotalUsd();
}

}  // namespace

std::optional<double> SpotRate(const Offering& o) {
    if (o.price_type != PriceType::kSpot) {
        return std::nullopt;
    }
    if (o.spot_interruption) {
        if (auto p = RepresentativePercentPerMonth(*o.spot_interruption)) {
            return InterruptionsPerHourFromMonthlyPercent(*p);
        }
    }
    return InterruptionsPerHourFromMonthlyPercent(kDefaultUnknownSpotPercentPerMonth);
}

InterruptedRun RunOf(const TrainingPlanOption& o, const PricingSettings& settings) {
    const double rate = o.interruptions_per_hour.value_or(0);
    const double interval = rate > 0 ? DalyCheckpointIntervalHours(settings.checkpoint_hours, rate)
                                     : o.wall_clock_hours;
    return InterruptedRun{o.wall_clock_hours, rate, settings.checkpoint_hours,
                          settings.restart_hours, interval};
}

DeadlineProbabilities::DeadlineProbabilities(const TrainingPlanRequest& request,
                                             const PricingSettings& settings)
    : deadline_hours_(request.constraints.deadline_hours), settings_(settings) {}

double DeadlineProbabilities::Of(const TrainingPlanOption& o) {
    if (!o.interruptions_per_hour) {
        return RunTimeDeadlineProbability(*deadline_hours_, o.expected_wall_clock_hours,
                                          settings_.run_time_sigma);
    }
    auto [it, fresh] = cache_.try_emplace({o.wall_clock_hours, *o.interruptions_per_hour}, 0.0);
    if (fresh) {
        it->second = SpotDeadlineProbability(*deadline_hours_, RunOf(o, settings_),
                                             settings_.run_time_sigma);
    }
    return it->second;
}

double DeadlineProbabilities::LowerBound(const TrainingPlanOption& o, double target) const {
    if (!o.interruptions_per_hour) {
        return RunTimeDeadlineProbability(*deadline_hours_, o.expected_wall_clock_hours,
                                          settings_.run_time_sigma);
    }
    const InterruptedRun run = RunOf(o, settings_);
    const CheckpointLayout layout =
        LayOutCheckpoints(run.work_hours, run.interval_hours, run.checkpoint_hours);
    const double sigma = settings_.run_time_sigma;
    if (!(sigma > 0)) {
        return InterruptedLowerBound(run, layout, o.expected_wall_clock_hours, *deadline_hours_,
                                     target, /*chernoff=*/true);
    }
    // With a run-time factor E: P(E T <= D) >= P(E <= e^(sigma z)) P(T <= D e^(-sigma z)) for
    // every z (E and the interruptions are independent); the best of a few z. None reaches a
    // target above P(E T0 <= D), T0 the failure-free hours, nor one above Phi(z) at that z.
    // The O(1) bounds only: the distribution on the run-time grid (RunTimeGridCells) costs
    // about what Chernoff's searches at several z would, and none of these reaches the
    // 1 - kDeadlineBoundShownTolerance at which a shown option would show a bound.
    const bool every_bound = target > 1.0;  // Fill: the best of them, whatever it is
    if (!every_bound &&
        RunTimeDeadlineProbability(*deadline_hours_, layout.failure_free_hours, sigma) < target) {
        return 0.0;
    }
    double best = 0;
    for (double z : kRunTimeBoundSigmas) {
        const double in_time = RunTimeDeadlineProbability(std::exp(sigma * z), 1.0, sigma);
        if (!(in_time > best) || (!every_bound && in_time < target)) continue;
        const double inner = InterruptedLowerBound(run, layout, o.expected_wall_clock_hours,
                                                   *deadline_hours_ * std::exp(-sigma * z),
                                                   target / in_time, /*chernoff=*/false);
        best = std::max(best, in_time * inner);
        if (best >= target) break;
    }
    return best;
}

double DeadlineProbabilities::InterruptedLowerBound(const InterruptedRun& run,
                                                    const CheckpointLayout& layout,
                                                    double expected_hours, double deadline_hours,
                                                    double target, bool chernoff) {
    const double failure_free = layout.failure_free_hours;
    const double slack = deadline_hours - failure_free;
    if (slack < 0) {
        return 0.0;
    }
    // Not one interruption; Markov's inequality on the lost time L = T - T0 >= 0; Cantelli's
    // with L's variance (a sum over independent stretches).
    const double none = std::exp(-run.interruptions_per_hour * failure_free);
    const double lost = expected_hours - failure_free;
    const double markov = slack > 0 ? 1.0 - lost / slack : 0.0;
    double cantelli = 0;
    if (slack > lost) {
        const double rate = run.interruptions_per_hour;
        double variance = StretchLostVariance(rate, layout.last_stretch_hours, run.restart_hours);
        if (layout.full_stretches > 0) {
            variance += layout.full_stretches *
                        StretchLostVariance(rate, layout.full_stretch_hours, run.restart_hours);
        }
        const double gap = slack - lost;
        if (std::isfinite(variance)) cantelli = 1.0 - variance / (variance + gap * gap);
        const double cheap = std::max({none, markov, cantelli});
        if (cheap >= target || !chernoff) {
            return cheap;
        }
        // Chernoff's costs a search over theta (hundreds of log/exp): only when needed.
        return std::max(cheap, 1.0 - ChernoffLateBound(run, layout, slack));
    }
    return std::max({none, markov, cantelli});
}

void DeadlineProbabilities::Fill(TrainingPlanOption& o) {
    if (deadline_hours_ && !o.deadline_probability) {
        // Every bound for a shown figure (the largest is shown; an unreachable target).
        const double bound = LowerBound(o, 2.0);
        o.deadline_probability = bound >= 1.0 - kDeadlineBoundShownTolerance ? bound : Of(o);
    }
}

bool IsCommitted(PriceType type) {
    return type == PriceType::kCommit1y || type == PriceType::kCommit3y ||
           type == PriceType::kCapacityBlock;
}

DataCosts DataCostsFor(const TrainingDataSizes& data, const DataPrice& price,
                       double expected_hours) {
    DataCosts out;
    if (data.stored_gb) {
        out.storage_usd = *data.stored_gb * price.object_storage_usd_per_gb_month * expected_hours /
                          kHoursPerMonth;
    }
    if (data.egress_gb) {
        out.egress_usd = *data.egress_gb * price.internet_egress_usd_per_gb;
    }
    return out;
}

PricingSettings SettingsFor(const TrainingPlanRequest& request, bool mixture_of_experts) {
    PricingSettings s;
    s.checkpoint_hours = request.checkpoint_minutes.value_or(kDefaultCheckpointMinutes) / 60.0;
    s.restart_hours = request.restart_minutes.value_or(kDefaultRestartMinutes) / 60.0;
    // The run-time spread defaults to the estimator's measured error for a mixture-of-experts
    // model, which is wider than the dense models' judgement.
    s.moe_efficiency_spread = !request.efficiency_spread_fraction && mixture_of_experts;
    s.efficiency_spread = request.efficiency_spread_fraction.value_or(
        s.moe_efficiency_spread ? kMoeEfficiencySpreadFraction : kDefaultEfficiencySpreadFraction);
    s.run_time_sigma = RunTimeSigma(s.efficiency_spread);
    s.price_spread = request.price_spread_fraction.value_or(kDefaultPriceSpreadFraction);
    s.spot_price_spread =
        request.spot_price_spread_fraction.value_or(kDefaultSpotPriceSpreadFraction);
    s.factor_fixed = CostQuantileFactor(s.efficiency_spread, s.price_spread);
    s.factor_spot = CostQuantileFactor(s.efficiency_spread, s.spot_price_spread);
    s.max_price_age_days = request.max_price_age_days.value_or(kDefaultMaxPriceAgeDays);
    s.deadline_confidence =
        request.constraints.deadline_confidence.value_or(kDefaultDeadlineConfidence);
    s.budget_confidence = request.constraints.budget_confidence.value_or(kDefaultBudgetConfidence);
    return s;
}

double BilledHours(PriceType type, double hours, const OfferingCapacity& capacity) {
    switch (type) {
        case PriceType::kOnDemand:
        case PriceType::kSpot:
            return hours;
        case PriceType::kCommit1y:
            return std::max(1.0, std::ceil(hours / kCommit1yHours)) * kCommit1yHours;
        case PriceType::kCommit3y:
            return std::max(1.0, std::ceil(hours / kCommit3yHours)) * kCommit3yHours;
        case PriceType::kCapacityBlock: {
            // The block must outlast the run by the time AWS takes to terminate instances.
            const double needed = hours + kCapacityBlockEndLeadHours;
            const double step = needed <= kCapacityBlockDailyStepsUpToHours
                                    ? kCapacityBlockDayHours
                                    : kCapacityBlockWeekHours;
            const double block = std::ceil(needed / step) * step;
            return std::max(block, capacity.min_block_hours.value_or(kCapacityBlockDayHours));
        }
    }
    return hours;
}

namespace {

// Why an option was left out, kept as data: the tally shows one example per reason (the
// last), so its text is written once per reason at the end, not once per option left out.
struct SkippedOption {
    enum class Why { kOverInstances, kSizeNotSold, kOverBlock };
    Why why = Why::kOverInstances;
    const CandidateOffering* candidate = nullptr;
    int nodes = 0;
    double billed_hours = 0;

    const char* Reason() const {
        return why == Why::kSizeNotSold ? "size_not_sold" : "over_capacity";
    }
    std::string Text() const {
        const Offering& o = *candidate->offering;
        const OfferingCapacity& capacity = *candidate->capacity;
        switch (why) {
            case Why::kOverInstances:
                return o.id + ": " + std::to_string(nodes) +
                       " instances asked, one customer can get " +
                       std::to_string(capacity.max_instances) + " (" + capacity.source + ")";
            case Why::kSizeNotSold:
                return o.id + ": " + std::to_string(nodes) + " instances asked; sold as " +
                       capacity.SizesText() + " (" + capacity.source + ")";
            case Why::kOverBlock:
                return o.id + ": a block is sold for at most " +
                       std::to_string(static_cast<long long>(*capacity.max_block_hours)) +
                       " h; this run needs " +
                       std::to_string(static_cast<long long>(billed_hours)) + " h";
        }
        return o.id;
    }
};

// Counts skipped options and keeps each reason's example: the first one written at once (so
// the reasons keep the order in which they first occurred), the last one and the counts
// written by Flush (at the catalog's real size tens of thousands are skipped; the tally's
// counts keep a fixed order, so when they are added does not matter).
class SkipTally {
public:
    explicit SkipTally(Tally& tally) : tally_(tally) {}
    void Add(const SkippedOption& skipped) {
        const bool size = skipped.why == SkippedOption::Why::kSizeNotSold;
        ++(size ? size_count_ : capacity_count_);
        std::optional<SkippedOption>& last = size ? size_last_ : capacity_last_;
        if (!last) tally_.Example(skipped.Reason(), skipped.Text());
        last = skipped;
    }
    void AddImpractical() { ++impractical_count_; }
    void Flush() {
        for (const auto* last : {&size_last_, &capacity_last_}) {
            if (*last) tally_.Example((*last)->Reason(), (*last)->Text());
        }
        if (size_count_ > 0) tally_.Add("size_not_sold", size_count_);
        if (capacity_count_ > 0) tally_.Add("over_capacity", capacity_count_);
        if (impractical_count_ > 0) tally_.Add("spot_impractical", impractical_count_);
    }

private:
    Tally& tally_;
    std::optional<SkippedOption> size_last_;
    std::optional<SkippedOption> capacity_last_;
    std::size_t size_count_ = 0;
    std::size_t capacity_count_ = 0;
    std::size_t impractical_count_ = 0;
};

// A provider's storage and egress prices, looked up once per provider (not per option).
class DataPriceLookup {
public:
    explicit DataPriceLookup(const PlanReference& reference) : reference_(reference) {}
    const DataPrice* Of(const std::string& provider) {
        for (const auto& [id, price] : known_) {
            if (id == provider) return price;
        }
        known_.emplace_back(provider, reference_.DataPriceOf(provider));
        return known_.back().second;
    }

private:
    const PlanReference& reference_;
    std::vector<std::pair<std::string_view, const DataPrice*>> known_;
};

// The hour (since 1970-01-01 UTC) the runs start, for owned capacity to cover: the budget
// view's first day. nullopt without owned capacity or a start date (nothing to cover).
std::optional<double> OwnedRunStartHour(const TrainingPlanRequest& request) {
    if (request.owned_capacity.empty()) return std::nullopt;
    const std::optional<BudgetStart> begins = StartOfBudget(request.start_date, request.today);
    if (!begins) return std::nullopt;
    return static_cast<double>(begins->day) * kHoursPerDay;
}

// Owned capacity covering some of the option's expected run: those hours are paid whether
// used or not (sunk), so the option pays only for the rest, billed as its offering bills
// (whole terms or blocks for the uncovered hours per instance). The cost spread keeps its
// shape (scaled by the same share).
template <typename Bill>
void ApplyOwnedCapacity(const std::vector<OwnedCapacity>& owned, double start_hour,
                        const Bill& bill, TrainingPlanOption& o) {
    const double run_hours = o.expected_wall_clock_hours;
    const OwnedCover cover =
        CoverRun(owned, o.offering->id, o.nodes, start_hour, start_hour + run_hours);
    if (cover.instance_hours <= 0 || o.expected_cost_usd <= 0) return;
    const double uncovered_hours_per_instance =
        std::max(0.0, run_hours - cover.instance_hours / o.nodes);
    const double marginal_usd = uncovered_hours_per_instance > kOwnedHoursResidue
                                    ? bill(uncovered_hours_per_instance)
                                    : 0.0;
    const double share = marginal_usd / o.expected_cost_usd;
    o.owned = OwnedUse{cover.instance_hours, cover.sunk_usd, o.expected_cost_usd};
    o.expected_cost_usd = marginal_usd;
    o.cost_usd *= share;
    o.cost_usd_p10 *= share;
    o.cost_usd_p50 = marginal_usd;
    o.cost_usd_p90 *= share;
}

// What every option of a plan shares: the request, its settings and what is worked out once
// (today's date, each provider's data prices, the expected hours of each spot run).
struct PricingContext {
    const TrainingPlanRequest& request;
    const PricingSettings& settings;
    // The time factor alone (p90/p50 of run time): committed prices are fixed once bought,
    // so only the hours (and with them the blocks or terms billed) are uncertain.
    double time_factor = 1;
    std::optional<double> owned_start_hour;
    // The expected hours of a spot run depend only on its failure-free hours and rate
    // (offerings of one shape and bucket share them).
    std::map<std::pair<double, double>, double> spot_hours;
};

// One offering's own figures, worked out once for all its node counts.
struct OfferingFigures {
    const CandidateOffering* candidate = nullptr;
    const DataPrice* data_price = nullptr;
};

enum class RunVerdict { kPriced, kSkipped, kImpractical };

// The fields of the option of `run` that depend on the offering only through its capacity
// record, price type and spot rate (so every offering of one price class shares them), and
// whether such an option is sold at all. On kSkipped, `why` says why.
RunVerdict PriceSharedFields(PricingContext& ctx, const ShapeKey& key, const ShapeRun& run,
                             const OfferingFigures& figures, TrainingPlanOption& opt,
                             SkippedOption::Why& why) {
    const OfferingCapacity& capacity = *figures.candidate->capacity;
    const PriceType type = figures.candidate->price_type;
    if (run.nodes > capacity.max_instances) {
        why = SkippedOption::Why::kOverInstances;
        return RunVerdict::kSkipped;
    }
    if (!capacity.Sells(run.nodes)) {
        why = SkippedOption::Why::kSizeNotSold;
        return RunVerdict::kSkipped;
    }
    opt.nodes = run.nodes;
    opt.total_accelerators = run.nodes * key.per_node;
    opt.parallelism = run.layout;
    opt.mfu = run.mfu;
    opt.wall_clock_hours = run.wall_clock_hours * ctx.request.calibration_hours_factor;
    opt.expected_wall_clock_hours = opt.wall_clock_hours;
    opt.independent_hosts = key.independent_hosts;
    if (key.scale_out >= 0) {
        opt.scale_out_gbit_per_s = key.scale_out;
    }
    opt.max_instances = capacity.max_instances;
    if (figures.candidate->spot_rate_per_instance) {
        const double rate = *figures.candidate->spot_rate_per_instance * run.nodes;
        opt.interruptions_per_hour = rate;
        auto [it, fresh] = ctx.spot_hours.try_emplace({opt.wall_clock_hours, rate}, 0.0);
        if (fresh) it->second = ExpectedHoursWithInterruptions(RunOf(opt, ctx.settings));
        opt.expected_wall_clock_hours = it->second;
    }
    if (!std::isfinite(opt.expected_wall_clock_hours) ||
        opt.expected_wall_clock_hours > opt.wall_clock_hours * kMaxSpotSlowdown) {
        return RunVerdict::kImpractical;
    }
    opt.billed_hours = BilledHours(type, opt.expected_wall_clock_hours, capacity);
    if (capacity.max_block_hours && opt.billed_hours > *capacity.max_block_hours) {
        // A longer run would need several reservations, each its own purchase.
        why = SkippedOption::Why::kOverBlock;
        return RunVerdict::kSkipped;
    }
    if (IsCommitted(type)) {
        opt.unused_committed_hours = opt.billed_hours - opt.expected_wall_clock_hours;
    }
    return RunVerdict::kPriced;
}

// The fields that depend on the offering's own price, date, id and provider, over the shared
// fields PriceSharedFields set (overwriting those of another offering of the same class).
void PriceOwnFields(const PricingContext& ctx, const OfferingFigures& figures,
                    TrainingPlanOption& opt) {
    const CandidateOffering& candidate = *figures.candidate;
    const OfferingCapacity& capacity = *candidate.capacity;
    const PriceType type = candidate.price_type;
    opt.offering = candidate.offering;
    opt.cluster_usd_per_hour = candidate.usd_per_hour * opt.nodes;
    opt.price_age_days = candidate.price_age_days;
    opt.price_state = candidate.price_state;
    const auto bill = [&](double hours) {
        return BilledHours(type, hours, capacity) * opt.cluster_usd_per_hour;
    };
    opt.cost_usd = bill(opt.wall_clock_hours);
    opt.expected_cost_usd = bill(opt.expected_wall_clock_hours);
    opt.cost_usd_p50 = opt.expected_cost_usd;
    if (IsCommitted(type)) {
        opt.cost_usd_p10 = bill(opt.expected_wall_clock_hours / ctx.time_factor);
        opt.cost_usd_p90 = bill(opt.expected_wall_clock_hours * ctx.time_factor);
    } else {
        const double factor =
            candidate.spot_rate_per_instance ? ctx.settings.factor_spot : ctx.settings.factor_fixed;
        opt.cost_usd_p10 = opt.expected_cost_usd / factor;
        opt.cost_usd_p90 = opt.expected_cost_usd * factor;
    }
    opt.owned.reset();
    if (ctx.owned_start_hour) {
        ApplyOwnedCapacity(ctx.request.owned_capacity, *ctx.owned_start_hour, bill, opt);
    }
    opt.data_cost_usd =
        DataCostUsd(ctx.request.data, figures.data_price, opt.expected_wall_clock_hours);
}

// What the first offering of a price class found at one node count, for the others of the
// class: skipped (and why), impractical, over the wall-clock ceiling, or priced with the
// deadline judged (`option` holds the shared fields and the deadline's verdict).
struct ClassRun {
    enum class Kind { kUnknown, kSkipped, kImpractical, kOverCeiling, kJudged };
    Kind kind = Kind::kUnknown;
    SkippedOption::Why why = SkippedOption::Why::kOverInstances;
    TrainingPlanOption option;
};

// Offerings of one shape whose options agree in everything but the price, date, id and
// provider: the same capacity record (provider, instance type, price type) and spot rate.
// Copies of an instance type in more regions are one class, so at the catalog's real size
// a shape's thousands of offerings are a few classes.
class PriceClasses {
public:
    explicit PriceClasses(std::size_t runs) : runs_(runs) {}
    std::vector<ClassRun>& Of(const OfferingFigures& figures) {
        const Key key{figures.candidate->capacity, figures.candidate->price_type,
                      figures.candidate->spot_rate_per_instance};
        if (last_ != nullptr && last_->first == key) return last_->second;
        for (auto& known : classes_) {
            if (known.first == key) {
                last_ = &known;
                return known.second;
            }
        }
        last_ = &classes_.emplace_back(key, std::vector<ClassRun>(runs_));
        return last_->second;
    }

private:
    using Key = std::tuple<const OfferingCapacity*, PriceType, std::optional<double>>;
    std::size_t runs_;
    std::deque<std::pair<Key, std::vector<ClassRun>>> classes_;  // a deque: never moves
    std::pair<Key, std::vector<ClassRun>>* last_ = nullptr;
};

// One (offering, node count): the first offering of its class at this count works it out in
// full and leaves the shared part in `shared`; the others reuse it and price only their own
// fields. Every option goes through the same steps as if priced alone, in the same order.
void PriceRun(PricingContext& ctx, const ShapeKey& key, const ShapeRun& run,
              const OfferingFigures& figures, ClassRun& shared, SkipTally& skipped,
              OptionJudging& judging) {
    using Kind = ClassRun::Kind;
    const CandidateOffering& candidate = *figures.candidate;
    if (shared.kind == Kind::kUnknown) {
        TrainingPlanOption& opt = shared.option;
        switch (PriceSharedFields(ctx, key, run, figures, opt, shared.why)) {
            case RunVerdict::kSkipped:
                shared.kind = Kind::kSkipped;
                break;
            case RunVerdict::kImpractical:
                shared.kind = Kind::kImpractical;
                break;
            case RunVerdict::kPriced:
                PriceOwnFields(ctx, figures, opt);
                // The budget's fields are the offering's own: the next offering of the
                // class overwrites them (PriceOwnFields, JudgeBudget).
                shared.kind = judging.TakeUntilBudget(opt) ? Kind::kJudged : Kind::kOverCeiling;
                if (shared.kind == Kind::kJudged) judging.TakeBudget(opt);
                return;
        }
    }
    switch (shared.kind) {
        case Kind::kSkipped:
            skipped.Add({shared.why, &candidate, run.nodes, shared.option.billed_hours});
            return;
        case Kind::kImpractical:
            skipped.AddImpractical();
            return;
        case Kind::kOverCeiling:
        case Kind::kJudged:
            PriceOwnFields(ctx, figures, shared.option);
            if (shared.kind == Kind::kOverCeiling) {
                judging.TakeUntilBudget(shared.option);
            } else {
                judging.TakeBudgetOfJudged(shared.option);
            }
            return;
        case Kind::kUnknown:
            return;
    }
}

}  // namespace

void PriceOptions(const TrainingPlanRequest& request, const Candidates& candidates,
                  const ShapeEstimates& estimates, const PricingSettings& settings,
                  const PlanReference& reference, Tally& tally, OptionJudging& judging) {
    PricingContext ctx{
        request, settings, 1.0 + settings.efficiency_spread, OwnedRunStartHour(request), {}};
    const bool data_priced = request.data.stored_gb || request.data.egress_gb;
    DataPriceLookup data_prices(reference);
    SkipTally skipped(tally);
    for (const auto& [key, runs] : estimates.runs) {
        const ShapeGroup& group = candidates.shapes.at(key);
        PriceClasses classes(runs.size());
        for (const CandidateOffering& candidate : group.offerings) {
            OfferingFigures figures;
            figures.candidate = &candidate;
            figures.data_price =
                data_priced ? data_prices.Of(candidate.offering->provider) : nullptr;
            std::vector<ClassRun>& class_runs = classes.Of(figures);
            for (std::size_t r = 0; r < runs.size(); ++r) {
                PriceRun(ctx, key, runs[r], figures, class_runs[r], skipped, judging);
            }
        }
    }
    skipped.Flush();
}

OptionJudging::OptionJudging(const TrainingPlanRequest& request, const PricingSettings& settings,
                             DeadlineProbabilities& probabilities, Tally& tally)
    : ceiling(request, tally),
      judge(request, settings, probabilities),
      binding(request),
      keep_infeasible(request.include_infeasible) {}

void OptionJudging::Take(TrainingPlanOption& o) {
    if (TakeUntilBudget(o)) TakeBudget(o);
}

bool OptionJudging::TakeUntilBudget(TrainingPlanOption& o) {
    owned_covers_some = owned_covers_some || o.owned.has_value();
    if (ceiling.Over(o)) return false;
    judge.JudgeDeadline(o);
    return true;
}

void OptionJudging::TakeBudgetOfJudged(TrainingPlanOption& o) {
    owned_covers_some = owned_covers_some || o.owned.has_value();
    TakeBudget(o);
}

void OptionJudging::TakeBudget(TrainingPlanOption& o) {
    ++within_ceiling;
    // The probability itself is read here only by the binding constraints (while nothing is
    // feasible) and by infeasible options listed; options shown get theirs afterwards.
    judge.JudgeBudget(o, !any_feasible || keep_infeasible);
    // The binding constraints are read only when no option is feasible (Rank).
    any_feasible = any_feasible || o.Feasible();
    if (!any_feasible) binding.Add(o);
    if (o.Feasible() || keep_infeasible) {
        kept.push_back(o);
    } else {
        ++infeasible_not_kept;
    }
}

std::optional<double> WallClockCeilingDays(const TrainingPlanRequest& request) {
    const TrainingPlanConstraints& c = request.constraints;
    if (c.max_wall_clock_days) return c.max_wall_clock_days;
    if (c.deadline_hours) return std::nullopt;
    return kDefaultMaxWallClockDays;
}

WallClockCeiling::WallClockCeiling(const TrainingPlanRequest& request, Tally& tally)
    : days_(WallClockCeilingDays(request)), tally_(tally) {}

bool WallClockCeiling::Over(const TrainingPlanOption& o) {
    if (!days_ || !(o.expected_wall_clock_hours > *days_ * 24.0)) return false;
    tally_.Add("over_max_wall_clock");
    const auto [it, fresh] = index_.try_emplace(o.offering->provider, fastest_per_provider_.size());
    if (fresh) {
        fastest_per_provider_.push_back(o);
    } else if (Before(o, fastest_per_provider_[it->second], TrainingPlanSort::kTime)) {
        fastest_per_provider_[it->second] = o;
    }
    return true;
}

std::vector<TrainingPlanOption> WallClockCeiling::Finish() {
    std::vector<TrainingPlanOption> out = std::move(fastest_per_provider_);
    if (out.empty()) return out;
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return Before(a, b, TrainingPlanSort::kTime); });
    const TrainingPlanOption& best = out.front();
    tally_.Example("over_max_wall_clock", "the fastest such option, " + best.offering->id + " x " +
                                              std::to_string(best.nodes) + ", takes " +
                                              Fixed(best.expected_wall_clock_hours / 24.0, 0) +
                                              " days; max_wall_clock_days is " + Fixed(*days_, 0));
    return out;
}

std::vector<TrainingPlanOption> ApplyWallClockCeiling(const TrainingPlanRequest& request,
                                                      std::vector<TrainingPlanOption>& options,
                                                      Tally& tally) {
    WallClockCeiling ceiling(request, tally);
    options.erase(std::remove_if(options.begin(), options.end(),
                                 [&](const TrainingPlanOption& o) { return ceiling.Over(o); }),
                  options.end());
    return ceiling.Finish();
}

double BudgetProbability(const TrainingPlanOption& o, double budget_usd) {
    const bool fits = o.ExpectedTotalUsd() <= budget_usd;
    if (IsCommitted(o.offering->price_type) || !(o.expected_cost_usd > 0)) {
        return fits ? 1.0 : 0.0;
    }
    // The spread of the bill: sigma = ln(p90 / p50) / z90 of the log-normal compute cost.
    const double sigma = std::log(o.cost_usd_p90 / o.expected_cost_usd) / kZ90;
    if (!(sigma > 0)) return fits ? 1.0 : 0.0;
    const double compute_budget_usd = budget_usd - o.data_cost_usd.value_or(0);
    if (!(compute_budget_usd > 0)) return 0.0;
    return NormalCdf(std::log(compute_budget_usd / o.expected_cost_usd) / sigma);
}

ConstraintJudge::ConstraintJudge(const TrainingPlanRequest& request,
                                 const PricingSettings& settings,
                                 DeadlineProbabilities& probabilities)
    : constraints_(request.constraints),
      settings_(settings),
      probabilities_(probabilities),
      confidence_(request.constraints.deadline_confidence.value_or(kDefaultDeadlineConfidence)),
      target_(std::min(1.0, confidence_ + kDeadlineBoundMargin)),
      spot_sigma_(std::log(settings.factor_spot) / kZ90) {}

bool ConstraintJudge::Cleared(const TrainingPlanOption& o) {
    if (!o.interruptions_per_hour) return !(probabilities_.LowerBound(o, target_) < target_);
    // Whether a bound clears a spot option depends only on its run (failure-free hours and
    // rate), which offerings of one shape and bucket share: judged once per run.
    auto [it, fresh] =
        cleared_spot_runs_.try_emplace({o.wall_clock_hours, *o.interruptions_per_hour}, false);
    if (fresh) it->second = !(probabilities_.LowerBound(o, target_) < target_);
    return it->second;
}

void ConstraintJudge::Judge(TrainingPlanOption& o) {
    JudgeDeadline(o);
    JudgeBudget(o);
}

void ConstraintJudge::JudgeDeadline(TrainingPlanOption& o) {
    const TrainingPlanConstraints& c = constraints_;
    o.violations.clear();
    o.deadline_probability.reset();
    if (c.deadline_hours && !Cleared(o)) {
        // Only options a bound cannot clear pay for the distribution here; the rest get
        // theirs when shown (Fill).
        o.deadline_probability = probabilities_.Of(o);
    }
    o.meets_deadline =
        !c.deadline_hours || !o.deadline_probability || *o.deadline_probability >= confidence_;
}

std::optional<double> ConstraintJudge::SpotBudgetRatio(const TrainingPlanOption& o) const {
    // The cases in which BudgetProbability takes the log-normal's probability, and its ratio.
    if (!constraints_.budget_usd || !o.interruptions_per_hour || !(spot_sigma_ > 0) ||
        !(o.expected_cost_usd > 0)) {
        return std::nullopt;
    }
    const double compute_budget_usd = *constraints_.budget_usd - o.data_cost_usd.value_or(0);
    if (!(compute_budget_usd > 0)) return std::nullopt;
    return compute_budget_usd / o.expected_cost_usd;
}

void ConstraintJudge::JudgeBudget(TrainingPlanOption& o, bool probability_needed) {
    const TrainingPlanConstraints& c = constraints_;
    o.budget_probability.reset();
    if (!c.budget_usd) {
        o.within_budget = true;
        return;
    }
    const std::optional<double> ratio = SpotBudgetRatio(o);
    if (ratio && !probability_needed) {
        if (*ratio >= settled_within_ratio_ || *ratio <= settled_outside_ratio_) {
            o.within_budget = *ratio >= settled_within_ratio_;
            return;
        }
    }
    o.budget_probability = BudgetProbability(o, *c.budget_usd);
    o.within_budget = *o.budget_probability >= settings_.budget_confidence;
    // Only a verdict far wider than the rounding of log and erfc (about 1e-15) settles the
    // ratios beyond it: the probability computed there lands on the same side.
    constexpr double kSettledMargin = 1e-9;
    if (ratio && *o.budget_probability >= settings_.budget_confidence + kSettledMargin) {
        settled_within_ratio_ = std::min(settled_within_ratio_, *ratio);
    } else if (ratio && *o.budget_probability <= settings_.budget_confidence - kSettledMargin) {
        settled_outside_ratio_ = std::max(settled_outside_ratio_, *ratio);
    }
}

void ConstraintJudge::FillBudget(TrainingPlanOption& o) const {
    if (constraints_.budget_usd && !o.budget_probability) {
        o.budget_probability = BudgetProbability(o, *constraints_.budget_usd);
    }
}

void Constrain(const TrainingPlanRequest& request, const PricingSettings& settings,
               DeadlineProbabilities& probabilities, std::vector<TrainingPlanOption>& options) {
    ConstraintJudge judge(request, settings, probabilities);
    for (TrainingPlanOption& o : options) judge.Judge(o);
}

void ListViolations(const TrainingPlanRequest& request, TrainingPlanOption& o) {
    const TrainingPlanConstraints& c = request.constraints;
    o.violations.clear();
    if (!o.meets_deadline) {
        if (o.expected_wall_clock_hours <= *c.deadline_hours) {
            // In time on average, not often enough: the shortfall is in probability.
            o.violations.push_back({"deadline_confidence",
                                    c.deadline_confidence.value_or(kDefaultDeadlineConfidence),
                                    o.deadline_probability.value_or(0)});
        } else {
            o.violations.push_back(
                {"deadline_hours", *c.deadline_hours, o.expected_wall_clock_hours});
        }
    }
    if (!o.within_budget) {
        if (o.ExpectedTotalUsd() <= *c.budget_usd) {
            // Within budget on average, not often enough: the shortfall is in probability.
            o.violations.push_back({"budget_confidence",
                                    c.budget_confidence.value_or(kDefaultBudgetConfidence),
                                    o.budget_probability.value_or(0)});
        } else {
            o.violations.push_back({"budget_usd", *c.budget_usd, o.ExpectedTotalUsd()});
        }
    }
}

void FillShownProbabilities(DeadlineProbabilities& probabilities, const ConstraintJudge& judge,
                            TrainingPlan& plan) {
    for (auto* list : {&plan.options, &plan.pareto_front, &plan.best_by_provider}) {
        for (TrainingPlanOption& o : *list) {
            probabilities.Fill(o);
            judge.FillBudget(o);
        }
    }
    for (auto* one :
         {&plan.cheapest, &plan.cheapest_trusted, &plan.fastest, &plan.recommendation}) {
        if (*one) {
            probabilities.Fill(**one);
            judge.FillBudget(**one);
        }
    }
}

bool Before(const TrainingPlanOption& a, const TrainingPlanOption& b, TrainingPlanSort sort) {
    const bool by_time = sort == TrainingPlanSort::kTime;
    auto primary = [&](const TrainingPlanOption& o) {
        switch (sort) {
            case TrainingPlanSort::kCost:
                return o.cost_usd + o.data_cost_usd.value_or(0);
            case TrainingPlanSort::kTime:
                return o.expected_wall_clock_hours;
            case TrainingPlanSort::kExpectedCost:
                return o.ExpectedTotalUsd();
        }
        return o.ExpectedTotalUsd();
    };
    auto secondary = [&](const TrainingPlanOption& o) {
        return by_time ? o.ExpectedTotalUsd() : o.expected_wall_clock_hours;
    };
    if (primary(a) != primary(b)) {
        return primary(a) < primary(b);
    }
    if (secondary(a) != secondary(b)) {
        return secondary(a) < secondary(b);
    }
    if (a.offering->id != b.offering->id) {
        return a.offering->id < b.offering->id;
    }
    return a.nodes < b.nodes;
}

}  // namespace gpucost::pricing::plan::training_stages
