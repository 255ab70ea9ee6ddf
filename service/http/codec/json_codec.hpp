#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"
#include "pricing/price_age.hpp"
#include "service/text/json_text.hpp"

namespace gpucost::http {

using json = nlohmann::json;

// Limits applied while parsing request bodies (reliability-references §3): deeper nesting,
// longer arrays or strings, and duplicate object keys are rejected during the parse, before
// any copy or dump of the tree can recurse.
inline constexpr int kMaxJsonDepth = 32;
inline constexpr std::size_t kMaxJsonArrayLength = 4096;
inline constexpr std::size_t kMaxJsonStringBytes = 4096;

// Parses an untrusted JSON body. kMalformed (400) with a short reason for invalid JSON
// (including ill-formed UTF-8), nesting over kMaxJsonDepth, an over-long array or string,
// duplicate keys, or a top level that is not an object.
[[nodiscard]] pricing::Result<json> ParseJsonBody(std::string_view body);

// Numbers as the answers write them (service/text/json_text.hpp, shared with the commands).
using text::AppendJsonNumber;
using text::Num;

// Writes JSON text straight into a string, for answers encoded without building a DOM. The
// text is byte-identical to ToJsonText of the same values: numbers through Number() as Num()
// would give them, strings escaped the same way, and members written in the order
// nlohmann::json keeps them (sorted keys; debug builds check it).
class JsonWriter {
public:
    explicit JsonWriter(std::string& out) : out_(out) {}

    void BeginObject();
    void EndObject();
    void BeginArray();
    void EndArray();
    // The next member's key, inside an object.
    void Key(std::string_view key);

    // A number as AppendJsonNumber writes it: shortest round-trip text, null for non-finite, 0
    // for -0.
    void Number(double value);
    void Integer(long long value);
    void Bool(bool value);
    void Null();
    void String(std::string_view text);
    // JSON text already encoded (a cached array, a DOM's dump).
    void Raw(std::string_view json_text);
    void Dom(const json& value);

    // One member: Key(key), then the value by its type (floating point goes through Number).
    template <typename T>
    void Member(std::string_view key, const T& value) {
        Key(key);
        if constexpr (std::is_same_v<T, bool>) {
            Bool(value);
        } else if constexpr (std::is_integral_v<T>) {
            Integer(static_cast<long long>(value));
        } else if constexpr (std::is_floating_point_v<T>) {
            Number(value);
        } else {
            String(value);
        }
    }
    // An optional member: its value as above, or null when unset (as Num()/json(*v) or null
    // gave it in a DOM).
    template <typename T>
    void Member(std::string_view key, const std::optional<T>& value) {
        if (value) {
            Member(key, *value);
        } else {
            NullMember(key);
        }
    }
    void NullMember(std::string_view key) {
        Key(key);
        Null();
    }
    // Money as answers state it (pricing/money.hpp, docs/api.md "Money"): an amount in USD
    // rounded to the cent, or a rate (USD per hour, per GB, per million tokens) to 1e-6 USD.
    void UsdMember(std::string_view key, double usd);
    void UsdMember(std::string_view key, const std::optional<double>& usd);
    void UsdRateMember(std::string_view key, double usd);
    void UsdRateMember(std::string_view key, const std::optional<double>& usd);

private:
    void BeforeValue();
    // Appends `text` as a JSON string, then `suffix` as it is.
    void AppendString(std::string_view text, std::string_view suffix = {});

    std::string& out_;
    std::vector<char> first_;  // per open object or array: nothing written in it yet
                               // (char, not bool: vector<bool>'s bit access cost more)
    bool after_key_ = false;
#ifndef NDEBUG
    std::vector<std::string> last_key_;  // per open container, to check the sorted order
#endif
};

json ToJson(const pricing::Accelerator& a);
// `with_history` adds superseded_prices (single-offering reads only). `today` (YYYY-MM-DD,
// UTC) gives price_age_days and price_state.
json ToJson(const pricing::Offering& o, bool with_history, std::string_view today);
// The spot-risk object every answer uses under `spot_interruption`: {bucket,
// min_percent_per_month, max_percent_per_month}, or null when unknown.
json SpotInterruptionToJson(const std::optional<pricing::SpotInterruptionBucket>& bucket);
json ToJson(const pricing::ProviderSummary& p);
json ToJson(const pricing::CatalogInfo& info);
// Ages of the current prices (/v1/catalog and check-catalog `price_ages`).
json ToJson(const pricing::PriceAges& ages);
// `assumptions` array: [{name, value, unit, description, source}].
json ToJson(const pricing::Assumptions& assumptions);

}  // namespace gpucost::http
