// Stages 1 and 2 of a training plan: which offerings, and each hardware shape estimated once
// per node count.

#include <algorithm>
#include <optional>

#include "pricing/estimate/training.hpp"
#include "pricing/plan/training_stages.hpp"

namespace gpucost::pricing::plan::training_stages {
namespace {

// The default ladder stops once doubling the nodes speeds the run up by less than this:
// beyond that point every larger count costs about twice as much for (almost) nothing.
constexpr double kMinDoublingSpeedup = 1.05;

template <typename T>
bool Allowed(const std::vector<T>& list, const T& value) {
    return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

// Price types a job plan considers when the request names none: those billed for the hours
// used (or a short block). Commitments bill a whole term and must be asked for.
bool ConsideredByDefault(PriceType type) {
    return type == PriceType::kOnDemand || type == PriceType::kSpot ||
           type == PriceType::kCapacityBlock;
}

enum class Skip { kPrecision, kFit, kWorkload };

// Which estimator failures mean "this shape/count cannot run it" rather than "the workload
// is wrong": cluster size, layout and batch problems are per count; precision per shape.
Skip Classify(const Error& error) {
    const std::string& f = error.field;
    if (f == "/precision") {
        return Skip::kPrecision;
    }
    if (f.rfind("/hardware", 0) == 0 || f.rfind("/parallelism", 0) == 0 ||
        f == "/global_batch_tokens") {
        return Skip::kFit;
    }
    return Skip::kWorkload;
}

// Node counts for a shape: the caller's list, or the default ladder, within the accelerator
// bounds and the shape's capacity.
// `capped` (optional) says whether the capacity removed every count.
std::vector<int> NodeCountsFor(const TrainingPlanRequest& request, int per_node,
                               int max_instances, bool* capped = nullptr) {
    const TrainingPlanConstraints& c = request.constraints;
    const int max_total_accelerators = c.max_total_accelerators.value_or(kDefaultMaxPlanAccelerators);
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
    if (capped != nullptr) {
        *capped = !out.empty() && out.front() > max_instances;
    }
    out.erase(std::remove_if(out.begin(), out.end(), [&](int n) { return n > max_instances; }),
              out.end());
    return out;
}

// An accelerator of the catalog with the workloads the reference allows it.
struct AcceleratorInfo {
    std::string id;
    Result<Accelerator> accelerator;
    AcceleratorWorkloads workloads;
};

// The catalog's accelerators, each looked up once per plan: offerings of one accelerator are
// many (regions, price types), and a lookup copies the whole record.
class AcceleratorLookup {
public:
    AcceleratorLookup(const Catalog& catalog, const PlanReference& reference)
        : catalog_(catalog), reference_(reference) {}

    const AcceleratorInfo& Of(const std::string& id) {
        for (const AcceleratorInfo& known : known_) {
            if (known.id == id) return known;
        }
        AcceleratorInfo info{id, catalog_.FindAccelerator(id), {}};
        if (info.accelerator.ok()) info.workloads = reference_.WorkloadsOf(info.accelerator.value());
        known_.push_back(std::move(info));
        return known_.back();
    }

private:
    const Catalog& catalog_;
    const PlanReference& reference_;
    std::vector<AcceleratorInfo> known_;
};

}  // namespace

Tally::Tally() {
    for (const char* reason : {"filtered", "price_type_not_requested", "not_for_training",
                               "precision_unsupported", "does_not_fit", "over_capacity",
                               "spot_impractical"}) {
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
    for (const Offering& o : catalog.Offerings()) {
        if (!Allowed(c.providers, o.provider) || !Allowed(c.regions, o.region) ||
            !Allowed(c.accelerators, o.accelerator)) {
            tally.Add("filtered");
            continue;
        }
        if (c.price_types.empty() ? !ConsideredByDefault(o.price_type)
                                  : !Allowed(c.price_types, o.price_type)) {
            if (c.price_types.empty()) {
                tally.Add("price_type_not_requested");
                tally.Example("price_type_not_requested",
                              "commitments (commit_1y, commit_3y) bill the whole term whether "
                              "used or not; name them in constraints.price_types to see them");
            } else {
                tally.Add("filtered");
            }
            continue;
        }
        const AcceleratorInfo& info = accelerators.Of(o.accelerator);
        if (!info.accelerator.ok()) {
            tally.Add("filtered");
            continue;
        }
        if (!info.workloads.training) {
            tally.Add("not_for_training");
            tally.Example("not_for_training",
                          info.accelerator.value().name + " is offered for " +
                              WorkloadsText(info.workloads) + " only (" + info.workloads.source +
                              ")");
            continue;
        }
        ++out.offerings_considered;
        CandidateOffering candidate{&o, reference.CapacityOf(o)};
        ShapeKey key{o.accelerator, o.accelerator_count, o.scale_out_gbit_per_s.value_or(-1),
                     !candidate.capacity.cluster};
        if (key.independent_hosts) {
            key.scale_out = kIndependentHostsGbitPerS;
        }
        ShapeGroup& group = out.shapes[key];
        group.max_instances = group.offerings.empty()
                                  ? candidate.capacity.max_instances
                                  : std::max(group.max_instances, candidate.capacity.max_instances);
        group.offerings.push_back(candidate);
    }
    return out;
}

Result<ShapeEstimates> EstimateShapes(const TrainingPlanRequest& request, const Catalog& catalog,
                                      const Candidates& candidates, Tally& tally) {
    ShapeEstimates out;
    // The search runs without building assumption lists; the explain stage re-runs one
    // cluster with them for the workload-level echo.
    estimate::TrainingRequest workload = request.workload;
    workload.with_assumptions = false;
    const bool default_ladder = request.constraints.node_counts.empty();
    // The workload's model is derived once for all clusters, and one estimator keeps the
    // per-layer costs each accelerator shares across its node counts and shapes. A model
    // that does not derive keeps the per-cluster call, which reports its error in the
    // estimator's own order.
    const Result<estimate::ResolvedModel> model = estimate::DeriveModel(workload.model);
    std::optional<estimate::TrainingEstimator> estimator;
    if (model.ok()) estimator.emplace(workload, model.value());
    auto estimate_on = [&](const estimate::ClusterSpec& cluster) {
        return estimator ? estimator->Estimate(cluster)
                         : estimate::EstimateTraining(workload, cluster);
    };

    // A single node never touches the scale-out network, so shapes differing only in it
    // share their one-node estimate.
    std::map<std::pair<std::string, int>, Result<estimate::TrainingEstimate>> one_node;

    for (const auto& [key, group] : candidates.shapes) {
        auto accelerator = catalog.FindAccelerator(key.accelerator);
        if (!accelerator.ok()) {
            tally.Add("filtered", group.offerings.size());
            continue;
        }
        std::vector<ShapeRun> runs;
        bool shape_unsupported = false;
        std::string shape_fit_example;
        bool capped = false;
        const std::vector<int> counts =
            NodeCountsFor(request, key.per_node, group.max_instances, &capped);
        if (capped) {
            tally.Add("over_capacity", group.offerings.size());
            tally.Example("over_capacity",
                          group.offerings.front().offering->id + ": one customer can get " +
                              std::to_string(group.max_instances) + " instances (" +
                              group.offerings.front().capacity.source + ")");
            continue;
        }
        // One cluster description per shape; only the count changes between node counts.
        estimate::ClusterSpec cluster;
        cluster.accelerator = std::move(accelerator).value();
        cluster.accelerators_per_node = key.per_node;
        if (key.scale_out >= 0) {
            cluster.scale_out_gbit_per_s_per_node = key.scale_out;
        }
        for (int nodes : counts) {
            cluster.accelerator_count = nodes * key.per_node;
            const std::pair<std::string, int> single{key.accelerator, key.per_node};
            auto cached = nodes == 1 ? one_node.find(single) : one_node.end();
            Result<estimate::TrainingEstimate> fresh = Error{};
            if (cached == one_node.end()) {
                ++out.estimates;
                fresh = estimate_on(cluster);
                if (nodes == 1) {
                    cached = one_node.emplace(single, fresh).first;
                }
            }
            const Result<estimate::TrainingEstimate>& e =
                cached != one_node.end() ? cached->second : fresh;
            if (!e.ok()) {
                const Skip skip = Classify(e.error());
                if (skip == Skip::kWorkload) {
                    return e.error();
                }
                if (skip == Skip::kPrecision) {
                    shape_unsupported = true;
                    tally.Example("precision_unsupported", e.error().message);
                    break;
                }
                if (runs.empty()) {
                    shape_fit_example = e.error().message;
                }
                if (e.error().field == "/global_batch_tokens") {
                    break;  // the batch cannot feed this many replicas, nor any larger count
                }
                continue;
            }
            const double hours = e.value().wall_clock_hours;
            const bool slow_gain = default_ladder && !runs.empty() &&
                                   runs.back().wall_clock_hours < hours * kMinDoublingSpeedup;
            runs.push_back({nodes, hours, e.value().mfu, e.value().parallelism});
            if (!out.first_cluster) {
                out.first_cluster = cluster;
            }
            if (slow_gain) {
                break;
            }
        }
        if (shape_unsupported) {
            tally.Add("precision_unsupported", group.offerings.size());
            continue;
        }
        if (runs.empty()) {
            tally.Add("does_not_fit", group.offerings.size());
            if (!shape_fit_example.empty()) {
                tally.Example("does_not_fit", shape_fit_example);
            }
            continue;
        }
        out.runs.emplace(key, std::move(runs));
    }
    return out;
}

}  // namespace gpucost::pricing::plan::training_stages
