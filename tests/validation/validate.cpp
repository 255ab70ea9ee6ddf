// gpucost_validate: runs the estimator over every row of tests/data/published-runs.csv and
// prints predicted vs published per row, then the median and 90th-percentile absolute error
// per group. With --check it exits 1 when a group misses its accuracy target:
//   throughput (per-GPU TFLOP/s) and iteration (per-iteration time): median <= 10 %,
//   worst <= 25 %; end_to_end: worst <= 20 %; inference: worst <= 30 %; finetune_memory
//   (peak memory of LoRA/QLoRA/full fine-tuning runs): worst <= 15 %.
//
// A row whose `outlier_reason` column is filled (a documented miss, see tests/data/README.md)
// counts towards its group's median but not its worst case; it must stay within
// kOutlierBound instead, so that it cannot drift unnoticed.
// Usage: gpucost_validate [--check] <published-runs.csv> <schema/seed directory>
//        gpucost_validate --frontier <directory of *.jsonl> (frontier.hpp; embedded catalog)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "pricing/catalog_loader.hpp"
#include "pricing/csv.hpp"
#include "pricing/estimate/inference.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/model_library.hpp"
#include "pricing/training_recipe.hpp"
#include "service/app/catalog_factory.hpp"
#include "tests/validation/frontier.hpp"

namespace est = gpucost::pricing::estimate;
using gpucost::pricing::Accelerator;
using gpucost::pricing::Precision;

namespace {

std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Row {
    std::map<std::string, std::string> f;
    const std::string& operator[](const std::string& k) const {
        static const std::string empty;
        auto it = f.find(k);
        return it == f.end() ? empty : it->second;
    }
    std::optional<int> Int(const std::string& k) const {
        const std::string& v = (*this)[k];
        if (v.empty()) return std::nullopt;
        return std::stoi(v);
    }
    std::optional<double> Num(const std::string& k) const {
        const std::string& v = (*this)[k];
        if (v.empty()) return std::nullopt;
        return std::stod(v);
    }
};

struct Outcome {
    std::string id, group, metric;
    double published = 0, predicted = 0;
    std::string layout;
    std::string outlier_reason;
    bool upper_bound = false;  // published is a ceiling ("fits within")
    double Error() const {
        if (upper_bound && predicted <= published) return 0.0;
        return (predicted - published) / published;
    }
};

// The `inputs` column: further estimator inputs of a row as key=value pairs separated by
// ';' (list values separated by '|'), e.g.
// "experts=256;mode=qlora;lora_target_modules=q_proj|v_proj".
std::map<std::string, std::string> InputsOf(const Row& r) {
    std::map<std::string, std::string> out;
    std::stringstream ss(r["inputs"]);
    std::string part;
    while (std::getline(ss, part, ';')) {
        auto eq = part.find('=');
        if (eq != std::string::npos) out[part.substr(0, eq)] = part.substr(eq + 1);
    }
    return out;
}

std::optional<int> IntInput(const std::map<std::string, std::string>& in, const std::string& k) {
    auto it = in.find(k);
    if (it == in.end()) return std::nullopt;
    return std::stoi(it->second);
}

est::ModelSpec ModelOf(const Row& r) {
    est::ModelSpec m;
    m.params_b = r.Num("params_b");
    if (auto a = r.Num("active_params_b"); a && m.params_b && *a < *m.params_b)
        m.active_params_b = a;
    m.layers = r.Int("layers");
    m.hidden_size = r.Int("hidden_size");
    m.attention_heads = r.Int("attention_heads");
    m.kv_heads = r.Int("kv_heads");
    m.ffn_hidden_size = r.Int("ffn_hidden_size");
    m.vocab_size = r.Int("vocab_size");
    m.seq_len = r.Int("seq_len");
    if (!r["gated_mlp"].empty()) m.gated_mlp = r["gated_mlp"] == "true";
    const auto in = InputsOf(r);
    m.experts = IntInput(in, "experts");
    m.experts_per_token = IntInput(in, "experts_per_token");
    m.shared_experts = IntInput(in, "shared_experts");
    m.expert_ffn_hidden_size = IntInput(in, "expert_ffn_hidden_size");
    m.dense_layers = IntInput(in, "dense_layers");
    m.dense_ffn_hidden_size = IntInput(in, "dense_ffn_hidden_size");
    m.head_dim = IntInput(in, "head_dim");
    m.q_lora_rank = IntInput(in, "q_lora_rank");
    m.kv_lora_rank = IntInput(in, "kv_lora_rank");
    m.qk_nope_head_dim = IntInput(in, "qk_nope_head_dim");
    m.qk_rope_head_dim = IntInput(in, "qk_rope_head_dim");
    m.v_head_dim = IntInput(in, "v_head_dim");
    m.mtp_modules = IntInput(in, "mtp_modules");
    return m;
}

// Fine-tuning and schedule inputs of the `inputs` column; false (with a message) for a name
// the estimator does not know, which would otherwise drop out of the row unseen.
bool ApplyRunInputs(const Row& r, est::TrainingRequest& req, est::ParallelismRequest& pr) {
    const auto in = InputsOf(r);
    if (auto it = in.find("mode"); it != in.end()) {
        const auto mode = est::ParseTrainingMode(it->second);
        if (!mode) {
            std::fprintf(stderr, "%s: unknown mode %s\n", r["id"].c_str(), it->second.c_str());
            return false;
        }
        req.mode = *mode;
    }
    req.lora_rank = IntInput(in, "lora_rank");
    if (auto it = in.find("lora_target_modules"); it != in.end()) {
        std::vector<std::string> targets;
        std::stringstream ts(it->second);
        std::string t;
        while (std::getline(ts, t, '|')) targets.push_back(t);
        req.lora_target_modules = targets;
    }
    if (auto it = in.find("recompute_modules"); it != in.end()) {
        est::RecomputeModules modules;
        std::stringstream ms(it->second);
        std::string name;
        while (std::getline(ms, name, '|')) {
            const auto module = est::ParseRecomputeModule(name);
            if (!module) {
                std::fprintf(stderr, "%s: unknown recompute module %s\n", r["id"].c_str(),
                             name.c_str());
                return false;
            }
            modules.Add(*module);
        }
        pr.recompute_modules = modules;
        pr.recompute = est::Recompute::kSelective;
    }
    pr.expert = IntInput(in, "ep");
    pr.virtual_stages = IntInput(in, "vp");  // interleaved chunks per stage, where published
    // A run that documents a DualPipe-style schedule gets the estimator's general figure for
    // the hidden share of its expert all-to-all, never a per-row number.
    if (in.count("expert_overlap") && in.at("expert_overlap") == "dualpipe") {
        req.expert_overlap_fraction = est::kExpertOverlapFractionDualPipe;
    }
    return true;
}

// The model library and its training recipes, read from the seed directory.
struct Library {
    gpucost::pricing::ModelLibrary models;
    gpucost::pricing::TrainingRecipes recipes;
};

// A row naming its model by library id (`inputs` library_model=ID) is estimated as a user sends
// it: the id, the tokens and the hardware, with the library's training recipe filling the
// rest. false (with a message) when the id or the recipe files are not usable.
bool AsSentByName(const Row& r, const Library& lib, est::TrainingRequest& req) {
    const auto in = InputsOf(r);
    const gpucost::pricing::LibraryModel* m = lib.models.Find(in.at("library_model"));
    if (m == nullptr) {
        std::fprintf(stderr, "%s: unknown library model %s\n", r["id"].c_str(),
                     in.at("library_model").c_str());
        return false;
    }
    req.model = m->spec;
    req.tokens_b = r.Num("tokens_b").value_or(1.0);
    if (const auto* recipe = lib.recipes.Find(m->id)) {
        gpucost::pricing::ApplyTrainingRecipe(*recipe, {}, req);
    }
    return true;
}

Precision PrecisionOf(const Row& r) {
    const std::string& p = r["precision"];
    if (p.rfind("fp8", 0) == 0) return Precision::kFp8;
    if (p.rfind("fp32", 0) == 0) return Precision::kFp32;
    if (p.find("bf16") != std::string::npos) return Precision::kBf16;
    return Precision::kFp16;
}

std::string LayoutText(const est::ParallelLayout& l) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "t%d p%d d%d z%d %s mb%d v%d%s%s", l.tensor, l.pipeline, l.data,
                  l.zero_stage, est::RecomputeName(l.recompute), l.micro_batch_size,
                  l.virtual_stages, l.sequence_parallel ? " sp" : "",
                  l.expert > 1 ? (" ep" + std::to_string(l.expert)).c_str() : "");
    return buf;
}

// A training row as its columns describe the run: architecture, precision, batch, layout and
// the documented schedules; nullopt (with a message) for an input the estimator does not know.
std::optional<est::TrainingRequest> RequestFromColumns(const Row& r) {
    est::TrainingRequest req;
    req.model = ModelOf(r);
    req.precision = PrecisionOf(r);
    req.tokens_b = r.Num("tokens_b").value_or(1.0);
    if (auto gbs = r.Num("global_batch_seqs")) req.global_batch_tokens = *gbs * *r.Int("seq_len");
    est::ParallelismRequest pr;
    pr.tensor = r.Int("tp");
    pr.pipeline = r.Int("pp");
    pr.data = r.Int("dp");
    pr.zero_stage = r.Int("zero_stage");
    pr.micro_batch_size = r.Int("micro_batch");
    if (!r["recompute"].empty()) pr.recompute = est::ParseRecompute(r["recompute"]);
    if (!r["sequence_parallel"].empty()) pr.sequence_parallel = r["sequence_parallel"] == "true";
    if (!ApplyRunInputs(r, req, pr)) return std::nullopt;
    req.parallelism = pr;
    if (!r["flash_attention"].empty()) req.flash_attention = r["flash_attention"] == "true";
    // A run that documents tensor-parallel communication overlap gets the estimator's
    // general figure for it, never a per-row number.
    if (r["tp_comm_overlap"] == "true")
        req.tp_overlap_fraction = est::kTpOverlapFractionWhenEnabled;
    return req;
}

// The model library and its training recipes from the seed directory; nullopt (with a
// message) when either does not load.
std::optional<Library> LoadLibrary(const std::string& seed_dir) {
    Library lib;
    auto models =
        gpucost::pricing::LoadModelLibrary(ReadFile(seed_dir + "/models.csv"), "models.csv");
    if (!models.ok()) {
        std::fprintf(stderr, "models: %s\n", models.error().message.c_str());
        return std::nullopt;
    }
    lib.models = models.value();
    auto recipes = gpucost::pricing::LoadTrainingRecipes(
        ReadFile(seed_dir + "/training_recipes.csv"), "training_recipes.csv");
    if (!recipes.ok()) {
        std::fprintf(stderr, "recipes: %s\n", recipes.error().message.c_str());
        return std::nullopt;
    }
    lib.recipes = recipes.value();
    return lib;
}

// A training row's published figure beside the estimate's; nullopt for an unknown metric.
std::optional<Outcome> TrainingOutcome(const Row& r, const est::TrainingEstimate& v,
                                       bool per_iteration) {
    const std::string& metric = r["metric"];
    Outcome o{r["id"], r["group"], metric, 0, 0, LayoutText(v.parallelism), "", false};
    if (metric == "hardware_tflops") {
        o.published = *r.Num("reported_tflops_per_gpu");
        o.predicted = v.hardware_tflops_per_accelerator;
    } else if (metric == "model_tflops") {
        o.published = *r.Num("reported_tflops_per_gpu");
        o.predicted = v.achieved_tflops_per_accelerator;
    } else if (metric == "iteration_s" && per_iteration) {
        o.published = *r.Num("wall_days") * 86400.0;
        o.predicted = v.step_time_s;
    } else if (metric == "wall_days_expected") {
        o.published = *r.Num("wall_days");
        o.predicted = v.wall_clock_hours / 24.0;
    } else if (metric == "memory_gb") {
        o.published = *r.Num("reported_memory_gb");
        o.predicted = v.memory_per_accelerator_gb;
    } else if (metric == "memory_gb_max") {
        // A published "fits within X GB": only a prediction above X is an error.
        o.published = *r.Num("reported_memory_gb");
        o.predicted = std::max(v.memory_per_accelerator_gb, 0.0);
        o.upper_bound = true;
    } else if (metric == "wall_days_ideal") {
        o.published = *r.Num("wall_days");
        o.predicted = v.ideal_wall_clock_hours / 24.0;
    } else {
        std::fprintf(stderr, "%s: unknown metric %s\n", r["id"].c_str(), metric.c_str());
        return std::nullopt;
    }
    o.outlier_reason = r["outlier_reason"];
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    bool check = false;
    std::vector<std::string> args;
    if (argc == 3 && std::string(argv[1]) == "--frontier") {
        auto embedded = gpucost::app::LoadEmbeddedCatalog();  // the catalog the service serves
        if (!embedded.ok()) {
            std::fprintf(stderr, "catalog: %s\n", embedded.error().message.c_str());
            return 2;
        }
        return gpucost::validation::RunFrontier(argv[2], *embedded.value());
    }
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--check")
            check = true;
        else
            args.push_back(a);
    }
    if (args.size() != 2) {
        std::fprintf(stderr, "usage: gpucost_validate [--check] <published-runs.csv> <seed dir>\n");
        return 2;
    }
    gpucost::pricing::CatalogCsv csv;
    csv.accelerators_csv = ReadFile(args[1] + "/accelerators.csv");
    csv.offerings_csv = ReadFile(args[1] + "/offerings.csv");
    csv.prices_csv = ReadFile(args[1] + "/prices.csv");
    auto catalog = gpucost::pricing::LoadCatalog(csv);
    if (!catalog.ok()) {
        std::fprintf(stderr, "catalog: %s\n", catalog.error().message.c_str());
        return 2;
    }
    auto lib = LoadLibrary(args[1]);
    if (!lib) return 2;
    auto records = gpucost::pricing::ParseCsv(ReadFile(args[0]), args[0]);
    if (!records.ok() || records.value().empty()) {
        std::fprintf(stderr, "cannot read %s\n", args[0].c_str());
        return 2;
    }
    const auto& header = records.value().front().fields;
    std::vector<Outcome> outcomes;
    int failures = 0;
    for (std::size_t i = 1; i < records.value().size(); ++i) {
        Row r;
        const auto& fields = records.value()[i].fields;
        for (std::size_t j = 0; j < header.size() && j < fields.size(); ++j)
            r.f[header[j]] = fields[j];
        auto acc = catalog.value()->FindAccelerator(r["gpu_id"]);
        if (!acc.ok()) {
            std::fprintf(stderr, "%s: unknown accelerator %s\n", r["id"].c_str(),
                         r["gpu_id"].c_str());
            ++failures;
            continue;
        }
        est::ClusterSpec cluster;
        cluster.accelerator = acc.value();
        cluster.accelerator_count = *r.Int("gpu_count");
        cluster.scale_up_gb_per_s = r.Num("scale_up_gb_per_s");
        const std::string& metric = r["metric"];
        if (r["kind"] == "train") {
            est::TrainingRequest req;
            if (InputsOf(r).count("library_model") != 0) {
                if (!AsSentByName(r, *lib, req)) {
                    ++failures;
                    continue;
                }
            } else if (auto from_columns = RequestFromColumns(r)) {
                req = std::move(*from_columns);
            } else {
                ++failures;
                continue;
            }
            const bool per_iteration = r["notes"].rfind("ONE ITERATION", 0) == 0;
            auto e = est::EstimateTraining(req, cluster);
            if (!e.ok()) {
                std::fprintf(stderr, "%s: %s (%s)\n", r["id"].c_str(), e.error().message.c_str(),
                             e.error().field.c_str());
                ++failures;
                continue;
            }
            auto o = TrainingOutcome(r, e.value(), per_iteration);
            if (!o) {
                ++failures;
                continue;
            }
            outcomes.push_back(*o);
        } else {
            est::InferenceRequest req;
            req.model = ModelOf(r);
            // Inputs of an expert-parallel serving row: its precision and EP degree (the
            // replica is then all gpu_count accelerators, attention data parallel).
            const auto in = InputsOf(r);
            req.precision = in.count("precision") != 0
                                ? gpucost::pricing::ParsePrecision(in.at("precision"))
                                      .value_or(Precision::kFp16)
                                : Precision::kFp16;
            req.expert_parallel = IntInput(in, "ep");
            req.batch_size = *r.Int("batch");
            req.input_tokens = *r.Int("input_tokens");
            req.output_tokens = *r.Int("output_tokens");
            if (!req.expert_parallel) req.tensor_parallel = r.Int("tp");
            if (!req.model.seq_len) req.model.seq_len = req.input_tokens + req.output_tokens;
            cluster.accelerator_count =
                req.expert_parallel ? *req.expert_parallel : *req.tensor_parallel;
            auto e = est::EstimateInference(req, cluster);
            if (!e.ok()) {
                std::fprintf(stderr, "%s: %s (%s)\n", r["id"].c_str(), e.error().message.c_str(),
                             e.error().field.c_str());
                ++failures;
                continue;
            }
            const auto& v = e.value();
            std::stringstream ms(metric);
            std::string part;
            while (std::getline(ms, part, ';')) {
                auto eq = part.find('=');
                std::string name = part.substr(0, eq);
                Outcome o{r["id"],
                          r["group"],
                          name,
                          std::stod(part.substr(eq + 1)),
                          0,
                          (v.expert_parallel > 1 ? "ep" + std::to_string(v.expert_parallel)
                                                 : "tp" + std::to_string(v.tensor_parallel)) +
                              " batch " + r["batch"] + " in " + r["input_tokens"] + " out " +
                              r["output_tokens"],
                          "",
                          false};
                if (name == "ttft_ms")
                    o.predicted = v.time_to_first_token_ms;
                else if (name == "itl_ms")
                    o.predicted = v.inter_token_latency_ms;
                else if (name == "tokens_per_s_per_gpu")
                    o.predicted = v.output_tokens_per_second_per_accelerator;
                else if (name == "decode_tokens_per_s")
                    o.predicted = 1000.0 / v.inter_token_latency_ms;
                else if (name == "prefill_tokens_per_s_per_gpu")
                    // The batch's prompts in one pass: a prefill node's figure.
                    o.predicted = v.prefill_tokens_per_second / cluster.accelerator_count;
                else if (name == "decode_tokens_per_s_per_gpu")
                    // One decode step of the whole batch (no prompt chunks): a decode node's
                    // figure under prefill-decode disaggregation.
                    o.predicted = req.batch_size / (v.inter_token_latency_ms / 1e3) /
                                  cluster.accelerator_count;
                else {
                    std::fprintf(stderr, "%s: unknown metric %s\n", r["id"].c_str(), name.c_str());
                    ++failures;
                    continue;
                }
                o.outlier_reason = r["outlier_reason"];
                outcomes.push_back(o);
            }
        }
    }

    std::printf("%-5s %-15s %-20s %12s %12s %8s  %s\n", "id", "group", "metric", "published",
                "predicted", "error", "layout used");
    for (const auto& o : outcomes) {
        std::printf("%-5s %-15s %-20s %12.4g %12.4g %+7.1f%%  %s\n", o.id.c_str(), o.group.c_str(),
                    o.metric.c_str(), o.published, o.predicted, 100.0 * o.Error(),
                    o.layout.c_str());
    }
    struct Target {
        const char* group;
        double median_max;
        double worst_max;
    };
    // The accuracy targets.
    const Target targets[] = {{"throughput", 0.10, 0.25},
                              {"iteration", 0.10, 0.25},
                              {"end_to_end", 0.20, 0.20},
                              {"inference", 0.30, 0.30},
                              {"finetune_memory", 0.15, 0.15}};
    constexpr double kOutlierBound = 0.75;
    std::printf("\n%-15s %4s %9s %9s %9s %s\n", "group", "rows", "median", "p90", "worst",
                "target");
    for (const Target& t : targets) {
        std::vector<double> errs;
        double worst = 0;
        for (const auto& o : outcomes) {
            if (o.group != t.group) continue;
            errs.push_back(std::fabs(o.Error()));
            if (o.outlier_reason.empty()) worst = std::max(worst, std::fabs(o.Error()));
        }
        if (errs.empty()) {
            std::printf("%-15s    0  (no rows)\n", t.group);
            ++failures;
            continue;
        }
        std::sort(errs.begin(), errs.end());
        auto quantile = [&](double q) {
            double pos = q * static_cast<double>(errs.size() - 1);
            auto lo = static_cast<std::size_t>(std::floor(pos));
            auto hi = static_cast<std::size_t>(std::ceil(pos));
            return errs[lo] + (errs[hi] - errs[lo]) * (pos - static_cast<double>(lo));
        };
        double median = quantile(0.5), p90 = quantile(0.9);
        bool ok = median <= t.median_max && worst <= t.worst_max;
        std::printf("%-15s %4zu %8.1f%% %8.1f%% %8.1f%% median <= %.0f%%, worst <= %.0f%% %s\n",
                    t.group, errs.size(), 100 * median, 100 * p90, 100 * worst, 100 * t.median_max,
                    100 * t.worst_max, ok ? "PASS" : "FAIL");
        if (!ok) ++failures;
    }
    bool any_outlier = false;
    for (const auto& o : outcomes) {
        if (o.outlier_reason.empty()) continue;
        if (!any_outlier)
            std::printf(
                "\ndocumented outliers (in the median, not the worst case; bound %.0f%%):\n",
                100 * kOutlierBound);
        any_outlier = true;
        bool ok = std::fabs(o.Error()) <= kOutlierBound;
        std::printf("%-5s %+7.1f%% %s  %s\n", o.id.c_str(), 100 * o.Error(), ok ? "PASS" : "FAIL",
                    o.outlier_reason.c_str());
        if (!ok) ++failures;
    }
    if (failures > 0) {
        std::printf("\n%d problem(s)\n", failures);
    }
    return check && failures > 0 ? 1 : 0;
}
