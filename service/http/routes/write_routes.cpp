// Catalog writes and price history (PostgreSQL mode): decode -> validate -> store port.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "pricing/catalog_loader.hpp"
#include "pricing/csv.hpp"
#include "pricing/money.hpp"
#include "pricing/text_case.hpp"
#include "service/http/codec/csv_writer.hpp"
#include "service/http/codec/field_table.hpp"
#include "service/http/codec/idempotency.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_text.hpp"
#include "service/http/codec/page_cursor.hpp"
#include "service/http/codec/plan_codec.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/codec/timestamp.hpp"
#include "service/http/route_table.hpp"
#include "service/http/routes/auth.hpp"
#include "service/http/routes/conditional.hpp"

namespace gpucost::http {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;
using pricing::Result;

// Bounds on written values: a price above this per hour, or a spec above kMaxSpec, is a
// typo, not a cloud offering.
constexpr double kMaxUsdPerHour = 1'000'000;
// The catalog keeps prices as numeric(18, 6) (schema/migrations/001_catalog.sql): a price with
// more decimals would be stored as another number, so it is refused rather than rounded.
constexpr const char* kMicroUsdOnly =
    "has more than 6 decimal places; prices are kept to 1e-6 USD and this one would be stored "
    "as another number";
constexpr double kMaxSpec = 1'000'000'000;
constexpr std::size_t kMaxTextBytes = 1000;
constexpr std::size_t kMaxBulkItems = 1000;

// A written price's date: a YYYY-MM-DD at most kMaxPriceDateAheadDays past today (UTC), since a
// price dated 2099 would become the catalog's newest and stay current for decades; and its
// trust: an estimated date is never verified (the catalog loader's rule). `verified` is the
// member as sent: when left out it follows the date (verified unless estimated).
constexpr int kMaxPriceDateAheadDays = 1;  // a writer's clock a day ahead of this server's

bool CheckPriceDate(JsonReader& r, const std::string& as_of, bool estimated,
                    const std::optional<bool>& verified) {
    auto day = ParseIsoDate(as_of);
    if (!day.ok()) {
        r.Fail(ErrorCode::kInvalidArgument, "as_of", "must be a YYYY-MM-DD date");
        return false;
    }
    auto today = ParseIsoDate(TodayUtc());
    constexpr std::int64_t kUsPerDay = 86'400'000'000;
    if (today.ok() && day.value() > today.value() + kMaxPriceDateAheadDays * kUsPerDay) {
        r.Fail(ErrorCode::kInvalidArgument, "as_of",
               "is in the future (today is " + TodayUtc() +
                   " UTC); a price is dated the day it was observed");
        return false;
    }
    if (estimated && verified.value_or(false)) {
        r.Fail(ErrorCode::kInvalidArgument, "verified",
               "cannot be true when as_of_estimated is true: an estimated date is never verified");
        return false;
    }
    return true;
}

bool IsSlug(const std::string& id) {
    return !id.empty() && id.size() <= 200 && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
    });
}

std::string MediaType(const httplib::Request& req) {
    std::string type = req.get_header_value("Content-Type");
    type = type.substr(0, type.find(';'));
    while (!type.empty() && type.back() == ' ') {
        type.pop_back();
    }
    return pricing::LowerAscii(type);
}

// The offering's history with its prices [first, first + count) (all by default).
json HistoryJson(const OfferingHistory& h, std::size_t first = 0,
                 std::size_t count = std::string::npos) {
    json prices = json::array();
    for (std::size_t i = first; i < h.prices.size() && i - first < count; ++i) {
        const PriceInterval& p = h.prices[i];
        const auto& o = p.observation;
        bool served = !p.valid_to_us || *p.valid_to_us > p.valid_from_us;
        prices.push_back(
            {{"id", p.id},
             {"usd_per_hour", Num(o.usd_per_hour)},
             {"usd_per_accelerator_hour",
              Num(pricing::RoundToMicroUsd(
                  o.usd_per_hour /
                  static_cast<double>(std::max(1, h.offering.accelerator_count))))},
             {"as_of", o.as_of},
             {"as_of_estimated", o.as_of_estimated},
             {"source", o.source},
             {"verified", o.verified},
             {"notes", o.notes},
             {"valid_from", FormatTimestamp(p.valid_from_us)},
             {"valid_to", p.valid_to_us ? json(FormatTimestamp(*p.valid_to_us)) : json(nullptr)},
             {"served", served},
             {"current", !p.valid_to_us.has_value()},
             {"recorded_at", FormatTimestamp(p.recorded_at_us)}});
    }
    // The history record's offering carries no superseded list of its own: count what
    // GET /v1/offerings/{id} counts, every observation but the current one.
    json offering = ToJson(h.offering, /*with_history=*/false, TodayUtc());
    offering["superseded_price_count"] =
        std::count_if(h.prices.begin(), h.prices.end(),
                      [](const PriceInterval& p) { return p.valid_to_us.has_value(); });
    return {
        {"id", h.offering.id},
        {"catalog_version", h.catalog_version},
        {"currency", pricing::kCurrency},
        {"offering", std::move(offering)},
        {"retired", h.retired_at_us.has_value()},
        {"retired_at", h.retired_at_us ? json(FormatTimestamp(*h.retired_at_us)) : json(nullptr)},
        {"version", h.version},
        {"etag", OfferingEtag(h.version)},
        {"prices", std::move(prices)}};
}

StoredResponse Encoded(int status, const json& body, std::string etag) {
    return {status, ToJsonText(body), std::move(etag), false};
}

// Authentication, headers and query string common to every write. On failure writes the
// problem and returns nullopt.
std::optional<WriteRequest> BeginOfferingWrite(const Deps& deps, const httplib::Request& req,
                                               httplib::Response& res) {
    if (auto checked = QueryParams(req, {}).Check(); !checked.ok()) {
        WriteProblem(res, req, checked.error());
        return std::nullopt;
    }
    auto principal = RequireKey(deps, req, res, KeyScope::kAdmin);
    if (!principal) {
        return std::nullopt;
    }
    WriteRequest w;
    w.principal = *principal;
    if (!ReadRetryHeaders(req, res, w)) {
        return std::nullopt;
    }
    if (w.if_match) {
        // An offering's ETag is its version and a digest of the bytes read ("v3.<digest>"); the
        // write is judged by the version alone.
        w.if_match = RouteValidatorsIn(*w.if_match);
    }
    return w;
}

Result<json> ParseBodyAllowingArray(const httplib::Request& req) {
    std::string_view body = req.body;
    auto first = body.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && body[first] == '[') {
        // ParseJsonBody wants an object: wrap the array (limits still apply to it).
        auto parsed = ParseJsonBody("{\"items\":" + std::string(body) + "}");
        if (!parsed.ok()) {
            return parsed.error();
        }
        return parsed.value()["items"];
    }
    return ParseJsonBody(body);
}

// Provider id from an id or display name ("aws", "AWS").
std::optional<std::string> ResolveProvider(const std::string& text) {
    for (const auto& p : pricing::KnownProviders()) {
        if (pricing::LowerAscii(text) == p.id ||
            pricing::LowerAscii(text) == pricing::LowerAscii(p.name)) {
            return p.id;
        }
    }
    return std::nullopt;
}

// Accelerator id from an id or name ("h100-sxm", "H100 SXM").
std::optional<std::string> ResolveAccelerator(const pricing::Catalog& catalog,
                                              const std::string& text) {
    for (const auto& a : catalog.Accelerators()) {
        if (text == a.id || pricing::LowerAscii(text) == pricing::LowerAscii(a.name)) {
            return a.id;
        }
    }
    return std::nullopt;
}

// Spot risk in the shape offerings are answered with ({bucket, min_percent_per_month,
// max_percent_per_month}). The bounds follow from the bucket, so they may be left out; given,
// they must be the bucket's (422 otherwise): a stored offering cannot carry a range its
// bucket contradicts.
struct SpotInterruptionMembers {
    std::optional<std::string> bucket;
    std::optional<double> min_percent_per_month, max_percent_per_month;
};
const auto kSpotInterruptionFields = std::to_array<RequestField<SpotInterruptionMembers>>({
    {"bucket", &Optional<&SpotInterruptionMembers::bucket>},
    {"min_percent_per_month", &Optional<&SpotInterruptionMembers::min_percent_per_month>},
    {"max_percent_per_month", &Optional<&SpotInterruptionMembers::max_percent_per_month>},
});

Result<pricing::SpotInterruptionBucket> DecodeSpotInterruption(const json& object,
                                                               const std::string& pointer) {
    JsonReader r(object, pointer + "/spot_interruption");
    r.OnlyKnown(RequestKeys(kSpotInterruptionFields));
    r.Require("bucket");
    SpotInterruptionMembers members;
    ReadFields(r, members, kSpotInterruptionFields);
    const auto& [label, min_percent, max_percent] = members;
    if (!r.ok()) {
        return r.error();
    }
    auto bucket = pricing::ParseSpotInterruptionBucket(*label);
    if (!bucket) {
        r.Fail(ErrorCode::kInvalidArgument, "bucket", "must be <5%, 5-10%, 10-15%, 15-20% or >20%");
        return r.error();
    }
    auto agree = [&](const std::optional<double>& given, double bound, const std::string& key) {
        if (given && *given != bound && r.ok()) {
            r.Fail(
                ErrorCode::kInvalidArgument, key,
                "must be " + CsvNumber(bound) + " for bucket " + bucket->label + ", or left out");
        }
    };
    agree(min_percent, bucket->min_percent_per_month, "min_percent_per_month");
    agree(max_percent, bucket->max_percent_per_month, "max_percent_per_month");
    if (!r.ok()) {
        return r.error();
    }
    return *bucket;
}

// The members of a new offering as sent, before they are checked.
struct OfferingMembers {
    std::optional<std::string> id, provider, instance_type, accelerator, interconnect, region,
        price_type, notes, as_of, source, price_notes;
    std::optional<int> count;
    std::optional<double> memory, vcpus, ram, scale_out, usd;
    std::optional<bool> estimated, verified;
    const json* spot_interruption = nullptr;
};

// A new offering's members, read in this order; each row also makes its key known.
const auto kOfferingFields = std::to_array<RequestField<OfferingMembers>>({
    {"id", &Optional<&OfferingMembers::id>},
    {"provider", &Optional<&OfferingMembers::provider>},
    {"instance_type", &Optional<&OfferingMembers::instance_type>},
    {"accelerator", &Optional<&OfferingMembers::accelerator>},
    {"accelerator_count", &Optional<&OfferingMembers::count>},
    {"accelerator_memory_gb", &Optional<&OfferingMembers::memory>},
    {"vcpus", &Optional<&OfferingMembers::vcpus>},
    {"ram_gib", &Optional<&OfferingMembers::ram>},
    {"interconnect", &Optional<&OfferingMembers::interconnect>},
    {"scale_out_gbit_per_s", &Optional<&OfferingMembers::scale_out>},
    {"region", &Optional<&OfferingMembers::region>},
    {"price_type", &Optional<&OfferingMembers::price_type>},
    {"spot_interruption", [](JsonReader& r, std::string_view key,
                             OfferingMembers& m) { m.spot_interruption = r.Object(key); }},
    {"notes", &Optional<&OfferingMembers::notes>},
    {"usd_per_hour", &Optional<&OfferingMembers::usd>},
    {"as_of", &Optional<&OfferingMembers::as_of>},
    {"as_of_estimated", &Optional<&OfferingMembers::estimated>},
    {"source", &Optional<&OfferingMembers::source>},
    {"verified", &Optional<&OfferingMembers::verified>},
    {"price_notes", &Optional<&OfferingMembers::price_notes>},
});

OfferingMembers ReadOfferingMembers(JsonReader& r) {
    r.OnlyKnown(RequestKeys(kOfferingFields));
    OfferingMembers m;
    ReadFields(r, m, kOfferingFields);
    return m;
}

void RequireOfferingMembers(JsonReader& r, const OfferingMembers& m) {
    auto require = [&](bool present, const std::string& key) {
        if (!present && r.ok()) {
            r.Fail(ErrorCode::kInvalidArgument, key, "is required");
        }
    };
    require(m.provider.has_value(), "provider");
    require(m.instance_type.has_value(), "instance_type");
    require(m.accelerator.has_value(), "accelerator");
    require(m.count.has_value(), "accelerator_count");
    require(m.region.has_value(), "region");
    require(m.price_type.has_value(), "price_type");
    require(m.usd.has_value(), "usd_per_hour");
    require(m.as_of.has_value(), "as_of");
    require(m.source.has_value(), "source");
}

// The free texts and the hardware figures, bounded.
void SetOfferingTexts(JsonReader& r, const OfferingMembers& m, pricing::Offering& o) {
    auto text = [&](const std::optional<std::string>& v, const std::string& key, bool required) {
        std::string s = v.value_or("");
        if ((required && s.empty()) || s.size() > kMaxTextBytes) {
            r.Fail(ErrorCode::kInvalidArgument, key,
                   required ? "must be 1-1000 characters" : "must be at most 1000 characters");
        }
        return s;
    };
    auto spec = [&](const std::optional<double>& v, const std::string& key) {
        if (v && (!std::isfinite(*v) || *v < 0 || *v > kMaxSpec)) {
            r.Fail(ErrorCode::kInvalidArgument, key, "must be a number from 0 to 1e9");
        }
        return v;
    };
    o.instance_type = text(m.instance_type, "instance_type", true);
    o.region = text(m.region, "region", true);
    o.interconnect = text(m.interconnect, "interconnect", false);
    o.notes = text(m.notes, "notes", false);
    o.price.source = text(m.source, "source", true);
    o.price.notes = text(m.price_notes, "price_notes", false);
    o.accelerator_memory_gb = spec(m.memory, "accelerator_memory_gb");
    o.vcpus = spec(m.vcpus, "vcpus");
    o.ram_gib = spec(m.ram, "ram_gib");
    o.scale_out_gbit_per_s = spec(m.scale_out, "scale_out_gbit_per_s");
}

// Provider, accelerator, count and price type resolved to the catalog's own.
void SetOfferingKinds(JsonReader& r, const OfferingMembers& m, const pricing::Catalog& catalog,
                      pricing::Offering& o) {
    if (auto p = ResolveProvider(*m.provider)) {
        o.provider = *p;
    } else {
        std::string known;
        for (const auto& kp : pricing::KnownProviders()) {
            known += (known.empty() ? "" : ", ") + kp.id;
        }
        r.Fail(ErrorCode::kInvalidArgument, "provider",
               "unknown provider '" + m.provider->substr(0, 40) + "'; known: " + known);
    }
    if (auto a = ResolveAccelerator(catalog, *m.accelerator)) {
        o.accelerator = *a;
    } else {
        r.Fail(ErrorCode::kInvalidArgument, "accelerator",
               "unknown accelerator '" + m.accelerator->substr(0, 60) +
                   "'; use an id from GET /v1/accelerators");
    }
    if (*m.count < 1 || *m.count > 100000) {
        r.Fail(ErrorCode::kInvalidArgument, "accelerator_count", "must be from 1 to 100000");
    }
    o.accelerator_count = *m.count;
    if (auto t = pricing::ParsePriceType(*m.price_type)) {
        o.price_type = *t;
    } else {
        r.Fail(ErrorCode::kInvalidArgument, "price_type",
               "must be on_demand, spot, commit_1y, commit_3y or capacity_block");
    }
}

// The first price: bounded to whole micro-dollars, dated.
void SetFirstPrice(JsonReader& r, const OfferingMembers& m, pricing::Offering& o) {
    if (!std::isfinite(*m.usd) || *m.usd < 0 || *m.usd > kMaxUsdPerHour) {
        r.Fail(ErrorCode::kInvalidArgument, "usd_per_hour", "must be a number from 0 to 1000000");
    } else if (!pricing::IsWholeMicroUsd(*m.usd)) {
        r.Fail(ErrorCode::kInvalidArgument, "usd_per_hour", kMicroUsdOnly);
    }
    o.price.usd_per_hour = *m.usd;
    o.price.as_of = *m.as_of;
    o.price.as_of_estimated = m.estimated.value_or(false);
    o.price.verified = m.verified.value_or(!o.price.as_of_estimated);
    if (r.ok()) {
        CheckPriceDate(r, o.price.as_of, o.price.as_of_estimated, m.verified);
    }
}

// The id sent, or one made from provider, instance type, region and price type; a slug.
void SetOfferingId(JsonReader& r, const OfferingMembers& m, pricing::Offering& o) {
    std::string price_type_slug(pricing::PriceTypeName(o.price_type));
    std::replace(price_type_slug.begin(), price_type_slug.end(), '_', '-');
    o.id = m.id.value_or(pricing::LowerAscii(o.provider + "-" + o.instance_type + "-" + o.region +
                                             "-" + price_type_slug));
    if (r.ok() && !IsSlug(o.id)) {
        r.Fail(ErrorCode::kInvalidArgument, m.id ? "id" : "instance_type",
               "the offering id '" + o.id.substr(0, 60) +
                   "' must be 1-200 lowercase letters, digits, '.', '-' or '_'" +
                   (m.id ? "" : "; send an explicit id"));
    }
}

// One new offering with its first price; `pointer` is the JSON pointer of the object.
Result<pricing::Offering> DecodeNewOffering(const json& object, const std::string& pointer,
                                            const pricing::Catalog& catalog) {
    if (!object.is_object()) {
        return MakeError(ErrorCode::kMalformed, "must be an object",
                         pointer.empty() ? "/" : pointer);
    }
    JsonReader r(object, pointer);
    const OfferingMembers m = ReadOfferingMembers(r);
    if (!r.ok()) {
        return r.error();
    }
    RequireOfferingMembers(r, m);
    if (!r.ok()) {
        return r.error();
    }
    pricing::Offering o;
    SetOfferingTexts(r, m, o);
    SetOfferingKinds(r, m, catalog, o);
    if (m.spot_interruption != nullptr && r.ok()) {
        auto decoded = DecodeSpotInterruption(*m.spot_interruption, pointer);
        if (!decoded.ok()) {
            return decoded.error();
        }
        o.spot_interruption = decoded.value();
        if (o.price_type != pricing::PriceType::kSpot) {
            r.Fail(ErrorCode::kInvalidArgument, "spot_interruption",
                   "is only valid on spot offerings");
        }
    }
    SetFirstPrice(r, m, o);
    SetOfferingId(r, m, o);
    if (!r.ok()) {
        return r.error();
    }
    return o;
}

// The columns of a bulk CSV import (docs/database.md, "Writes, history, time travel"), mapped
// to the JSON members; id, scale_out_gbit_per_s, spot_interruption_bucket and as_of_estimated
// may be added. usd_per_accel_hour is derived and ignored.
const std::vector<std::pair<std::string, std::string>> kCsvColumns = {
    {"provider", "provider"},
    {"sku", "instance_type"},
    {"accelerator", "accelerator"},
    {"accel_count", "accelerator_count"},
    {"accel_mem_gb_each", "accelerator_memory_gb"},
    {"vcpus", "vcpus"},
    {"ram_gib", "ram_gib"},
    {"interconnect", "interconnect"},
    {"region", "region"},
    {"price_type", "price_type"},
    {"usd_per_hour", "usd_per_hour"},
    {"usd_per_accel_hour", ""},
    {"as_of", "as_of"},
    {"source", "source"},
    {"verified", "verified"},
    {"notes", "price_notes"},
    {"id", "id"},
    {"scale_out_gbit_per_s", "scale_out_gbit_per_s"},
    {"spot_interruption_bucket", "spot_interruption"},
    {"as_of_estimated", "as_of_estimated"}};

// CSV text -> JSON objects with typed members. Errors name "line N".
Result<json> CsvToJson(const std::string& body) {
    // Excel's "CSV UTF-8" starts with a byte order mark; it is not part of the first column.
    constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
    std::string_view text = body;
    if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) {
        text.remove_prefix(kUtf8Bom.size());
    }
    auto records = pricing::ParseCsv(text, "body");
    if (!records.ok()) {
        return records.error();
    }
    const auto& rows = records.value();
    if (rows.empty()) {
        return MakeError(ErrorCode::kInvalidArgument, "the CSV body has no header row", "line 1");
    }
    static const std::set<std::string> kNumbers = {"accelerator_memory_gb", "vcpus", "ram_gib",
                                                   "scale_out_gbit_per_s", "usd_per_hour"};
    std::vector<std::string> members;
    for (const auto& column : rows.front().fields) {
        auto it = std::find_if(kCsvColumns.begin(), kCsvColumns.end(),
                               [&](const auto& c) { return c.first == column; });
        if (it == kCsvColumns.end()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "unknown CSV column '" + column.substr(0, 40) +
                                 "'; use the columns of the shared prices.csv",
                             "line 1");
        }
        members.push_back(it->second);
    }
    json items = json::array();
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const auto& fields = rows[i].fields;
        const std::string where = "line " + std::to_string(rows[i].line);
        json item = json::object();
        for (std::size_t c = 0; c < members.size() && c < fields.size(); ++c) {
            const std::string& key = members[c];
            const std::string& value = fields[c];
            if (key.empty() || value.empty()) {
                continue;
            }
            if (kNumbers.count(key) != 0) {
                char* end = nullptr;
                double number = std::strtod(value.c_str(), &end);
                if (end != value.c_str() + value.size() || !std::isfinite(number)) {
                    return MakeError(
                        ErrorCode::kInvalidArgument,
                        where + ": " + key + " '" + value.substr(0, 40) + "' is not a number",
                        where);
                }
                item[key] = number;
            } else if (key == "accelerator_count") {
                char* end = nullptr;
                long number = std::strtol(value.c_str(), &end, 10);
                if (end != value.c_str() + value.size() || number < 1 || number > 100000) {
                    return MakeError(ErrorCode::kInvalidArgument,
                                     where + ": accel_count must be an integer from 1 to 100000",
                                     where);
                }
                item[key] = static_cast<int>(number);
            } else if (key == "spot_interruption") {
                item[key] = {{"bucket", value}};  // the bounds follow from the bucket
            } else if (key == "verified" || key == "as_of_estimated") {
                std::string v = pricing::LowerAscii(value);
                if (v != "yes" && v != "no" && v != "true" && v != "false") {
                    return MakeError(ErrorCode::kInvalidArgument,
                                     where + ": " + key + " must be yes, no, true or false", where);
                }
                item[key] = v == "yes" || v == "true";
            } else {
                item[key] = value;
            }
        }
        items.push_back(std::move(item));
    }
    return items;
}

}  // namespace

namespace {

// The new price's members as sent, read in this order; each row also makes its key known.
struct NewPriceMembers {
    std::optional<double> usd_per_hour;
    std::optional<std::string> as_of, source;
    std::optional<bool> as_of_estimated, verified;
    std::optional<std::string> notes;
};
const auto kNewPriceFields = std::to_array<RequestField<NewPriceMembers>>({
    {"usd_per_hour", &Optional<&NewPriceMembers::usd_per_hour>},
    {"as_of", &Optional<&NewPriceMembers::as_of>},
    {"source", &Optional<&NewPriceMembers::source>},
    {"as_of_estimated", &Optional<&NewPriceMembers::as_of_estimated>},
    {"verified", &Optional<&NewPriceMembers::verified>},
    {"notes", &Optional<&NewPriceMembers::notes>},
});

// PUT /v1/offerings/{id}/price's body: the new price, checked field by field.
Result<NewPrice> DecodeNewPrice(const json& body) {
    JsonReader r(body, "");
    r.OnlyKnown(RequestKeys(kNewPriceFields));
    NewPriceMembers members;
    ReadFields(r, members, kNewPriceFields);
    const auto& [usd, as_of, source, as_of_estimated, verified, notes] = members;
    NewPrice price;
    price.as_of_estimated = as_of_estimated.value_or(false);
    price.verified = verified.value_or(!price.as_of_estimated);
    price.notes = notes.value_or("");
    if (r.ok() && !usd) {
        r.Fail(ErrorCode::kInvalidArgument, "usd_per_hour", "is required");
    }
    if (r.ok() && !source) {
        r.Fail(ErrorCode::kInvalidArgument, "source", "is required");
    }
    if (r.ok() && (!std::isfinite(*usd) || *usd < 0 || *usd > kMaxUsdPerHour)) {
        r.Fail(ErrorCode::kInvalidArgument, "usd_per_hour", "must be a number from 0 to 1000000");
    }
    if (r.ok() && !pricing::IsWholeMicroUsd(*usd)) {
        r.Fail(ErrorCode::kInvalidArgument, "usd_per_hour", kMicroUsdOnly);
    }
    if (r.ok() && (source->empty() || source->size() > 200)) {
        r.Fail(ErrorCode::kInvalidArgument, "source", "must be 1-200 characters");
    }
    if (r.ok() && price.notes.size() > kMaxTextBytes) {
        r.Fail(ErrorCode::kInvalidArgument, "notes", "must be at most 1000 characters");
    }
    // as_of defaults to today (UTC): the day the new price was observed.
    price.as_of = as_of.value_or(TodayUtc());
    if (r.ok()) {
        CheckPriceDate(r, price.as_of, price.as_of_estimated, verified);
    }
    if (!r.ok()) {
        return r.error();
    }
    price.usd_per_hour = *usd;
    price.source = *source;
    return price;
}

// PUT /v1/offerings/{id}/price: a new price observation (admin key).
void ServePutPrice(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto write = BeginOfferingWrite(deps, req, res);
    if (!write) {
        return;
    }
    if (MediaType(req) != "application/json") {
        return WriteFault(res, req, Fault::kUnsupportedMediaType,
                          "send the new price as Content-Type: application/json");
    }
    auto body = ParseJsonBody(req.body);
    if (!body.ok()) {
        return WriteProblem(res, req, body.error());
    }
    auto price = DecodeNewPrice(body.value());
    if (!price.ok()) {
        return WriteProblem(res, req, price.error());
    }
    auto stored = deps.writes->PutPrice(
        *write, req.matches[1].str(), price.value(), [](const OfferingHistory& h) {
            return Encoded(200, HistoryJson(h), OfferingEtag(h.version));
        });
    if (!stored.ok()) {
        return WriteProblem(res, req, stored.error());
    }
    WriteStored(res, stored.value());
}

// POST /v1/offerings' body: one offering or an array (JSON), or rows (CSV), as JSON objects;
// on failure writes the problem (415 for another media type) and returns nullopt.
std::optional<json> ReadOfferingsBody(const httplib::Request& req, httplib::Response& res) {
    std::string type = MediaType(req);
    Result<json> body = MakeError(ErrorCode::kMalformed, "no body");
    if (type == "application/json") {
        body = ParseBodyAllowingArray(req);
    } else if (type == "text/csv") {
        body = CsvToJson(req.body);
    } else {
        WriteFault(res, req, Fault::kUnsupportedMediaType,
                   "send one offering or an array as application/json, or rows as "
                   "text/csv");
        return std::nullopt;
    }
    if (!body.ok()) {
        WriteProblem(res, req, body.error());
        return std::nullopt;
    }
    return std::move(body).value();
}

// The new offerings of a body (`bulk`: an array, errors pointing at /i), each checked against
// the catalog, no id twice.
Result<std::vector<pricing::Offering>> DecodeNewOfferings(const json& body, bool bulk,
                                                          const pricing::Catalog& catalog) {
    std::vector<json> objects;
    if (bulk) {
        objects.assign(body.begin(), body.end());
    } else {
        objects.push_back(body);
    }
    if (objects.empty() || objects.size() > kMaxBulkItems) {
        return MakeError(ErrorCode::kInvalidArgument, "send 1 to 1000 offerings per request", "/");
    }
    std::vector<pricing::Offering> offerings;
    std::set<std::string> ids;
    for (std::size_t i = 0; i < objects.size(); ++i) {
        std::string pointer = bulk ? "/" + std::to_string(i) : "";
        auto decoded = DecodeNewOffering(objects[i], pointer, catalog);
        if (!decoded.ok()) {
            return decoded.error();
        }
        if (!ids.insert(decoded.value().id).second) {
            return MakeError(
                ErrorCode::kInvalidArgument,
                "offering id '" + decoded.value().id + "' appears twice in this request",
                pointer + "/id");
        }
        offerings.push_back(std::move(decoded).value());
    }
    return offerings;
}

// POST /v1/offerings: one new offering (201 with it) or up to 1000 (201 with a list).
void ServeCreateOfferings(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto write = BeginOfferingWrite(deps, req, res);
    if (!write) {
        return;
    }
    auto body = ReadOfferingsBody(req, res);
    if (!body) {
        return;
    }
    const bool bulk = body->is_array();
    auto offerings = DecodeNewOfferings(*body, bulk, *deps.catalog());
    if (!offerings.ok()) {
        return WriteProblem(res, req, offerings.error());
    }
    auto stored = deps.writes->CreateOfferings(
        *write, offerings.value(), [bulk](const std::vector<OfferingHistory>& created) {
            if (!bulk && created.size() == 1) {
                return Encoded(201, HistoryJson(created.front()),
                               OfferingEtag(created.front().version));
            }
            json items = json::array();
            for (const auto& h : created) {
                items.push_back(HistoryJson(h));
            }
            json catalog_version =
                created.empty() ? json("") : json(created.front().catalog_version);
            return Encoded(201,
                           {{"catalog_version", std::move(catalog_version)},
                            {"created_count", created.size()},
                            {"items", std::move(items)}},
                           "");
        });
    if (!stored.ok()) {
        return WriteProblem(res, req, stored.error());
    }
    if (!bulk && !offerings.value().empty()) {
        res.set_header("Location", "/v1/offerings/" + offerings.value().front().id);
    }
    WriteStored(res, stored.value());
}

// DELETE /v1/offerings/{id}: the offering retired (kept in history; admin key).
void ServeRetireOffering(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    auto write = BeginOfferingWrite(deps, req, res);
    if (!write) {
        return;
    }
    auto stored =
        deps.writes->RetireOffering(*write, req.matches[1].str(), [](const OfferingHistory& h) {
            return Encoded(200, HistoryJson(h), OfferingEtag(h.version));
        });
    if (!stored.ok()) {
        return WriteProblem(res, req, stored.error());
    }
    WriteStored(res, stored.value());
}

// Where a page of `h`'s prices starts: after the price the cursor names.
Result<std::size_t> HistoryPageStart(const OfferingHistory& h, const PageRequest& page) {
    if (!page.after) return std::size_t{0};
    for (std::size_t i = 0; i < h.prices.size(); ++i) {
        if (std::to_string(h.prices[i].id) == *page.after) return i + 1;
    }
    return MakeError(ErrorCode::kInvalidArgument,
                     "is not a cursor of this offering's history; start again without cursor",
                     "cursor");
}

// GET /v1/offerings/{id}/history: every price the offering had (database mode), a page at a
// time.
void ServeOfferingHistory(const Deps& deps, const httplib::Request& req, httplib::Response& res) {
    const QueryParams params(req, {"limit", "cursor"});
    if (auto checked = params.Check(); !checked.ok()) {
        return WriteProblem(res, req, checked.error());
    }
    if (!deps.history) {
        return WriteProblem(res, req,
                            pricing::MakeError(pricing::ErrorCode::kDatabaseRequired,
                                               "price history is kept only in PostgreSQL "
                                               "mode: start gpucost with DATABASE_URL"));
    }
    const std::string id = req.matches[1].str();
    auto history = deps.history->History(id);
    if (!history.ok()) {
        return WriteProblem(res, req, history.error());
    }
    const OfferingHistory& h = history.value();
    // Pinned to the offering's version: a write may place a back-dated price before the
    // walk's position or shorten intervals already listed (409 on cursor: start again).
    const std::string listing = "history:" + id;
    const std::string version = "v" + std::to_string(h.version);
    auto page = ReadPageRequest(params, listing, version);
    if (!page.ok()) {
        return WriteProblem(res, req, page.error());
    }
    auto first = HistoryPageStart(h, page.value());
    if (!first.ok()) {
        return WriteProblem(res, req, first.error());
    }
    const std::size_t limit = page.value().limit;
    const std::size_t end = std::min(h.prices.size(), first.value() + limit);
    json body = HistoryJson(h, first.value(), limit);
    body["limit"] = limit;
    body["total_count"] = h.prices.size();
    body["next_cursor"] =
        end < h.prices.size() && end > first.value()
            ? json(NextPageCursor(listing, std::to_string(h.prices[end - 1].id), version))
            : json(nullptr);
    res.set_header("ETag", OfferingEtag(h.version));
    WriteJson(res, body);
}

}  // namespace

void AddWriteRoutes(RouteTable& routes, const Deps& deps) {
    const std::string one = std::string("/v1/offerings/") + kIdPattern;
    routes.Put(one + "/price", Bind(deps, &ServePutPrice));
    routes.Post("/v1/offerings", Bind(deps, &ServeCreateOfferings));
    routes.Delete(one, Bind(deps, &ServeRetireOffering));
    routes.Get(one + "/history", Bind(deps, &ServeOfferingHistory));
}

}  // namespace gpucost::http
