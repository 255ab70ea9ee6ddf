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
// not optional, so its presence is passed here).
struct RecipeFieldsGiven {
    bool precision = false;
};

// Fills the fields of `request` that it leaves unset from `recipe` and records which ones in
// request.recipe (the estimate echoes them with the recipe's source). Only a pre-training
// request takes a recipe: the recipes are how the models were pre-trained, not how they are
// fine-tuned. Returns whether anything was filled.
bool ApplyTrainingRecipe(const TrainingRecipe& recipe, const RecipeFieldsGiven& given,
                         estimate::TrainingRequest& request);

}  // namespace gpucost::pricing
