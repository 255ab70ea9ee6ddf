#pragma once

#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "pricing/assumption.hpp"
#include "pricing/error.hpp"
#include "pricing/offering.hpp"

namespace gpucost::http {

// How much of `assumptions` an estimate or plan answer carries (?assumptions=):
// full (default) every field; summary name, value and unit; none an empty array, for callers
// that keep the texts from an earlier answer.
enum class AssumptionDetail { kFull, kSummary, kNone };

inline constexpr char kAssumptionsParam[] = "assumptions";

// The ?assumptions= value; kInvalidArgument (422) naming the parameter for anything else.
[[nodiscard]] pricing::Result<AssumptionDetail> AssumptionDetailOf(const httplib::Request& req);

// The JSON text of an `assumptions` array. Each assumption's constant part (name, unit,
// description, source) is escaped once and kept, so a request pays only for its values. The
// kept parts are found by the texts' addresses when all four are string literals (most are),
// else by their content; the texts come from code and the catalog, so the set is small and
// changes only with a new catalog version (the cache forgets everything past kMaxCachedTexts
// entries).
std::string EncodeAssumptions(const pricing::Assumptions& assumptions, AssumptionDetail detail);

// Entries kept by each encoding cache (assumption prefixes; offerings); a few MB at most. The
// offering cache keeps two generations of this many (the live one and the one before), so
// it keeps hitting on catalogs larger than this.
inline constexpr std::size_t kMaxCachedTexts = 4096;

// Writes `body` (an object) as application/json with its top-level `assumptions` member set
// to EncodeAssumptions(assumptions, detail), without building a DOM for them.
void WriteJsonWithAssumptions(httplib::Response& res, nlohmann::json body,
                              const pricing::Assumptions& assumptions, AssumptionDetail detail,
                              int status = 200);

// Writes `text`, a whole answer already encoded as JSON, as application/json.
void WriteJsonText(httplib::Response& res, std::string text, int status = 200);

// Appends the JSON text of ToJson(offering, false, today), encoded once per catalog version
// and day (the version is a content hash, so equal versions hold equal offerings).
void AppendOfferingJson(std::string& out, const std::string& catalog_version,
                        const pricing::Offering& offering, const std::string& today);

// Writes `body` (an object) as application/json with its top-level `member` set to
// `raw_json`, text already encoded.
void WriteJsonWithRaw(httplib::Response& res, nlohmann::json body, const std::string& member,
                      const std::string& raw_json, int status = 200);

}  // namespace gpucost::http
