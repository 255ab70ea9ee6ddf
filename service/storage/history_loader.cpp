#include "service/storage/history_loader.hpp"

#include <map>

#include "pricing/accelerator.hpp"
#include "pricing/offering_list.hpp"

namespace gpucost::storage {
namespace {

std::optional<double> OptDouble(const pqxx::field& f) {
    if (f.is_null()) {
        return std::nullopt;
    }
    return f.as<double>();
}

std::optional<std::int64_t> OptInt(const pqxx::field& f) {
    if (f.is_null()) {
        return std::nullopt;
    }
    return f.as<std::int64_t>();
}

// Microseconds since the epoch of a timestamptz expression.
#define GPUCOST_US(expr) "(extract(epoch from " expr ") * 1000000)::bigint"

constexpr char kOfferingColumns[] =
    "SELECT id, provider, instance_type, accelerator_id, accelerator_count,"
    " accelerator_memory_gb::float8 AS accelerator_memory_gb, vcpus::float8 AS vcpus,"
    " ram_gib::float8 AS ram_gib, interconnect,"
    " scale_out_gbit_per_s::float8 AS scale_out_gbit_per_s, region, price_type, "
    "spot_interruption_bucket, notes, version,"
    " " GPUCOST_US("retired_at") " AS retired_at_us FROM offerings";

constexpr char kPriceColumns[] =
    "SELECT p.id, p.offering_id, p.usd_per_hour::float8 AS usd_per_hour,"
    " to_char(p.as_of, 'YYYY-MM-DD') AS as_of, p.as_of_estimated, s.name AS source, p.verified,"
    " p.notes, " GPUCOST_US("p.valid_from") " AS valid_from_us, " GPUCOST_US("p.valid_to")
    " AS valid_to_us, " GPUCOST_US("p.recorded_at") " AS recorded_at_us"
    " FROM prices p JOIN sources s ON s.id = p.source_id";

ports::OfferingHistory OfferingFromRow(const pqxx::row& r) {
    ports::OfferingHistory h;
    pricing::Offering& o = h.offering;
    o.id = r["id"].as<std::string>();
    o.provider = r["provider"].as<std::string>();
    o.instance_type = r["instance_type"].as<std::string>();
    o.accelerator = r["accelerator_id"].as<std::string>();
    o.accelerator_count = r["accelerator_count"].as<int>();
    o.accelerator_memory_gb = OptDouble(r["accelerator_memory_gb"]);
    o.vcpus = OptDouble(r["vcpus"]);
    o.ram_gib = OptDouble(r["ram_gib"]);
    o.interconnect = r["interconnect"].as<std::string>();
    o.scale_out_gbit_per_s = OptDouble(r["scale_out_gbit_per_s"]);
    o.region = r["region"].as<std::string>();
    o.price_type = pricing::ParsePriceType(r["price_type"].as<std::string>())
                       .value_or(pricing::PriceType::kOnDemand);
    if (!r["spot_interruption_bucket"].is_null()) {
        o.spot_interruption =
            pricing::ParseSpotInterruptionBucket(r["spot_interruption_bucket"].as<std::string>());
    }
    o.notes = r["notes"].as<std::string>();
    h.version = r["version"].as<std::int64_t>();
    h.retired_at_us = OptInt(r["retired_at_us"]);
    return h;
}

ports::PriceInterval PriceFromRow(const pqxx::row& r) {
    ports::PriceInterval p;
    p.id = r["id"].as<std::int64_t>();
    p.observation.usd_per_hour = r["usd_per_hour"].as<double>();
    p.observation.as_of = r["as_of"].as<std::string>();
    p.observation.as_of_estimated = r["as_of_estimated"].as<bool>();
    p.observation.source = r["source"].as<std::string>();
    p.observation.verified = r["verified"].as<bool>();
    p.observation.notes = r["notes"].as<std::string>();
    p.valid_from_us = r["valid_from_us"].as<std::int64_t>();
    p.valid_to_us = OptInt(r["valid_to_us"]);
    p.recorded_at_us = r["recorded_at_us"].as<std::int64_t>();
    return p;
}

// Sets offering.price to the open interval's observation, or the last served one.
void AttachCurrent(ports::OfferingHistory& h) {
    const ports::PriceInterval* best = nullptr;
    for (const auto& p : h.prices) {
        if (!p.valid_to_us) {
            best = &p;
            break;
        }
        if (*p.valid_to_us > p.valid_from_us &&
            (best == nullptr || *p.valid_to_us >= *best->valid_to_us)) {
            best = &p;
        }
    }
    if (best != nullptr) {
        h.offering.price = best->observation;
    }
}

// A text[] literal of `items` for a $n::text[] parameter.
std::string TextArray(const std::vector<std::string>& items) {
    std::string out = "{";
    for (const std::string& item : items) {
        if (out.size() > 1) {
            out += ',';
        }
        out += '"';
        for (char c : item) {
            if (c == '"' || c == '\\') {
                out += '\\';
            }
            out += c;
        }
        out += '"';
    }
    return out + "}";
}

// Offerings (filtered by `offering_where`, whose $1 is `arg` when given) with their prices
// (filtered by `price_where`), ordered by id, prices by valid_from, id.
std::vector<ports::OfferingHistory> OfferingsWithPrices(
    pqxx::transaction_base& tx, const std::string& offering_where, const std::string& price_where,
    const std::optional<std::string>& arg = std::nullopt) {
    auto query = [&](const std::string& sql) {
        return arg ? tx.exec_params(sql, *arg) : tx.exec_params(sql);
    };
    std::vector<ports::OfferingHistory> out;
    std::map<std::string, std::size_t> index;
    for (const auto& r : query(std::string(kOfferingColumns) + offering_where + " ORDER BY id")) {
        index.emplace(r["id"].as<std::string>(), out.size());
        out.push_back(OfferingFromRow(r));
    }
    for (const auto& r : query(std::string(kPriceColumns) + price_where +
                               " ORDER BY p.offering_id, p.valid_from, p.id")) {
        auto it = index.find(r["offering_id"].as<std::string>());
        if (it != index.end()) {
            out[it->second].prices.push_back(PriceFromRow(r));
        }
    }
    for (auto& o : out) {
        AttachCurrent(o);
    }
    return out;
}

}  // namespace

std::int64_t LoadRevision(pqxx::transaction_base& tx) {
    return tx.exec_params("SELECT revision FROM catalog_state")[0][0].as<std::int64_t>();
}

CatalogHistory LoadHistory(pqxx::transaction_base& tx) {
    CatalogHistory h;
    h.revision = LoadRevision(tx);
    auto accelerators = tx.exec_params(
        "SELECT id, name, vendor, form_factor, launch_year, fp32_tflops::float8,"
        " tf32_tflops::float8, fp16_tflops::float8, bf16_tflops::float8, fp8_tflops::float8,"
        " int8_tops::float8, fp4_tflops::float8, memory_gb::float8 AS memory_gb, memory_type,"
        " memory_gb_per_s::float8 AS memory_gb_per_s, cache_mb::float8 AS cache_mb,"
        " scale_up_interconnect, scale_up_gb_per_s::float8 AS scale_up_gb_per_s, host_pcie_gen,"
        " tdp_w::float8 AS tdp_w, purchase_price_usd::float8 AS purchase_price_usd,"
        " purchase_price_as_of, purchase_price_source, spec_source, confidence, notes"
        " FROM accelerators ORDER BY id");
    for (const auto& r : accelerators) {
        pricing::Accelerator a;
        a.id = r["id"].as<std::string>();
        a.name = r["name"].as<std::string>();
        a.vendor = r["vendor"].as<std::string>();
        a.form_factor = r["form_factor"].as<std::string>();
        a.launch_year = r["launch_year"].as<int>();
        for (std::size_t i = 0; i < pricing::kAllPrecisions.size(); ++i) {
            a.peak_tflops[i] = OptDouble(r[static_cast<int>(5 + i)]);
        }
        a.memory_gb = r["memory_gb"].as<double>();
        a.memory_type = r["memory_type"].as<std::string>();
        a.memory_gb_per_s = r["memory_gb_per_s"].as<double>();
        a.cache_mb = OptDouble(r["cache_mb"]);
        a.scale_up_interconnect = r["scale_up_interconnect"].as<std::string>();
        a.scale_up_gb_per_s = OptDouble(r["scale_up_gb_per_s"]);
        a.host_pcie_gen = r["host_pcie_gen"].as<std::string>();
        a.tdp_w = OptDouble(r["tdp_w"]);
        a.purchase_price_usd = OptDouble(r["purchase_price_usd"]);
        a.purchase_price_as_of = r["purchase_price_as_of"].as<std::string>();
        a.purchase_price_source = r["purchase_price_source"].as<std::string>();
        a.spec_source = r["spec_source"].as<std::string>();
        a.confidence = r["confidence"].as<std::string>();
        a.notes = r["notes"].as<std::string>();
        h.accelerators.push_back(std::move(a));
    }
    // In one allocation: the next revision copies every pointer (ApplyChange), and one shared
    // counter is cheaper to touch 20,000 times than 20,000 scattered ones.
    h.offerings = pricing::ShareInOneBlock(OfferingsWithPrices(tx, "", ""));
    h.keys = LoadKeys(tx);
    return h;
}

std::vector<KeyRecord> LoadKeys(pqxx::transaction_base& tx) {
    std::vector<KeyRecord> keys;
    for (const auto& r :
         tx.exec_params("SELECT id, prefix, salt, key_hash, scope, name, revoked_at IS NOT NULL AS"
                        " revoked, coalesce(default_price_book, '') AS default_price_book,"
                        " team FROM api_keys ORDER BY id")) {
        KeyRecord k;
        k.id = r["id"].as<std::int64_t>();
        k.prefix = r["prefix"].as<std::string>();
        k.salt = pqxx::binarystring(r["salt"]).str();
        k.key_hash = pqxx::binarystring(r["key_hash"]).str();
        const auto scope = r["scope"].as<std::string>();
        k.scope = scope == "admin" ? ports::KeyScope::kAdmin
                  : scope == "org" ? ports::KeyScope::kOrg
                                   : ports::KeyScope::kRead;
        k.name = r["name"].as<std::string>();
        k.revoked = r["revoked"].as<bool>();
        k.default_price_book = r["default_price_book"].as<std::string>();
        k.team = r["team"].as<std::string>();
        keys.push_back(std::move(k));
    }
    return keys;
}

std::vector<ports::OfferingHistory> LoadOfferingHistories(pqxx::transaction_base& tx,
                                                          const std::vector<std::string>& ids) {
    if (ids.empty()) {
        return {};
    }
    return OfferingsWithPrices(tx, " WHERE id = ANY($1::text[])",
                               " WHERE p.offering_id = ANY($1::text[])", TextArray(ids));
}

std::optional<ports::OfferingHistory> LoadOfferingHistory(pqxx::transaction_base& tx,
                                                          const std::string& id, bool lock) {
    auto rows = tx.exec_params(
        std::string(kOfferingColumns) + " WHERE id = $1" + (lock ? " FOR UPDATE" : ""), id);
    if (rows.empty()) {
        return std::nullopt;
    }
    ports::OfferingHistory h = OfferingFromRow(rows[0]);
    for (const auto& r : tx.exec_params(
             std::string(kPriceColumns) + " WHERE p.offering_id = $1 ORDER BY p.valid_from, p.id",
             id)) {
        h.prices.push_back(PriceFromRow(r));
    }
    AttachCurrent(h);
    return h;
}

std::int64_t BumpRevision(pqxx::transaction_base& tx, const CatalogChange& change) {
    // One round trip; the payload's first line is the revision the UPDATE returns.
    const std::string lines = EncodeChange(0, change).substr(1);
    return tx
        .exec_params(
            "WITH bumped AS (UPDATE catalog_state SET revision = revision + 1,"
            " changed_at = now() RETURNING revision)"
            " SELECT revision, pg_notify($1, revision::text || $2) FROM bumped",
            std::string(kCatalogChannel), lines)[0][0]
        .as<std::int64_t>();
}

std::int64_t SourceId(pqxx::transaction_base& tx, const std::string& name) {
    // One round trip: the row inserted, or the one already there.
    auto found = tx.exec_params(
        "WITH added AS (INSERT INTO sources (name) VALUES ($1)"
        " ON CONFLICT (name) DO NOTHING RETURNING id)"
        " SELECT id FROM added UNION ALL"
        " SELECT id FROM sources WHERE name = $1 LIMIT 1",
        name);
    if (found.empty()) {
        // Another transaction committed the name while this statement waited on it; the
        // statement's snapshot predates that row, a new statement sees it.
        found = tx.exec_params("SELECT id FROM sources WHERE name = $1", name);
    }
    return found[0][0].as<std::int64_t>();
}

}  // namespace gpucost::storage
