#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/actuals.hpp"
#include "pricing/error.hpp"
#include "service/http/catalog_store.hpp"

namespace gpucost::http {

// Port between the HTTP handlers and imported actual spend (issue 25, PostgreSQL mode).
// Implemented in service/storage/actuals_store.*, wired in service/main.cpp; absent (null) in
// embedded mode, where /v1/actuals and /v1/scenarios/{id}/actuals answer 409
// database_required.

// The FOCUS Tags key whose value attributes a charge to a saved scenario (its id) unless a
// request names another (?tag_key=); the same default as `gpucost actuals import --tag-key`.
inline constexpr char kActualsTagKey[] = "gpucost-scenario";
// A tag key is at most this many bytes: AWS's limit for a cost allocation tag key (Azure allows
// 512, GCP label keys 63), so every cloud's key fits.
inline constexpr std::size_t kMaxActualsTagKeyBytes = 128;

// Reads a FOCUS export held in memory (CSV text), attributing rows by the FOCUS Tags key
// `tag_key`: each kept accelerator charge to `on_charge`, every row counted in `report`. The reader
// lives in service/import (which depends on this library), so service/main.cpp hands it in.
using FocusTextReader = std::function<pricing::Status(
    std::string_view csv, const std::string& tag_key, pricing::ActualsReport& report,
    const std::function<void(const pricing::ActualCharge&)>& on_charge)>;

// What one import stored.
struct ActualsImport {
    std::int64_t id = 0;
    std::size_t added = 0;             // charges not stored before
    std::size_t already_imported = 0;  // charges an earlier import (or this body) stored
};

// Stored charges of one attribution tag value in one currency and month.
struct ActualMonth {
    std::string billing_currency;
    std::string month;  // YYYY-MM
    std::size_t rows = 0;
    double accelerator_hours = 0;
    double billed_cost = 0;
    double effective_cost = 0;
    double list_cost = 0;
};

class ActualsStore {
public:
    ActualsStore() = default;
    virtual ~ActualsStore() = default;
    ActualsStore(const ActualsStore&) = delete;
    ActualsStore& operator=(const ActualsStore&) = delete;
    ActualsStore(ActualsStore&&) = delete;
    ActualsStore& operator=(ActualsStore&&) = delete;

    // One transaction: records the import (by request.principal, with the report's counts)
    // and stores `charges`; a charge whose row_id is stored already is counted, not stored
    // again. kUnavailable when the database cannot be reached.
    [[nodiscard]] virtual pricing::Result<ActualsImport> Import(
        const WriteRequest& request, const std::string& tag_key,
        const pricing::ActualsReport& report,
        const std::vector<pricing::ActualCharge>& charges) = 0;
    // Totals of the stored charges whose import read the tag `tag_key` and found
    // `tag_value`, by (currency, month), ascending.
    [[nodiscard]] virtual pricing::Result<std::vector<ActualMonth>> MonthsTagged(
        std::string_view tag_key, std::string_view tag_value) = 0;
};

}  // namespace gpucost::http
