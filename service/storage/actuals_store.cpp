#include "service/storage/actuals_store.hpp"

namespace gpucost::storage {
namespace {

// Stores one charge unless its row is stored already; true when it was added.
bool InsertCharge(pqxx::work& tx, std::int64_t import_id, const pricing::ActualCharge& c) {
    auto added = tx.exec_params(
        "INSERT INTO actual_charges (row_id, import_id, provider, month, charge_period_start,"
        " billing_currency, sku, offering_id, accelerator, region, pricing_category,"
        " accelerator_hours, billed_cost, effective_cost, list_cost, tag_value)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, ''), $9, $10, $11, $12, $13, $14, $15,"
        " NULLIF($16, '')) ON CONFLICT (row_id) DO NOTHING RETURNING row_id",
        c.row_id, import_id, c.provider, c.month, c.charge_period_start, c.billing_currency, c.sku,
        c.offering_id, c.accelerator, c.region, c.pricing_category, c.accelerator_hours,
        c.billed_cost, c.effective_cost, c.list_cost, c.tag_value);
    return !added.empty();
}

}  // namespace

pricing::Result<http::ActualsImport> PgActualsStore::Import(
    const http::WriteRequest& request, const std::string& tag_key,
    const pricing::ActualsReport& report, const std::vector<pricing::ActualCharge>& charges) {
    return session_.Run<http::ActualsImport>(
        [&](pqxx::connection& conn) -> pricing::Result<http::ActualsImport> {
            pqxx::work tx(conn);
            http::ActualsImport out;
            out.id = tx.exec_params(
                           "INSERT INTO actuals_imports (imported_by, tag_key, rows_read, kept,"
                           " added) VALUES (NULLIF($1, 0), $2, $3, $4, 0) RETURNING id",
                           request.principal.key_id, tag_key,
                           static_cast<std::int64_t>(report.rows_read),
                           static_cast<std::int64_t>(report.kept))
                         .at(0)[0]
                         .as<std::int64_t>();
            for (const pricing::ActualCharge& c : charges) {
                ++(InsertCharge(tx, out.id, c) ? out.added : out.already_imported);
            }
            tx.exec_params("UPDATE actuals_imports SET added = $2 WHERE id = $1", out.id,
                           static_cast<std::int64_t>(out.added));
            tx.commit();
            return out;
        });
}

pricing::Result<std::vector<http::ActualMonth>> PgActualsStore::MonthsTagged(
    std::string_view tag_key, std::string_view tag_value) {
    return session_.Run<std::vector<http::ActualMonth>>(
        [&](pqxx::connection& conn) -> pricing::Result<std::vector<http::ActualMonth>> {
            pqxx::read_transaction tx(conn);
            std::vector<http::ActualMonth> out;
            for (const auto& r : tx.exec_params(
                     "SELECT c.billing_currency, c.month, count(*), sum(c.accelerator_hours),"
                     " sum(c.billed_cost), sum(c.effective_cost), sum(c.list_cost)"
                     " FROM actual_charges c JOIN actuals_imports i ON i.id = c.import_id"
                     " WHERE c.tag_value = $1 AND i.tag_key = $2"
                     " GROUP BY c.billing_currency, c.month ORDER BY c.billing_currency, c.month",
                     std::string(tag_value), std::string(tag_key))) {
                http::ActualMonth m;
                m.billing_currency = r[0].as<std::string>();
                m.month = r[1].as<std::string>();
                m.rows = r[2].as<std::size_t>();
                m.accelerator_hours = r[3].as<double>();
                m.billed_cost = r[4].as<double>();
                m.effective_cost = r[5].as<double>();
                m.list_cost = r[6].as<double>();
                out.push_back(std::move(m));
            }
            return out;
        });
}

}  // namespace gpucost::storage
