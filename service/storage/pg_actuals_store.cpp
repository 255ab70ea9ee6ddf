#include "service/storage/pg_actuals_store.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "service/storage/recorded_answer.hpp"

namespace gpucost::storage {
namespace {

// Charges sent to the database per COPY and INSERT ... SELECT: each statement stays far inside
// the connection's statement timeout (kStatementTimeoutMs, 5 s) whatever the body's size, and
// the staging table holds one batch at a time.
constexpr std::size_t kChargesPerBatch = 10000;

// The staging table one import's batches pass through (dropped with the transaction): the
// columns of actual_charges as the reader gives them, empty strings for absent values.
void CreateStaging(pqxx::work& tx) {
    tx.exec(
        "CREATE TEMP TABLE actuals_staging (row_id text, provider text, month text,"
        " charge_period_start text, billing_currency text, sku text, offering_id text,"
        " accelerator text, region text, pricing_category text,"
        " accelerator_hours double precision, billed_cost double precision,"
        " effective_cost double precision, list_cost double precision, tag_value text)"
        " ON COMMIT DROP");
}

// Stores the charges of `batch` not stored yet for `team`; the number added. The same
// statement as one row at a time gave: a row_id the team stored already (by an earlier import,
// or earlier in this one) is not stored again, nor counted as added.
std::size_t InsertBatch(pqxx::work& tx, std::int64_t import_id, const std::string& team,
                        const std::vector<pricing::ActualCharge>& batch) {
    {
        pqxx::stream_to rows(tx, "actuals_staging");
        for (auto c = batch.begin(); c != batch.end(); ++c) {
            rows << std::make_tuple(c->row_id, c->provider, c->month, c->charge_period_start,
                                    c->billing_currency, c->sku, c->offering_id, c->accelerator,
                                    c->region, c->pricing_category, c->accelerator_hours,
                                    c->billed_cost, c->effective_cost, c->list_cost, c->tag_value);
        }
        rows.complete();
    }
    const pqxx::result added = tx.exec_params(
        "INSERT INTO actual_charges (row_id, import_id, team, provider, month,"
        " charge_period_start, billing_currency, sku, offering_id, accelerator, region,"
        " pricing_category, accelerator_hours, billed_cost, effective_cost, list_cost, tag_value)"
        " SELECT row_id, $1, $2, provider, month, charge_period_start, billing_currency, sku,"
        " NULLIF(offering_id, ''), accelerator, region, pricing_category, accelerator_hours,"
        " billed_cost, effective_cost, list_cost, NULLIF(tag_value, '') FROM actuals_staging"
        " ON CONFLICT (team, row_id) DO NOTHING",
        import_id, team);
    tx.exec("TRUNCATE actuals_staging");
    return static_cast<std::size_t>(added.affected_rows());
}

// Full batches waiting for the database while the next one is read: two keep the database busy
// while the reader fills a third, and bound the memory to a few batches.
constexpr std::size_t kBatchesQueued = 2;

// Stores an import's batches on a thread of its own while the export is read. Reading (the
// importer's CPU) and storing (the database's) then overlap, so a large export takes about the
// longer of the two rather than their sum (docs/billing.md, "Imports at size"). Only the
// writer's thread uses the transaction until Finish returns. A failed store is rethrown to the
// reader at its next batch and by Finish, so the import fails and nothing is committed.
class BatchWriter {
public:
    BatchWriter(pqxx::work& tx, std::int64_t import_id, const std::string& team)
        : thread_([this, &tx, import_id, &team] { Drain(tx, import_id, team); }) {}
    BatchWriter(const BatchWriter&) = delete;
    BatchWriter& operator=(const BatchWriter&) = delete;
    ~BatchWriter() { Stop(); }

    // Queues `batch` (waiting while kBatchesQueued are queued); rethrows a failed store.
    void Push(std::vector<pricing::ActualCharge> batch) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return queue_.size() < kBatchesQueued || failure_; });
        if (failure_) std::rethrow_exception(failure_);
        queue_.push_back(std::move(batch));
        changed_.notify_all();
    }

    // Waits until every queued batch is stored; the charges added. Rethrows a failed store.
    std::size_t Finish() {
        Stop();
        if (failure_) std::rethrow_exception(failure_);
        return added_;
    }

private:
    void Stop() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        changed_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

    void Drain(pqxx::work& tx, std::int64_t import_id, const std::string& team) {
        for (;;) {
            std::vector<pricing::ActualCharge> batch;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [this] { return !queue_.empty() || done_; });
                if (queue_.empty()) return;
                batch = std::move(queue_.front());
                queue_.pop_front();
                changed_.notify_all();
            }
            try {
                const std::size_t added = InsertBatch(tx, import_id, team, batch);
                std::lock_guard lock(mutex_);
                added_ += added;
            } catch (...) {
                std::lock_guard lock(mutex_);
                failure_ = std::current_exception();
                queue_.clear();
                changed_.notify_all();
                return;
            }
        }
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::vector<pricing::ActualCharge>> queue_;
    std::exception_ptr failure_;
    std::size_t added_ = 0;
    bool done_ = false;
    std::thread thread_;  // last: starts once the members above exist
};

// Records the import (by request.principal, for its team) and stores the charges `read` gives
// in batches as they are read, on a writer thread beside the reader; not committed. The reader's
// error stores nothing (the caller rolls the transaction back).
pricing::Result<ports::ActualsImport> StoreImport(pqxx::work& tx,
                                                  const ports::WriteRequest& request,
                                                  const std::string& tag_key,
                                                  const ports::ActualsStore::ExportReader& read) {
    // A key's team always exists; `gpucost actuals import --team` may name none.
    if (tx.exec_params("SELECT 1 FROM teams WHERE id = $1", request.principal.team).empty()) {
        return pricing::MakeError(
            pricing::ErrorCode::kInvalidArgument,
            "no team '" + request.principal.team + "' (gpucost apikey create --team makes one)",
            "team");
    }
    ports::ActualsImport out;
    out.id = tx.exec_params(
                   "INSERT INTO actuals_imports (imported_by, tag_key, rows_read, kept,"
                   " added, team) VALUES (NULLIF($1, 0), $2, 0, 0, 0, $3) RETURNING id",
                   request.principal.key_id, tag_key, request.principal.team)
                 .at(0)[0]
                 .as<std::int64_t>();
    CreateStaging(tx);
    std::vector<pricing::ActualCharge> batch;
    std::size_t charges = 0;
    pricing::Result<ports::ActualsStore::ExportCounts> counts = ports::ActualsStore::ExportCounts{};
    {
        BatchWriter writer(tx, out.id, request.principal.team);
        counts = read([&](const pricing::ActualCharge& c) {
            batch.push_back(c);
            ++charges;
            if (batch.size() >= kChargesPerBatch) {
                writer.Push(std::move(batch));
                batch = {};
                batch.reserve(kChargesPerBatch);
            }
        });
        if (counts.ok() && !batch.empty()) writer.Push(std::move(batch));
        out.added = writer.Finish();  // also on a reader's error: the thread is joined
    }
    if (!counts.ok()) return counts.error();
    out.already_imported = charges - out.added;
    tx.exec_params(
        "UPDATE actuals_imports SET rows_read = $2, kept = $3, added = $4"
        " WHERE id = $1",
        out.id, static_cast<std::int64_t>(counts.value().rows_read),
        static_cast<std::int64_t>(counts.value().kept), static_cast<std::int64_t>(out.added));
    return out;
}

}  // namespace

pricing::Result<ports::StoredResponse> PgActualsStore::Import(const ports::WriteRequest& request,
                                                              const std::string& tag_key,
                                                              const ExportReader& read,
                                                              const ImportEncoder& encode) {
    return session_.Run<ports::StoredResponse>(
        [&](pqxx::connection& conn) -> pricing::Result<ports::StoredResponse> {
            pqxx::work tx(conn);
            return AnswerOnce<ports::ActualsImport>(
                tx, request,
                [&]() -> pricing::Result<ports::ActualsImport> {
                    return StoreImport(tx, request, tag_key, read);
                },
                encode);
        });
}

pricing::Result<std::vector<ports::ActualMonth>> PgActualsStore::MonthsTagged(
    std::string_view tag_key, std::string_view tag_value, std::string_view team) {
    return session_.Run<std::vector<ports::ActualMonth>>(
        [&](pqxx::connection& conn) -> pricing::Result<std::vector<ports::ActualMonth>> {
            pqxx::read_transaction tx(conn);
            std::vector<ports::ActualMonth> out;
            for (const auto& r : tx.exec_params(
                     // Sums in numeric, exact, the costs to the cent (a sum of doubles drifts
                     // with the number of rows: 5415.936000000005).
                     "SELECT c.billing_currency, c.month, count(*) AS rows,"
                     " sum(c.accelerator_hours::numeric)::float8 AS accelerator_hours,"
                     " round(sum(c.billed_cost::numeric), 2)::float8 AS billed_cost,"
                     " round(sum(c.effective_cost::numeric), 2)::float8 AS effective_cost,"
                     " round(sum(c.list_cost::numeric), 2)::float8 AS list_cost"
                     " FROM actual_charges c JOIN actuals_imports i ON i.id = c.import_id"
                     " WHERE c.tag_value = $1 AND i.tag_key = $2 AND c.team = $3"
                     " GROUP BY c.billing_currency, c.month ORDER BY c.billing_currency, c.month",
                     std::string(tag_value), std::string(tag_key), std::string(team))) {
                ports::ActualMonth m;
                m.billing_currency = r["billing_currency"].as<std::string>();
                m.month = r["month"].as<std::string>();
                m.rows = r["rows"].as<std::size_t>();
                m.accelerator_hours = r["accelerator_hours"].as<double>();
                m.billed_cost = r["billed_cost"].as<double>();
                m.effective_cost = r["effective_cost"].as<double>();
                m.list_cost = r["list_cost"].as<double>();
                out.push_back(std::move(m));
            }
            return out;
        });
}

pricing::Result<std::vector<ports::ActualClassMonth>> PgActualsStore::ClassesTagged(
    std::string_view tag_key, std::string_view tag_value, std::string_view team) {
    return session_.Run<std::vector<ports::ActualClassMonth>>(
        [&](pqxx::connection& conn) -> pricing::Result<std::vector<ports::ActualClassMonth>> {
            pqxx::read_transaction tx(conn);
            std::vector<ports::ActualClassMonth> out;
            for (const auto& r : tx.exec_params(
                     "SELECT c.billing_currency, c.month, c.pricing_category,"
                     " coalesce(c.offering_id, '') AS offering_id,"
                     " sum(c.accelerator_hours::numeric)::float8 AS accelerator_hours,"
                     " round(sum(c.effective_cost::numeric), 2)::float8 AS effective_cost"
                     " FROM actual_charges c JOIN actuals_imports i ON i.id = c.import_id"
                     " WHERE c.tag_value = $1 AND i.tag_key = $2 AND c.team = $3"
                     " GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
                     std::string(tag_value), std::string(tag_key), std::string(team))) {
                ports::ActualClassMonth m;
                m.billing_currency = r["billing_currency"].as<std::string>();
                m.month = r["month"].as<std::string>();
                m.pricing_category = r["pricing_category"].as<std::string>();
                m.offering_id = r["offering_id"].as<std::string>();
                m.accelerator_hours = r["accelerator_hours"].as<double>();
                m.effective_cost = r["effective_cost"].as<double>();
                out.push_back(std::move(m));
            }
            return out;
        });
}

namespace {

constexpr char kImportColumns[] =
    "SELECT i.id, i.team, coalesce(k.name, '') AS imported_by,"
    " (extract(epoch from i.imported_at) * 1000000)::bigint AS imported_at_us, i.tag_key,"
    " i.rows_read, i.kept, i.added,"
    " (SELECT count(*) FROM actual_charges c WHERE c.import_id = i.id) AS charges"
    " FROM actuals_imports i LEFT JOIN api_keys k ON k.id = i.imported_by";

ports::ActualsImportRecord ImportFromRow(const pqxx::row& r) {
    ports::ActualsImportRecord out;
    out.id = r["id"].as<std::int64_t>();
    out.team = r["team"].as<std::string>();
    out.imported_by = r["imported_by"].as<std::string>();
    out.imported_at_us = r["imported_at_us"].as<std::int64_t>();
    out.tag_key = r["tag_key"].as<std::string>();
    out.rows_read = r["rows_read"].as<std::size_t>();
    out.kept = r["kept"].as<std::size_t>();
    out.added = r["added"].as<std::size_t>();
    out.charges = r["charges"].as<std::size_t>();
    return out;
}

}  // namespace

pricing::Result<std::pair<std::vector<ports::ActualsImportRecord>, std::size_t>>
PgActualsStore::ListImports(std::string_view team, std::size_t limit, std::int64_t before) {
    using Page = std::pair<std::vector<ports::ActualsImportRecord>, std::size_t>;
    return session_.Run<Page>([&](pqxx::connection& conn) -> pricing::Result<Page> {
        pqxx::read_transaction tx(conn);
        Page out;
        const std::string where = " WHERE ($1 = '' OR i.team = $1)";
        for (const auto& r :
             tx.exec_params(std::string(kImportColumns) + where +
                                " AND ($3::bigint = 0 OR i.id < $3::bigint)"
                                " ORDER BY i.id DESC LIMIT $2",
                            std::string(team), static_cast<std::int64_t>(limit), before)) {
            out.first.push_back(ImportFromRow(r));
        }
        out.second = tx.exec_params("SELECT count(*) FROM actuals_imports i" + where,
                                    std::string(team))[0][0]
                         .as<std::size_t>();
        return out;
    });
}

pricing::Result<ports::StoredResponse> PgActualsStore::DeleteImport(
    const ports::WriteRequest& request, std::int64_t id) {
    return session_.Run<ports::StoredResponse>(
        [&](pqxx::connection& conn) -> pricing::Result<ports::StoredResponse> {
            pqxx::work tx(conn);
            return AnswerOnce<std::monostate>(
                tx, request,
                [&]() -> pricing::Result<std::monostate> {
                    auto rows = tx.exec_params(
                        "SELECT 1 FROM actuals_imports WHERE id = $1 AND team = $2 FOR UPDATE", id,
                        request.principal.team);
                    if (rows.empty()) {
                        return pricing::MakeError(pricing::ErrorCode::kNotFound,
                                                  "no actuals import with id " +
                                                      std::to_string(id) + " of team '" +
                                                      request.principal.team + "'",
                                                  "id");
                    }
                    tx.exec_params("DELETE FROM actual_charges WHERE import_id = $1", id);
                    tx.exec_params("DELETE FROM actuals_imports WHERE id = $1", id);
                    return std::monostate{};
                },
                [](const std::monostate&) { return ports::DeletedAnswer(); });
        });
}

}  // namespace gpucost::storage
