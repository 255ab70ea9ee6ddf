#include "service/storage/seed.hpp"

#include "service/storage/catalog_history.hpp"
#include "service/storage/history_loader.hpp"

namespace gpucost::storage {
namespace {

// Optional numbers travel as text; '' becomes NULL through NULLIF($n, '')::numeric.
std::string Opt(const std::optional<double>& v) { return v ? pqxx::to_string(*v) : std::string(); }

}  // namespace

SeedReport Seed(pqxx::connection& conn, const pricing::Catalog& catalog) {
    SeedReport report;
    pqxx::work tx(conn);
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
    for (const pricing::Offering& o : catalog.Offerings()) {
        auto inserted = tx.exec_params(
            "INSERT INTO offerings (id, provider, instance_type, accelerator_id,"
            " accelerator_count, accelerator_memory_gb, vcpus, ram_gib, interconnect,"
            " scale_out_gbit_per_s, region, price_type, spot_interruption_bucket, notes)"
            " VALUES ($1, $2, $3, $4, $5, NULLIF($6, '')::numeric, NULLIF($7, '')::numeric,"
            " NULLIF($8, '')::numeric, $9, NULLIF($10, '')::numeric, $11, $12, NULLIF($13, ''),"
            " $14) ON CONFLICT (id) DO NOTHING RETURNING id",
            o.id, o.provider, o.instance_type, o.accelerator, o.accelerator_count,
            Opt(o.accelerator_memory_gb), Opt(o.vcpus), Opt(o.ram_gib), o.interconnect,
            Opt(o.scale_out_gbit_per_s), o.region, std::string(pricing::PriceTypeName(o.price_type)),
            o.spot_interruption ? o.spot_interruption->label : std::string(), o.notes);
        if (inserted.empty()) {
            ++report.offerings_skipped;
            continue;
        }
        ++report.offerings_inserted;
        // The current observation first: SelectCurrentPrice breaks ties by input order.
        std::vector<pricing::PriceObservation> observations{o.price};
        observations.insert(observations.end(), o.superseded_prices.begin(),
                            o.superseded_prices.end());
        auto intervals = SeedIntervals(observations);
        for (std::size_t i = 0; i < observations.size(); ++i) {
            const auto& p = observations[i];
            const auto& [from, to] = intervals[i];
            tx.exec_params(
                "INSERT INTO prices (offering_id, usd_per_hour, as_of, as_of_estimated, source_id,"
                " verified, notes, valid_from, valid_to) VALUES ($1, $2::numeric, $3::date, $4, $5,"
                " $6, $7, to_timestamp($8::numeric / 1000000),"
                " to_timestamp(NULLIF($9, '')::numeric / 1000000))",
                o.id, pqxx::to_string(p.usd_per_hour), p.as_of, p.as_of_estimated,
                SourceId(tx, p.source), p.verified, p.notes, from,
                to ? std::to_string(*to) : std::string());
            ++report.prices_inserted;
        }
    }
    if (report.accelerators_inserted + report.offerings_inserted > 0) {
        BumpRevision(tx);
    }
    tx.commit();
    return report;
}

}  // namespace gpucost::storage
