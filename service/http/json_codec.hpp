#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"
#include "pricing/price_age.hpp"

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

// A number at the JSON boundary, exact: serialised as the shortest text that reads back as
// the same double, so echoed constants equal those used (3.6e-06 stays 3.6e-06). Non-finite
// values become null, -0 becomes 0.
json Num(double value);

json ToJson(const pricing::Accelerator& a);
// `with_history` adds superseded_prices (single-offering reads only).
json ToJson(const pricing::Offering& o, bool with_history);
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
