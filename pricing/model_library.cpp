#include "pricing/model_library.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "pricing/close_match.hpp"
#include "pricing/csv.hpp"
#include "pricing/text_case.hpp"

namespace gpucost::pricing {
namespace {

const std::vector<std::string> kModelColumns = {"id",
                                                "name",
                                                "family",
                                                "published_params_b",
                                                "published_active_params_b",
                                                "layers",
                                                "hidden_size",
                                                "attention_heads",
                                                "kv_heads",
                                                "head_dim",
                                                "ffn_hidden_size",
                                                "expert_ffn_hidden_size",
                                                "dense_ffn_hidden_size",
                                                "vocab_size",
                                                "seq_len",
                                                "max_context",
                                                "gated_mlp",
                                                "tied_embeddings",
                                                "experts",
                                                "experts_per_token",
                                                "shared_experts",
                                                "dense_layers",
                                                "q_lora_rank",
                                                "kv_lora_rank",
                                                "qk_rope_head_dim",
                                                "qk_nope_head_dim",
                                                "v_head_dim",
                                                "sliding_window",
                                                "sliding_window_layers",
                                                "mtp_modules",
                                                "low_precision_scope",
                                                "checkpoint_precision",
                                                "source"};

// The serving-quantisation columns came after the others: a library written before them (an
// operator's own models.csv) leaves them out, which reads as unset.
bool IsServingQuantisationColumn(const std::string& column) {
    return column == "low_precision_scope" || column == "checkpoint_precision";
}

bool IsModelSlug(const std::string& id) {
    if (id.empty() || id.size() > 100) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
    });
}

// Reads one row's cells by column name, failing with the file and line.
class Row {
public:
    Row(const CsvRecord& record, const std::unordered_map<std::string, std::size_t>& columns,
        std::string_view file_name)
        : record_(record), columns_(columns), file_name_(file_name) {}

    std::string Text(const std::string& column) const {
        auto it = columns_.find(column);
        if (it == columns_.end()) return std::string();  // an optional column left out
        return it->second < record_.fields.size() ? record_.fields[it->second] : std::string();
    }

    std::optional<int> Int(const std::string& column) {
        std::string t = Text(column);
        if (t.empty()) return std::nullopt;
        int v = 0;
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || end != t.data() + t.size() || v < 0) {
            Fail(column + " '" + t + "' is not a non-negative integer");
            return std::nullopt;
        }
        return v;
    }

    double Number(const std::string& column) {
        std::string t = Text(column);
        if (t.empty()) return 0;
        double v = 0;
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v) || v < 0) {
            Fail(column + " '" + t + "' is not a non-negative number");
            return 0;
        }
        return v;
    }

    std::optional<bool> Bool(const std::string& column) {
        std::string t = Text(column);
        if (t.empty()) return std::nullopt;
        if (t == "true") return true;
        if (t == "false") return false;
        Fail(column + " must be true or false (got '" + t + "')");
        return std::nullopt;
    }

    void Fail(const std::string& what) {
        if (!error_) error_ = Failure(record_.line, what);
    }
    Error Failure(std::size_t line, const std::string& what) const {
        Error e = MakeError(ErrorCode::kInvalidArgument, std::string(file_name_) + " line " +
                                                             std::to_string(line) + ": " + what);
        e.field = std::string(file_name_) + ":" + std::to_string(line);
        return e;
    }
    const std::optional<Error>& error() const { return error_; }

private:
    const CsvRecord& record_;
    const std::unordered_map<std::string, std::size_t>& columns_;
    std::string_view file_name_;
    std::optional<Error> error_;
};

Result<std::unordered_map<std::string, std::size_t>> ReadHeader(
    const std::vector<CsvRecord>& records, std::string_view file_name) {
    auto fail = [&](const std::string& what) {
        Error e =
            MakeError(ErrorCode::kInvalidArgument, std::string(file_name) + " line 1: " + what);
        e.field = std::string(file_name) + ":1";
        return e;
    };
    if (records.empty()) return fail("file is empty; expected a header row");
    std::unordered_map<std::string, std::size_t> columns;
    const auto& header = records.front().fields;
    for (std::size_t i = 0; i < header.size(); ++i) {
        if (std::find(kModelColumns.begin(), kModelColumns.end(), header[i]) ==
            kModelColumns.end()) {
            return fail("unknown column '" + header[i] + "'");
        }
        if (!columns.emplace(header[i], i).second)
            return fail("duplicate column '" + header[i] + "'");
    }
    for (const auto& c : kModelColumns) {
        if (columns.count(c) == 0 && !IsServingQuantisationColumn(c)) {
            return fail("missing column '" + c + "'");
        }
    }
    return columns;
}

Result<LibraryModel> ReadModel(Row& row) {
    LibraryModel m;
    m.id = row.Text("id");
    m.name = row.Text("name");
    m.family = row.Text("family");
    m.source = row.Text("source");
    if (!IsModelSlug(m.id)) row.Fail("id '" + m.id + "' must be a lowercase slug (a-z 0-9 . _ -)");
    if (m.name.empty()) row.Fail("name is required");
    if (m.source.empty()) row.Fail("source is required: say where the shape comes from");
    m.published_params_b = row.Number("published_params_b");
    m.published_active_params_b = row.Number("published_active_params_b");
    m.max_context = row.Int("max_context").value_or(0);
    estimate::ModelSpec& s = m.spec;
    s.layers = row.Int("layers");
    s.hidden_size = row.Int("hidden_size");
    s.attention_heads = row.Int("attention_heads");
    s.kv_heads = row.Int("kv_heads");
    s.head_dim = row.Int("head_dim");
    s.ffn_hidden_size = row.Int("ffn_hidden_size");
    s.expert_ffn_hidden_size = row.Int("expert_ffn_hidden_size");
    s.dense_ffn_hidden_size = row.Int("dense_ffn_hidden_size");
    s.vocab_size = row.Int("vocab_size");
    s.seq_len = row.Int("seq_len");
    s.gated_mlp = row.Bool("gated_mlp");
    s.tied_embeddings = row.Bool("tied_embeddings");
    s.experts = row.Int("experts");
    s.experts_per_token = row.Int("experts_per_token");
    s.shared_experts = row.Int("shared_experts");
    s.dense_layers = row.Int("dense_layers");
    s.q_lora_rank = row.Int("q_lora_rank");
    s.kv_lora_rank = row.Int("kv_lora_rank");
    s.qk_rope_head_dim = row.Int("qk_rope_head_dim");
    s.qk_nope_head_dim = row.Int("qk_nope_head_dim");
    s.v_head_dim = row.Int("v_head_dim");
    s.sliding_window = row.Int("sliding_window");
    s.sliding_window_layers = row.Int("sliding_window_layers");
    s.mtp_modules = row.Int("mtp_modules");
    if (const std::string scope = row.Text("low_precision_scope"); !scope.empty()) {
        s.low_precision_scope = estimate::ParseLowPrecisionScope(scope);
        if (!s.low_precision_scope) {
            row.Fail("low_precision_scope '" + scope + "' must be linear_layers or routed_experts");
        }
    }
    if (const std::string stored = row.Text("checkpoint_precision"); !stored.empty()) {
        s.checkpoint_precision = ParsePrecision(stored);
        s.checkpoint_precision_source = "model library " + m.id + " checkpoint_precision";
        if (!s.checkpoint_precision) {
            row.Fail("checkpoint_precision '" + stored + "' must be fp8, int8 or fp4");
        }
    }
    if (m.max_context > 0) {
        s.max_context = m.max_context;
        s.max_context_source = "model library " + m.id + " max_context: " + m.source;
    }
    if (!s.layers || !s.hidden_size || !(s.ffn_hidden_size || s.expert_ffn_hidden_size) ||
        !s.vocab_size || !s.gated_mlp || !s.tied_embeddings) {
        row.Fail(
            "layers, hidden_size, ffn_hidden_size (or expert_ffn_hidden_size), vocab_size, "
            "gated_mlp and tied_embeddings are required: the library gives whole structures");
    }
    if (row.error()) return *row.error();
    auto derived = estimate::DeriveModel(s, "/model");
    if (!derived.ok()) {
        row.Fail("the shape is invalid: " + derived.error().message);
        return *row.error();
    }
    return m;
}

}  // namespace

ModelLibrary::ModelLibrary(std::vector<LibraryModel> models) : models_(std::move(models)) {}

const LibraryModel* ModelLibrary::Find(std::string_view id) const {
    const std::string key = LowerAscii(id);
    for (const LibraryModel& m : models_) {
        if (m.id == key) return &m;
    }
    return nullptr;
}

std::vector<std::string> ModelLibrary::Closest(std::string_view id, std::size_t count) const {
    std::vector<std::string> ids;
    ids.reserve(models_.size());
    for (const LibraryModel& m : models_) ids.push_back(m.id);
    return NearestIds(id.substr(0, 200), ids, count);
}

Result<ModelLibrary> LoadModelLibrary(std::string_view csv_text, std::string_view file_name) {
    auto records = ParseCsv(csv_text, file_name);
    if (!records.ok()) return records.error();
    auto columns = ReadHeader(records.value(), file_name);
    if (!columns.ok()) return columns.error();
    std::vector<LibraryModel> models;
    std::set<std::string> ids;
    for (std::size_t i = 1; i < records.value().size(); ++i) {
        Row row(records.value()[i], columns.value(), file_name);
        auto model = ReadModel(row);
        if (!model.ok()) return model.error();
        if (!ids.insert(model.value().id).second) {
            return row.Failure(records.value()[i].line, "duplicate id '" + model.value().id + "'");
        }
        models.push_back(std::move(model).value());
    }
    return ModelLibrary(std::move(models));
}

}  // namespace gpucost::pricing
