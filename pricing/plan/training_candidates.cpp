// Stages 1 and 2 of a training plan: which offerings, and each hardware shape estimated once
// per node count.

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "pricing/calendar.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/plan/catalog_lookup.hpp"
#include "pricing/plan/price_trust.hpp"
#include "pricing/plan/training_stages.hpp"
#include "pricing/price_age.hpp"

namespace gpucost::pricing::plan::training_stages {
namespace {

// The default ladder stops once doubling the nodes speeds the run up by less than this twice
// in a row: beyond that point every larger count costs about twice as much for (almost)
// nothing. One flat step is not enough: over a slow network the layout search can gain
// nothing from 2 to 4 nodes and then 24 % from 4 to 8 (a pipeline across nodes replaces
// data parallelism), and stopping there would hide a plan that meets the deadline.
constexpr double kMinDoublingSpeedup = 1.05;
constexpr int kSlowDoublingsToStop = 2;

// Price types a job plan considers when the request names none: those billed for the hours
// used (or a short block). Commitments bill a whole term and must be asked for.
bool ConsideredByDefault(PriceType type) {
    return type == PriceType::kOnDemand || type == PriceType::kSpot ||
           type == PriceType::kCapacityBlock;
}

enum class Skip { kPrecision, kMode, kFit, kWorkload };

// Which estimator failures mean "this shape/count cannot run it" rather than "the workload
// is wrong": cluster size, layout and batch problems are per count; precision per shape.
Skip Classify(const Error& error) {
    const std::string& f = error.field;
    if (f == "/precision") {
        return Skip::kPrecision;
    }
    if (f == "/mode") {
        return Skip::kMode;  // the training mode's software does not run on this accelerator
    }
    if (f.rfind("/hardware", 0) == 0 || f.rfind("/parallelism", 0) == 0 ||
        f == "/global_batch_tokens") {
        return Skip::kFit;
    }
    return Skip::kWorkload;
}

// Whether any offering of the group sells `nodes` instances as one purchase (TPU slices come
// in fixed sizes; most offerings in any count up to their capacity).
bool AnySells(const ShapeGroup& group, int nodes) {
    return std::any_of(
        group.offerings.begin(), group.offerings.end(),
        [nodes](const CandidateOffering& c) { return c.capacity->SoldAsOne(nodes); });
}

// Node counts for a shape: the caller's list, or the default ladder, within the accelerator
// bounds, the sizes sold and the shape's capacity. `why_none` says what removed every count.
enum class NoCounts { kNone, kBounds, kSizes, kCapacity };
std::vector<int> NodeCountsFor(const TrainingPlanRequest& request, int per_node,
                               const ShapeGroup& group, NoCounts& why_none) {
    const TrainingPlanConstraints& c = request.constraints;
    const int max_total_accelerators =
        c.max_total_accelerators.value_or(kDefaultMaxPlanAccelerators);
    const int min_total_accelerators = c.min_total_accelerators.value_or(1);
    std::vector<int> out;
    if (c.node_counts.empty()) {
        out = CandidateNodeCounts(per_node, min_total_accelerators, max_total_accelerators);
    } else {
        std::vector<int> explicit_counts = c.node_counts;
        std::sort(explicit_counts.begin(), explicit_counts.end());
        explicit_counts.erase(std::unique(explicit_counts.begin(), explicit_counts.end()),
                              explicit_counts.end());
        for (int n : explicit_counts) {
            const long long accelerators = static_cast<long long>(n) * per_node;
            if (accelerators >= min_total_accelerators && accelerators <= max_total_accelerators) {
                out.push_back(n);
            }
        }
    }
    why_none = NoCounts::kNone;
    if (out.empty()) {
        why_none = NoCounts::kBounds;
        return out;
    }
    out.erase(std::remove_if(out.begin(), out.end(), [&](int n) { return !AnySells(group, n); }),
              out.end());
    if (out.empty()) {
        why_none = NoCounts::kSizes;
        return out;
    }
    out.erase(
        std::remove_if(out.begin(), out.end(), [&](int n) { return n > group.max_instances; }),
        out.end());
    if (out.empty()) {
        why_none = NoCounts::kCapacity;
    }
    return out;
}

// The tally's example for an accelerator offered for other workloads only.
std::string NotForTraining(const AcceleratorInfo& info) {
    return info.accelerator.value().name + " is offered for " + WorkloadsText(info.workloads) +
           " only (" + info.workloads.source + ")";
}

// Each offering's capacity, looked up once per (provider, instance type, price type): what
// PlanReference::CapacityOf matches on. At 20,000 offerings a lookup per offering (a
// case-insensitive scan of the rules and a copy of the record) was a fifth of a plan.
class CapacityLookup {
public:
    CapacityLookup(const PlanReference& reference, std::deque<OfferingCapacity>& store)
        : reference_(reference), store_(store) {}

    const OfferingCapacity& Of(const Offering& o) {
        const Key key{o.provider, o.instance_type, o.price_type};
        // Offerings sorted by id put one instance type's regions next to each other: most
        // ask for the record the offering before them got.
        if (last_ != nullptr && last_key_ == key) return *last_;
        auto [it, fresh] = known_.try_emplace(key, nullptr);
        if (fresh) {
            store_.push_back(reference_.CapacityOf(o));
            it->second = &store_.back();
        }
        last_key_ = key;
        last_ = it->second;
        return *last_;
    }

private:
    // Views of the catalog's own strings, which outlive the plan.
    using Key = std::tuple<std::string_view, std::string_view, PriceType>;
    const PlanReference& reference_;
    std::deque<OfferingCapacity>& store_;
    std::map<Key, const OfferingCapacity*> known_;
    Key last_key_;
    const OfferingCapacity* last_ = nullptr;
};

// Each offering's price age and state (StateOfPrice), worked out again only when its date,
// provider or estimated flag differs from the offering's before (neighbours mostly share
// them).
class PriceAges {
public:
    explicit PriceAges(std::string_view today) : today_(DaysFromIsoDate(today)) {}

    std::optional<long long> AgeOf(const Offering& o) {
        if (!as_of_known_ || o.price.as_of != as_of_text_) {
            as_of_known_ = true;
            as_of_text_ = o.price.as_of;
            as_of_ = DaysFromIsoDate(o.price.as_of);
        }
        return today_ && as_of_ ? std::optional<long long>(*today_ - *as_of_) : std::nullopt;
    }

    PriceState StateOf(const Offering& o, std::optional<long long> age_days) {
        const long long age = age_days.value_or(0);
        if (!state_known_ || provider_ != o.provider || has_age_ != age_days.has_value() ||
            age_ != age || estimated_ != o.price.as_of_estimated) {
            state_known_ = true;
            provider_ = o.provider;
            has_age_ = age_days.has_value();
            age_ = age;
            estimated_ = o.price.as_of_estimated;
            state_ = StateOfPrice(o, age_days);
        }
        return state_;
    }

private:
    // Views of the catalog's own strings, which outlive the plan.
    std::optional<long long> today_;
    bool as_of_known_ = false;
    std::string_view as_of_text_;
    std::optional<long long> as_of_;
    bool state_known_ = false;
    std::string_view provider_;
    bool has_age_ = false;
    long long age_ = 0;
    bool estimated_ = false;
    PriceState state_ = PriceState::kCurrent;
};

}  // namespace

Tally::Tally() {
    for (const char* reason :
         {"filtered", "price_type_not_requested", "not_for_training", "precision_unsupported",
          "mode_unsupported", "does_not_fit", "over_capacity", "size_not_sold", "spot_impractical",
          "over_max_wall_clock", "unverified_price", "price_too_old"}) {
        counts_.emplace_back(reason, 0);
    }
}

void Tally::Add(const std::string& reason, std::size_t count) {
    for (auto& [name, n] : counts_) {
        if (name == reason) {
            n += count;
            return;
        }
    }
    counts_.emplace_back(reason, count);
}

void Tally::Example(const std::string& reason, const std::string& text) {
    for (auto& [name, example] : examples_) {
        if (name == reason) {
            example = text;
            return;
        }
    }
    examples_.emplace_back(reason, text);
}

Candidates SelectCandidates(const TrainingPlanRequest& request, const Catalog& catalog,
                            const PlanReference& reference, Tally& tally) {
    const TrainingPlanConstraints& c = request.constraints;
    Candidates out;
    AcceleratorLookup accelerators(catalog, reference);
    CapacityLookup capacities(reference, out.capacities);
    PriceAges ages(request.today);
    const PriceTrust trust{c.verified_only, c.max_price_age_days, DaysFromIsoDate(request.today)};
    // Per offering only a hash (accelerator) and usually one compare (shape): offerings sorted
    // by id put one instance type's regions next to each other, so most share the shape of
    // the offering before them. Keys view the catalog's strings.
    std::unordered_map<std::string_view, AcceleratorInfo> infos;  // its nodes never move
    std::string_view last_accelerator;
    const AcceleratorInfo* last_info = nullptr;
    const ShapeKey* last_key = nullptr;
    ShapeGroup* last_group = nullptr;
    const AcceleratorInfo* not_for_training = nullptr;  // the tally's example: the last one
    const Geography geography{c.countries, c.continents};
    // Without these constraints (the usual full-catalog plan) no offering is looked at for
    // them; the counts of what is left out are added once at the end (the tally keeps its
    // reasons in a fixed order).
    const bool narrowed = !c.providers.empty() || !c.regions.empty() || !c.accelerators.empty() ||
                          !c.accelerator_families.empty() || !geography.Any();
    std::size_t filtered = 0;
    std::size_t not_requested = 0;
    for (const Offering& o : catalog.Offerings()) {
        if (narrowed && (!Allowed(c.providers, o.provider) || !Allowed(c.regions, o.region) ||
                         !Allowed(c.accelerators, o.accelerator) ||
                         (!c.accelerator_families.empty() &&
                          !Allowed(c.accelerator_families, AcceleratorFamily(o.accelerator))) ||
                         !reference.regions.Within(o.provider, o.region, geography))) {
            ++filtered;
            continue;
        }
        if (c.price_types.empty() ? !ConsideredByDefault(o.price_type)
                                  : !Allowed(c.price_types, o.price_type)) {
            if (c.price_types.empty()) {
                if (not_requested++ == 0) {
                    tally.Example("price_type_not_requested",
                                  "commitments (commit_1y, commit_3y) bill the whole term "
                                  "whether used or not; name them in constraints.price_types "
                                  "to see them");
                }
            } else {
                ++filtered;
            }
            continue;
        }
        if (auto distrust = DistrustedPrice(o, trust)) {
            tally.Add(distrust->reason);
            tally.Example(distrust->reason, distrust->example);
            continue;
        }
        // Neighbours mostly share their accelerator: the hash only when it changes.
        if (last_info == nullptr || last_accelerator != o.accelerator) {
            auto found = infos.find(o.accelerator);
            if (found == infos.end()) {
                found = infos.emplace(o.accelerator, accelerators.Of(o.accelerator)).first;
            }
            last_accelerator = o.accelerator;
            last_info = &found->second;
        }
        const AcceleratorInfo& info = *last_info;
        if (!info.accelerator.ok()) {
            ++filtered;
            continue;
        }
        if (!info.workloads.training) {
            tally.Add("not_for_training");
            if (not_for_training == nullptr) {
                tally.Example("not_for_training", NotForTraining(info));
            }
            not_for_training = &info;
            continue;
        }
        ++out.offerings_considered;
        CandidateOffering candidate;
        candidate.offering = &o;
        candidate.capacity = &capacities.Of(o);
        candidate.usd_per_hour = o.price.usd_per_hour;
        candidate.price_type = o.price_type;
        candidate.spot_rate_per_instance = SpotRate(o);
        candidate.price_age_days = ages.AgeOf(o);
        candidate.price_state = ages.StateOf(o, candidate.price_age_days);
        const bool independent_hosts = !candidate.capacity->cluster;
        const double scale_out =
            independent_hosts ? kIndependentHostsGbitPerS : o.scale_out_gbit_per_s.value_or(-1);
        if (last_key == nullptr || last_key->accelerator != o.accelerator ||
            last_key->per_node != o.accelerator_count || last_key->scale_out != scale_out ||
            last_key->independent_hosts != independent_hosts) {
            auto [it, fresh] = out.shapes.try_emplace(
                ShapeKey{o.accelerator, o.accelerator_count, scale_out, independent_hosts});
            last_key = &it->first;
            last_group = &it->second;
        }
        ShapeGroup& group = *last_group;
        if (group.offerings.empty()) {
            group.accelerator = info.accelerator.value();
        }
        const int max_instances = candidate.capacity->max_instances;
        group.max_instances =
            group.offerings.empty() ? max_instances : std::max(group.max_instances, max_instances);
        group.offerings.push_back(candidate);
    }
    if (not_for_training != nullptr) {
        tally.Example("not_for_training", NotForTraining(*not_for_training));
    }
    if (filtered > 0) tally.Add("filtered", filtered);
    if (not_requested > 0) tally.Add("price_type_not_requested", not_requested);
    return out;
}

namespace {

// What one shape's node-count ladder gave, before it is counted into the plan: the stage
// works shapes out independently (possibly on several threads), then folds the outcomes in
// shape order, so the plan is the same however the work was spread.
struct ShapeOutcome {
    enum class Kind {
        kOverCapacity,
        kOutsideBounds,  // no node count within min/max_total_accelerators
        kSizeNotSold,    // no node count asked is a size the offerings are sold in
        kPrecisionUnsupported,
        kModeUnsupported,  // the training mode's software does not run on the accelerator
        kDoesNotFit,
        kRuns,
        kError
    };
    Kind kind = Kind::kDoesNotFit;
    std::string example;  // over capacity, precision or fit: the tally's example text
    std::vector<ShapeRun> runs;
    std::optional<estimate::ClusterSpec> first_cluster;  // the cluster of the first run
    std::size_t estimates = 0;                           // estimator calls made
    Error error;                                         // kError: the workload's error
};

// Estimates of one workload, for shapes worked out one after another: the per-layer costs
// each accelerator shares (TrainingEstimator) and the one-node estimate that shapes differing
// only in their network share. Not shared between threads.
class ShapeEstimator {
public:
    ShapeEstimator(const estimate::TrainingRequest& workload,
                   const Result<estimate::ResolvedModel>& model)
        : workload_(workload) {
        // A model that does not derive keeps the per-cluster call, which reports its error
        // in the estimator's own order.
        if (model.ok()) estimator_.emplace(workload, model.value());
    }

    // The estimate of `cluster` (`nodes` nodes); `fresh` counts estimator calls.
    const Result<estimate::TrainingEstimate>& At(const ShapeKey& key, int nodes,
                                                 const estimate::ClusterSpec& cluster,
                                                 std::size_t& fresh) {
        if (nodes == 1) {
            const std::pair<std::string, int> single{key.accelerator, key.per_node};
            auto cached = one_node_.find(single);
            if (cached == one_node_.end()) {
                ++fresh;
                cached = one_node_.emplace(single, Run(cluster)).first;
            }
            return cached->second;
        }
        ++fresh;
        last_ = Run(cluster);
        return last_;
    }

private:
    Result<estimate::TrainingEstimate> Run(const estimate::ClusterSpec& cluster) {
        return estimator_ ? estimator_->Estimate(cluster)
                          : estimate::EstimateTraining(workload_, cluster);
    }

    const estimate::TrainingRequest& workload_;
    std::optional<estimate::TrainingEstimator> estimator_;
    std::map<std::pair<std::string, int>, Result<estimate::TrainingEstimate>> one_node_;
    Result<estimate::TrainingEstimate> last_ = Error{};
};

// One shape over its node-count ladder (capped by its capacity); the ladder stops at a
// precision the accelerator lacks, a batch too small for more replicas, or (default ladder)
// once doubling the nodes gains too little.
ShapeOutcome EstimateShape(const TrainingPlanRequest& request, const ShapeKey& key,
                           const ShapeGroup& group, ShapeEstimator& estimates) {
    using Kind = ShapeOutcome::Kind;
    ShapeOutcome out;
    NoCounts why_none = NoCounts::kNone;
    const std::vector<int> counts = NodeCountsFor(request, key.per_node, group, why_none);
    const CandidateOffering& first = group.offerings.front();
    const TrainingPlanConstraints& c = request.constraints;
    switch (why_none) {
        case NoCounts::kNone:
            break;
        case NoCounts::kBounds:
            out.kind = Kind::kOutsideBounds;
            out.example =
                first.offering->id + ": " + std::to_string(key.per_node) +
                " accelerators per instance; no " +
                (c.node_counts.empty() ? "instance count" : "node_counts entry") +
                " gives a total within min_total_accelerators-max_total_accelerators (" +
                std::to_string(c.min_total_accelerators.value_or(1)) + "-" +
                std::to_string(c.max_total_accelerators.value_or(kDefaultMaxPlanAccelerators)) +
                ")";
            return out;
        case NoCounts::kSizes:
            out.kind = Kind::kSizeNotSold;
            out.example = first.offering->id + ": sold as " + first.capacity->SizesText() +
                          " instances (" + first.capacity->source + ")";
            return out;
        case NoCounts::kCapacity:
            out.kind = Kind::kOverCapacity;
            out.example = first.offering->id + ": one customer can get " +
                          std::to_string(group.max_instances) + " instances (" +
                          first.capacity->source + ")";
            return out;
    }
    const bool default_ladder = request.constraints.node_counts.empty();
    int slow_doublings = 0;  // in a row, at the top of the ladder
    // One cluster description per shape; only the count changes between node counts.
    estimate::ClusterSpec cluster;
    cluster.accelerator = group.accelerator;
    cluster.accelerators_per_node = key.per_node;
    if (key.scale_out >= 0) {
        cluster.scale_out_gbit_per_s_per_node = key.scale_out;
    }
    for (int nodes : counts) {
        if (request.deadline.Passed()) {
            break;  // the plan checks the deadline once the threads are joined
        }
        cluster.accelerator_count = nodes * key.per_node;
        const Result<estimate::TrainingEstimate>& e =
            estimates.At(key, nodes, cluster, out.estimates);
        if (!e.ok()) {
            const Skip skip = Classify(e.error());
            if (skip == Skip::kWorkload) {
                out.kind = Kind::kError;
                out.error = e.error();
                return out;
            }
            if (skip == Skip::kPrecision || skip == Skip::kMode) {
                out.kind =
                    skip == Skip::kMode ? Kind::kModeUnsupported : Kind::kPrecisionUnsupported;
                out.example = e.error().message;
                return out;
            }
            if (out.runs.empty()) {
                out.example = e.error().message;
            }
            if (e.error().field == "/global_batch_tokens") {
                break;  // the batch cannot feed this many replicas, nor any larger count
            }
            continue;
        }
        const double hours = e.value().wall_clock_hours;
        const bool slow_gain = default_ladder && !out.runs.empty() &&
                               out.runs.back().wall_clock_hours < hours * kMinDoublingSpeedup;
        slow_doublings = slow_gain ? slow_doublings + 1 : 0;
        out.runs.push_back({nodes, hours, e.value().mfu, e.value().parallelism});
        if (!out.first_cluster) {
            out.first_cluster = cluster;
        }
        if (slow_doublings >= kSlowDoublingsToStop) {
            break;
        }
    }
    out.kind = out.runs.empty() ? Kind::kDoesNotFit : Kind::kRuns;
    return out;
}

// Shapes that share an accelerator and its count per node come next to each other in the
// candidates' order; such a group shares its one-node estimate, so it is worked out by one
// thread. Returns the index of each group's first shape, and the end.
std::vector<std::size_t> GroupStarts(const std::vector<const ShapeKey*>& keys) {
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (i == 0 || keys[i]->accelerator != keys[i - 1]->accelerator ||
            keys[i]->per_node != keys[i - 1]->per_node) {
            starts.push_back(i);
        }
    }
    starts.push_back(keys.size());
    return starts;
}

// Every shape's outcome, in the candidates' order. With `threads` > 1 the groups of shapes
// are handed out to that many threads; each thread keeps its own estimator.
std::vector<ShapeOutcome> EstimateAllShapes(const TrainingPlanRequest& request,
                                            const Candidates& candidates,
                                            const estimate::TrainingRequest& workload,
                                            const Result<estimate::ResolvedModel>& model) {
    std::vector<const ShapeKey*> keys;
    std::vector<const ShapeGroup*> groups;
    for (const auto& [key, group] : candidates.shapes) {
        keys.push_back(&key);
        groups.push_back(&group);
    }
    std::vector<ShapeOutcome> outcomes(keys.size());
    const std::vector<std::size_t> starts = GroupStarts(keys);
    const std::size_t group_count = starts.size() - 1;
    std::atomic<std::size_t> next_group{0};
    auto work = [&] {
        ShapeEstimator estimates(workload, model);
        for (std::size_t g = next_group++; g < group_count && !request.deadline.Passed();
             g = next_group++) {
            for (std::size_t i = starts[g]; i < starts[g + 1]; ++i) {
                outcomes[i] = EstimateShape(request, *keys[i], *groups[i], estimates);
            }
        }
    };
    // Thread h runs work() and keeps what it throws in failures[h] (0: this thread), so
    // every thread is joined before anything is rethrown.
    const std::size_t thread_count = std::min<std::size_t>(
        static_cast<std::size_t>(std::clamp(request.estimate_threads, 1, kMaxPlanEstimateThreads)),
        std::max<std::size_t>(group_count, 1));
    std::vector<std::exception_ptr> failures(thread_count);
    auto guarded = [&](std::size_t h) {
        try {
            work();
        } catch (...) {
            failures[h] = std::current_exception();
        }
    };
    std::vector<std::thread> threads;
    for (std::size_t h = 1; h < thread_count; ++h) {
        threads.emplace_back(guarded, h);
    }
    guarded(0);
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& failure : failures) {
        if (failure) std::rethrow_exception(failure);
    }
    return outcomes;
}

}  // namespace

Result<ShapeEstimates> EstimateShapes(const TrainingPlanRequest& request,
                                      const Candidates& candidates, Tally& tally) {
    using Kind = ShapeOutcome::Kind;
    // The search runs without building assumption lists; the explain stage re-runs one
    // cluster with them for the workload-level echo. The workload's model is derived once
    // for all clusters.
    estimate::TrainingRequest workload = request.workload;
    workload.with_assumptions = false;
    workload.deadline = request.deadline;
    const Result<estimate::ResolvedModel> model = estimate::DeriveModel(workload.model);
    std::vector<ShapeOutcome> outcomes = EstimateAllShapes(request, candidates, workload, model);
    // A thread that met the deadline left its shapes unworked: the outcomes are no plan.
    if (auto time_left = request.deadline.Check(); !time_left.ok()) {
        return time_left.error();
    }

    // Counted in the candidates' order: the first workload error is the plan's error, and
    // the tally's examples are those of the first shapes.
    ShapeEstimates out;
    out.mixture_of_experts = model.ok() && model.value().IsMoe();
    std::size_t i = 0;
    for (const auto& [key, group] : candidates.shapes) {
        ShapeOutcome& o = outcomes[i++];
        out.estimates += o.estimates;
        if (!out.first_cluster && o.first_cluster) {
            out.first_cluster = std::move(o.first_cluster);  // the first cluster that ran
        }
        const std::size_t offerings = group.offerings.size();
        switch (o.kind) {
            case Kind::kError:
                return o.error;
            case Kind::kOverCapacity:
                tally.Add("over_capacity", offerings);
                tally.Example("over_capacity", o.example);
                break;
            case Kind::kOutsideBounds:
                tally.Add("filtered", offerings);
                tally.Example("filtered", o.example);
                break;
            case Kind::kSizeNotSold:
                tally.Add("size_not_sold", offerings);
                tally.Example("size_not_sold", o.example);
                break;
            case Kind::kModeUnsupported:
                tally.Example("mode_unsupported", o.example);
                tally.Add("mode_unsupported", offerings);
                break;
            case Kind::kPrecisionUnsupported:
                tally.Example("precision_unsupported", o.example);
                tally.Add("precision_unsupported", offerings);
                break;
            case Kind::kDoesNotFit:
                tally.Add("does_not_fit", offerings);
                if (!o.example.empty()) {
                    tally.Example("does_not_fit", o.example);
                }
                break;
            case Kind::kRuns:
                out.runs.emplace(key, std::move(o.runs));
                break;
        }
    }
    return out;
}

}  // namespace gpucost::pricing::plan::training_stages
