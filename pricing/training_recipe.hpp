#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/error.hpp"
#include "pricing/estimate/training.hpp"

namespace gpucost::pricing {

// How a library model was published as trained (schema/seed/training_recipes.csv): the
// settings its authors report, which apply to a pre-training request naming the model when
// the request does not set them itself. Without them a user naming DeepSeek-V3 gets bf16, a
// 4M-token batch and an exposed expert all-to-all, none of which DeepSeek ran.
struct TrainingRecipe {
    std::string model_id;  // a models.csv id
    std::optional<Precision> precision;
    std::optional<double> global_batch_tokens;
    // The schedule that overlaps the expert all-to-all ("dualpipe"), and the hidden share it
    // stands for (kExpertOverlapFractionDualPipe).
    std::string expert_overlap_schedule;
    std::optional<double> expert_overlap_fraction;
    // The published layout's degrees (empty: not published); applied to clusters they divide.
    std::optional<int> tensor_parallel;
    std::optional<int> pipeline_parallel;
    std::optional<int> expert_parallel;
    std::optional<int> zero_stage;
    // The published run's selective recompute, as Megatron-Core's modules (empty: none
    // published); applied where the request chooses no recompute of its own.
    std::optional<estimate::RecomputeModules> recompute_modules;
    std::string source;
};

// The recipes, ordered as in the file. Immutable once loaded; safe to share across threads.
class TrainingRecipes {
public:
    TrainingRecipes() = default;
    explicit TrainingRecipes(std::vector<TrainingRecipe> recipes);

    const std::vector<TrainingRecipe>& All() const { return recipes_; }
    // nullptr when the model has no recipe. Ids compare case-insensitively.
    const TrainingRecipe* Find(std::string_view model_id) const;

private:
    std::vector<TrainingRecipe> recipes_;
};

// Parses training_recipes.csv. Errors are kInvalidArgument naming `file_name` and the line:
// unknown or missing columns, a duplicate id, an unknown precision or overlap schedule, a bad
// number, or a row that sets nothing.
[[nodiscard]] Result<TrainingRecipes> LoadTrainingRecipes(std::string_view csv_text,
                                                          std::string_view file_name);

// What the request itself set among the fields a recipe can fill (the request's precision is
// not optional, so its presence is passed here), and whether it named the recipe.
struct RecipeFieldsGiven {
    bool precision = false;
    bool named = false;
};

// The request's fields that contradict `recipe` (set to another value than it publishes:
// precision, global batch, a degree of the layout), each as "field value (the recipe's:
// value)"; empty when the request is consistent with it.
std::vector<std::string> RecipeConflicts(const TrainingRecipe& recipe,
                                         const RecipeFieldsGiven& given,
                                         const estimate::TrainingRequest& request);

// Decides on `recipe` for `request` and records the decision in request.recipe: a
// pre-training request consistent with the recipe (RecipeConflicts empty), or one naming it,
// gets the fields it leaves unset filled from it; otherwise nothing is filled and
// request.recipe->why says which fields disagree. Only a pre-training request takes a recipe:
// the recipes are how the models were pre-trained, not how they are fine-tuned. Returns
// whether anything was filled.
bool ApplyTrainingRecipe(const TrainingRecipe& recipe, const RecipeFieldsGiven& given,
                         estimate::TrainingRequest& request);

// The recipe step of a decoded request: the recipe the request names (request.recipe_name) or
// else the one of the library model it names (request.library_model_id), applied by
// ApplyTrainingRecipe; `"recipe": "none"` applies none. An unknown recipe name is
// kInvalidArgument naming /recipe. Idempotent: a request whose recipe is decided is left as is.
[[nodiscard]] Status ResolveTrainingRecipe(const TrainingRecipes& recipes,
                                           estimate::TrainingRequest& request);

}  // namespace gpucost::pricing
