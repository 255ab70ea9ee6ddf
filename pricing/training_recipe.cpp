#include "pricing/training_recipe.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <unordered_map>
#include <utility>

#include "pricing/csv.hpp"
#include "pricing/text_case.hpp"

namespace gpucost::pricing {
namespace {

const std::vector<std::string> kRecipeColumns = {"model_id",
                                                 "precision",
                                                 "global_batch_tokens",
                                                 "expert_overlap_schedule",
                                                 "tensor_parallel",
                                                 "pipeline_parallel",
                                                 "expert_parallel",
                                                 "zero_stage",
                                                 "recompute_modules",
                                                 "source"};
constexpr int kMaxDegree = 1 << 20;
// A request's global batch this close to the recipe's (relative) is the recipe's: the
// difference is rounding, as kBatchChangeWarnFraction treats it.
constexpr double kRecipeBatchTolerance = estimate::kBatchChangeWarnFraction;

// Overlap schedules a recipe may name, and the share of the expert all-to-all each hides.
struct OverlapSchedule {
    std::string_view name;
    double fraction;
};
constexpr OverlapSchedule kOverlapSchedules[] = {
    {"dualpipe", estimate::kExpertOverlapFractionDualPipe},
};

std::string Whole(double v) {
    return std::to_string(std::llround(v));
}

std::string JoinedNames(const std::vector<std::string>& parts) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
    return out;
}

Error LineError(std::string_view file_name, std::size_t line, const std::string& what) {
    Error e = MakeError(ErrorCode::kInvalidArgument,
                        std::string(file_name) + " line " + std::to_string(line) + ": " + what);
    e.field = std::string(file_name) + ":" + std::to_string(line);
    return e;
}

Result<std::unordered_map<std::string, std::size_t>> ReadHeader(const CsvRecord& header,
                                                                std::string_view file_name) {
    std::unordered_map<std::string, std::size_t> columns;
    for (std::size_t i = 0; i < header.fields.size(); ++i) {
        const std::string& name = header.fields[i];
        if (std::find(kRecipeColumns.begin(), kRecipeColumns.end(), name) == kRecipeColumns.end()) {
            return LineError(file_name, 1, "unknown column '" + name + "'");
        }
        if (!columns.emplace(name, i).second) {
            return LineError(file_name, 1, "duplicate column '" + name + "'");
        }
    }
    for (const auto& c : kRecipeColumns) {
        if (columns.count(c) == 0) return LineError(file_name, 1, "missing column '" + c + "'");
    }
    return columns;
}

// Space-separated Megatron-Core module names ("layernorm mla_up_proj").
Result<estimate::RecomputeModules> ReadRecomputeModules(const std::string& names) {
    estimate::RecomputeModules modules;
    std::size_t at = 0;
    while (at < names.size()) {
        const std::size_t end = std::min(names.find(' ', at), names.size());
        const std::string name = names.substr(at, end - at);
        at = end + 1;
        if (name.empty()) continue;
        const auto module = estimate::ParseRecomputeModule(name);
        if (!module) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "unknown recompute module '" + name + "'");
        }
        modules.Add(*module);
    }
    if (modules.Names().empty()) {
        return MakeError(ErrorCode::kInvalidArgument, "names no module");
    }
    return modules;
}

// One row into a recipe; the first fault names the line.
Result<TrainingRecipe> ReadRecipe(const CsvRecord& record,
                                  const std::unordered_map<std::string, std::size_t>& columns,
                                  std::string_view file_name) {
    auto text = [&](const std::string& column) {
        const std::size_t i = columns.at(column);
        return i < record.fields.size() ? record.fields[i] : std::string();
    };
    auto fail = [&](const std::string& what) { return LineError(file_name, record.line, what); };
    TrainingRecipe r;
    r.model_id = LowerAscii(text("model_id"));
    r.source = text("source");
    if (r.model_id.empty()) return fail("model_id is required");
    if (r.source.empty()) return fail("source is required: say where the recipe is published");
    if (const std::string p = text("precision"); !p.empty()) {
        r.precision = ParsePrecision(p);
        if (!r.precision) return fail("unknown precision '" + p + "'");
    }
    if (const std::string b = text("global_batch_tokens"); !b.empty()) {
        double v = 0;
        auto [end, ec] = std::from_chars(b.data(), b.data() + b.size(), v);
        if (ec != std::errc() || end != b.data() + b.size() || !std::isfinite(v) || v < 1 ||
            v > estimate::kMaxGlobalBatchTokens) {
            return fail("global_batch_tokens '" + b + "' is not a number between 1 and 1e10");
        }
        r.global_batch_tokens = v;
    }
    if (const std::string o = text("expert_overlap_schedule"); !o.empty()) {
        const auto* found = std::find_if(std::begin(kOverlapSchedules), std::end(kOverlapSchedules),
                                         [&](const OverlapSchedule& s) { return s.name == o; });
        if (found == std::end(kOverlapSchedules)) {
            return fail("unknown expert_overlap_schedule '" + o + "'; known: dualpipe");
        }
        r.expert_overlap_schedule = o;
        r.expert_overlap_fraction = found->fraction;
    }
    struct DegreeColumn {
        const char* column;
        std::optional<int>* field;
        int lo, hi;
    };
    const DegreeColumn degrees[] = {{"tensor_parallel", &r.tensor_parallel, 1, kMaxDegree},
                                    {"pipeline_parallel", &r.pipeline_parallel, 1, kMaxDegree},
                                    {"expert_parallel", &r.expert_parallel, 1, kMaxDegree},
                                    {"zero_stage", &r.zero_stage, 0, 3}};
    for (const DegreeColumn& d : degrees) {
        const std::string t = text(d.column);
        if (t.empty()) continue;
        int v = 0;
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || end != t.data() + t.size() || v < d.lo || v > d.hi) {
            return fail(std::string(d.column) + " '" + t + "' must be an integer from " +
                        std::to_string(d.lo) + " to " + std::to_string(d.hi));
        }
        *d.field = v;
    }
    if (const std::string names = text("recompute_modules"); !names.empty()) {
        auto modules = ReadRecomputeModules(names);
        if (!modules.ok()) {
            return fail("recompute_modules '" + names + "': " + modules.error().message);
        }
        r.recompute_modules = modules.value();
    }
    const bool layout =
        r.tensor_parallel || r.pipeline_parallel || r.expert_parallel || r.zero_stage;
    if (!r.precision && !r.global_batch_tokens && !r.expert_overlap_fraction && !layout &&
        !r.recompute_modules) {
        return fail("the recipe sets nothing");
    }
    return r;
}

// Fills the recipe's recompute modules into `pr` (a request's parallelism or the published
// layout) unless it chooses its recompute itself; returns whether it filled them.
bool FillRecomputeModules(const TrainingRecipe& recipe, estimate::ParallelismRequest& pr) {
    if (!recipe.recompute_modules || pr.recompute || pr.recompute_layers || pr.recompute_modules) {
        return false;
    }
    pr.recompute_modules = recipe.recompute_modules;
    pr.recompute = estimate::Recompute::kSelective;
    return true;
}

}  // namespace

TrainingRecipes::TrainingRecipes(std::vector<TrainingRecipe> recipes)
    : recipes_(std::move(recipes)) {}

const TrainingRecipe* TrainingRecipes::Find(std::string_view model_id) const {
    const std::string key = LowerAscii(model_id);
    for (const TrainingRecipe& r : recipes_) {
        if (r.model_id == key) return &r;
    }
    return nullptr;
}

Result<TrainingRecipes> LoadTrainingRecipes(std::string_view csv_text, std::string_view file_name) {
    auto records = ParseCsv(csv_text, file_name);
    if (!records.ok()) return records.error();
    if (records.value().empty()) {
        return LineError(file_name, 1, "file is empty; expected a header row");
    }
    auto columns = ReadHeader(records.value().front(), file_name);
    if (!columns.ok()) return columns.error();
    std::vector<TrainingRecipe> recipes;
    std::set<std::string> ids;
    for (std::size_t i = 1; i < records.value().size(); ++i) {
        auto recipe = ReadRecipe(records.value()[i], columns.value(), file_name);
        if (!recipe.ok()) return recipe.error();
        if (!ids.insert(recipe.value().model_id).second) {
            return LineError(file_name, records.value()[i].line,
                             "duplicate model_id '" + recipe.value().model_id + "'");
        }
        recipes.push_back(std::move(recipe).value());
    }
    return TrainingRecipes(std::move(recipes));
}

std::vector<std::string> RecipeConflicts(const TrainingRecipe& recipe,
                                         const RecipeFieldsGiven& given,
                                         const estimate::TrainingRequest& request) {
    std::vector<std::string> out;
    auto differs = [&](const std::string& field, const std::string& asked,
                       const std::string& published) {
        out.push_back(field + " " + asked + " (the recipe's: " + published + ")");
    };
    if (recipe.precision && given.precision && request.precision != *recipe.precision) {
        differs("precision", std::string(PrecisionName(request.precision)),
                std::string(PrecisionName(*recipe.precision)));
    }
    if (recipe.global_batch_tokens && request.global_batch_tokens &&
        std::abs(*request.global_batch_tokens - *recipe.global_batch_tokens) >
            kRecipeBatchTolerance * *recipe.global_batch_tokens) {
        differs("global_batch_tokens", Whole(*request.global_batch_tokens),
                Whole(*recipe.global_batch_tokens));
    }
    if (request.parallelism) {
        const estimate::ParallelismRequest& p = *request.parallelism;
        const struct {
            const char* field;
            const std::optional<int>& asked;
            const std::optional<int>& published;
        } degrees[] = {{"parallelism.tensor", p.tensor, recipe.tensor_parallel},
                       {"parallelism.pipeline", p.pipeline, recipe.pipeline_parallel},
                       {"parallelism.expert", p.expert, recipe.expert_parallel},
                       {"parallelism.zero_stage", p.zero_stage, recipe.zero_stage}};
        for (const auto& d : degrees) {
            if (d.asked && d.published && *d.asked != *d.published) {
                differs(d.field, std::to_string(*d.asked), std::to_string(*d.published));
            }
        }
    }
    return out;
}

bool ApplyTrainingRecipe(const TrainingRecipe& recipe, const RecipeFieldsGiven& given,
                         estimate::TrainingRequest& request) {
    estimate::AppliedRecipe applied;
    applied.model_id = recipe.model_id;
    applied.source = recipe.source;
    applied.named = given.named;
    if (request.mode != estimate::TrainingMode::kPretrain) {
        applied.why = std::string(
                          "the recipe is how the model was pre-trained, and the request's "
                          "mode is ") +
                      estimate::TrainingModeName(request.mode);
        request.recipe = std::move(applied);
        return false;
    }
    const std::vector<std::string> conflicts = RecipeConflicts(recipe, given, request);
    if (!conflicts.empty() && !given.named) {
        applied.why = "the request differs from it in " + JoinedNames(conflicts) +
                      ", so it is taken as another setup than the published one; name it with "
                      "\"recipe\": \"" +
                      recipe.model_id + "\" to fill the fields left unset from it anyway";
        request.recipe = std::move(applied);
        return false;
    }
    if (recipe.precision && !given.precision) {
        request.precision = *recipe.precision;
        applied.precision = true;
    }
    if (recipe.global_batch_tokens && !request.global_batch_tokens) {
        request.global_batch_tokens = recipe.global_batch_tokens;
        applied.global_batch_tokens = true;
    }
    if (recipe.expert_overlap_fraction && !request.expert_overlap_fraction) {
        request.expert_overlap_fraction = recipe.expert_overlap_fraction;
        applied.expert_overlap_fraction = true;
        applied.expert_overlap_schedule = recipe.expert_overlap_schedule;
    }
    if (request.parallelism) {
        applied.recompute_modules = FillRecomputeModules(recipe, *request.parallelism);
    } else if (recipe.tensor_parallel || recipe.pipeline_parallel || recipe.expert_parallel ||
               recipe.zero_stage) {
        estimate::ParallelismRequest layout;
        layout.tensor = recipe.tensor_parallel;
        layout.pipeline = recipe.pipeline_parallel;
        layout.expert = recipe.expert_parallel;
        layout.zero_stage = recipe.zero_stage;
        applied.recompute_modules = FillRecomputeModules(recipe, layout);
        applied.layout = layout;
    }
    applied.applied = applied.precision || applied.global_batch_tokens ||
                      applied.expert_overlap_fraction || applied.layout.has_value() ||
                      applied.recompute_modules;
    if (given.named) {
        applied.why = conflicts.empty()
                          ? "the request names it with \"recipe\""
                          : "the request names it with \"recipe\" (it differs in " +
                                JoinedNames(conflicts) + ", which the request's values keep)";
    } else {
        applied.why =
            "the request names the library model and sets none of the recipe's fields "
            "to another value (no precision, batch or layout of its own that differs)";
    }
    if (!applied.applied) applied.why += "; the request sets every field the recipe has";
    const bool filled = applied.applied;
    request.recipe = std::move(applied);
    return filled;
}

Status ResolveTrainingRecipe(const TrainingRecipes& recipes, estimate::TrainingRequest& request) {
    if (request.recipe) return Ok{};
    const RecipeFieldsGiven given{request.precision_given, request.recipe_name.has_value()};
    if (request.recipe_name && LowerAscii(*request.recipe_name) == estimate::kNoRecipe) {
        if (const TrainingRecipe* own = recipes.Find(request.library_model_id)) {
            estimate::AppliedRecipe declined;
            declined.model_id = own->model_id;
            declined.source = own->source;
            declined.why = "the request asks for none (\"recipe\": \"none\")";
            request.recipe = std::move(declined);
        }
        return Ok{};
    }
    const std::string& id = request.recipe_name ? *request.recipe_name : request.library_model_id;
    const TrainingRecipe* recipe = id.empty() ? nullptr : recipes.Find(id);
    if (recipe == nullptr) {
        if (!request.recipe_name) return Ok{};
        std::string known;
        for (const TrainingRecipe& r : recipes.All()) known += r.model_id + ", ";
        Error e = MakeError(ErrorCode::kInvalidArgument,
                            "unknown recipe '" + request.recipe_name->substr(0, 64) +
                                "'; known: " + known + std::string(estimate::kNoRecipe),
                            "/recipe");
        return e;
    }
    ApplyTrainingRecipe(*recipe, given, request);
    return Ok{};
}

}  // namespace gpucost::pricing
