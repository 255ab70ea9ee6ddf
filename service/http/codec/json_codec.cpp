#include "service/http/codec/json_codec.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <vector>

#include "pricing/money.hpp"

namespace gpucost::http {
namespace {

struct JsonLimitExceeded : std::runtime_error {
    using std::runtime_error::runtime_error;
};

template <typename T>
json NullableJson(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

json PriceToJson(const pricing::PriceObservation& p) {
    return {{"usd_per_hour", Num(p.usd_per_hour)},
            {"as_of", p.as_of},
            {"as_of_estimated", p.as_of_estimated},
            {"source", p.source},
            {"verified", p.verified},
            {"notes", p.notes}};
}

}  // namespace

void JsonWriter::BeforeValue() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) out_.push_back(',');
        first_.back() = false;
    }
}

void JsonWriter::BeginObject() {
    BeforeValue();
    out_.push_back('{');
    first_.push_back(true);
#ifndef NDEBUG
    last_key_.emplace_back();
#endif
}

void JsonWriter::EndObject() {
    out_.push_back('}');
    first_.pop_back();
#ifndef NDEBUG
    last_key_.pop_back();
#endif
}

void JsonWriter::BeginArray() {
    BeforeValue();
    out_.push_back('[');
    first_.push_back(true);
#ifndef NDEBUG
    last_key_.emplace_back();
#endif
}

void JsonWriter::EndArray() {
    out_.push_back(']');
    first_.pop_back();
#ifndef NDEBUG
    last_key_.pop_back();
#endif
}

void JsonWriter::Key(std::string_view key) {
#ifndef NDEBUG
    // nlohmann::json keeps members sorted; a writer out of that order would change the bytes.
    assert(last_key_.back().empty() || last_key_.back() < key);
    last_key_.back().assign(key);
#endif
    BeforeValue();
    AppendString(key, ":");
    after_key_ = true;
}

void JsonWriter::Number(double value) {
    BeforeValue();
    AppendJsonNumber(out_, value);
}

void JsonWriter::UsdMember(std::string_view key, double usd) {
    Key(key);
    Number(pricing::RoundToCents(usd));
}

void JsonWriter::UsdMember(std::string_view key, const std::optional<double>& usd) {
    if (usd) return UsdMember(key, *usd);
    NullMember(key);
}

void JsonWriter::UsdRateMember(std::string_view key, double usd) {
    Key(key);
    Number(pricing::RoundToMicroUsd(usd));
}

void JsonWriter::UsdRateMember(std::string_view key, const std::optional<double>& usd) {
    if (usd) return UsdRateMember(key, *usd);
    NullMember(key);
}

void JsonWriter::Integer(long long value) {
    BeforeValue();
    char buffer[24];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out_.append(buffer, end);
}

void JsonWriter::Bool(bool value) {
    BeforeValue();
    out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
    BeforeValue();
    out_ += "null";
}

void JsonWriter::String(std::string_view text) {
    BeforeValue();
    AppendString(text);
}

void JsonWriter::AppendString(std::string_view text, std::string_view suffix) {
    text::AppendJsonString(out_, text);
    out_ += suffix;
}

void JsonWriter::Raw(std::string_view json_text) {
    BeforeValue();
    out_.append(json_text);
}

void JsonWriter::Dom(const json& value) {
    BeforeValue();
    text::AppendJsonDom(out_, value);
}

pricing::Result<json> ParseJsonBody(std::string_view body) {
    // One entry per open container: an object's keys so far, or an array's elements so far.
    // An array counts its own elements (a value, or an object or array begun directly in it),
    // not the members of the objects inside it: 1,000 offerings of nine members are 1,000.
    struct Container {
        bool is_array = false;
        std::size_t elements = 0;
        std::set<std::string> keys;
    };
    std::vector<Container> open;
    auto count_element = [&open] {
        if (!open.empty() && open.back().is_array && ++open.back().elements > kMaxJsonArrayLength) {
            throw JsonLimitExceeded("an array has more than " +
                                    std::to_string(kMaxJsonArrayLength) + " elements");
        }
    };
    auto callback = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
        if (depth > kMaxJsonDepth) {
            throw JsonLimitExceeded("nesting deeper than " + std::to_string(kMaxJsonDepth));
        }
        switch (event) {
            case json::parse_event_t::object_start:
            case json::parse_event_t::array_start:
                count_element();
                open.push_back({event == json::parse_event_t::array_start, 0, {}});
                break;
            case json::parse_event_t::object_end:
            case json::parse_event_t::array_end:
                if (!open.empty()) {
                    open.pop_back();
                }
                break;
            case json::parse_event_t::key: {
                const auto& key = parsed.get_ref<const std::string&>();
                if (key.size() > kMaxJsonStringBytes) {
                    throw JsonLimitExceeded("an object key is too long");
                }
                if (!open.empty() && !open.back().keys.insert(key).second) {
                    throw JsonLimitExceeded("duplicate key '" + key.substr(0, 64) + "'");
                }
                break;
            }
            case json::parse_event_t::value:
                if (parsed.is_string() &&
                    parsed.get_ref<const std::string&>().size() > kMaxJsonStringBytes) {
                    throw JsonLimitExceeded("a string value is longer than " +
                                            std::to_string(kMaxJsonStringBytes) + " bytes");
                }
                // Scalars here; objects and arrays were counted when they began.
                if (!parsed.is_structured()) {
                    count_element();
                }
                break;
        }
        return true;
    };
    try {
        json doc = json::parse(body.begin(), body.end(), callback, /*allow_exceptions=*/true);
        if (!doc.is_object()) {
            return pricing::MakeError(pricing::ErrorCode::kMalformed,
                                      "the request body must be a JSON object", "/");
        }
        return doc;
    } catch (const JsonLimitExceeded& e) {
        return pricing::MakeError(pricing::ErrorCode::kMalformed,
                                  std::string("request body rejected: ") + e.what(), "/");
    } catch (const json::exception& e) {
        // nlohmann's message names the byte offset; its id tells the kind. Keep both short.
        std::string what = e.what();
        auto pos = what.find("syntax error");
        std::string reason = pos != std::string::npos ? what.substr(pos) : "invalid JSON";
        return pricing::MakeError(pricing::ErrorCode::kMalformed,
                                  "request body is not valid JSON: " + reason.substr(0, 200), "/");
    }
}

json ToJson(const pricing::Accelerator& a) {
    json peaks = json::object();
    json supported = json::array();
    for (pricing::Precision p : pricing::kAllPrecisions) {
        if (auto peak = a.PeakTflops(p)) {
            peaks[std::string(pricing::PrecisionName(p))] = *peak;
            supported.push_back(pricing::PrecisionName(p));
        }
    }
    return {{"id", a.id},
            {"name", a.name},
            {"vendor", a.vendor},
            {"form_factor", a.form_factor},
            {"launch_year", a.launch_year},
            {"dense_peak_tflops", peaks},
            {"supported_precisions", supported},
            {"memory_gb", a.memory_gb},
            {"memory_type", a.memory_type},
            {"memory_gb_per_s", a.memory_gb_per_s},
            {"cache_mb", NullableJson(a.cache_mb)},
            {"scale_up_interconnect", a.scale_up_interconnect},
            {"scale_up_gb_per_s", NullableJson(a.scale_up_gb_per_s)},
            {"host_pcie_gen", a.host_pcie_gen},
            {"tdp_w", NullableJson(a.tdp_w)},
            {"purchase_price_usd", NullableJson(a.purchase_price_usd)},
            {"purchase_price_as_of", a.purchase_price_as_of},
            {"purchase_price_source", a.purchase_price_source},
            {"spec_source", a.spec_source},
            {"confidence", a.confidence},
            {"notes", a.notes}};
}

json SpotInterruptionToJson(const std::optional<pricing::SpotInterruptionBucket>& bucket) {
    if (!bucket) {
        return nullptr;
    }
    return {{"bucket", bucket->label},
            {"min_percent_per_month", bucket->min_percent_per_month},
            {"max_percent_per_month", bucket->max_percent_per_month}};
}

json ToJson(const pricing::Offering& o, bool with_history, std::string_view today) {
    const pricing::Provider* provider = pricing::FindProvider(o.provider);
    json spot = SpotInterruptionToJson(o.spot_interruption);
    const std::optional<long> age_days = pricing::DaysBetween(o.price.as_of, today);
    json out = {
        {"id", o.id},
        {"provider", o.provider},
        {"provider_name", provider ? provider->name : o.provider},
        {"instance_type", o.instance_type},
        {"accelerator", o.accelerator},
        {"accelerator_count", o.accelerator_count},
        {"accelerator_memory_gb", NullableJson(o.accelerator_memory_gb)},
        {"vcpus", NullableJson(o.vcpus)},
        {"ram_gib", NullableJson(o.ram_gib)},
        {"interconnect", o.interconnect},
        {"scale_out_gbit_per_s", NullableJson(o.scale_out_gbit_per_s)},
        {"region", o.region},
        {"price_type", pricing::PriceTypeName(o.price_type)},
        {"usd_per_hour", Num(pricing::RoundToMicroUsd(o.price.usd_per_hour))},
        {"usd_per_accelerator_hour", Num(pricing::RoundToMicroUsd(o.UsdPerAcceleratorHour()))},
        {"as_of", o.price.as_of},
        {"as_of_estimated", o.price.as_of_estimated},
        {"price_age_days", NullableJson(age_days)},
        {"price_state", pricing::PriceStateName(pricing::StateOfPrice(o, age_days))},
        {"source", o.price.source},
        {"verified", o.price.verified},
        {"price_notes", o.price.notes},
        {"spot_interruption", spot},
        {"notes", o.notes},
        {"superseded_price_count", o.superseded_prices.size()}};
    if (with_history) {
        json history = json::array();
        for (const auto& p : o.superseded_prices) {
            history.push_back(PriceToJson(p));
        }
        out["superseded_prices"] = std::move(history);
    }
    return out;
}

namespace {

// A date that an empty catalog (or an as_of before any price) does not have: null, not "".
json DateOrNull(const std::string& date) {
    return date.empty() ? json(nullptr) : json(date);
}

}  // namespace

json ToJson(const pricing::ProviderSummary& p) {
    json by_type = json::object();
    for (const auto& [type, count] : p.offerings_by_price_type) {
        by_type[std::string(pricing::PriceTypeName(type))] = count;
    }
    return {{"id", p.provider.id},
            {"name", p.provider.name},
            {"kind", p.provider.kind},
            {"offering_count", p.offering_count},
            {"offerings_by_price_type", by_type},
            {"accelerators", p.accelerators},
            {"regions", p.regions},
            {"oldest_as_of", DateOrNull(p.oldest_as_of)},
            {"newest_as_of", DateOrNull(p.newest_as_of)}};
}

json ToJson(const pricing::CatalogInfo& info) {
    // `version` is catalog_version's deprecated name, kept until 0.3.0 and at least 2027-03-01
    // (docs/api.md, "Versions and deprecation").
    return {{"catalog_version", info.version},
            {"version", info.version},
            {"origin", info.origin},
            {"accelerator_count", info.accelerator_count},
            {"offering_count", info.offering_count},
            {"unverified_offering_count", info.unverified_offering_count},
            {"price_observation_count", info.price_observation_count},
            {"oldest_as_of", DateOrNull(info.oldest_as_of)},
            {"newest_as_of", DateOrNull(info.newest_as_of)}};
}

json ToJson(const pricing::PriceAges& ages) {
    return {{"today", ages.today},
            {"current_price_count", ages.current_price_count},
            {"older_than_90_days", ages.older_than_90_days},
            {"older_than_180_days", ages.older_than_180_days},
            {"estimated_date_count", ages.estimated_date_count},
            {"unverified_count", ages.unverified_count},
            {"stale_count", ages.stale_count},
            {"stale_by_provider", [&] {
                 json out = json::array();
                 for (const auto& p : ages.by_provider) {
                     out.push_back({{"provider", p.provider},
                                    {"stale_after_days", p.stale_after_days},
                                    {"current_price_count", p.current_price_count},
                                    {"stale_count", p.stale_count},
                                    {"oldest_age_days", p.oldest_age_days}});
                 }
                 return out;
             }()}};
}

json ToJson(const pricing::Assumptions& assumptions) {
    json out = json::array();
    for (const auto& a : assumptions) {
        out.push_back({{"name", a.name},
                       {"value", Num(a.value)},
                       {"unit", a.unit},
                       {"description", a.description},
                       {"source", a.source}});
    }
    return out;
}

}  // namespace gpucost::http
