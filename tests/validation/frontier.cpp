#include "tests/validation/frontier.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/estimate/inference.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/training_recipe.hpp"
#include "service/http/codec/estimate_codec.hpp"
#include "service/http/codec/model_codec.hpp"

namespace gpucost::validation {
namespace {

using nlohmann::json;
namespace est = pricing::estimate;

// A row's `metric` as the answer member it is read from (tests/data/frontier/README.md), with
// the factor that turns the member into the published unit. A metric not named here is read as
// a JSON pointer into the answer ("/serving/point/output_tokens_per_second").
struct MetricSource {
    const char* metric;
    const char* pointer;
    double scale;
};
constexpr MetricSource kMetrics[] = {
    // training answers
    {"tokens_per_s", "/tokens_per_second", 1},
    {"model_tflops_per_gpu", "/achieved_tflops_per_accelerator", 1},
    {"mfu", "/mfu", 1},
    {"step_time_s", "/step_time_s", 1},
    {"wall_hours", "/wall_clock_hours", 1},
    {"wall_days", "/wall_clock_hours", 1.0 / 24},
    {"gpu_hours", "/accelerator_hours", 1},
    {"memory_gb", "/memory_per_accelerator_gb", 1},
    // inference answers: the cluster's figures (every replica the request's accelerators hold)
    {"output_tokens_per_s", "/cluster/output_tokens_per_second", 1},
    {"output_tokens_per_s_per_gpu", "/cluster/output_tokens_per_second_per_accelerator", 1},
    {"replica_output_tokens_per_s", "/output_tokens_per_second", 1},
    {"ttft_ms", "/time_to_first_token_ms", 1},
    {"itl_ms", "/inter_token_latency_ms", 1},
    {"request_latency_s", "/request_latency_ms", 1e-3},
    {"serving_output_tokens_per_s", "/serving/point/output_tokens_per_second", 1},
    {"serving_ttft_ms", "/serving/point/time_to_first_token_ms", 1},
    {"serving_itl_ms", "/serving/point/inter_token_latency_ms", 1},
};

struct Outcome {
    std::string id, cls, split, metric;
    bool searched = false;  // answered without the request's layout members (WithoutLayout)
    double published = 0;
    std::optional<double> predicted;  // nullopt: no answer (the problem is in `note`)
    std::string note;
    double AbsError() const { return std::abs(*predicted - published) / published; }
    double AbsLogError() const { return std::abs(std::log(*predicted / published)); }
};

// The answer as POST /v1/estimates/<endpoint> writes it, or the problem's detail.
std::pair<std::optional<json>, std::string> Answer(const std::string& endpoint, const json& request,
                                                   const pricing::Catalog& catalog) {
    http::HardwareRequest hardware;
    auto answer = [&](auto decoded, auto estimate) -> std::pair<std::optional<json>, std::string> {
        if (!decoded.ok()) return {std::nullopt, decoded.error().message};
        auto cluster = http::ResolveHardware(hardware, catalog);
        if (!cluster.ok()) return {std::nullopt, cluster.error().message};
        auto result = estimate(decoded.value(), cluster.value());
        if (!result.ok()) return {std::nullopt, result.error().message};
        return {json::parse(http::EncodeEstimate(result.value(), "[]")), ""};
    };
    if (endpoint == "training") {
        auto decoded = http::DecodeTrainingRequest(request, http::CompiledInModels(), &hardware);
        if (decoded.ok()) {
            // The route's next step: the model's published recipe, where the request fits it.
            if (auto recipe =
                    pricing::ResolveTrainingRecipe(http::TrainingRecipesInUse(), decoded.value());
                !recipe.ok()) {
                return {std::nullopt, recipe.error().message};
            }
        }
        return answer(decoded, [](const est::TrainingRequest& r, const est::ClusterSpec& c) {
            return est::EstimateTraining(r, c);
        });
    }
    if (endpoint == "inference") {
        return answer(http::DecodeInferenceRequest(request, http::CompiledInModels(), &hardware),
                      [](const est::InferenceRequest& r, const est::ClusterSpec& c) {
                          return est::EstimateInference(r, c);
                      });
    }
    return {std::nullopt, "endpoint must be training or inference"};
}

std::optional<double> Read(const json& answer, const std::string& metric) {
    std::string pointer = metric;
    double scale = 1;
    for (const MetricSource& m : kMetrics) {
        if (metric == m.metric) {
            pointer = m.pointer;
            scale = m.scale;
        }
    }
    if (pointer.empty() || pointer[0] != '/') return std::nullopt;
    const json::json_pointer p(pointer);
    if (!answer.contains(p) || !answer.at(p).is_number()) return std::nullopt;
    return answer.at(p).get<double>() * scale;
}

// What the answer chose, for the row's line: the training layout or the serving replicas.
std::string Layout(const json& a) {
    auto num = [&](const char* pointer) {
        const json::json_pointer p(pointer);
        return a.contains(p) && a.at(p).is_number() ? std::to_string(a.at(p).get<int>()) : "-";
    };
    if (a.contains("parallelism")) {
        const bool over = a.contains("fits_in_memory") && a["fits_in_memory"] == false;
        return "tp" + num("/parallelism/tensor") + " pp" + num("/parallelism/pipeline") + " dp" +
               num("/parallelism/data") + " ep" + num("/parallelism/expert") +
               (over ? " (over memory in the estimate)" : "");
    }
    // An inference answer always has the three degrees (1 where unused).
    return (a.value("expert_parallel", 1) > 1 ? "ep" + num("/expert_parallel")
                                              : "tp" + num("/tensor_parallel")) +
           (a.value("pipeline_parallel", 1) != 1 ? " pp" + num("/pipeline_parallel") : "") + " x" +
           num("/replicas");
}

// The members that fix a layout: a user who does not know the published one sends the request
// without them and the estimator searches (training: every parallel degree; serving: the
// replica layout).
constexpr const char* kLayoutMembers[] = {"parallelism", "tensor_parallel", "pipeline_parallel",
                                          "expert_parallel"};
void WithoutLayout(json& request) {
    for (const char* member : kLayoutMembers) request.erase(member);
}

// One line of a .jsonl file as an outcome; false (with a message) when the line is not a row.
// `searched`: the request is answered without its layout members (a row without any is
// answered as it is in both passes).
bool Evaluate(const std::string& line, const pricing::Catalog& catalog, bool searched, Outcome& out,
              std::string& fault) {
    json row = json::parse(line, nullptr, /*allow_exceptions=*/false);
    for (const char* key :
         {"id", "class", "split", "endpoint", "request", "metric", "published", "source"}) {
        if (!row.is_object() || !row.contains(key)) {
            fault = std::string("missing '") + key + "'";
            return false;
        }
    }
    out.id = row["id"].get<std::string>();
    out.cls = row["class"].get<std::string>();
    out.split = row["split"].get<std::string>();
    out.metric = row["metric"].get<std::string>();
    out.published = row["published"].get<double>();
    if (out.split != "fit" && out.split != "holdout" && out.split != "fresh") {
        fault = "split must be fit, holdout or fresh";
        return false;
    }
    if (!(out.published > 0)) {
        fault = "published must be a positive number";
        return false;
    }
    out.searched = searched;
    if (searched) WithoutLayout(row["request"]);
    auto [answer, problem] = Answer(row["endpoint"].get<std::string>(), row["request"], catalog);
    if (!answer) {
        out.note = "no answer: " + problem;
        return true;
    }
    out.predicted = Read(*answer, out.metric);
    if (!out.predicted) {
        fault = "metric '" + out.metric + "' is not a number in the answer";
        return false;
    }
    out.note = Layout(*answer);
    return true;
}

double Quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return 0;
    double pos = q * static_cast<double>(v.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(pos));
    std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

void PrintSummary(const std::vector<Outcome>& outcomes, bool searched) {
    // (split, class) and (split, "all"), split "both" for fit and held out together (the fresh
    // rows, added after the fit was frozen, stand alone): answered
    // rows' median and p90 absolute error, and the spread a log-normal with the rows' errors
    // has (exp(80th percentile of |ln error|) - 1, its p90/p50 - 1: the planners'
    // efficiency_spread_fraction).
    struct Errors {
        std::vector<double> abs, abs_log;
        std::size_t unanswered = 0;
    };
    std::map<std::pair<std::string, std::string>, Errors> errors;
    for (const Outcome& o : outcomes) {
        if (o.searched != searched) continue;
        for (const std::string& split : {o.split, std::string("both")}) {
            if (split == "both" && o.split == "fresh") continue;
            for (const std::string& cls : {o.cls, std::string("all")}) {
                Errors& e = errors[{split, cls}];
                if (o.predicted) {
                    e.abs.push_back(o.AbsError());
                    e.abs_log.push_back(o.AbsLogError());
                } else {
                    ++e.unanswered;
                }
            }
        }
    }
    std::printf("\n%s\n%-8s %-22s %5s %9s %9s %9s %9s\n",
                searched ? "layout searched (rows sent without parallelism / tensor_parallel):"
                         : "as published (each row's request as it is):",
                "split", "class", "rows", "no_answer", "median", "p90", "spread");
    for (const auto& [key, e] : errors) {
        std::printf("%-8s %-22s %5zu %9zu %8.1f%% %8.1f%% %9.3f\n", key.first.c_str(),
                    key.second.c_str(), e.abs.size() + e.unanswered, e.unanswered,
                    100 * Quantile(e.abs, 0.5), 100 * Quantile(e.abs, 0.9),
                    std::exp(Quantile(e.abs_log, 0.8)) - 1);
    }
}

// Evaluates and prints every row of `file` in one pass; returns the malformed rows (reported
// in the given pass only, the searched pass reads the same lines).
int EvaluateFile(const std::filesystem::path& file, const pricing::Catalog& catalog, bool searched,
                 std::vector<Outcome>& outcomes) {
    int faults = 0;
    std::ifstream in(file);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        Outcome o;
        std::string fault;
        if (!Evaluate(line, catalog, searched, o, fault)) {
            if (!searched) {
                std::fprintf(stderr, "%s:%d: %s\n", file.string().c_str(), number, fault.c_str());
                ++faults;
            }
            continue;
        }
        if (o.predicted) {
            std::printf("%-6s %-16s %-7s %-28s %11.4g %11.4g %+7.1f%%  %s\n", o.id.c_str(),
                        o.cls.c_str(), o.split.c_str(), o.metric.c_str(), *o.predicted, o.published,
                        100 * (*o.predicted - o.published) / o.published, o.note.c_str());
        } else {
            std::printf("%-6s %-16s %-7s %-28s %11s %11.4g %8s  %s\n", o.id.c_str(), o.cls.c_str(),
                        o.split.c_str(), o.metric.c_str(), "-", o.published, "-", o.note.c_str());
        }
        outcomes.push_back(std::move(o));
    }
    return faults;
}

}  // namespace

int RunFrontier(const std::string& directory, const pricing::Catalog& catalog) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
        if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
    }
    if (ec || files.empty()) {
        std::fprintf(stderr, "no .jsonl files in %s\n", directory.c_str());
        return 2;
    }
    std::sort(files.begin(), files.end());
    std::vector<Outcome> outcomes;
    int faults = 0;
    std::printf("%-6s %-16s %-7s %-28s %11s %11s %8s  %s\n", "id", "class", "split", "metric",
                "predicted", "published", "error", "layout");
    for (const bool searched : {false, true}) {
        if (searched) std::printf("\nthe same rows without their layout members:\n");
        for (const auto& file : files) faults += EvaluateFile(file, catalog, searched, outcomes);
    }
    PrintSummary(outcomes, false);
    PrintSummary(outcomes, true);
    return faults == 0 ? 0 : 1;
}

}  // namespace gpucost::validation
