#include "pricing/plan/spot.hpp"

#include <algorithm>
#include <cmath>

#include "pricing/plan/field_checker.hpp"

namespace gpucost::pricing::plan {
namespace {

// Request bounds: far beyond any real job, small enough that every product stays finite.
constexpr double kMaxJobHours = 1e6;
constexpr double kMaxUsdPerHour = 1e6;
constexpr double kMaxInterruptionsPerHour = 10.0;
constexpr double kMaxMinutes = 1440.0;
constexpr double kMaxDeadlineHours = 1e7;
constexpr int kMaxNodes = 4096;
// Above this ratio of expected spot time to job time the job practically never finishes.
constexpr double kMaxExpectedSlowdown = 1e6;
// Monthly percentage used for the open Spot Advisor bucket (>20%); see the header.
constexpr double kOpenBucketPercentPerMonth = 30.0;
constexpr double kPoissonNormalApproxMean = 1e4;
// Tolerated-interruption counts scanned when the deadline estimate needs its envelope.
constexpr double kMaxDeadlineScan = 256;


std::string Usd(double value) { return "$" + Fixed(value, 2); }
std::string Pct(double fraction) { return Fixed(fraction * 100.0, 1) + "%"; }

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

double ExpectedHoursWithInterruptions(double work_hours, double interruptions_per_hour,
                                      double checkpoint_hours, double restart_hours,
                                      double interval_hours) {
    if (interruptions_per_hour <= 0) {
        return work_hours;
    }
    double segments = 1.0;
    double segment_hours = work_hours;  // one stretch, no intermediate checkpoint
    if (interval_hours < work_hours) {
        segments = work_hours / interval_hours;
        segment_hours = interval_hours + checkpoint_hours;
    }
    const double m = 1.0 / interruptions_per_hour;
    // Daly's exact expectation of one segment with restart time R.
    return segments * m * std::exp(restart_hours / m) * std::expm1(segment_hours / m);
}

double PoissonCdf(double k, double mean) {
    if (!(k >= 0)) {
        return 0.0;
    }
    if (!(mean > 0)) {
        return 1.0;
    }
    k = std::floor(k);
    if (mean > kPoissonNormalApproxMean) {
        const double z = (k + 0.5 - mean) / std::sqrt(mean);
        return 0.5 * std::erfc(-z / std::sqrt(2.0));
    }
    // Beyond mean + 40 sd the remaining tail is far below double precision.
    const double cutoff = mean + 40.0 * std::sqrt(mean) + 40.0;
    if (k > cutoff) {
        return 1.0;
    }
    const auto last = static_cast<long>(k);
    const double log_mean = std::log(mean);
    double sum = 0.0;
    for (long i = 0; i <= last; ++i) {
        const double di = static_cast<double>(i);
        sum += std::exp(-mean + di * log_mean - std::lgamma(di + 1.0));
    }
    return std::min(1.0, sum);
}

double SpotDeadlineProbability(double deadline_hours, double failure_free_hours,
                               double interruptions_per_hour, double average_loss_hours) {
    if (failure_free_hours > deadline_hours) {
        return 0.0;
    }
    if (interruptions_per_hour <= 0 || average_loss_hours <= 0) {
        return 1.0;
    }
    const double tolerable =
        std::min(1e12, std::floor((deadline_hours - failure_free_hours) / average_loss_hours));
    // With j interruptions the run lasts failure_free + j * loss hours; it makes the deadline
    // when no more than j arrive in that time.
    auto with_at_most = [&](double j) {
        return PoissonCdf(j, interruptions_per_hour * (failure_free_hours + j * average_loss_hours));
    };
    double probability = with_at_most(tolerable);
    if (interruptions_per_hour * average_loss_hours >= 1.0) {
        // Each interruption costs more than the mean time to the next: the estimate falls
        // with more tolerated interruptions, while the true probability cannot fall with a
        // later deadline. Take the best over fewer tolerated interruptions (bounded scan).
        const double scan = std::min(tolerable, kMaxDeadlineScan);
        for (double j = 0; j <= scan; j += 1.0) {
            probability = std::max(probability, with_at_most(j));
        }
    }
    return probability;
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
    check.Range(on_demand_usd_per_hour, "/on_demand_usd_per_hour", 0, kMaxUsdPerHour, true);
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

Result<SpotPlan> PlanSpot(const SpotPlanRequest& request, const Catalog& catalog) {
    if (auto valid = request.Validate(); !valid.ok()) {
        return valid.error();
    }
    SpotPlan plan;
    const double nodes = static_cast<double>(request.nodes);
    plan.job_hours = *request.job_hours;
    Assumptions& echo = plan.assumptions;

    std::optional<Offering> spot_offering;
    if (request.spot_offering_id) {
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
        spot_offering = found.value();
        plan.spot_offering_id = spot_offering->id;
    }

    // Prices: a value in the request wins over an offering.
    if (request.spot_usd_per_hour) {
        plan.spot_usd_per_hour = *request.spot_usd_per_hour;
    } else {
        plan.spot_usd_per_hour = spot_offering->price.usd_per_hour * nodes;
    }
    if (request.on_demand_usd_per_hour) {
        plan.on_demand_usd_per_hour = *request.on_demand_usd_per_hour;
    } else {
        std::optional<Offering> on_demand;
        if (request.on_demand_offering_id) {
            auto found = catalog.FindOffering(*request.on_demand_offering_id);
            if (!found.ok()) {
                return MakeError(ErrorCode::kNotFound,
                                 "no offering '" + request.on_demand_offering_id->substr(0, 200) +
                                     "'",
                                 "/on_demand_offering_id");
            }
            if (found.value().price_type == PriceType::kSpot) {
                return MakeError(ErrorCode::kFailedPrecondition,
                                 "offering '" + found.value().id + "' is a spot offering",
                                 "/on_demand_offering_id");
            }
            on_demand = found.value();
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
        plan.on_demand_usd_per_hour = on_demand->price.usd_per_hour * nodes;
        plan.on_demand_offering_id = on_demand->id;
    }

    if (request.interruptions_per_hour) {
        plan.interruptions_per_hour = *request.interruptions_per_hour;
        echo.push_back(Echo("interruptions_per_hour", plan.interruptions_per_hour, "1/h",
                            "interruptions of the whole job per hour", true, ""));
    } else {
        std::optional<double> percent;
        if (spot_offering->spot_interruption) {
            percent = RepresentativePercentPerMonth(*spot_offering->spot_interruption);
        }
        if (!percent) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "offering '" + spot_offering->id +
                                 "' has no Spot Advisor interruption bucket; give "
                                 "interruptions_per_hour",
                             "/interruptions_per_hour");
        }
        plan.interruption_bucket = spot_offering->spot_interruption->label;
        plan.interruptions_per_hour = InterruptionsPerHourFromMonthlyPercent(*percent) * nodes;
        echo.push_back({"interruption_percent_per_month", *percent, "percent",
                        "representative monthly share of spot instances interrupted, for bucket " +
                            *plan.interruption_bucket,
                        "AWS Spot Advisor bucket via the catalog; midpoint of spotinfo's bucket "
                        "bounds, 30 for the open >20% bucket (judgement)"});
        echo.push_back({"interruptions_per_hour", plan.interruptions_per_hour, "1/h",
                        "interruptions of the whole job per hour: -ln(1 - p/100) / 730 per "
                        "instance, times nodes",
                        "derived (Poisson interruptions, 730 h per month)"});
    }

    const double lambda = plan.interruptions_per_hour;
    plan.checkpoint_hours = request.checkpoint_minutes.value_or(kDefaultCheckpointMinutes) / 60.0;
    plan.restart_hours = request.restart_minutes.value_or(kDefaultRestartMinutes) / 60.0;
    echo.push_back(Echo("checkpoint_minutes", plan.checkpoint_hours * 60.0, "min",
                        "time to write one checkpoint", request.checkpoint_minutes.has_value(),
                        "default: judgement (sharded checkpoint of a large model to fast "
                        "shared storage)"));
    echo.push_back(Echo("restart_minutes", plan.restart_hours * 60.0, "min",
                        "time from an interruption until work resumes (new capacity, container, "
                        "NCCL init, checkpoint read)",
                        request.restart_minutes.has_value(), "default: judgement"));

    const double work = plan.job_hours;
    if (lambda > 0) {
        plan.mean_hours_between_interruptions = 1.0 / lambda;
        plan.young_checkpoint_interval_hours =
            YoungCheckpointIntervalHours(plan.checkpoint_hours, lambda);
        plan.checkpoint_interval_hours =
            request.checkpoint_interval_hours.value_or(
                DalyCheckpointIntervalHours(plan.checkpoint_hours, lambda));
        echo.push_back(Echo("checkpoint_interval_hours", plan.checkpoint_interval_hours, "h",
                            "hours of work between checkpoints",
                            request.checkpoint_interval_hours.has_value(),
                            "Daly 2006 higher-order optimum (Young 1974 first order shown as "
                            "young_checkpoint_interval_hours)"));
    } else {
        plan.checkpoint_interval_hours = request.checkpoint_interval_hours.value_or(work);
    }
    plan.checkpoint_interval_hours = std::min(plan.checkpoint_interval_hours, work);
    const bool intermediate = lambda > 0 && plan.checkpoint_interval_hours < work;

    plan.expected_spot_hours = ExpectedHoursWithInterruptions(
        work, lambda, plan.checkpoint_hours, plan.restart_hours, plan.checkpoint_interval_hours);
    if (!std::isfinite(plan.expected_spot_hours) ||
        plan.expected_spot_hours > work * kMaxExpectedSlowdown) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "at this interruption rate a stretch between checkpoints almost never "
                         "completes (expected spot time over a million times the job length); "
                         "shorten checkpoint_interval_hours",
                         request.checkpoint_interval_hours ? "/checkpoint_interval_hours"
                                                           : "/interruptions_per_hour");
    }
    plan.expected_interruptions = lambda * plan.expected_spot_hours;
    plan.expected_overhead_fraction = plan.expected_spot_hours / work - 1.0;
    plan.expected_spot_cost_usd = plan.expected_spot_hours * plan.spot_usd_per_hour;
    plan.on_demand_hours = work;
    plan.on_demand_cost_usd = work * plan.on_demand_usd_per_hour;
    plan.expected_savings_usd = plan.on_demand_cost_usd - plan.expected_spot_cost_usd;
    plan.expected_savings_fraction = plan.expected_savings_usd / plan.on_demand_cost_usd;

    const double failure_free_hours =
        intermediate ? work + work / plan.checkpoint_interval_hours * plan.checkpoint_hours : work;
    const double segment_hours =
        intermediate ? plan.checkpoint_interval_hours + plan.checkpoint_hours : work;
    const double required =
        request.required_deadline_probability.value_or(kDefaultRequiredDeadlineProbability);
    const double min_savings = request.min_savings_fraction.value_or(kDefaultMinSavingsFraction);
    echo.push_back(Echo("min_savings_fraction", min_savings, "fraction",
                        "smallest expected saving for which spot is recommended",
                        request.min_savings_fraction.has_value(), "default: judgement"));

    bool spot_meets_deadline = true;
    bool on_demand_meets_deadline = true;
    if (request.deadline_hours) {
        const double deadline = *request.deadline_hours;
        plan.deadline_hours = deadline;
        plan.spot_deadline_probability = SpotDeadlineProbability(
            deadline, failure_free_hours, lambda, plan.restart_hours + segment_hours / 2.0);
        plan.on_demand_deadline_probability = work <= deadline ? 1.0 : 0.0;
        spot_meets_deadline = *plan.spot_deadline_probability >= required;
        on_demand_meets_deadline = work <= deadline;
        echo.push_back(Echo("required_deadline_probability", required, "fraction",
                            "probability of finishing by the deadline that counts as meeting it",
                            request.required_deadline_probability.has_value(),
                            "default: judgement"));
    }

    const std::string saving_text = "expected saving " + Usd(plan.expected_savings_usd) + " (" +
                                    Pct(plan.expected_savings_fraction) + ") after " +
                                    Pct(plan.expected_overhead_fraction) +
                                    " expected overhead from checkpoints, lost work and restarts";
    if (request.max_spot_usd_per_hour && plan.spot_usd_per_hour > *request.max_spot_usd_per_hour) {
        plan.recommendation = SpotRecommendation::kOnDemand;
        plan.reasoning = "the spot price " + Usd(plan.spot_usd_per_hour) +
                         "/h is above your maximum " + Usd(*request.max_spot_usd_per_hour) + "/h";
    } else if (plan.expected_savings_usd <= 0) {
        plan.recommendation = SpotRecommendation::kOnDemand;
        plan.reasoning = "spot costs more than on-demand once interruptions are priced in (" +
                         saving_text + ")";
    } else if (!spot_meets_deadline && !on_demand_meets_deadline) {
        plan.recommendation = SpotRecommendation::kOnDemand;
        plan.reasoning = "neither meets the deadline; on-demand is the faster (" +
                         Fixed(work, 1) + " h without interruptions)";
    } else if (!spot_meets_deadline) {
        if (plan.expected_savings_fraction >= min_savings) {
            plan.recommendation = SpotRecommendation::kMixed;
            plan.mixed_slack_hours = *request.deadline_hours - work;
            plan.reasoning =
                "spot alone finishes by the deadline with probability " +
                Pct(*plan.spot_deadline_probability) + " (< " + Pct(required) + "), but " +
                saving_text +
                "; start on spot and move to on-demand once hours elapsed + remaining work "
                "hours reach the deadline (" +
                Fixed(*plan.mixed_slack_hours, 1) +
                " h of lost time can be absorbed); the cost then lies between the spot and "
                "the on-demand figures";
        } else {
            plan.recommendation = SpotRecommendation::kOnDemand;
            plan.reasoning = "spot misses the deadline too often (probability " +
                             Pct(*plan.spot_deadline_probability) + ") and saves too little (" +
                             saving_text + ")";
        }
    } else if (plan.expected_savings_fraction < min_savings) {
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
    return plan;
}

}  // namespace gpucost::pricing::plan
