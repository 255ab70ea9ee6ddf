#include "pricing/plan/commitment.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

#include "pricing/calendar.hpp"
#include "pricing/plan/training_plan.hpp"

namespace gpucost::pricing::plan {
namespace {

// The what-ifs every line is judged under; the decision is taken on kExpected alone.
enum class Variant { kExpected, kP10Duration, kP90Duration, kSlipped };
constexpr std::array<Variant, 4> kVariants = {Variant::kExpected, Variant::kP10Duration,
                                              Variant::kP90Duration, Variant::kSlipped};

// Instances of one shape running over [from, until): a plan's (positive) or owned (negative).
struct Span {
    double from = 0;
    double until = 0;
    int nodes = 0;
};

// Between two neighbouring boundaries: the instances planned and owned, and those left to buy
// for (net).
struct Segment {
    double from = 0;
    double until = 0;
    int planned = 0;
    int owned = 0;
    int Net() const { return std::max(0, planned - owned); }
};

// One offering shape's planned and owned spans.
struct Group {
    const Offering* on_demand = nullptr;
    std::vector<const PlannedDemand*> demand;
    std::vector<Span> owned;
};

std::string ShapeKey(const Offering& o) {
    return IdKey(o.provider) + "|" + IdKey(o.instance_type) + "|" + IdKey(o.region);
}

// The offering of the same shape at `type`, or null.
const Offering* Sibling(const Catalog& catalog, const Offering& of, PriceType type) {
    const std::string key = ShapeKey(of);
    for (const Offering& o : catalog.Offerings()) {
        if (o.price_type == type && ShapeKey(o) == key) return &o;
    }
    return nullptr;
}

// A plan's span under a what-if: durations at their p10 or p90, or the whole plan later.
Span SpanOf(const PlannedDemand& d, Variant variant, double slip_hours) {
    const double duration = d.end_hour - d.start_hour;
    // Training runs take as long as the estimator's efficiency lets them; a serving fleet
    // runs its budget window whatever its speed.
    const double spread =
        1 + (d.plan_kind == "training"
                 ? d.duration_spread_fraction.value_or(kDefaultEfficiencySpreadFraction)
                 : 0);
    switch (variant) {
        case Variant::kP10Duration:
            return {d.start_hour, d.start_hour + duration / spread, d.nodes};
        case Variant::kP90Duration:
            return {d.start_hour, d.start_hour + duration * spread, d.nodes};
        case Variant::kSlipped:
            return {d.start_hour + slip_hours, d.end_hour + slip_hours, d.nodes};
        case Variant::kExpected:
            break;
    }
    return {d.start_hour, d.end_hour, d.nodes};
}

// The group's timeline under a what-if, cut wherever a plan or an owned entry starts or ends.
std::vector<Segment> SegmentsOf(const Group& g, Variant variant, double slip_hours) {
    std::vector<Span> planned;
    for (const PlannedDemand* d : g.demand) planned.push_back(SpanOf(*d, variant, slip_hours));
    std::vector<double> cuts;
    for (const std::vector<Span>* list : {&std::as_const(planned), &g.owned}) {
        for (const Span& s : *list) {
            cuts.push_back(s.from);
            cuts.push_back(s.until);
        }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<Segment> out;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        Segment seg{cuts[k], cuts[k + 1], 0, 0};
        for (const Span& s : planned) {
            if (s.from <= seg.from && s.until >= seg.until) seg.planned += s.nodes;
        }
        for (const Span& s : g.owned) {
            if (s.from <= seg.from && s.until >= seg.until) seg.owned += s.nodes;
        }
        out.push_back(seg);
    }
    return out;
}

// Hours within [from, until) during which at least `layer` instances are left to buy for.
double LayerHours(const std::vector<Segment>& segments, int layer, double from, double until) {
    double hours = 0;
    for (const Segment& s : segments) {
        if (s.Net() < layer) continue;
        hours += std::max(0.0, std::min(s.until, until) - std::max(s.from, from));
    }
    return hours;
}

double TermHoursOf(const Offering& commitment) {
    return commitment.price_type == PriceType::kCommit3y ? kCommit3yTermHours : kCommit1yTermHours;
}

// Why a plan's demand is not counted, or empty when it is.
std::string SkipReason(const PlannedDemand& d, const Offering* on_demand) {
    if (d.offering == nullptr) return "its recommended offering is no longer in the catalog";
    if (d.nodes < 1 || d.end_hour <= d.start_hour) return "it runs no instance-hours";
    switch (d.offering->price_type) {
        case PriceType::kSpot:
            return "it runs on spot, which a reservation does not replace";
        case PriceType::kCapacityBlock:
            return "it runs on a capacity block, bought for its own dates";
        case PriceType::kCommit1y:
        case PriceType::kCommit3y:
            return "it already buys its own commitment term";
        case PriceType::kOnDemand:
            break;
    }
    if (on_demand == nullptr) return "no on-demand price to compare with";
    return {};
}

// The plans counted, grouped by on-demand offering (in the order first planned), with the
// owned entries of each shape.
std::vector<Group> GroupsOf(const Catalog& catalog, const CommitmentRequest& request,
                            CommitmentPlan& plan) {
    std::vector<Group> groups;
    std::map<std::string, std::size_t> index;
    for (const PlannedDemand& d : request.demand) {
        const Offering* on_demand =
            d.offering ? Sibling(catalog, *d.offering, PriceType::kOnDemand) : nullptr;
        if (std::string why = SkipReason(d, on_demand); !why.empty()) {
            plan.skipped.push_back({d.holder, std::move(why)});
            continue;
        }
        auto [it, added] = index.emplace(ShapeKey(*on_demand), groups.size());
        if (added) groups.push_back({on_demand, {}, {}});
        groups[it->second].demand.push_back(&d);
    }
    for (const OwnedCapacity& c : request.owned) {
        auto offering = catalog.FindOffering(c.offering_id);
        const auto span = OwnedSpanHours(c);
        if (!offering.ok() || !span) continue;
        auto it = index.find(ShapeKey(offering.value()));
        if (it != index.end())
            groups[it->second].owned.push_back({span->first, span->second, c.nodes});
    }
    return groups;
}

// What `instances` layers (`layers`, 1-based) of one term give under one what-if.
CommitmentOutcome OutcomeOf(const std::vector<Segment>& segments, const std::vector<int>& layers,
                            const CommitmentLine& line) {
    CommitmentOutcome out;
    const double until = line.start_hour + line.term_hours;
    for (int layer : layers)
        out.used_instance_hours += LayerHours(segments, layer, line.start_hour, until);
    const double paid_hours = line.instances * line.term_hours;
    out.unused_instance_hours = std::max(0.0, paid_hours - out.used_instance_hours);
    out.utilisation = paid_hours > 0 ? out.used_instance_hours / paid_hours : 0;
    out.unused_cost_usd = out.unused_instance_hours * line.commit_usd_per_hour;
    out.saving_usd =
        out.used_instance_hours * line.on_demand_usd_per_hour - line.commitment_cost_usd;
    return out;
}

// The line's term by calendar month, with the hours its layers are used in each under one
// what-if: the same layering as OutcomeOf, cut at the months' first hours, so the months add up
// to its used hours.
std::vector<CommitmentMonth> MonthsOf(const std::vector<Segment>& segments,
                                      const std::vector<int>& layers, const CommitmentLine& line) {
    std::vector<CommitmentMonth> out;
    const double until = line.start_hour + line.term_hours;
    const auto first_day = static_cast<long long>(std::floor(line.start_hour / kHoursPerDay));
    const long long month_day =
        DaysFromIsoDate(IsoDateFromDays(first_day).substr(0, 7) + "-01").value_or(first_day);
    double from = line.start_hour;
    for (int m = 1; from < until; ++m) {
        const double next =
            std::min(until, static_cast<double>(AddCalendarMonths(month_day, m)) * kHoursPerDay);
        CommitmentMonth month{from, next, line.instances * (next - from), 0};
        for (int layer : layers)
            month.used_instance_hours += LayerHours(segments, layer, from, next);
        out.push_back(month);
        from = next;
    }
    return out;
}

OfferingDemand DemandOf(const Group& g, const std::vector<Segment>& expected,
                        std::vector<const Offering*> terms) {
    OfferingDemand out{g.on_demand, 0, 0, 0, std::move(terms)};
    for (const Segment& s : expected) {
        const double hours = s.until - s.from;
        out.peak_instances = std::max(out.peak_instances, s.Net());
        out.planned_instance_hours += hours * s.planned;
        out.owned_instance_hours += hours * std::min(s.planned, s.owned);
    }
    return out;
}

// Each layer's best term (index into `terms`), or -1 when no term saves.
std::vector<int> ChooseTerms(const std::vector<Segment>& expected, int peak, double start_hour,
                             const std::vector<const Offering*>& terms, double on_demand_rate) {
    std::vector<int> chosen(static_cast<std::size_t>(peak) + 1, -1);
    for (int layer = 1; layer <= peak; ++layer) {
        double best = 0;
        for (std::size_t t = 0; t < terms.size(); ++t) {
            const double hours = TermHoursOf(*terms[t]);
            const double used = LayerHours(expected, layer, start_hour, start_hour + hours);
            const double saving = used * on_demand_rate - hours * terms[t]->price.usd_per_hour;
            if (saving > best) {
                best = saving;
                chosen[static_cast<std::size_t>(layer)] = static_cast<int>(t);
            }
        }
    }
    return chosen;
}

// The group's lines: per term offered, the layers that chose it, judged under every what-if.
void AddLines(const Catalog& catalog, const Group& g, const CommitmentRequest& request,
              CommitmentPlan& plan) {
    const double slip_hours = request.slip_days * kHoursPerDay;
    std::vector<std::vector<Segment>> segments;
    segments.reserve(kVariants.size());
    for (Variant v : kVariants) segments.push_back(SegmentsOf(g, v, slip_hours));
    std::vector<const Offering*> terms;
    for (PriceType type : {PriceType::kCommit3y, PriceType::kCommit1y}) {
        const Offering* o = Sibling(catalog, *g.on_demand, type);
        if (o != nullptr && o->price.usd_per_hour > 0) terms.push_back(o);
    }
    plan.demand.push_back(DemandOf(g, segments.front(), terms));
    const double od = g.on_demand->price.usd_per_hour;
    const std::vector<int> chosen = ChooseTerms(segments.front(), plan.demand.back().peak_instances,
                                                plan.start_hour, terms, od);
    for (std::size_t t = 0; t < terms.size(); ++t) {
        std::vector<int> layers;
        for (std::size_t layer = 1; layer < chosen.size(); ++layer) {
            if (chosen[layer] == static_cast<int>(t)) layers.push_back(static_cast<int>(layer));
        }
        if (layers.empty()) continue;
        CommitmentLine line;
        line.on_demand = g.on_demand;
        line.commitment = terms[t];
        line.term_hours = TermHoursOf(*terms[t]);
        line.instances = static_cast<int>(layers.size());
        line.start_hour = plan.start_hour;
        line.on_demand_usd_per_hour = od;
        line.commit_usd_per_hour = terms[t]->price.usd_per_hour;
        line.break_even_utilisation = line.commit_usd_per_hour / od;
        line.commitment_cost_usd = line.instances * line.term_hours * line.commit_usd_per_hour;
        line.expected = OutcomeOf(segments[0], layers, line);
        line.p10_duration = OutcomeOf(segments[1], layers, line);
        line.p90_duration = OutcomeOf(segments[2], layers, line);
        line.slipped = OutcomeOf(segments[3], layers, line);
        line.months = MonthsOf(segments[0], layers, line);
        plan.lines.push_back(line);
    }
}

Assumptions CommitmentAssumptions(const CommitmentRequest& request) {
    return {
        {"commitment.term_hours_1y", kCommit1yTermHours, "h",
         "Hours in a 1-year reservation or committed-use term",
         "Amazon EC2 User Guide, Reserved Instances: a year is 31,536,000 seconds (365 days)"},
        {"commitment.term_hours_3y", kCommit3yTermHours, "h",
         "Hours in a 3-year reservation or committed-use term",
         "Amazon EC2 User Guide, Reserved Instances: three years are 94,608,000 seconds (1,095 "
         "days)"},
        {"commitment.slip_days", request.slip_days, "d",
         "How much later every plan starts in the slipped what-if",
         request.slip_days_given ? "request"
                                 : "default: one quarter, the usual re-planning "
                                   "cadence; judgement"},
        {"commitment.training_duration_spread_fraction", kDefaultEfficiencySpreadFraction,
         "fraction",
         "A training run's p90 duration is (1 + this) x its expected duration and its p10 the "
         "expected / (1 + this), unless its saved plan echoes its own "
         "efficiency_spread_fraction (0.40 for a mixture-of-experts model); serving fleets run "
         "their fixed budget window",
         "the training plans' efficiency spread (published MFUs for one model and hardware "
         "differ by about +-20 % between frameworks; estimator-references); judgement"},
        {"commitment.demand_outside_plans", 0, "instances",
         "Instances assumed running outside the saved plans: none, so a term's hours the plans "
         "do not use count as unused",
         "definition: commitments from planned demand only"},
    };
}

}  // namespace

std::vector<OwnedMonthUse> OwnedUseByMonth(const Catalog& catalog,
                                           const std::vector<OwnedCapacity>& owned,
                                           const std::vector<OwnedDraw>& draws,
                                           const std::vector<PlannedDemand>& demand) {
    // Each owned offering's shape, so demand on its on-demand sibling counts against it.
    std::map<std::string, std::string> owned_of_shape;
    for (const OwnedCapacity& c : owned) {
        if (auto o = catalog.FindOffering(c.offering_id); o.ok()) {
            owned_of_shape.emplace(ShapeKey(o.value()), c.offering_id);
        }
    }
    std::vector<OwnedCapacity> planned;
    for (const PlannedDemand& d : demand) {
        if (d.offering == nullptr || d.end_hour <= d.start_hour) continue;
        auto it = owned_of_shape.find(ShapeKey(*d.offering));
        if (it == owned_of_shape.end()) continue;
        // As an owned entry's part (its hours set), so OwnedHoursByMonth splits it by month.
        const auto day = [](double hour) {
            return IsoDateFromDays(static_cast<long long>(std::floor(hour / kHoursPerDay)));
        };
        planned.push_back({it->second, d.nodes, day(d.start_hour), day(d.end_hour + kHoursPerDay),
                           0, d.start_hour, d.end_hour});
    }
    const auto planned_by_month = OwnedHoursByMonth(planned);
    std::vector<OwnedMonthUse> out;
    for (const auto& [month, offerings] : OwnedHoursByMonth(owned)) {
        for (const auto& [offering_id, reserved] : offerings) {
            OwnedMonthUse use{month, offering_id, reserved,     0,           0, 0, std::nullopt,
                              0,     0,           std::nullopt, std::nullopt};
            for (const OwnedDraw& d : draws) {
                auto h = d.instance_hours_by_month.find(month);
                if (IdKey(d.offering_id) == IdKey(offering_id) &&
                    h != d.instance_hours_by_month.end()) {
                    use.held_instance_hours += h->second;
                }
            }
            use.held_instance_hours = StatedOwnedHours(use.held_instance_hours);
            if (auto m = planned_by_month.find(month); m != planned_by_month.end()) {
                if (auto p = m->second.find(offering_id); p != m->second.end()) {
                    use.planned_instance_hours = p->second;
                }
            }
            use.utilisation = reserved > 0 ? use.held_instance_hours / reserved : 0;
            if (use.planned_instance_hours > 0) {
                use.coverage = use.held_instance_hours / use.planned_instance_hours;
            }
            out.push_back(std::move(use));
        }
    }
    return out;
}

const char* TermName(double term_hours) {
    return term_hours >= kCommit3yTermHours ? "3y" : "1y";
}

CommitmentPlan RecommendCommitments(const Catalog& catalog, const CommitmentRequest& request) {
    CommitmentPlan plan;
    plan.assumptions = CommitmentAssumptions(request);
    std::vector<Group> groups = GroupsOf(catalog, request, plan);
    if (request.start_hour) {
        plan.start_hour = *request.start_hour;
    } else if (!groups.empty()) {
        plan.start_hour = groups.front().demand.front()->start_hour;
        for (const Group& g : groups) {
            for (const PlannedDemand* d : g.demand)
                plan.start_hour = std::min(plan.start_hour, d->start_hour);
        }
    }
    for (const Group& g : groups) AddLines(catalog, g, request, plan);
    for (const CommitmentLine& line : plan.lines) {
        plan.commitment_cost_usd += line.commitment_cost_usd;
        plan.expected_saving_usd += line.expected.saving_usd;
        plan.slipped_saving_usd += line.slipped.saving_usd;
    }
    return plan;
}

}  // namespace gpucost::pricing::plan
