#include "pricing/offering_query.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <variant>

namespace gpucost::pricing {
namespace {

constexpr std::array<std::pair<OfferingSortField, const char*>, 7> kSortNames = {{
    {OfferingSortField::kUsdPerAcceleratorHour, "usd_per_accelerator_hour"},
    {OfferingSortField::kUsdPerHour, "usd_per_hour"},
    {OfferingSortField::kAcceleratorCount, "accelerator_count"},
    {OfferingSortField::kAcceleratorMemoryGb, "accelerator_memory_gb"},
    {OfferingSortField::kAsOf, "as_of"},
    {OfferingSortField::kProvider, "provider"},
    {OfferingSortField::kId, "id"},
}};

using SortKey = std::variant<double, std::string>;

// A price sorts by its value; one that is not a usable price (NaN, compared false with every
// other, would break the sort's ordering and could come first) sorts after every price.
double PriceKey(const Offering& o, double value) {
    return IsUsableUsdPerHour(o.price.usd_per_hour) ? value
                                                    : std::numeric_limits<double>::infinity();
}

SortKey KeyOf(const Offering& o, OfferingSortField field) {
    switch (field) {
        case OfferingSortField::kUsdPerAcceleratorHour:
            return PriceKey(o, o.UsdPerAcceleratorHour());
        case OfferingSortField::kUsdPerHour:
            return PriceKey(o, o.price.usd_per_hour);
        case OfferingSortField::kAcceleratorCount:
            return static_cast<double>(o.accelerator_count);
        case OfferingSortField::kAcceleratorMemoryGb:
            return o.accelerator_memory_gb.value_or(0.0);
        case OfferingSortField::kAsOf:
            return o.price.as_of;
        case OfferingSortField::kProvider:
            return o.provider;
        case OfferingSortField::kId:
            return o.id;
    }
    return o.id;
}

// Strict weak order on (key, id), honouring the direction for the key only; id always ascends
// so ties page deterministically.
bool Before(const SortKey& ka, const std::string& ida, const SortKey& kb, const std::string& idb,
            bool descending) {
    if (ka != kb) {
        return descending ? kb < ka : ka < kb;
    }
    return ida < idb;
}

std::string KeyText(const SortKey& key) {
    if (const double* d = std::get_if<double>(&key)) {
        std::array<char, 64> buf{};
        auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), *d);
        (void)ec;
        return "n" + std::string(buf.data(), end);
    }
    return "s" + std::get<std::string>(key);
}

std::optional<SortKey> ParseKeyText(const std::string& text) {
    if (text.empty()) {
        return std::nullopt;
    }
    if (text[0] == 's') {
        return SortKey{text.substr(1)};
    }
    if (text[0] == 'n') {
        double d = 0;
        auto [end, ec] = std::from_chars(text.data() + 1, text.data() + text.size(), d);
        if (ec != std::errc() || end != text.data() + text.size()) {
            return std::nullopt;
        }
        return SortKey{d};
    }
    return std::nullopt;
}

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlEncode(const std::string& in) {
    std::string out;
    std::size_t i = 0;
    while (i + 2 < in.size()) {
        auto byte = [&](std::size_t k) {
            return static_cast<unsigned>(static_cast<unsigned char>(in[k]));
        };
        unsigned v = (byte(i) << 16U) | (byte(i + 1) << 8U) | byte(i + 2);
        out += kB64[(v >> 18U) & 63U];
        out += kB64[(v >> 12U) & 63U];
        out += kB64[(v >> 6U) & 63U];
        out += kB64[v & 63U];
        i += 3;
    }
    std::size_t rest = in.size() - i;
    if (rest > 0) {
        unsigned v = static_cast<unsigned>(static_cast<unsigned char>(in[i])) << 16U;
        if (rest == 2) {
            v |= static_cast<unsigned>(static_cast<unsigned char>(in[i + 1])) << 8U;
        }
        out += kB64[(v >> 18U) & 63U];
        out += kB64[(v >> 12U) & 63U];
        if (rest == 2) {
            out += kB64[(v >> 6U) & 63U];
        }
    }
    return out;
}

std::optional<std::string> Base64UrlDecode(const std::string& in) {
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (char c : in) {
        const char* p = std::find(std::begin(kB64), std::end(kB64) - 1, c);
        if (p == std::end(kB64) - 1) {
            return std::nullopt;
        }
        buffer = (buffer << 6U) | static_cast<unsigned>(p - kB64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((buffer >> static_cast<unsigned>(bits)) & 0xFFU);
        }
    }
    return out;
}

constexpr char kCursorSep = '\x1f';

// 64-bit FNV-1a (offset basis and prime from the FNV reference, isthe.com/chongo/tech/comp/fnv):
// enough to tell one query's cursor from another's, not a security boundary.
constexpr std::uint64_t kFnvOffsetBasis = 14695981039346656037ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

std::string NumberText(double value) {
    std::array<char, 32> buffer{};
    auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    return ec == std::errc() ? std::string(buffer.data(), end) : std::string("?");
}

std::string Alternatives(std::vector<std::string> values) {
    std::sort(values.begin(), values.end());
    std::string out;
    for (const auto& v : values) {
        out += v + ',';
    }
    return out;
}

}  // namespace

std::string OfferingQueryDigest(const OfferingQuery& query) {
    std::vector<std::string> price_types;
    for (PriceType t : query.price_types) {
        price_types.emplace_back(PriceTypeName(t));
    }
    auto optional_text = [](const auto& value) {
        return value ? NumberText(static_cast<double>(*value)) : std::string("-");
    };
    const std::string canonical =
        "sort=" + OfferingSortName(query.sort) + ";provider=" + Alternatives(query.providers) +
        ";accelerator=" + Alternatives(query.accelerators) +
        ";price_type=" + Alternatives(price_types) + ";region=" + Alternatives(query.regions) +
        ";accelerator_family=" + Alternatives(query.accelerator_families) +
        ";country=" + Alternatives(query.geography.countries) +
        ";continent=" + Alternatives(query.geography.continents) +
        ";min_accelerator_count=" + optional_text(query.min_accelerator_count) +
        ";max_accelerator_count=" + optional_text(query.max_accelerator_count) +
        ";min_accelerator_memory_gb=" + optional_text(query.min_accelerator_memory_gb) +
        ";max_usd_per_accelerator_hour=" + optional_text(query.max_usd_per_accelerator_hour) +
        ";verified=" + (query.verified ? (*query.verified ? "true" : "false") : "-");
    std::uint64_t hash = kFnvOffsetBasis;
    for (char c : canonical) {
        hash = (hash ^ static_cast<unsigned char>(c)) * kFnvPrime;
    }
    std::array<char, 17> hex{};
    auto [end, ec] = std::to_chars(hex.data(), hex.data() + 16, hash, 16);
    (void)ec;
    return std::string(static_cast<std::size_t>(16 - (end - hex.data())), '0') +
           std::string(hex.data(), end);
}

std::optional<OfferingSort> ParseOfferingSort(const std::string& text) {
    OfferingSort sort;
    std::string name = text;
    if (!name.empty() && name[0] == '-') {
        sort.descending = true;
        name = name.substr(1);
    } else if (!name.empty() && name[0] == '+') {
        name = name.substr(1);
    }
    for (const auto& [field, field_name] : kSortNames) {
        if (name == field_name) {
            sort.field = field;
            return sort;
        }
    }
    return std::nullopt;
}

std::string OfferingSortName(const OfferingSort& sort) {
    for (const auto& [field, field_name] : kSortNames) {
        if (field == sort.field) {
            return (sort.descending ? "-" : "") + std::string(field_name);
        }
    }
    return "id";
}

Status OfferingQuery::Validate() const {
    Error error{ErrorCode::kInvalidArgument, "invalid query parameters", "", {}};
    auto fail = [&](const std::string& field, const std::string& detail) {
        error.errors.push_back({field, detail});
    };
    // An unknown provider, like an unknown accelerator or region, is a filter that matches
    // nothing (docs/api.md): an empty list, not an error.
    if (min_accelerator_count && *min_accelerator_count < 1) {
        fail("min_accelerator_count", "must be at least 1");
    }
    if (max_accelerator_count && *max_accelerator_count < 1) {
        fail("max_accelerator_count", "must be at least 1");
    }
    if (min_accelerator_count && max_accelerator_count &&
        *min_accelerator_count > *max_accelerator_count) {
        fail("min_accelerator_count", "must not exceed max_accelerator_count");
    }
    if (min_accelerator_memory_gb && !(*min_accelerator_memory_gb >= 0)) {
        fail("min_accelerator_memory_gb", "must be a non-negative number");
    }
    if (max_usd_per_accelerator_hour && !(*max_usd_per_accelerator_hour >= 0)) {
        fail("max_usd_per_accelerator_hour", "must be a non-negative number");
    }
    if (limit < 1 || limit > kMaxPageLimit) {
        fail("limit", "must be between 1 and " + std::to_string(kMaxPageLimit));
    }
    if (error.errors.empty()) {
        return Ok{};
    }
    error.field = error.errors.front().field;
    error.message = error.errors.front().field + ": " + error.errors.front().detail;
    return error;
}

namespace {

// An offering that passed the filters with its sort key, computed once (not per comparison).
struct Match {
    SortKey key;
    const Offering* offering = nullptr;
};

bool Passes(const Offering& o, const OfferingQuery& query) {
    auto contains = [](const auto& list, const auto& value) {
        return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
    };
    if (!contains(query.providers, o.provider) || !contains(query.accelerators, o.accelerator) ||
        !contains(query.price_types, o.price_type) || !contains(query.regions, o.region) ||
        (!query.accelerator_families.empty() &&
         !contains(query.accelerator_families, AcceleratorFamily(o.accelerator)))) {
        return false;
    }
    if (!query.geography.Any() &&
        (query.region_table == nullptr ||
         !query.region_table->Within(o.provider, o.region, query.geography))) {
        return false;
    }
    if (query.min_accelerator_count && o.accelerator_count < *query.min_accelerator_count) {
        return false;
    }
    if (query.max_accelerator_count && o.accelerator_count > *query.max_accelerator_count) {
        return false;
    }
    if (query.min_accelerator_memory_gb &&
        o.accelerator_memory_gb.value_or(0.0) < *query.min_accelerator_memory_gb) {
        return false;
    }
    if (query.max_usd_per_accelerator_hour &&
        !(o.UsdPerAcceleratorHour() <= *query.max_usd_per_accelerator_hour)) {
        return false;
    }
    return !query.verified || o.price.verified == *query.verified;
}

// The filtered offerings, unordered: the page is picked out of them by a partial sort.
std::vector<Match> Matches(const OfferingList& offerings, const OfferingQuery& query) {
    std::vector<Match> matches;
    for (const Offering& o : offerings) {
        if (Passes(o, query)) {
            matches.push_back({KeyOf(o, query.sort.field), &o});
        }
    }
    return matches;
}

// The position a cursor names: the last item's (key, id) of the page before.
struct CursorPosition {
    SortKey key;
    std::string id;
};

// Decodes the query's cursor; nullopt without one. Keyset pagination: the page starts at the
// first match strictly after this position, so a page boundary survives catalog changes
// between requests.
Result<std::optional<CursorPosition>> DecodeCursor(const OfferingQuery& query,
                                                   const std::string& digest) {
    if (query.cursor.empty()) {
        return std::optional<CursorPosition>{};
    }
    auto bad_cursor =
        MakeError(ErrorCode::kInvalidArgument,
                  "cursor is not valid for this listing; start again without it", "cursor");
    auto decoded = Base64UrlDecode(query.cursor);
    if (!decoded) {
        return bad_cursor;
    }
    // digest SEP catalog version SEP sort key SEP id
    std::size_t first = decoded->find(kCursorSep);
    std::size_t second = first == std::string::npos ? first : decoded->find(kCursorSep, first + 1);
    std::size_t third =
        second == std::string::npos ? second : decoded->find(kCursorSep, second + 1);
    if (third == std::string::npos) {
        return bad_cursor;
    }
    if (decoded->substr(0, first) != digest) {
        return MakeError(ErrorCode::kMalformed,
                         "cursor was issued for another query (its filters or sort differ); "
                         "repeat that query with it, or start again without a cursor",
                         "cursor");
    }
    const std::string version = decoded->substr(first + 1, second - first - 1);
    if (version != query.catalog_version) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "the catalog changed since this walk began (" + version + ", now " +
                             query.catalog_version +
                             "): its pages would list offerings twice or never; start again "
                             "without a cursor (database mode: or page with as_of fixed)",
                         "cursor");
    }
    auto key = ParseKeyText(decoded->substr(second + 1, third - second - 1));
    if (!key) {
        return bad_cursor;
    }
    return std::optional<CursorPosition>{CursorPosition{*key, decoded->substr(third + 1)}};
}

}  // namespace

Result<OfferingPage> QueryOfferings(const OfferingList& offerings, const OfferingQuery& query) {
    std::vector<Match> matches = Matches(offerings, query);
    // The digest ties a cursor to its query; only a cursor given or issued needs it.
    std::string digest;
    auto query_digest = [&]() -> const std::string& {
        if (digest.empty()) digest = OfferingQueryDigest(query);
        return digest;
    };
    OfferingPage page;
    page.total_count = matches.size();
    const bool descending = query.sort.descending;
    if (!query.cursor.empty()) {
        auto position = DecodeCursor(query, query_digest());
        if (!position.ok()) {
            return position.error();
        }
        const CursorPosition& at = *position.value();
        std::erase_if(matches, [&](const Match& m) {
            return !Before(at.key, at.id, m.key, m.offering->id, descending);
        });
    }
    // Before() orders every pair (ties end at the id), so sorting only the page's share gives
    // the page a full sort would: O(matches log limit) instead of O(matches log matches).
    const std::size_t count = std::min(matches.size(), query.limit);
    const auto page_end = matches.begin() + static_cast<std::ptrdiff_t>(count);
    std::partial_sort(matches.begin(), page_end, matches.end(),
                      [&](const Match& a, const Match& b) {
                          return Before(a.key, a.offering->id, b.key, b.offering->id, descending);
                      });
    page.items.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        page.items.push_back(matches[i].offering);
    }
    if (count < matches.size() && count > 0) {
        const Match& last = matches[count - 1];
        page.next_cursor =
            Base64UrlEncode(query_digest() + kCursorSep + query.catalog_version + kCursorSep +
                            KeyText(last.key) + kCursorSep + last.offering->id);
    }
    return page;
}

}  // namespace gpucost::pricing
