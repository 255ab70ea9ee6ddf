#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/error.hpp"
#include "pricing/estimate/model.hpp"

namespace gpucost::pricing {

// One published architecture of the model library (schema/seed/models.csv): its shape as a
// ModelSpec, the counts its authors publish, and where both come from.
struct LibraryModel {
    std::string id;      // slug the API takes: "llama-3.1-70b"
    std::string name;    // "Llama 3.1 70B"
    std::string family;  // "llama", "qwen", "deepseek", ...
    // The shape. params_b is left unset, so that DeriveModel counts the structure; seq_len is
    // the pre-training sequence length where published.
    estimate::ModelSpec spec;
    double published_params_b = 0;
    double published_active_params_b = 0;  // 0: dense (active = total)
    int max_context = 0;                   // longest context the published model accepts
    std::string source;
};

// The library, ordered as in the file. Immutable once loaded; safe to share across threads.
class ModelLibrary {
public:
    ModelLibrary() = default;
    explicit ModelLibrary(std::vector<LibraryModel> models);

    const std::vector<LibraryModel>& All() const { return models_; }
    // nullptr when the id is unknown. Ids compare case-insensitively.
    const LibraryModel* Find(std::string_view id) const;
    // Up to `count` known ids closest to `id` (edit distance), for "did you mean" messages.
    std::vector<std::string> Closest(std::string_view id, std::size_t count) const;

private:
    std::vector<LibraryModel> models_;
};

// Parses models.csv. Errors are kInvalidArgument naming `file_name` and the line: unknown or
// missing columns, a duplicate or malformed id, a bad number, or a shape DeriveModel rejects.
[[nodiscard]] Result<ModelLibrary> LoadModelLibrary(std::string_view csv_text,
                                                    std::string_view file_name);

}  // namespace gpucost::pricing
