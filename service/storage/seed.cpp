#include "service/storage/seed.hpp"

#include <tuple>
#include <vector>

#include "service/storage/catalog_history.hpp"
#include "service/storage/history_loader.hpp"

namespace gpucost::storage {
namespace {

// The seed's bulk statements grow with the catalog: on 2 cores loaded by other work, the one
// INSERT ... SELECT of 100,000 prices outlasted the 5 s that a serving statement may take
// (kStatementTimeoutMs, which guards the request pool). `gpucost seed` is an operator's
// command in its own transaction, so its statements get this bound instead.
constexpr int kSeedStatementTimeoutMs = 600000;

// Optional numbers travel as text; '' becomes NULL through NULLIF($n, '')::numeric.
std::string Opt(const std::optional<double>& v) {
    return v ? pqxx::to_string(*v) : std::string();
}

// Offerings and their prices in bulk: COPY into temporary tables (all text, converted by
// the INSERT ... SELECT the same way the row-by-row statements did), then one statement per
// table. Rows whose offering id already exists are skipped, with their prices.
void SeedOfferingsAndPrices(pqxx::work& tx, const pricing::Catalog& catalog, SeedReport& report) {
    tx.exec(
        "CREATE TEMP TABLE seed_offerings (id text, provider text, instance_type text,"
        " accelerator_id text, accelerator_count text, accelerator_memory_gb text, vcpus text,"
        " ram_gib text, interconnect text, scale_out_gbit_per_s text, region text,"
        " price_type text, spot_interruption_bucket text, notes text) ON COMMIT DROP");
    tx.exec(
        "CREATE TEMP TABLE seed_prices (ord bigint, offering_id text, usd_per_hour text,"
        " as_of text, as_of_estimated text, source text, verified text, notes text,"
        " valid_from_us text, valid_to_us text) ON COMMIT DROP");
    tx.exec("CREATE TEMP TABLE seed_inserted (id text PRIMARY KEY) ON COMMIT DROP");
    {
        pqxx::stream_to rows(tx, "seed_offerings");
        for (const pricing::Offering& o : catalog.Offerings()) {
            rows << std::make_tuple(
                o.id, o.provider, o.instance_type, o.accelerator,
                std::to_string(o.accelerator_count), Opt(o.accelerator_memory_gb), Opt(o.vcpus),
                Opt(o.ram_gib), o.interconnect, Opt(o.scale_out_gbit_per_s), o.region,
                std::string(pricing::PriceTypeName(o.price_type)),
                o.spot_interruption ? o.spot_interruption->label : std::string(), o.notes);
        }
        rows.complete();
    }
    {
        pqxx::stream_to rows(tx, "seed_prices");
        std::int64_t ord = 0;
        for (const pricing::Offering& o : catalog.Offerings()) {
            // The current observation first: SelectCurrentPrice breaks ties by input order.
            std::vector<pricing::PriceObservation> observations{o.price};
            observations.insert(observations.end(), o.superseded_prices.begin(),
                                o.superseded_prices.end());
            auto intervals = SeedIntervals(observations);
            for (std::size_t i = 0; i < observations.size(); ++i) {
                const auto& p = observations[i];
                const auto& [from, to] = intervals[i];
                rows << std::make_tuple(
                    std::to_string(++ord), o.id, pqxx::to_string(p.usd_per_hour), p.as_of,
                    std::string(p.as_of_estimated ? "true" : "false"), p.source,
                    std::string(p.verified ? "true" : "false"), p.notes, std::to_string(from),
                    to ? std::to_string(*to) : std::string());
            }
        }
        rows.complete();
    }
    auto offerings = tx.exec(
        "WITH inserted AS (INSERT INTO offerings (id, provider, instance_type, accelerator_id,"
        " accelerator_count, accelerator_memory_gb, vcpus, ram_gib, interconnect,"
        " scale_out_gbit_per_s, region, price_type, spot_interruption_bucket, notes)"
        " SELECT id, provider, instance_type, accelerator_id, accelerator_count::int,"
        " NULLIF(accelerator_memory_gb, '')::numeric, NULLIF(vcpus, '')::numeric,"
        " NULLIF(ram_gib, '')::numeric, interconnect, NULLIF(scale_out_gbit_per_s, '')::numeric,"
        " region, price_type, NULLIF(spot_interruption_bucket, ''), notes FROM seed_offerings"
        " ON CONFLICT (id) DO NOTHING RETURNING id)"
        " INSERT INTO seed_inserted SELECT id FROM inserted");
    report.offerings_inserted += offerings.affected_rows();
    report.offerings_skipped += catalog.Offerings().size() - offerings.affected_rows();
    tx.exec(
        "INSERT INTO sources (name) SELECT DISTINCT p.source FROM seed_prices p"
        " JOIN seed_inserted i ON i.id = p.offering_id ON CONFLICT (name) DO NOTHING");
    auto prices = tx.exec(
        "INSERT INTO prices (offering_id, usd_per_hour, as_of, as_of_estimated, source_id,"
        " verified, notes, valid_from, valid_to) SELECT p.offering_id, p.usd_per_hour::numeric,"
        " p.as_of::date, p.as_of_estimated::boolean, s.id, p.verified::boolean, p.notes,"
        " to_timestamp(p.valid_from_us::numeric / 1000000),"
        " to_timestamp(NULLIF(p.valid_to_us, '')::numeric / 1000000)"
        " FROM seed_prices p JOIN seed_inserted i ON i.id = p.offering_id"
        " JOIN sources s ON s.name = p.source ORDER BY p.ord");
    report.prices_inserted += prices.affected_rows();
}

}  // namespace

SeedReport Seed(pqxx::connection& conn, const pricing::Catalog& catalog) {
    SeedReport report;
    pqxx::work tx(conn);
    tx.exec("SET LOCAL statement_timeout = " + std::to_string(kSeedStatementTimeoutMs));
    tx.exec_params("SELECT revision FROM catalog_state FOR UPDATE");
    for (const pricing::Accelerator& a : catalog.Accelerators()) {
        auto peak = [&](pricing::Precision p) { return Opt(a.PeakTflops(p)); };
        auto inserted = tx.exec_params(
            "INSERT INTO accelerators (id, name, vendor, form_factor, launch_year, fp32_tflops,"
            " tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops, int8_tops, fp4_tflops, memory_gb,"
            " memory_type, memory_gb_per_s, cache_mb, scale_up_interconnect, scale_up_gb_per_s,"
            " host_pcie_gen, tdp_w, purchase_price_usd, purchase_price_as_of,"
            " purchase_price_source, spec_source, confidence, notes) VALUES ($1, $2, $3, $4, $5,"
            " NULLIF($6, '')::numeric, NULLIF($7, '')::numeric, NULLIF($8, '')::numeric,"
            " NULLIF($9, '')::numeric, NULLIF($10, '')::numeric, NULLIF($11, '')::numeric,"
            " NULLIF($12, '')::numeric, $13::numeric, $14, $15::numeric, NULLIF($16, '')::numeric,"
            " $17, NULLIF($18, '')::numeric, $19, NULLIF($20, '')::numeric,"
            " NULLIF($21, '')::numeric, $22, $23, $24, $25, $26)"
            " ON CONFLICT (id) DO NOTHING RETURNING id",
            a.id, a.name, a.vendor, a.form_factor, a.launch_year, peak(pricing::Precision::kFp32),
            peak(pricing::Precision::kTf32), peak(pricing::Precision::kFp16),
            peak(pricing::Precision::kBf16), peak(pricing::Precision::kFp8),
            peak(pricing::Precision::kInt8), peak(pricing::Precision::kFp4),
            pqxx::to_string(a.memory_gb), a.memory_type, pqxx::to_string(a.memory_gb_per_s),
            Opt(a.cache_mb), a.scale_up_interconnect, Opt(a.scale_up_gb_per_s), a.host_pcie_gen,
            Opt(a.tdp_w), Opt(a.purchase_price_usd), a.purchase_price_as_of,
            a.purchase_price_source, a.spec_source, a.confidence, a.notes);
        report.accelerators_inserted += inserted.size();
    }
    SeedOfferingsAndPrices(tx, catalog, report);
    if (report.accelerators_inserted + report.offerings_inserted > 0) {
        // Statistics for the rows just added (ANALYZE counts this transaction's own): until
        // autovacuum got to them, a replica's read of a changed offering's prices on a freshly
        // seeded database was slow (at 20,000 offerings x 5 prices a write reached
        // another replica after 64 ms, 6 ms with this; one run each, 2 loaded cores).
        tx.exec("ANALYZE offerings, prices");
        BumpRevision(tx, CatalogChange{{}, false, /*everything=*/true});
    }
    tx.commit();
    return report;
}

}  // namespace gpucost::storage
