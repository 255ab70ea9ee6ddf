#include "service/import/import_command.hpp"

#include <nlohmann/json.hpp>

#include "service/import/catalog_merge.hpp"
#include "service/import/mappings.hpp"
#include "service/import/price_file.hpp"
#include "service/text/json_text.hpp"

namespace gpucost::import {
namespace {

using nlohmann::json;

void Fail(std::FILE* err, const std::string& message) {
    std::fprintf(err, "gpucost import: %s\n", message.c_str());
}

// Reads and parses every file; nullopt (after printing why) when any is unusable.
std::optional<std::vector<FileResult>> ReadAll(const ImportArgs& args, std::FILE* err) {
    auto format = ParseFormat(args.format);
    if (!format) {
        Fail(err, "unknown format '" + args.format +
                      "'; use aws-price-list, azure-retail-prices, gcp-billing-catalog, "
                      "lambda-instance-types, runpod-gpu-types, vastai-bundles or "
                      "coreweave-pricing");
        return std::nullopt;
    }
    if (args.files.empty()) {
        Fail(err, "no price file given");
        return std::nullopt;
    }
    auto mappings =
        args.mappings_dir.empty() ? LoadEmbeddedMappings() : LoadMappingsFromDir(args.mappings_dir);
    if (!mappings.ok()) {
        Fail(err, mappings.error().message);
        return std::nullopt;
    }
    ParseOptions options;
    options.as_of = args.as_of;
    options.regions = args.regions;
    auto read = ReadPriceFiles(*format, args.files, mappings.value(), options);
    if (!read.ok()) {
        Fail(err, read.error().message);
        return std::nullopt;
    }
    return std::move(read).value();
}

json Summary(const ImportArgs& args, const std::vector<FileResult>& files, const ImportPlan& plan) {
    json out = {{"format", args.format},
                {"offerings_added", plan.offerings_added},
                {"prices_added", plan.prices_added},
                {"prices_changed", plan.prices_changed},
                {"prices_unchanged", plan.prices_unchanged},
                {"skipped", plan.skipped},
                {"files", json::array()},
                {"providers", json::object()}};
    for (const FileResult& f : files) {
        json refused = json::array();
        for (const RefusedRow& r : f.refused) {
            refused.push_back({{"row", r.row}, {"reason", r.reason}});
        }
        out["files"].push_back(
            {{"file", f.file},
             {"publication_date",
              f.publication_date.empty() ? json(nullptr) : json(f.publication_date)},
             {"as_of", f.as_of},
             {"records_read", f.records_read},
             {"offerings_found", f.offerings.size()},
             {"refused", std::move(refused)}});
    }
    out["assumptions"] = json::array();
    if (auto format = ParseFormat(args.format)) {
        for (const auto& a : FormatAssumptions(*format)) {
            out["assumptions"].push_back({{"name", a.name},
                                          {"value", a.value},
                                          {"unit", a.unit},
                                          {"description", a.description},
                                          {"source", a.source}});
        }
    }
    for (const auto& [provider, counts] : plan.by_provider) {
        out["providers"][provider] = {{"offerings_added", counts.offerings_added},
                                      {"prices_added", counts.prices_added}};
    }
    return out;
}

// The counts and changed prices of `plan` for the caller that asked (args.changed).
void Report(const ImportArgs& args, const ImportPlan& plan) {
    if (args.changed == nullptr) return;
    args.changed->offerings_added = plan.offerings_added;
    args.changed->prices_added = plan.prices_added;
    args.changed->prices_changed = plan.prices_changed;
    args.changed->prices_unchanged = plan.prices_unchanged;
    args.changed->price_changes = plan.price_changes;
}

}  // namespace

int RunImportToDir(const ImportArgs& args, const pricing::CatalogCsv& base, std::FILE* out,
                   std::FILE* err) {
    auto files = ReadAll(args, err);
    if (!files) {
        return kImportBadInput;
    }
    // The base catalog and the files' offerings are dropped once the plan is made, so that
    // they and the merged catalog (loaded again below to check it) are never in memory
    // together: the peak of a refresh at 31,000 offerings.
    ImportPlan plan;
    json summary;
    {
        auto catalog = pricing::LoadCatalog(base);
        if (!catalog.ok()) {
            Fail(err, "base catalog rejected: " + catalog.error().message);
            return kImportFailed;
        }
        plan = PlanImport(*catalog.value(), *files);
        summary = Summary(args, *files, plan);
        Report(args, plan);
        files.reset();
    }
    pricing::CatalogCsv merged = AppendToCatalog(base, plan);
    plan = ImportPlan{};
    merged.origin = args.out_dir;
    // The result must load exactly as `serve --catalog-dir` will load it.
    if (auto check = pricing::LoadCatalog(merged); !check.ok()) {
        Fail(err, "the merged catalog does not validate: " + check.error().message);
        return kImportFailed;
    }
    if (auto written = WriteCatalogDir(args.out_dir, merged); !written.ok()) {
        Fail(err, written.error().message);
        return kImportFailed;
    }
    summary["out"] = args.out_dir;
    std::fprintf(out, "%s\n", text::ToJsonText(summary, 2).c_str());
    return kImportOk;
}

int RunImportToStore(const ImportArgs& args, ports::CatalogStore& store, std::FILE* out,
                     std::FILE* err) {
    auto files = ReadAll(args, err);
    if (!files) {
        return kImportBadInput;
    }
    ImportPlan plan = PlanImport(*store.Current(), *files);
    ports::WriteRequest request;
    request.principal.name = "gpucost import";  // key_id 0: recorded_by stays NULL
    request.principal.scope = ports::KeyScope::kAdmin;
    auto no_body = [](const auto&) { return ports::StoredResponse{}; };
    if (!plan.new_offerings.empty()) {
        auto created = store.CreateOfferings(request, plan.new_offerings, no_body);
        if (!created.ok()) {
            Fail(err, "recording the new offerings failed: " + created.error().message);
            return kImportFailed;
        }
    }
    // One write for every price (one transaction, one revision, one change notification):
    // a price per write made 10,000 prices 10,000 transactions and replica updates.
    std::vector<ports::PriceUpdate> prices;
    prices.reserve(plan.new_prices.size());
    for (const auto& [id, p] : plan.new_prices) {
        prices.push_back({id, ports::NewPrice{p.usd_per_hour, p.as_of, p.as_of_estimated, p.source,
                                              p.verified, p.notes}});
    }
    if (!prices.empty()) {
        auto put = store.PutPrices(request, prices, no_body);
        if (!put.ok()) {
            Fail(err,
                 "recording the new prices failed (none was recorded): " + put.error().message);
            return kImportFailed;
        }
    }
    json summary = Summary(args, *files, plan);
    Report(args, plan);
    summary["out"] = "database";
    std::fprintf(out, "%s\n", text::ToJsonText(summary, 2).c_str());
    return kImportOk;
}

}  // namespace gpucost::import
