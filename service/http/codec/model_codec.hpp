#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "pricing/error.hpp"
#include "pricing/estimate/model.hpp"
#include "pricing/model_library.hpp"
#include "pricing/training_recipe.hpp"

namespace gpucost::http {

struct Deps;

// schema/seed/models.csv as compiled into the binary (a unit test loads every build's copy).
const pricing::ModelLibrary& CompiledInModels();

// The model library a server serves and decodes ids against: Deps::models (--catalog-dir with
// a models.csv), or the compiled-in one when that is null.
const pricing::ModelLibrary& ModelsOf(const Deps& deps);

// The one decoder of the `model` member of every estimate, plan and saved scenario, found at
// `pointer` (e.g. "/model"). Four forms:
//   "llama-3.1-70b"                              a library id
//   {"id": "llama-3.1-70b", "seq_len": 32768}    a library id with fields overridden
//   {"hf_config": {...config.json...}}           a Hugging Face config, fields may be overridden
//   {"params_b": 70, "layers": 80, ...}          the structure itself
// Unknown id -> kInvalidArgument (422) naming pointer (or pointer/id) with the closest ids;
// unknown keys and wrong types -> kMalformed (400).
// Library ids are looked up in `models`.
[[nodiscard]] pricing::Result<pricing::estimate::ModelSpec> DecodeModel(
    const nlohmann::json& model, const pricing::ModelLibrary& models, const std::string& pointer);

// The published training recipes of library models (schema/seed/training_recipes.csv,
// compiled into the binary; a unit test loads every build's copy).
const pricing::TrainingRecipes& TrainingRecipesInUse();

// The library id a `model` member names as the library entry itself: a bare id, or an object
// holding only `id`. nullopt for overrides, a Hugging Face config or a structure: those are
// other models, to which the library entry's training recipe does not apply.
std::optional<std::string> PlainLibraryId(const nlohmann::json& model);

class JsonWriter;

// The resolved model as estimates echo it (`model`), with `derived` rules: written as text
// (estimate answers) or as a DOM (the library's `resolved`), the same members either way.
void WriteModel(JsonWriter& w, const pricing::estimate::ResolvedModel& m);
nlohmann::json ModelJson(const pricing::estimate::ResolvedModel& m);
// One warning as every answer's `warnings` holds it: {field, detail}.
void WriteWarning(JsonWriter& w, std::string_view field, std::string_view detail);
// A `warnings` array of [{field, detail}] (empty when the inputs agree).
void WriteWarnings(JsonWriter& w, const std::vector<pricing::FieldError>& warnings);
// The model's `warnings` as [{field, detail}] (empty array when the inputs agree).
void WriteModelWarnings(JsonWriter& w, const pricing::estimate::ResolvedModel& m);

// A library entry: id, name, family, published counts, source, the structure as stored and,
// with `resolved`, the derivation's counts (params_b, active_params_b, per-layer figures).
nlohmann::json LibraryModelJson(const pricing::LibraryModel& m, bool resolved);

}  // namespace gpucost::http
