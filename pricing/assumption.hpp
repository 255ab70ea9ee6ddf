#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucost::pricing {

// One text of an assumption (its name, unit, description or source). Almost all are string
// literals in the code that uses the constant: those are referred to, not copied, because an
// estimate echoes some forty assumptions with long texts and copying them was most of the
// cost of building an answer. A text made at run time (a figure or a catalog's note written
// into it) is owned, and shared by the copies of the assumption. Either way the text is
// immutable and compares by content.
class AssumptionText {
public:
    AssumptionText() = default;
    // A string literal: it lives as long as the program and never changes, so no copy is kept
    // and its address identifies it (the HTTP encoder relies on that). Only string literals
    // may be passed here, never a char array of automatic storage.
    template <std::size_t N>
    AssumptionText(const char (&literal)[N]) noexcept : view_(literal, N - 1) {}  // NOLINT
    // A pointer, as a choice between literals gives (`given ? "request" : "default"`): its
    // storage is not known, so the text is copied. SourceOf() keeps the common choice free.
    template <typename Pointer>
    requires std::same_as<Pointer, const char*> AssumptionText(Pointer text)
        : AssumptionText(std::string(text)) {}  // NOLINT
    // A text made at run time.
    AssumptionText(std::string text)  // NOLINT: implicit, as std::string was before
        : owned_(std::make_shared<const std::string>(std::move(text))), view_(*owned_) {}

    AssumptionText(const AssumptionText&) = default;
    AssumptionText& operator=(const AssumptionText&) = default;
    // A moved-from text is empty rather than a view into the text it gave away.
    AssumptionText(AssumptionText&& other) noexcept
        : owned_(std::move(other.owned_)), view_(std::exchange(other.view_, {})) {}
    AssumptionText& operator=(AssumptionText&& other) noexcept {
        owned_ = std::move(other.owned_);
        view_ = std::exchange(other.view_, {});
        return *this;
    }
    ~AssumptionText() = default;

    [[nodiscard]] std::string_view view() const noexcept { return view_; }
    operator std::string_view() const noexcept { return view_; }  // NOLINT
    [[nodiscard]] std::string str() const { return std::string(view_); }
    [[nodiscard]] bool empty() const noexcept { return view_.empty(); }
    // True for a string literal (or the empty text): same address, same text, for good.
    [[nodiscard]] bool is_literal() const noexcept { return owned_ == nullptr; }
    [[nodiscard]] std::size_t size() const noexcept { return view_.size(); }

    friend bool operator==(const AssumptionText& a, std::string_view b) noexcept {
        return a.view_ == b;
    }
    friend std::string operator+(std::string_view prefix, const AssumptionText& text) {
        std::string out(prefix);
        out += text.view_;
        return out;
    }

private:
    std::shared_ptr<const std::string> owned_;
    std::string_view view_;
};

// One named modelling constant as it was used in a computation, echoed back to callers under
// `assumptions` so that every number in an answer can be traced. `unit` is a short unit
// string ("fraction", "s", "GB/s", "usd_per_kwh"); `source` says where the value comes from
// (a paper, a data file, "request" when the caller overrode it, or "default").
struct Assumption {
    AssumptionText name;
    double value = 0;
    AssumptionText unit;
    AssumptionText description;
    AssumptionText source;
};

using Assumptions = std::vector<Assumption>;

// The source of a value the caller may override: "request" when they did, else where the
// default comes from.
inline AssumptionText SourceOf(bool from_request, AssumptionText default_source) {
    return from_request ? AssumptionText("request") : std::move(default_source);
}

}  // namespace gpucost::pricing
