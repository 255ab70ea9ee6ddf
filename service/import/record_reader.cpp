#include "service/import/record_reader.hpp"

#include <iterator>
#include <utility>

namespace gpucost::import {

using nlohmann::json;

// Bytes of a file read in large chunks (or of a buffer), with the offset of the next byte
// for error messages.
class RecordReader::Source {
public:
    explicit Source(std::FILE* file) : file_(file), buffer_(kChunkBytes) {}
    explicit Source(std::string_view text) : data_(text.data()), length_(text.size()) {}

    bool AtEnd() {
        if (value_too_long_) {
            return true;  // the parser stops at a cut input; Run reports the limit
        }
        if (position_ < length_) {
            return false;
        }
        Refill();
        return position_ >= length_;
    }
    char Peek() const { return data_[position_]; }
    void Advance() {
        Track(data_[position_]);
        ++position_;
    }
    std::size_t Offset() const { return consumed_ + position_; }
    bool ReadFailed() const { return file_ != nullptr && std::ferror(file_) != 0; }
    // Whether the input was cut short at a value longer than kMaxValueBytes.
    bool ValueTooLong() const { return value_too_long_; }

private:
    static constexpr std::size_t kChunkBytes = 1 << 20;  // 1 MiB: few reads, little memory

    // Follows strings and other tokens by their bytes: the parser would hold a value of any
    // length in memory (a 300 MB string took 893 MB), so the input ends at the limit instead.
    void Track(char c) {
        if (in_string_) {
            if (escaped_) {
                escaped_ = false;
            } else if (c == '\\') {
                escaped_ = true;
            } else if (c == '"') {
                in_string_ = false;
                value_bytes_ = 0;
                return;
            }
        } else if (c == '"') {
            in_string_ = true;
            value_bytes_ = 0;
            return;
        } else if (c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' ||
                   c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            value_bytes_ = 0;
            return;
        }
        if (++value_bytes_ > kMaxValueBytes) {
            value_too_long_ = true;
        }
    }

    void Refill() {
        if (file_ == nullptr) {
            return;
        }
        consumed_ += length_;
        length_ = std::fread(buffer_.data(), 1, buffer_.size(), file_);
        data_ = buffer_.data();
        position_ = 0;
    }

    std::FILE* file_ = nullptr;
    std::vector<char> buffer_;
    const char* data_ = nullptr;
    std::size_t length_ = 0;
    std::size_t position_ = 0;
    std::size_t consumed_ = 0;
    bool in_string_ = false;
    bool escaped_ = false;
    std::size_t value_bytes_ = 0;
    bool value_too_long_ = false;
};

namespace {

// The input iterator nlohmann's parser reads from; all state lives in the Source, so the
// copies the parser makes stay in step.
template <typename SourceT>
struct ByteIterator {
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = char;

    SourceT* source = nullptr;
    bool is_end = false;

    char operator*() const { return source->Peek(); }
    ByteIterator& operator++() {
        source->Advance();
        return *this;
    }
    bool operator==(const ByteIterator& other) const {
        bool this_end = is_end || source->AtEnd();
        bool other_end = other.is_end || other.source->AtEnd();
        return this_end == other_end;
    }
    bool operator!=(const ByteIterator& other) const { return !(*this == other); }
};

bool Matches(const JsonPath& path, const JsonPath& pattern) {
    if (path.size() != pattern.size()) {
        return false;
    }
    for (std::size_t i = 0; i < path.size(); ++i) {
        if (pattern[i] != "*" && pattern[i] != path[i]) {
            return false;
        }
    }
    return true;
}

}  // namespace

class RecordReader::Sax final : public nlohmann::json_sax<json> {
public:
    Sax(RecordReader& owner, Source& source) : owner_(owner), source_(source) {}

    bool null() override { return Scalar(json(nullptr)); }
    bool boolean(bool value) override { return Scalar(json(value)); }
    bool number_integer(number_integer_t value) override { return Scalar(json(value)); }
    bool number_unsigned(number_unsigned_t value) override { return Scalar(json(value)); }
    bool number_float(number_float_t value, const string_t& /*text*/) override {
        return Scalar(json(value));
    }
    bool string(string_t& value) override { return Scalar(json(std::move(value))); }
    bool binary(binary_t& /*value*/) override { return Fail("binary values are not JSON"); }
    bool start_object(std::size_t /*elements*/) override { return Open(json::value_t::object); }
    bool start_array(std::size_t /*elements*/) override { return Open(json::value_t::array); }
    bool end_object() override { return Close(); }
    bool end_array() override { return Close(); }
    bool key(string_t& value) override {
        if (skip_depth_ > 0) {
            return true;
        }
        if (building_) {
            pending_key_ = std::move(value);
        } else {
            frames_.back().key = std::move(value);
        }
        return true;
    }
    bool parse_error(std::size_t position, const std::string& /*last_token*/,
                     const nlohmann::detail::exception& ex) override {
        error_ = ex.what();
        error_offset_ = position;
        return false;
    }

    const std::string& Error() const { return error_; }
    std::size_t ErrorOffset() const { return error_offset_; }

private:
    struct Frame {
        bool is_array = false;
        std::string key;
    };

    JsonPath PathHere() const {
        JsonPath path;
        path.reserve(frames_.size());
        for (const Frame& f : frames_) {
            path.push_back(f.is_array ? "[]" : f.key);
        }
        return path;
    }

    bool IsRecordPath(const JsonPath& path) const {
        for (const JsonPath& pattern : owner_.patterns_) {
            if (Matches(path, pattern)) {
                return true;
            }
        }
        return false;
    }

    json* Insert(json value) {
        json* top = stack_.back();
        if (top->is_object()) {
            json& slot = (*top)[pending_key_];
            slot = std::move(value);
            return &slot;
        }
        top->push_back(std::move(value));
        return &top->back();
    }

    bool CountValue() {
        if (++record_values_ > kMaxRecordValues) {
            return Fail("a record holds more than " + std::to_string(kMaxRecordValues) +
                        " values; this is not a price file row");
        }
        if (source_.Offset() - record_start_ > kMaxRecordBytes) {
            return Fail("a record is longer than " + std::to_string(kMaxRecordBytes) +
                        " bytes; this is not a price file row");
        }
        return true;
    }

    bool Open(json::value_t kind) {
        if (skip_depth_ > 0) {
            ++skip_depth_;
            return true;
        }
        if (building_) {
            stack_.push_back(Insert(json(kind)));
            return CountValue();
        }
        JsonPath path = PathHere();
        if (!frames_.empty() && IsRecordPath(path)) {
            if (!owner_.want_(path)) {
                skip_depth_ = 1;
                return true;
            }
            building_ = true;
            record_ = json(kind);
            stack_.assign(1, &record_);
            record_path_ = std::move(path);
            record_values_ = 0;
            record_start_ = source_.Offset();
            return true;
        }
        if (frames_.size() >= kMaxDepth) {
            return Fail("the document nests deeper than " + std::to_string(kMaxDepth) +
                        " levels outside its records; this is not a price file");
        }
        frames_.push_back({kind == json::value_t::array, std::string()});
        return true;
    }

    bool Close() {
        if (skip_depth_ > 0) {
            --skip_depth_;
            return true;
        }
        if (building_) {
            stack_.pop_back();
            if (stack_.empty()) {
                building_ = false;
                return Deliver(record_path_, std::exchange(record_, json()));
            }
            return true;
        }
        frames_.pop_back();
        return true;
    }

    bool Scalar(json value) {
        if (skip_depth_ > 0) {
            return true;
        }
        if (building_) {
            Insert(std::move(value));
            return CountValue();
        }
        if (frames_.empty()) {
            return true;  // a document that is a bare scalar; the format check rejects it
        }
        JsonPath path = PathHere();
        if (path.size() == 1 && !frames_.front().is_array) {
            if (owner_.top_level_.size() >= kMaxTopLevelValues &&
                owner_.top_level_.count(path.front()) == 0) {
                return Fail("the document has more than " + std::to_string(kMaxTopLevelValues) +
                            " values beside its records; this is not a price file");
            }
            owner_.top_level_[path.front()] =
                value.is_string() ? value.get<std::string>() : value.dump();
        }
        if (IsRecordPath(path) && owner_.want_(path)) {
            return Deliver(path, std::move(value));
        }
        return true;
    }

    bool Deliver(const JsonPath& path, json&& record) {
        if (auto refused = owner_.on_record_(path, std::move(record))) {
            return Fail(*refused);
        }
        return true;
    }

    bool Fail(std::string message) {
        error_ = std::move(message);
        error_offset_ = source_.Offset();
        return false;
    }

    RecordReader& owner_;
    Source& source_;
    std::vector<Frame> frames_;
    std::size_t skip_depth_ = 0;
    bool building_ = false;
    json record_;
    std::vector<json*> stack_;
    std::string pending_key_;
    JsonPath record_path_;
    std::size_t record_values_ = 0;
    std::size_t record_start_ = 0;
    std::string error_;
    std::size_t error_offset_ = 0;
};

RecordReader::RecordReader(std::vector<JsonPath> record_patterns, WantFn want, RecordFn on_record)
    : patterns_(std::move(record_patterns)),
      want_(std::move(want)),
      on_record_(std::move(on_record)) {}

pricing::Status RecordReader::ReadFile(std::FILE* file, const std::string& name) {
    Source source(file);
    return Run(source, name);
}

pricing::Status RecordReader::ReadBuffer(std::string_view text, const std::string& name) {
    Source source(text);
    return Run(source, name);
}

pricing::Status RecordReader::Run(Source& source, const std::string& name) {
    Sax sax(*this, source);
    ByteIterator<Source> begin{&source, false};
    ByteIterator<Source> end{&source, true};
    bool parsed = json::sax_parse(begin, end, &sax);
    if (source.ValueTooLong()) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  name + ": byte " + std::to_string(source.Offset()) +
                                      ": a value is longer than " + std::to_string(kMaxValueBytes) +
                                      " bytes (the limit on one string or number); this is not a "
                                      "price file value");
    }
    if (source.ReadFailed()) {
        return pricing::MakeError(pricing::ErrorCode::kInvalidArgument,
                                  name + ": read error at byte " + std::to_string(source.Offset()));
    }
    if (!parsed) {
        return pricing::MakeError(
            pricing::ErrorCode::kInvalidArgument,
            name + ": byte " + std::to_string(sax.ErrorOffset()) + ": " + sax.Error());
    }
    return pricing::Ok{};
}

}  // namespace gpucost::import
