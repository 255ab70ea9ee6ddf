#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pricing/model_library.hpp"
#include "pricing/training_recipe.hpp"

using namespace gpucost::pricing;

namespace {

std::string ReadSeedFile(const std::string& name) {
    std::ifstream in(std::string(GPUCOST_SOURCE_DIR) + "/schema/seed/" + name, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

const std::string kHeader =
    "model_id,precision,global_batch_tokens,expert_overlap_schedule,tensor_parallel,"
    "pipeline_parallel,expert_parallel,zero_stage,recompute_modules,source\n";

}  // namespace

TEST_CASE("the seed's training recipes load and each names a library model") {
    auto recipes = LoadTrainingRecipes(ReadSeedFile("training_recipes.csv"), "recipes.csv");
    REQUIRE(recipes.ok());
    auto library = LoadModelLibrary(ReadSeedFile("models.csv"), "models.csv");
    REQUIRE(library.ok());
    REQUIRE_FALSE(recipes.value().All().empty());
    for (const TrainingRecipe& r : recipes.value().All()) {
        CAPTURE(r.model_id);
        CHECK(library.value().Find(r.model_id) != nullptr);
        CHECK_FALSE(r.source.empty());
    }
    // DeepSeek-V3 as its technical report publishes it (arXiv 2412.19437 §3.2.1, §3.3, §4.2).
    const TrainingRecipe* ds = recipes.value().Find("DeepSeek-V3");
    REQUIRE(ds != nullptr);
    CHECK(ds->precision == Precision::kFp8);
    CHECK(ds->global_batch_tokens == doctest::Approx(15360.0 * 4096));
    CHECK(ds->expert_overlap_schedule == "dualpipe");
    CHECK(ds->expert_overlap_fraction == doctest::Approx(estimate::kExpertOverlapFractionDualPipe));
    CHECK(ds->tensor_parallel == 1);
    CHECK(ds->pipeline_parallel == 16);
    CHECK(ds->expert_parallel == 64);
    CHECK(ds->zero_stage == 1);
    // §3.2.3 recomputes RMSNorm and the MLA up-projections, §3.3.3 the SwiGLU output.
    REQUIRE(ds->recompute_modules.has_value());
    CHECK(ds->recompute_modules->Names() ==
          std::vector<std::string>{"moe_act", "layernorm", "mla_up_proj"});
}

TEST_CASE("a bad recipe file is refused naming the line") {
    auto unknown = LoadTrainingRecipes(kHeader + "m,fp9,,,,,,,,src\n", "r.csv");
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().field == "r.csv:2");
    CHECK(unknown.error().message.find("fp9") != std::string::npos);
    CHECK_FALSE(LoadTrainingRecipes(kHeader + "m,,,zigzag,,,,,,src\n", "r.csv").ok());
    CHECK_FALSE(LoadTrainingRecipes(kHeader + "m,,0,,,,,,,src\n", "r.csv").ok());
    CHECK_FALSE(LoadTrainingRecipes(kHeader + "m,,,,,,,,,src\n", "r.csv").ok());  // sets nothing
    CHECK_FALSE(LoadTrainingRecipes(kHeader + "m,fp8,,,,,,,,\n", "r.csv").ok());  // no source
    CHECK_FALSE(LoadTrainingRecipes(kHeader + "m,fp8,,,,,,,,a\nM,bf16,,,,,,,,b\n", "r.csv").ok());
    CHECK_FALSE(LoadTrainingRecipes(kHeader + "m,,,,0,,,,,src\n", "r.csv").ok());  // tensor 0
    CHECK_FALSE(LoadTrainingRecipes(kHeader + "m,,,,,,,4,,src\n", "r.csv").ok());  // ZeRO 4
    CHECK_FALSE(LoadTrainingRecipes("model_id,precision,source\nm,fp8,a\n", "r.csv").ok());
    auto module = LoadTrainingRecipes(kHeader + "m,,,,,,,,layernorm attn,src\n", "r.csv");
    REQUIRE_FALSE(module.ok());
    CHECK(module.error().message.find("unknown recompute module 'attn'") != std::string::npos);
    // A recipe of recompute modules alone sets something.
    CHECK(LoadTrainingRecipes(kHeader + "m,,,,,,,,moe_act,src\n", "r.csv").ok());
}

TEST_CASE("a recipe's recompute modules fill a request that chooses no recompute") {
    auto loaded = LoadTrainingRecipes(
        kHeader + "m,fp8,62914560,dualpipe,1,16,64,1,layernorm mla_up_proj,the report\n", "r.csv");
    REQUIRE(loaded.ok());
    const TrainingRecipe& recipe = loaded.value().All().front();
    // Without parallelism: into the published layout, which the estimate tries first.
    estimate::TrainingRequest plain;
    CHECK(ApplyTrainingRecipe(recipe, {}, plain));
    REQUIRE(plain.recipe.has_value());
    CHECK(plain.recipe->recompute_modules);
    REQUIRE(plain.recipe->layout.has_value());
    CHECK(plain.recipe->layout->recompute == estimate::Recompute::kSelective);
    CHECK(plain.recipe->layout->recompute_modules->Names() ==
          std::vector<std::string>{"layernorm", "mla_up_proj"});
    // With a layout of its own but no recompute choice: into the request's parallelism.
    estimate::TrainingRequest layout;
    layout.parallelism = estimate::ParallelismRequest{};
    layout.parallelism->pipeline = 16;
    CHECK(ApplyTrainingRecipe(recipe, {}, layout));
    CHECK(layout.recipe->recompute_modules);
    CHECK(layout.parallelism->recompute == estimate::Recompute::kSelective);
    REQUIRE(layout.parallelism->recompute_modules.has_value());
    // A request that chooses its recompute keeps it.
    estimate::TrainingRequest full;
    full.parallelism = estimate::ParallelismRequest{};
    full.parallelism->recompute = estimate::Recompute::kFull;
    ApplyTrainingRecipe(recipe, {}, full);
    CHECK_FALSE(full.recipe->recompute_modules);
    CHECK(full.parallelism->recompute == estimate::Recompute::kFull);
    CHECK_FALSE(full.parallelism->recompute_modules.has_value());
}

TEST_CASE("a recipe fills what the pre-training request leaves unset, and says so") {
    auto loaded =
        LoadTrainingRecipes(kHeader + "m,fp8,62914560,dualpipe,1,16,64,1,,the report\n", "r.csv");
    REQUIRE(loaded.ok());
    const TrainingRecipe& recipe = loaded.value().All().front();

    estimate::TrainingRequest plain;
    CHECK(ApplyTrainingRecipe(recipe, {}, plain));
    CHECK(plain.precision == Precision::kFp8);
    CHECK(plain.global_batch_tokens == doctest::Approx(62914560));
    CHECK(plain.expert_overlap_fraction ==
          doctest::Approx(estimate::kExpertOverlapFractionDualPipe));
    REQUIRE(plain.recipe.has_value());
    CHECK(plain.recipe->precision);
    CHECK(plain.recipe->global_batch_tokens);
    CHECK(plain.recipe->expert_overlap_fraction);
    CHECK(plain.recipe->source == "the report");
    REQUIRE(plain.recipe->layout.has_value());
    CHECK(plain.recipe->layout->tensor == 1);
    CHECK(plain.recipe->layout->pipeline == 16);
    CHECK(plain.recipe->layout->expert == 64);
    CHECK(plain.recipe->layout->zero_stage == 1);
    CHECK_FALSE(plain.parallelism.has_value());  // the layout applies per cluster, not here

    // A request consistent with the recipe (no precision, batch or degree of its own that
    // differs) keeps what it sets and takes the rest.
    estimate::TrainingRequest own;
    own.precision = Precision::kFp8;
    own.global_batch_tokens = 62914560;
    own.parallelism = estimate::ParallelismRequest{};
    own.parallelism->pipeline = 16;
    CHECK(ApplyTrainingRecipe(recipe, {/*precision=*/true}, own));
    REQUIRE(own.recipe.has_value());
    CHECK(own.recipe->applied);
    CHECK_FALSE(own.recipe->precision);
    CHECK_FALSE(own.recipe->global_batch_tokens);
    CHECK(own.recipe->expert_overlap_fraction);
    CHECK_FALSE(own.recipe->layout.has_value());  // the request's parallelism, even partial

    // One that differs is another setup: nothing is filled, and `why` names the fields.
    estimate::TrainingRequest other;
    other.precision = Precision::kBf16;
    other.global_batch_tokens = 33554432;
    CHECK_FALSE(ApplyTrainingRecipe(recipe, {/*precision=*/true}, other));
    REQUIRE(other.recipe.has_value());
    CHECK_FALSE(other.recipe->applied);
    CHECK_FALSE(other.expert_overlap_fraction.has_value());
    CHECK(other.recipe->why.find("precision bf16 (the recipe's: fp8)") != std::string::npos);
    CHECK(other.recipe->why.find("global_batch_tokens 33554432") != std::string::npos);
    // Named, the recipe fills what the request leaves unset all the same.
    estimate::TrainingRequest named = other;
    named.recipe.reset();
    CHECK(ApplyTrainingRecipe(recipe, {/*precision=*/true, /*named=*/true}, named));
    CHECK(named.precision == Precision::kBf16);
    CHECK(named.expert_overlap_fraction ==
          doctest::Approx(estimate::kExpertOverlapFractionDualPipe));
    CHECK(named.recipe->named);

    // Fine-tuning is not how the model was pre-trained: no recipe.
    estimate::TrainingRequest lora;
    lora.mode = estimate::TrainingMode::kLora;
    CHECK_FALSE(ApplyTrainingRecipe(recipe, {}, lora));
    CHECK(lora.precision == Precision::kBf16);
    REQUIRE(lora.recipe.has_value());
    CHECK_FALSE(lora.recipe->applied);
}

TEST_CASE("the recipe step after decoding: the model's own, a named one, none, or unknown") {
    auto loaded =
        LoadTrainingRecipes(kHeader + "m,fp8,62914560,dualpipe,1,16,64,1,,the report\n", "r.csv");
    REQUIRE(loaded.ok());
    estimate::TrainingRequest own;
    own.library_model_id = "M";
    REQUIRE(ResolveTrainingRecipe(loaded.value(), own).ok());
    REQUIRE(own.recipe.has_value());
    CHECK(own.recipe->applied);
    CHECK(own.precision == Precision::kFp8);
    estimate::TrainingRequest spec;  // a model given as a spec names no library model
    REQUIRE(ResolveTrainingRecipe(loaded.value(), spec).ok());
    CHECK_FALSE(spec.recipe.has_value());
    spec.recipe_name = "m";
    REQUIRE(ResolveTrainingRecipe(loaded.value(), spec).ok());
    REQUIRE(spec.recipe.has_value());
    CHECK(spec.recipe->named);
    estimate::TrainingRequest none;
    none.library_model_id = "m";
    none.recipe_name = "none";
    REQUIRE(ResolveTrainingRecipe(loaded.value(), none).ok());
    REQUIRE(none.recipe.has_value());
    CHECK_FALSE(none.recipe->applied);
    CHECK(none.precision == Precision::kBf16);
    estimate::TrainingRequest unknown;
    unknown.recipe_name = "zz";
    auto refused = ResolveTrainingRecipe(loaded.value(), unknown);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().field == "/recipe");
}
