#include "service/storage/pg_store.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "service/log.hpp"
#include "service/storage/history_loader.hpp"
#include "service/storage/pg_connection.hpp"
#include "service/storage/pg_store_lease.hpp"
#include "service/storage/recorded_answer.hpp"

// PgStore's catalog writes: prices placed by the current-price rule, offerings created and retired,
// each once per Idempotency-Key.
namespace gpucost::storage {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

// How long a writer waits for its own change to reach this process's snapshot before it
// answers (read-your-writes on the same replica).
constexpr std::chrono::milliseconds kOwnWriteWait{2000};

// SQL fragment: the timestamptz of a microsecond count passed as text parameter $n.
std::string Us(int n) {
    return "(timestamptz 'epoch' + $" + std::to_string(n) + "::bigint * interval '1 microsecond')";
}

std::optional<pricing::Error> CheckIfMatch(const ports::WriteRequest& request,
                                           const ports::OfferingHistory& h) {
    if (!request.if_match) {
        return std::nullopt;
    }
    std::string etag = ports::OfferingEtag(h.version);
    if (ports::IfMatchAccepts(*request.if_match, etag)) {
        return std::nullopt;
    }
    return MakeError(ErrorCode::kFailedPrecondition,
                     "If-Match does not match the offering's current ETag " + etag +
                         "; it changed since you read it: read it again and reapply your change",
                     ports::kIfMatchField);
}

// SQL for the timestamptz of a microsecond count (an integer this code computed, never input).
std::string UsLiteral(ports::TimestampUs us) {
    return "(timestamptz 'epoch' + " + std::to_string(us) + "::bigint * interval '1 microsecond')";
}

// Rows per multi-row INSERT: one statement stays well under libpq's limits at 1,000.
constexpr std::size_t kInsertChunk = 1000;

// Writes what placing prices changed: one UPDATE for every interval that moved (rows are
// never deleted), multi-row INSERTs of the new rows (ids < 0 in `histories`, inserted in the
// order placed), one version bump per offering.
void WritePlaced(pqxx::work& tx, const std::map<std::string, OfferingHistory>& histories,
                 const std::map<std::int64_t, std::optional<ports::TimestampUs>>& before,
                 std::int64_t key_id, bool bump_versions) {
    std::string moved;
    std::vector<std::pair<const std::string*, const PriceInterval*>> added;
    std::string offerings;
    for (const auto& [id, h] : histories) {
        offerings += (offerings.empty() ? "" : ", ") + tx.quote(id);
        for (const PriceInterval& p : h.prices) {
            if (p.id < 0) {
                added.emplace_back(&id, &p);
            } else if (p.valid_to_us && before.at(p.id) != p.valid_to_us) {
                moved += (moved.empty() ? "(" : ", (") + std::to_string(p.id) + ", " +
                         std::to_string(*p.valid_to_us) + ")";
            }
        }
    }
    if (!moved.empty()) {
        // Before the inserts: the closed current row frees prices_one_current for the new one.
        tx.exec(
            "UPDATE prices p SET valid_to = timestamptz 'epoch' + u.to_us * interval"
            " '1 microsecond' FROM (VALUES " +
            moved + ") AS u(id, to_us) WHERE p.id = u.id");
    }
    std::sort(added.begin(), added.end(),
              [](const auto& a, const auto& b) { return a.second->id > b.second->id; });
    std::map<std::string, std::int64_t> sources;
    for (const auto& [id, p] : added) {
        if (!sources.contains(p->observation.source)) {
            sources[p->observation.source] = SourceId(tx, p->observation.source);
        }
    }
    for (std::size_t start = 0; start < added.size(); start += kInsertChunk) {
        std::string rows;
        for (std::size_t i = start; i < std::min(added.size(), start + kInsertChunk); ++i) {
            const PriceInterval& p = *added[i].second;
            const pricing::PriceObservation& o = p.observation;
            rows += std::string(rows.empty() ? "(" : ", (") + tx.quote(*added[i].first) + ", " +
                    tx.quote(pqxx::to_string(o.usd_per_hour)) + "::numeric, " + tx.quote(o.as_of) +
                    "::date, " + (o.as_of_estimated ? "true" : "false") + ", " +
                    std::to_string(sources.at(o.source)) + ", " + (o.verified ? "true" : "false") +
                    ", " + tx.quote(o.notes) + ", " + UsLiteral(p.valid_from_us) + ", " +
                    (p.valid_to_us ? UsLiteral(*p.valid_to_us) : std::string("NULL")) + ", " +
                    (key_id == 0 ? std::string("NULL") : std::to_string(key_id)) + ")";
        }
        tx.exec(
            "INSERT INTO prices (offering_id, usd_per_hour, as_of, as_of_estimated,"
            " source_id, verified, notes, valid_from, valid_to, recorded_by) VALUES " +
            rows);
    }
    if (bump_versions && !offerings.empty()) {
        tx.exec("UPDATE offerings SET version = version + 1 WHERE id IN (" + offerings + ")");
    }
}

// Places `prices`, in order, into `histories` (read in this transaction, under the catalog
// lock) by the current-price rule (PlacePrice) and writes the result (WritePlaced).
pricing::Status PlaceAndWrite(pqxx::work& tx, std::map<std::string, OfferingHistory>& histories,
                              const std::vector<ports::PriceUpdate>& prices,
                              ports::TimestampUs now_us, std::int64_t key_id,
                              bool bump_versions = true) {
    std::map<std::int64_t, std::optional<ports::TimestampUs>> before;
    for (const auto& [id, h] : histories) {
        for (const PriceInterval& p : h.prices) {
            before[p.id] = p.valid_to_us;
        }
    }
    std::int64_t next_new = -1;
    for (std::size_t i = 0; i < prices.size(); ++i) {
        const std::string& id = prices[i].offering_id;
        const std::string item = prices.size() > 1 ? " (item " + std::to_string(i) + ")" : "";
        auto found = histories.find(id);
        if (found == histories.end()) {
            return MakeError(ErrorCode::kNotFound, "no offering with id '" + id + "'" + item, "id");
        }
        OfferingHistory& h = found->second;
        if (h.retired_at_us) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "offering '" + id + "' is retired; create a new offering" + item);
        }
        const ports::NewPrice& n = prices[i].price;
        pricing::PriceObservation p{n.usd_per_hour, n.as_of,    n.as_of_estimated,
                                    n.source,       n.verified, n.notes};
        PricePlacement placed = PlacePrice(h, p, now_us);
        for (const PriceInterval& row : h.prices) {
            if (placed.current && !row.valid_to_us && row.id > 0 && row.valid_from_us >= now_us) {
                return MakeError(ErrorCode::kFailedPrecondition,
                                 "the current price of '" + id +
                                     "' takes effect later than now; it cannot be replaced yet");
            }
        }
        ApplyPlacement(h, placed, p, next_new--, now_us);
    }
    WritePlaced(tx, histories, before, key_id, bump_versions);
    return pricing::Ok{};
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Writes

pricing::Result<ports::StoredResponse> PgStore::RunWrite(const ports::WriteRequest& request,
                                                         const WriteBody& body) {
    std::optional<pricing::Error> last_failure;
    for (int attempt = 1; attempt <= options_.max_write_attempts; ++attempt) {
        auto lease = Checkout();
        if (!lease.ok()) {
            return lease.error();
        }
        bool committing = false;
        std::int64_t revision = 0;
        std::optional<pricing::Result<ports::StoredResponse>> committed;
        try {
            // tx ends with this block, before the lease is given back below.
            pqxx::work tx(lease.value()->conn());
            tx.exec_params("SELECT revision FROM catalog_state FOR UPDATE");
            auto recorded = RecordedAnswer(tx, request);
            if (!recorded.ok()) {
                return recorded.error();
            }
            if (recorded.value()) {
                return *recorded.value();
            }
            // key_id 0 is the operator on the command line (`gpucost import` with
            // DATABASE_URL): no API key, the rows are recorded with recorded_by NULL.
            // The key check and the write's instant (taken after the lock, so intervals never
            // overlap) in one round trip: every statement here runs under the catalog lock.
            auto active = tx.exec_params(
                "SELECT (extract(epoch from clock_timestamp()) * 1000000)::bigint"
                " WHERE $1 = 0 OR EXISTS (SELECT 1 FROM api_keys WHERE id = $1 AND"
                " revoked_at IS NULL)",
                request.principal.key_id);
            if (active.empty()) {
                return MakeError(ErrorCode::kFailedPrecondition, "the API key has been revoked",
                                 "Authorization");
            }
            const auto now_us = active[0][0].as<std::int64_t>();
            CatalogChange changed;
            auto outcome = body(tx, now_us, changed);
            if (!outcome.ok()) {
                return outcome.error();
            }
            revision = BumpRevision(tx, changed);
            RecordAnswer(tx, request, outcome.value());
            committing = true;
            tx.commit();
            committed = std::move(outcome);
        } catch (const pqxx::in_doubt_error& e) {
            lease.value()->Drop();
            MarkDown(e.what());
            return Unavailable(
                "the database connection was lost while committing, so the outcome "
                "is unknown; retry with the same Idempotency-Key to apply it once");
        } catch (const pqxx::transaction_rollback& e) {
            // Serialization failure or deadlock: nothing was applied; retry the whole thing.
            last_failure = Unavailable("the write conflicted with another one; retry");
            log::Info("retrying write", {{"attempt", attempt}, {"sqlstate", SqlState(e)}});
        } catch (const pqxx::unique_violation& e) {
            // A concurrent request with the same Idempotency-Key won; the retry replays it.
            last_failure = MakeError(ErrorCode::kFailedPrecondition,
                                     "a conflicting write happened at the same time; retry");
            log::Info("retrying write", {{"attempt", attempt}, {"sqlstate", SqlState(e)}});
        } catch (const pqxx::integrity_constraint_violation& e) {
            log::Warn("write rejected by a database constraint", {{"error", e.what()}});
            return MakeError(ErrorCode::kInvalidArgument,
                             "the write breaks a catalog constraint (unknown accelerator, "
                             "negative price or overlapping validity)");
        } catch (const std::exception& e) {
            bool open = lease.value()->conn().is_open();
            if (committing) {
                lease.value()->Drop();
                MarkDown(e.what());
                return Unavailable(
                    "the outcome of the commit is unknown; retry with the same "
                    "Idempotency-Key to apply it once");
            }
            if (!open || dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
                SqlState(e).rfind("57", 0) == 0 || SqlState(e).rfind("08", 0) == 0) {
                // Lost before COMMIT was sent: nothing applied, safe to try once more.
                lease.value()->Drop();
                MarkDown(e.what());
                last_failure = Unavailable("the database is unreachable; retry later");
                continue;
            }
            log::Error("write failed", {{"error", e.what()}, {"sqlstate", SqlState(e)}});
            return MakeError(ErrorCode::kInternal, "write failed");
        }
        if (committed) {
            connected_ = true;
            // The connection goes back before the wait, so that writers queue on the
            // catalog_state lock, not on the pool.
            lease.value().reset();
            return AwaitOwnWrite(revision, std::move(*committed));
        }
    }
    return last_failure.value_or(Unavailable("the write could not be applied; retry"));
}

pricing::Result<ports::StoredResponse> PgStore::AwaitOwnWrite(
    std::int64_t revision, pricing::Result<ports::StoredResponse> outcome) const {
    if (!WaitForRevision(revision, kOwnWriteWait)) {
        log::Warn("write committed but not yet in this replica's snapshot",
                  {{"revision", revision}});
    }
    return outcome;
}

namespace {

// The catalog version a write makes, for its answer. Every catalog write holds the
// catalog_state lock (RunWrite) and bumps the revision once when it succeeds.
std::string WrittenCatalogVersion(pqxx::work& tx) {
    return RevisionVersion(
        tx.exec("SELECT revision + 1 FROM catalog_state")[0][0].as<std::int64_t>());
}

ports::OfferingHistory AsWritten(pqxx::work& tx, ports::OfferingHistory history) {
    history.catalog_version = WrittenCatalogVersion(tx);
    return history;
}

std::vector<ports::OfferingHistory> AsWritten(pqxx::work& tx,
                                              std::vector<ports::OfferingHistory> histories) {
    const std::string version = WrittenCatalogVersion(tx);
    for (ports::OfferingHistory& h : histories) {
        h.catalog_version = version;
    }
    return histories;
}

}  // namespace

pricing::Result<ports::StoredResponse> PgStore::PutPrice(const ports::WriteRequest& request,
                                                         std::string_view id,
                                                         const ports::NewPrice& price,
                                                         const HistoryEncoder& encode) {
    const std::string offering_id(id);
    return RunWrite(request,
                    [&](pqxx::work& tx, ports::TimestampUs now_us,
                        CatalogChange& changed) -> pricing::Result<ports::StoredResponse> {
                        auto h = LoadOfferingHistory(tx, offering_id, /*lock=*/true);
                        if (!h) {
                            return MakeError(ErrorCode::kNotFound,
                                             "no offering with id '" + offering_id + "'", "id");
                        }
                        if (h->retired_at_us) {
                            return MakeError(
                                ErrorCode::kFailedPrecondition,
                                "offering '" + offering_id + "' is retired; create a new offering");
                        }
                        if (auto stale = CheckIfMatch(request, *h)) {
                            return *stale;
                        }
                        // Placed by the current-price rule: a back-dated price goes into the
                        // history in its place and does not become current by being written last
                        // (docs/database.md).
                        std::map<std::string, OfferingHistory> histories;
                        histories.emplace(offering_id, std::move(*h));
                        auto written =
                            PlaceAndWrite(tx, histories, {ports::PriceUpdate{offering_id, price}},
                                          now_us, request.principal.key_id);
                        if (!written.ok()) {
                            return written.error();
                        }
                        changed.offering_ids.push_back(offering_id);
                        return encode(AsWritten(tx, *LoadOfferingHistory(tx, offering_id, false)));
                    });
}

pricing::Result<ports::StoredResponse> PgStore::PutPrices(
    const ports::WriteRequest& request, const std::vector<ports::PriceUpdate>& prices,
    const HistoriesEncoder& encode) {
    std::vector<std::string> ids;
    std::set<std::string> seen;
    for (const ports::PriceUpdate& p : prices) {
        if (seen.insert(p.offering_id).second) {
            ids.push_back(p.offering_id);
        }
    }
    return RunWrite(request,
                    [&](pqxx::work& tx, ports::TimestampUs now_us,
                        CatalogChange& changed) -> pricing::Result<ports::StoredResponse> {
                        // Every catalog writer holds the catalog_state lock (RunWrite), so no row
                        // locks here.
                        std::map<std::string, OfferingHistory> histories;
                        for (OfferingHistory& h : LoadOfferingHistories(tx, ids)) {
                            std::string id = h.offering.id;
                            histories.emplace(std::move(id), std::move(h));
                        }
                        auto written =
                            PlaceAndWrite(tx, histories, prices, now_us, request.principal.key_id);
                        if (!written.ok()) {
                            return written.error();
                        }
                        changed.offering_ids = ids;
                        return encode(AsWritten(tx, LoadOfferingHistories(tx, ids)));
                    });
}

// All in bulk: one accelerator check, multi-row INSERTs of the offerings and of
// their first prices (PlaceAndWrite, as a price batch writes them), one read for the answer;
// per item statements made 1,000 items about 6,000 round trips under the catalog lock.
pricing::Result<ports::StoredResponse> PgStore::CreateOfferings(
    const ports::WriteRequest& request, const std::vector<pricing::Offering>& offerings,
    const CreatedEncoder& encode) {
    return RunWrite(
        request,
        [&](pqxx::work& tx, ports::TimestampUs now_us,
            CatalogChange& changed) -> pricing::Result<ports::StoredResponse> {
            std::set<std::string> accelerators;
            std::string wanted;
            for (const pricing::Offering& o : offerings) {
                wanted += (wanted.empty() ? "" : ", ") + tx.quote(o.accelerator);
            }
            if (!wanted.empty()) {
                for (const auto& r :
                     tx.exec("SELECT id FROM accelerators WHERE id IN (" + wanted + ")")) {
                    accelerators.insert(r[0].as<std::string>());
                }
            }
            std::set<std::string> inserted;
            for (std::size_t start = 0; start < offerings.size(); start += kInsertChunk) {
                std::string rows;
                for (std::size_t i = start; i < std::min(offerings.size(), start + kInsertChunk);
                     ++i) {
                    const pricing::Offering& o = offerings[i];
                    if (!accelerators.contains(o.accelerator)) {
                        return MakeError(ErrorCode::kInvalidArgument,
                                         "unknown accelerator '" + o.accelerator + "' (item " +
                                             std::to_string(i) + ")");
                    }
                    auto opt = [&](const std::optional<double>& v) {
                        return v ? tx.quote(pqxx::to_string(*v)) + "::numeric"
                                 : std::string("NULL");
                    };
                    rows += std::string(rows.empty() ? "(" : ", (") + tx.quote(o.id) + ", " +
                            tx.quote(o.provider) + ", " + tx.quote(o.instance_type) + ", " +
                            tx.quote(o.accelerator) + ", " + std::to_string(o.accelerator_count) +
                            ", " + opt(o.accelerator_memory_gb) + ", " + opt(o.vcpus) + ", " +
                            opt(o.ram_gib) + ", " + tx.quote(o.interconnect) + ", " +
                            opt(o.scale_out_gbit_per_s) + ", " + tx.quote(o.region) + ", " +
                            tx.quote(std::string(pricing::PriceTypeName(o.price_type))) + ", " +
                            (o.spot_interruption ? tx.quote(o.spot_interruption->label)
                                                 : std::string("NULL")) +
                            ", " + tx.quote(o.notes) + ", " + UsLiteral(now_us) + ")";
                }
                for (const auto& r : tx.exec(
                         "INSERT INTO offerings (id, provider, instance_type, accelerator_id,"
                         " accelerator_count, accelerator_memory_gb, vcpus, ram_gib, interconnect,"
                         " scale_out_gbit_per_s, region, price_type, spot_interruption_bucket, "
                         "notes,"
                         " created_at) VALUES " +
                         rows + " ON CONFLICT (id) DO NOTHING RETURNING id")) {
                    inserted.insert(r[0].as<std::string>());
                }
            }
            std::map<std::string, OfferingHistory> histories;
            std::vector<ports::PriceUpdate> prices;
            for (std::size_t i = 0; i < offerings.size(); ++i) {
                const pricing::Offering& o = offerings[i];
                // Not inserted: it existed, or an earlier item of this batch has its id.
                if (!inserted.contains(o.id) || histories.contains(o.id)) {
                    return MakeError(ErrorCode::kFailedPrecondition,
                                     "offering '" + o.id + "' already exists (item " +
                                         std::to_string(i) + "); use PUT /v1/offerings/" + o.id +
                                         "/price to change its price");
                }
                histories[o.id].offering = o;
                prices.push_back({o.id, ports::NewPrice{o.price.usd_per_hour, o.price.as_of,
                                                        o.price.as_of_estimated, o.price.source,
                                                        o.price.verified, o.price.notes}});
                changed.offering_ids.push_back(o.id);
            }
            auto written = PlaceAndWrite(tx, histories, prices, now_us, request.principal.key_id,
                                         /*bump_versions=*/false);
            if (!written.ok()) {
                return written.error();
            }
            std::map<std::string, OfferingHistory> read;
            for (OfferingHistory& h : LoadOfferingHistories(tx, changed.offering_ids)) {
                std::string id = h.offering.id;
                read.emplace(std::move(id), std::move(h));
            }
            std::vector<ports::OfferingHistory> created;
            created.reserve(offerings.size());
            for (const pricing::Offering& o : offerings) {
                created.push_back(std::move(read.at(o.id)));
            }
            return encode(AsWritten(tx, std::move(created)));
        });
}

pricing::Result<ports::StoredResponse> PgStore::RetireOffering(const ports::WriteRequest& request,
                                                               std::string_view id,
                                                               const HistoryEncoder& encode) {
    const std::string offering_id(id);
    return RunWrite(request,
                    [&](pqxx::work& tx, ports::TimestampUs now_us,
                        CatalogChange& changed) -> pricing::Result<ports::StoredResponse> {
                        auto h = LoadOfferingHistory(tx, offering_id, /*lock=*/true);
                        if (!h) {
                            return MakeError(ErrorCode::kNotFound,
                                             "no offering with id '" + offering_id + "'", "id");
                        }
                        if (h->retired_at_us) {
                            return MakeError(ErrorCode::kFailedPrecondition,
                                             "offering '" + offering_id + "' is already retired");
                        }
                        if (auto stale = CheckIfMatch(request, *h)) {
                            return *stale;
                        }
                        tx.exec_params("UPDATE prices SET valid_to = greatest(valid_from, " +
                                           Us(2) + ") WHERE offering_id = $1 AND valid_to IS NULL",
                                       offering_id, now_us);
                        tx.exec_params("UPDATE offerings SET retired_at = " + Us(2) +
                                           ", version = version + 1 WHERE id = $1",
                                       offering_id, now_us);
                        changed.offering_ids.push_back(offering_id);
                        return encode(AsWritten(tx, *LoadOfferingHistory(tx, offering_id, false)));
                    });
}

}  // namespace gpucost::storage
