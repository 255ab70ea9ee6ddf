// Stages 3 and 4 of a training plan: each (offering, node count) billed as the provider
// bills it within what one customer can buy, then checked against the constraints.

#include <cmath>
#include <utility>

#include "pricing/plan/calendar.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_stages.hpp"

namespace gpucost::pricing::plan::training_stages {
namespace {

// Spot options whose expected time exceeds this multiple of the failure-free time are left
// out (counted as spot_impractical): checkpoints too slow for the interruption rate.
constexpr double kMaxSpotSlowdown = 1e3;

// Interruptions per instance-hour of a spot offering: its Spot Advisor bucket, or the worst
// bucket when it has none; nullopt for other price types.
std::optional<double> SpotRate(const Offering& o, const PricingSettings& settings) {
    if (o.price_type != PriceType::kSpot) {
        return std::nullopt;
    }
    if (o.spot_interruption) {
        if (auto p = RepresentativePercentPerMonth(*o.spot_interruption)) {
            return InterruptionsPerHourFromMonthlyPercent(*p);
        }
    }
    return settings.unknown_spot_rate;
}

std::optional<long long> PriceAgeDays(const Offering& o, const std::string& today) {
    auto now = DaysFromIsoDate(today);
    auto as_of = DaysFromIsoDate(o.price.as_of);
    if (!now || !as_of) {
        return std::nullopt;
    }
    return *now - *as_of;
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

bool IsCommitted(PriceType type) {
    return type == PriceType::kCommit1y || type == PriceType::kCommit3y ||
           type == PriceType::kCapacityBlock;
}

DataCosts DataCostsFor(const TrainingDataSizes& data, const DataPrice& price,
                       double expected_hours) {
    DataCosts out;
    if (data.stored_gb) {
        out.storage_usd = *data.stored_gb * price.object_storage_usd_per_gb_month *
                          expected_hours / kHoursPerMonth;
    }
    if (data.egress_gb) {
        out.egress_usd = *data.egress_gb * price.internet_egress_usd_per_gb;
    }
    return out;
}

PricingSettings SettingsFor(const TrainingPlanRequest& request) {
    PricingSettings s;
    s.checkpoint_hours = request.checkpoint_minutes.value_or(kDefaultCheckpointMinutes) / 60.0;
    s.restart_hours = request.restart_minutes.value_or(kDefaultRestartMinutes) / 60.0;
    s.efficiency_spread =
        request.efficiency_spread_fraction.value_or(kDefaultEfficiencySpreadFraction);
    s.price_spread = request.price_spread_fraction.value_or(kDefaultPriceSpreadFraction);
    s.spot_price_spread =
        request.spot_price_spread_fraction.value_or(kDefaultSpotPriceSpreadFraction);
    s.factor_fixed = CostQuantileFactor(s.efficiency_spread, s.price_spread);
    s.factor_spot = CostQuantileFactor(s.efficiency_spread, s.spot_price_spread);
    s.unknown_spot_rate =
        InterruptionsPerHourFromMonthlyPercent(kDefaultUnknownSpotPercentPerMonth);
    s.max_price_age_days = request.max_price_age_days.value_or(kDefaultMaxPriceAgeDays);
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

std::vector<TrainingPlanOption> PriceOptions(const TrainingPlanRequest& request,
                                             const Candidates& candidates,
                                             const ShapeEstimates& estimates,
                                             const PricingSettings& settings,
                                             const PlanReference& reference, Tally& tally) {
    std::vector<TrainingPlanOption> out;
    std::size_t most = 0;  // every offering at every node count of its shape
    for (const auto& [key, runs] : estimates.runs) {
        most += candidates.shapes.at(key).offerings.size() * runs.size();
    }
    out.reserve(most);
    // The time factor alone (p90/p50 of run time): committed prices are fixed once bought,
    // so only the hours (and with them the blocks or terms billed) are uncertain.
    const double time_factor = 1.0 + settings.efficiency_spread;
    for (const auto& [key, runs] : estimates.runs) {
        const ShapeGroup& group = candidates.shapes.at(key);
        for (const CandidateOffering& candidate : group.offerings) {
            const Offering& o = *candidate.offering;
            const std::optional<double> rate_per_instance = SpotRate(o, settings);
            for (const ShapeRun& run : runs) {
                if (run.nodes > candidate.capacity.max_instances) {
                    tally.Add("over_capacity");
                    tally.Example("over_capacity",
                                  o.id + ": " + std::to_string(run.nodes) +
                                      " instances asked, one customer can get " +
                                      std::to_string(candidate.capacity.max_instances) + " (" +
                                      candidate.capacity.source + ")");
                    continue;
                }
                if (!candidate.capacity.Sells(run.nodes)) {
                    tally.Add("size_not_sold");
                    tally.Example("size_not_sold",
                                  o.id + ": " + std::to_string(run.nodes) +
                                      " instances asked; sold as " +
                                      candidate.capacity.SizesText() + " (" +
                                      candidate.capacity.source + ")");
                    continue;
                }
                TrainingPlanOption opt;
                opt.offering = &o;
                opt.nodes = run.nodes;
                opt.total_accelerators = run.nodes * key.per_node;
                opt.parallelism = run.layout;
                opt.mfu = run.mfu;
                opt.wall_clock_hours = run.wall_clock_hours;
                opt.cluster_usd_per_hour = o.price.usd_per_hour * run.nodes;
                opt.expected_wall_clock_hours = opt.wall_clock_hours;
                opt.independent_hosts = key.independent_hosts;
                if (key.scale_out >= 0) {
                    opt.scale_out_gbit_per_s = key.scale_out;
                }
                opt.max_instances = candidate.capacity.max_instances;
                opt.price_age_days = PriceAgeDays(o, request.today);
                if (rate_per_instance) {
                    const double rate = *rate_per_instance * run.nodes;
                    opt.interruptions_per_hour = rate;
                    const double interval =
                        rate > 0 ? DalyCheckpointIntervalHours(settings.checkpoint_hours, rate)
                                 : opt.wall_clock_hours;
                    opt.expected_wall_clock_hours = ExpectedHoursWithInterruptions(
                        opt.wall_clock_hours, rate, settings.checkpoint_hours,
                        settings.restart_hours, interval);
                }
                if (!std::isfinite(opt.expected_wall_clock_hours) ||
                    opt.expected_wall_clock_hours > opt.wall_clock_hours * kMaxSpotSlowdown) {
                    tally.Add("spot_impractical");
                    continue;
                }
                const auto bill = [&](double hours) {
                    return BilledHours(o.price_type, hours, candidate.capacity) *
                           opt.cluster_usd_per_hour;
                };
                opt.billed_hours =
                    BilledHours(o.price_type, opt.expected_wall_clock_hours, candidate.capacity);
                if (candidate.capacity.max_block_hours &&
                    opt.billed_hours > *candidate.capacity.max_block_hours) {
                    // A longer run would need several reservations, each its own purchase.
                    tally.Add("over_capacity");
                    tally.Example("over_capacity",
                                  o.id + ": a block is sold for at most " +
                                      std::to_string(static_cast<long long>(
                                          *candidate.capacity.max_block_hours)) +
                                      " h; this run needs " +
                                      std::to_string(static_cast<long long>(opt.billed_hours)) +
                                      " h");
                    continue;
                }
                opt.cost_usd = bill(opt.wall_clock_hours);
                opt.expected_cost_usd = bill(opt.expected_wall_clock_hours);
                opt.cost_usd_p50 = opt.expected_cost_usd;
                if (IsCommitted(o.price_type)) {
                    opt.unused_committed_hours =
                        opt.billed_hours - opt.expected_wall_clock_hours;
                    opt.cost_usd_p10 = bill(opt.expected_wall_clock_hours / time_factor);
                    opt.cost_usd_p90 = bill(opt.expected_wall_clock_hours * time_factor);
                } else {
                    const double factor = rate_per_instance ? settings.factor_spot
                                                            : settings.factor_fixed;
                    opt.cost_usd_p10 = opt.expected_cost_usd / factor;
                    opt.cost_usd_p90 = opt.expected_cost_usd * factor;
                }
                opt.data_cost_usd = DataCostUsd(request.data, reference.DataPriceOf(o.provider),
                                                opt.expected_wall_clock_hours);
                out.push_back(std::move(opt));
            }
        }
    }
    return out;
}

void Constrain(const TrainingPlanRequest& request, std::vector<TrainingPlanOption>& options) {
    const TrainingPlanConstraints& c = request.constraints;
    for (TrainingPlanOption& o : options) {
        o.violations.clear();
        o.meets_deadline = !c.deadline_hours || o.expected_wall_clock_hours <= *c.deadline_hours;
        o.within_budget = !c.budget_usd || o.ExpectedTotalUsd() <= *c.budget_usd;
        if (!o.meets_deadline) {
            o.violations.push_back(
                {"deadline_hours", *c.deadline_hours, o.expected_wall_clock_hours});
        }
        if (!o.within_budget) {
            o.violations.push_back({"budget_usd", *c.budget_usd, o.ExpectedTotalUsd()});
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
