#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pricing/actuals.hpp"
#include "pricing/error.hpp"
#include "service/ports/principal.hpp"
#include "service/ports/write_request.hpp"

namespace gpucost::ports {

// Port between the HTTP handlers and imported actual spend (PostgreSQL mode). Implemented by
// storage::PgActualsStore and MemoryActualsStore, wired in service/main.cpp; absent (null) in
// embedded mode, where /v1/actuals and /v1/scenarios/{id}/actuals answer 409
// database_required.

// The FOCUS Tags key whose value attributes a charge to a saved scenario (its id) unless a
// request names another (?tag_key=); the same default as `gpucost actuals import --tag-key`.
inline constexpr char kActualsTagKey[] = "gpucost-scenario";
// A tag key is at most this many bytes: AWS's limit for a cost allocation tag key (Azure allows
// 512, GCP label keys 63), so every cloud's key fits.
inline constexpr std::size_t kMaxActualsTagKeyBytes = 128;

// The FOCUS Tags keys an import reads: `tag_key` attributes a row to a scenario; `group_by`,
// when not empty, is the showback key (team, project) the report totals the rows by.
struct FocusTagKeys {
    std::string tag_key = kActualsTagKey;
    std::string group_by;
};

// Reads a FOCUS export held in memory (CSV text), attributing rows by the FOCUS Tags keys
// `keys`: each kept accelerator charge to `on_charge`, every row counted in `report`. The reader
// lives in service/import (which depends on this library), so service/main.cpp hands it in.
using FocusTextReader = std::function<pricing::Status(
    std::string_view csv, const FocusTagKeys& keys, pricing::ActualsReport& report,
    const std::function<void(const pricing::ActualCharge&)>& on_charge)>;

// What one import stored.
struct ActualsImport {
    std::int64_t id = 0;
    std::size_t added = 0;             // charges not stored before
    std::size_t already_imported = 0;  // charges an earlier import (or this body) stored
};

// One import as GET /v1/actuals/imports lists it.
struct ActualsImportRecord {
    std::int64_t id = 0;
    std::string team;         // the importing key's team: its admins list and delete it
    std::string imported_by;  // the importing key's name; empty when unknown
    TimestampUs imported_at_us = 0;
    std::string tag_key;
    std::size_t rows_read = 0;
    std::size_t kept = 0;
    std::size_t added = 0;    // charges it stored first
    std::size_t charges = 0;  // of those, still stored (all of them: charges are never changed)
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

// MonthsTagged's charges by kind: FOCUS PricingCategory and the catalog offering, in one
// currency and month. What the price effect's split into rate, commitment coverage and mix
// reads (pricing/plan_vs_actual.hpp SplitPriceEffect).
struct ActualClassMonth {
    std::string billing_currency;
    std::string month;             // YYYY-MM
    std::string pricing_category;  // Standard | Dynamic | Committed | Other
    std::string offering_id;       // empty when the catalog has none
    double accelerator_hours = 0;
    double effective_cost = 0;  // to the cent
};

class ActualsStore {
public:
    ActualsStore() = default;
    virtual ~ActualsStore() = default;
    ActualsStore(const ActualsStore&) = delete;
    ActualsStore& operator=(const ActualsStore&) = delete;
    ActualsStore(ActualsStore&&) = delete;
    ActualsStore& operator=(ActualsStore&&) = delete;

    // Where one export's kept charges go, as they are read.
    using ChargeSink = std::function<void(const pricing::ActualCharge&)>;
    // What an import records of the export it read.
    struct ExportCounts {
        std::size_t rows_read = 0;
        std::size_t kept = 0;
    };
    // Reads one export, each kept charge to the sink; an error stores nothing.
    using ExportReader = std::function<pricing::Result<ExportCounts>(const ChargeSink&)>;

    // One transaction: records the import (by request.principal, owned by its team, with the
    // reader's counts) and stores the charges `read` gives, in batches as they are read (an
    // export's charges are never all in memory); a charge whose row_id the team stored
    // already is counted, not stored again. The reader's error, or kUnavailable when the
    // database cannot be reached, stores nothing. Answers as `encode` answers what was stored,
    // with the Idempotency-Key protocol of the catalog writes: a retry of the same request is
    // answered the recorded answer (replayed), not imported again.
    using ImportEncoder = std::function<StoredResponse(const ActualsImport&)>;
    [[nodiscard]] virtual pricing::Result<StoredResponse> Import(const WriteRequest& request,
                                                                 const std::string& tag_key,
                                                                 const ExportReader& read,
                                                                 const ImportEncoder& encode) = 0;
    // The same for charges already read (`report` gives the counts).
    [[nodiscard]] pricing::Result<StoredResponse> Import(
        const WriteRequest& request, const std::string& tag_key,
        const pricing::ActualsReport& report, const std::vector<pricing::ActualCharge>& charges,
        const ImportEncoder& encode) {
        return Import(
            request, tag_key,
            [&](const ChargeSink& sink) -> pricing::Result<ExportCounts> {
                for (const pricing::ActualCharge& c : charges) sink(c);
                return ExportCounts{report.rows_read, report.kept};
            },
            encode);
    }
    // Totals of the stored charges whose import, by team `team`, read the tag `tag_key` and
    // found `tag_value`, by (currency, month), ascending. Another team's imports do not count
    // towards a team's scenario.
    [[nodiscard]] virtual pricing::Result<std::vector<ActualMonth>> MonthsTagged(
        std::string_view tag_key, std::string_view tag_value, std::string_view team) = 0;
    // The same charges as MonthsTagged by (currency, month, pricing category, offering),
    // ascending.
    [[nodiscard]] virtual pricing::Result<std::vector<ActualClassMonth>> ClassesTagged(
        std::string_view tag_key, std::string_view tag_value, std::string_view team) = 0;
    // The newest `limit` imports of `team` (every team's when empty) older than import
    // `before` (0: from the newest), newest first, and how many there are in all.
    [[nodiscard]] virtual pricing::Result<std::pair<std::vector<ActualsImportRecord>, std::size_t>>
    ListImports(std::string_view team, std::size_t limit, std::int64_t before) = 0;
    // Deletes import `id` of request.principal's team and the charges it stored first, in one
    // transaction: kNotFound for an unknown id or another team's import. Answers
    // DeletedAnswer(), replayed to a retry with the same Idempotency-Key.
    [[nodiscard]] virtual pricing::Result<StoredResponse> DeleteImport(const WriteRequest& request,
                                                                       std::int64_t id) = 0;
};

}  // namespace gpucost::ports
