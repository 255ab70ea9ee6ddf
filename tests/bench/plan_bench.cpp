// plan_bench: time of a full training plan (POST /v1/plans/training's computation: every
// matching offering x node count estimated and priced, Pareto front, page) over the
// embedded catalog, then over the catalog copied 2x and 4x, once with the copies sharing
// hardware shapes (the usual case: more regions and price types of the same instances) and
// once with every copy a new shape (worst case: every copy needs its own estimates).
// Usage: plan_bench [iterations]   (build in Release: cmake --preset release)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pricing/in_memory_catalog.hpp"
#include "pricing/plan/training_plan.hpp"
#include "service/app/catalog_factory.hpp"

namespace plan = gpucost::pricing::plan;
using gpucost::pricing::InMemoryCatalog;
using gpucost::pricing::Offering;

namespace {

std::shared_ptr<const InMemoryCatalog> Copies(const InMemoryCatalog& base, int copies,
                                              bool new_shapes) {
    std::vector<Offering> offerings;
    for (int c = 0; c < copies; ++c) {
        for (Offering o : base.Offerings()) {
            if (c > 0) {
                o.id += "-copy" + std::to_string(c);
                if (new_shapes) {
                    // A slightly different network makes a distinct hardware shape.
                    o.scale_out_gbit_per_s = o.scale_out_gbit_per_s.value_or(100.0) + 0.5 * c;
                }
            }
            offerings.push_back(std::move(o));
        }
    }
    auto built =
        InMemoryCatalog::Build(base.Accelerators(), std::move(offerings), "bench", "bench", 0);
    if (!built.ok()) {
        std::fprintf(stderr, "catalog copy failed: %s\n", built.error().message.c_str());
        std::exit(1);
    }
    return built.value();
}

struct Timing {
    double median_ms = 0;
    double min_ms = 0;
    plan::TrainingPlan last;
};

Timing TimePlan(const plan::TrainingPlanRequest& request, const InMemoryCatalog& catalog,
                const gpucost::pricing::PlanReference& reference, int iterations) {
    std::vector<double> ms;
    Timing t;
    for (int i = 0; i < iterations; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        auto result = plan::PlanTraining(request, catalog, reference);
        auto t1 = std::chrono::steady_clock::now();
        if (!result.ok()) {
            std::fprintf(stderr, "plan failed: %s\n", result.error().message.c_str());
            std::exit(1);
        }
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        t.last = std::move(result).value();
    }
    if (ms.empty()) {
        return t;
    }
    std::sort(ms.begin(), ms.end());
    t.median_ms = ms[ms.size() / 2];
    t.min_ms = ms.front();
    return t;
}

void Print(const char* label, const Timing& t, double base_ms) {
    std::printf(
        "%-34s %6zu offerings %4zu shapes %5zu estimates %6zu options  median %8.3f ms"
        "  min %8.3f ms  x%.2f\n",
        label, t.last.offerings_considered, t.last.hardware_shapes, t.last.estimates,
        t.last.total_count, t.median_ms, t.min_ms, t.median_ms / base_ms);
}

}  // namespace

int main(int argc, char** argv) {
    int iterations = argc > 1 ? std::atoi(argv[1]) : 50;
    iterations = std::max(iterations, 1);
    auto catalog = gpucost::app::LoadEmbeddedCatalog();
    if (!catalog.ok()) {
        std::fprintf(stderr, "embedded catalog: %s\n", catalog.error().message.c_str());
        return 1;
    }
    // The planning session of docs/planning.md: a 7B model on 1T tokens in bf16, whole catalog,
    // every node count up to the default 4096 accelerators.
    plan::TrainingPlanRequest request;
    request.workload.model.params_b = 7;
    request.workload.tokens_b = 1000;
    request.limit = 20;
    std::printf(
        "plan_bench: 7B params, 1T tokens, bf16, all offerings, up to %d accelerators, "
        "%d iterations\n",
        plan::kDefaultMaxPlanAccelerators, iterations);
    const InMemoryCatalog& base = *catalog.value();
    auto reference = gpucost::app::LoadEmbeddedPlanReference(base);
    if (!reference.ok()) {
        std::fprintf(stderr, "embedded plan reference: %s\n", reference.error().message.c_str());
        return 1;
    }
    const gpucost::pricing::PlanReference& ref = reference.value();
    Timing one = TimePlan(request, base, ref, iterations);
    Print("embedded catalog", one, one.median_ms);
    // The session's constraints (720 h, $150K, on-demand and spot): every option's deadline and
    // budget probabilities, spot ones through their bounds or the lost-time distribution.
    plan::TrainingPlanRequest constrained = request;
    constrained.constraints.deadline_hours = 720;
    constrained.constraints.budget_usd = 150000;
    constrained.constraints.price_types = {gpucost::pricing::PriceType::kOnDemand,
                                           gpucost::pricing::PriceType::kSpot};
    Print("embedded, deadline and budget", TimePlan(constrained, base, ref, iterations),
          one.median_ms);
    for (int copies : {2, 4}) {
        auto same = Copies(base, copies, false);
        Print((std::to_string(copies) + "x, same shapes").c_str(),
              TimePlan(request, *same, ref, iterations), one.median_ms);
        auto fresh = Copies(base, copies, true);
        Print((std::to_string(copies) + "x, every copy a new shape").c_str(),
              TimePlan(request, *fresh, ref, iterations), one.median_ms);
    }
    return 0;
}
