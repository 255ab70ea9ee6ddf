#pragma once
// Answer field tables: one row per member of an answer object (its key and how its value is
// read from the object), so adding an answer field is one row. JsonWriter writes members in the
// order nlohmann::json keeps them (sorted keys; the reference answers are in that order), and a
// table out of order fails to compile (static_assert on KeysAscending beside each table).
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "pricing/money.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_reader.hpp"

namespace gpucost::http {

// One member of an answer about a T: its key and the function that writes its value.
template <typename T>
struct AnswerField {
    std::string_view key;
    void (*write)(JsonWriter& w, const T& object);
};

// True when the keys are strictly ascending (byte order): no repeats, the writer's order.
template <typename T, std::size_t N>
constexpr bool KeysAscending(const std::array<AnswerField<T>, N>& fields) {
    for (std::size_t i = 1; i < N; ++i) {
        if (!(fields[i - 1].key < fields[i].key)) {
            return false;
        }
    }
    return true;
}

// The object: every row's key and value. `raw_key`, when given, is one more member whose value
// is JSON text already encoded (an answer's `assumptions`), written in its sorted place.
template <typename T, std::size_t N>
void WriteFields(JsonWriter& w, const T& object, const std::array<AnswerField<T>, N>& fields,
                 std::string_view raw_key = {}, std::string_view raw_json = {}) {
    w.BeginObject();
    bool raw_pending = !raw_key.empty();
    for (const auto& field : fields) {
        if (raw_pending && raw_key < field.key) {
            w.Key(raw_key);
            w.Raw(raw_json);
            raw_pending = false;
        }
        w.Key(field.key);
        field.write(w, object);
    }
    if (raw_pending) {
        w.Key(raw_key);
        w.Raw(raw_json);
    }
    w.EndObject();
}

namespace field_detail {

template <typename>
struct MemberPointer;
template <typename C, typename M>
struct MemberPointer<M C::*> {
    using Class = C;
};

template <typename V>
void WriteScalar(JsonWriter& w, const V& value) {
    if constexpr (std::is_same_v<V, bool>) {
        w.Bool(value);
    } else if constexpr (std::is_integral_v<V>) {
        w.Integer(static_cast<long long>(value));
    } else if constexpr (std::is_floating_point_v<V>) {
        w.Number(value);
    } else {
        w.String(value);
    }
}

template <typename V>
void WriteScalar(JsonWriter& w, const std::optional<V>& value) {
    if (value) {
        WriteScalar(w, *value);
    } else {
        w.Null();
    }
}

template <typename V>
inline constexpr bool kIsOptional = false;
template <typename V>
inline constexpr bool kIsOptional<std::optional<V>> = true;

// The class a path of member pointers starts from, and the member it ends at.
template <auto First, auto... Rest>
struct Path {
    using Class = typename MemberPointer<decltype(First)>::Class;
    static const auto& Of(const Class& object) {
        if constexpr (sizeof...(Rest) == 0) {
            return object.*First;
        } else {
            return Path<Rest...>::Of(object.*First);
        }
    }
};
template <auto... P>
using ClassOf = typename Path<P...>::Class;
template <auto... P>
const auto& Follow(const ClassOf<P...>& object) {
    return Path<P...>::Of(object);
}

inline void WriteRounded(JsonWriter& w, double usd, double (*round)(double)) {
    w.Number(round(usd));
}
inline void WriteRounded(JsonWriter& w, const std::optional<double>& usd, double (*round)(double)) {
    if (usd) {
        w.Number(round(*usd));
    } else {
        w.Null();
    }
}

template <typename U, std::size_t N>
void WriteObject(JsonWriter& w, const U& value, const std::array<AnswerField<U>, N>& fields) {
    WriteFields(w, value, fields);
}
template <typename U, std::size_t N>
void WriteObject(JsonWriter& w, const std::optional<U>& value,
                 const std::array<AnswerField<U>, N>& fields) {
    if (!value) return w.Null();
    WriteFields(w, *value, fields);
}
template <typename U, std::size_t N>
void WriteObject(JsonWriter& w, const U* value, const std::array<AnswerField<U>, N>& fields) {
    if (value == nullptr) return w.Null();
    WriteFields(w, *value, fields);
}

}  // namespace field_detail

// Row writers. Each names the member by its path from the answer object: one member pointer,
// or several for a member of a member (`&TrainingAnswer::plan, &TrainingPlan::estimates`).

// A plain member (number, bool, string, or an optional of one: null when unset), written by
// its type as JsonWriter::Member writes it:
//   {"step_time_s", &Scalar<&TrainingEstimate::step_time_s>}
template <auto... Path>
void Scalar(JsonWriter& w, const field_detail::ClassOf<Path...>& o) {
    field_detail::WriteScalar(w, field_detail::Follow<Path...>(o));
}

// Money as answers state it (pricing/money.hpp, docs/api.md "Money"): an amount in USD to the
// cent (`Usd`), or a rate (USD per hour, per GB, per million tokens) to 1e-6 USD (`UsdRate`);
// null when an optional amount is unset.
template <auto... Path>
void Usd(JsonWriter& w, const field_detail::ClassOf<Path...>& o) {
    field_detail::WriteRounded(w, field_detail::Follow<Path...>(o), &pricing::RoundToCents);
}
template <auto... Path>
void UsdRate(JsonWriter& w, const field_detail::ClassOf<Path...>& o) {
    field_detail::WriteRounded(w, field_detail::Follow<Path...>(o), &pricing::RoundToMicroUsd);
}

// An enumeration by its name in answers (`Name` maps the value to its text; an unset optional
// is null): {"price_type", &Named<&PriceTypeName, &RentOption::price_type>}
template <auto Name, auto... Path>
void Named(JsonWriter& w, const field_detail::ClassOf<Path...>& o) {
    const auto& value = field_detail::Follow<Path...>(o);
    if constexpr (field_detail::kIsOptional<std::remove_cvref_t<decltype(value)>>) {
        if (!value) return w.Null();
        w.String(Name(*value));
    } else {
        w.String(Name(value));
    }
}

// A nested object written by its own table (`Fields`): the member itself, an optional of it
// or a pointer to it (null when unset).
template <const auto& Fields, auto... Path>
void Object(JsonWriter& w, const field_detail::ClassOf<Path...>& o) {
    field_detail::WriteObject(w, field_detail::Follow<Path...>(o), Fields);
}

// A list of objects, each written by the table `Fields`.
template <const auto& Fields, auto... Path>
void Array(JsonWriter& w, const field_detail::ClassOf<Path...>& o) {
    w.BeginArray();
    for (const auto& element : field_detail::Follow<Path...>(o)) {
        field_detail::WriteObject(w, element, Fields);
    }
    w.EndArray();
}

// The answers' currency, the same for every object that names it.
template <typename T>
void Currency(JsonWriter& w, const T& /*object*/) {
    w.String(pricing::kCurrency);
}

// One member of a request about a T: its key, and the function that reads it into the request
// (null for a member read apart, such as a nested object, which the key still makes known).
// Rows are read in table order, so the first fault in that order is the one answered.
template <typename T>
struct RequestField {
    std::string_view key;
    void (*read)(JsonReader& r, std::string_view key, T& request) = nullptr;
};

// The table's keys, then `extra` (members a caller adds): the unknown-member check's list.
template <typename T, std::size_t N>
std::vector<std::string> RequestKeys(const std::array<RequestField<T>, N>& fields,
                                     const std::vector<std::string>& extra = {}) {
    std::vector<std::string> keys;
    keys.reserve(N + extra.size());
    for (const auto& field : fields) {
        keys.emplace_back(field.key);
    }
    keys.insert(keys.end(), extra.begin(), extra.end());
    return keys;
}

// Every row with a reader, in table order.
template <typename T, std::size_t N>
void ReadFields(JsonReader& r, T& request, const std::array<RequestField<T>, N>& fields) {
    for (const auto& field : fields) {
        if (field.read != nullptr) {
            field.read(r, field.key, request);
        }
    }
}

// The row's reader for an optional member, read by its type (number, int, bool, string, array
// of strings); absent or null leaves it unset:
//   {"goodput", &Optional<&TrainingRequest::goodput>}
template <auto Member>
void Optional(JsonReader& r, std::string_view key,
              typename field_detail::MemberPointer<decltype(Member)>::Class& o) {
    auto& member = o.*Member;
    using V = typename std::remove_reference_t<decltype(member)>::value_type;
    if constexpr (std::is_same_v<V, double>) {
        member = r.Number(key);
    } else if constexpr (std::is_same_v<V, int>) {
        member = r.Int(key);
    } else if constexpr (std::is_same_v<V, bool>) {
        member = r.Bool(key);
    } else if constexpr (std::is_same_v<V, std::string>) {
        member = r.String(key);
    } else {
        static_assert(std::is_same_v<V, std::vector<std::string>>, "no reader for this type");
        member = r.Strings(key);
    }
}

// The row's reader for a number or int member that takes `Default` when absent or null.
template <auto Member, auto Default>
void OrDefault(JsonReader& r, std::string_view key,
               typename field_detail::MemberPointer<decltype(Member)>::Class& o) {
    auto& member = o.*Member;
    using V = std::remove_reference_t<decltype(member)>;
    if constexpr (std::is_same_v<V, int>) {
        member = r.Int(key).value_or(Default);
    } else {
        static_assert(std::is_same_v<V, double>, "no defaulted reader for this type");
        member = r.Number(key).value_or(Default);
    }
}

// The row's reader for a required string, number or int member: absent or null is 422 "is
// required" (JsonReader::Require) and leaves the member as it was.
template <auto Member>
void Required(JsonReader& r, std::string_view key,
              typename field_detail::MemberPointer<decltype(Member)>::Class& o) {
    r.Require(key);
    auto& member = o.*Member;
    using V = std::remove_reference_t<decltype(member)>;
    if constexpr (std::is_same_v<V, std::string>) {
        member = r.String(key).value_or(member);
    } else if constexpr (std::is_same_v<V, int>) {
        member = r.Int(key).value_or(member);
    } else {
        static_assert(std::is_same_v<V, double>, "no required reader for this type");
        member = r.Number(key).value_or(member);
    }
}

// The row's reader for a list member that is empty when absent (strings).
template <auto Member>
void ListOrEmpty(JsonReader& r, std::string_view key,
                 typename field_detail::MemberPointer<decltype(Member)>::Class& o) {
    o.*Member = r.Strings(key).value_or(std::vector<std::string>{});
}

// The row's reader for a flag member that is false when absent.
template <auto Member>
void FlagOrFalse(JsonReader& r, std::string_view key,
                 typename field_detail::MemberPointer<decltype(Member)>::Class& o) {
    o.*Member = r.Bool(key).value_or(false);
}

// A nested request object (at JSON pointer `pointer`, e.g. "/spot") read by its table into
// `request`: its unknown members refused, then its rows read in order. Nothing when absent.
template <typename T, std::size_t N>
pricing::Status ReadNested(const nlohmann::json* object, const std::string& pointer, T& request,
                           const std::array<RequestField<T>, N>& fields) {
    if (object == nullptr) {
        return pricing::Ok{};
    }
    JsonReader r(*object, pointer);
    r.OnlyKnown(RequestKeys(fields));
    ReadFields(r, request, fields);
    if (!r.ok()) {
        return r.error();
    }
    return pricing::Ok{};
}

}  // namespace gpucost::http
