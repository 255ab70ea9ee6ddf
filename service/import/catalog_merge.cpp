#include "service/import/catalog_merge.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>
#include <vector>

#include "pricing/csv.hpp"

namespace gpucost::import {
namespace {

// Prices equal to a micro-dollar are the same price (the catalog stores six decimals).
constexpr double kSamePriceUsd = 1e-6;

bool SameObservation(const pricing::PriceObservation& a, const pricing::PriceObservation& b) {
    return a.as_of == b.as_of && a.source == b.source;
}

std::string Number(double value) {
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return ec == std::errc() ? std::string(buffer, end) : std::string();
}

std::string Optional(const std::optional<double>& value) {
    return value ? Number(*value) : std::string();
}

std::string CsvField(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) {
        return text;
    }
    std::string quoted = "\"";
    for (char c : text) {
        quoted += c;
        if (c == '"') {
            quoted += '"';
        }
    }
    return quoted + "\"";
}

// The header of a CSV text (its first record).
std::vector<std::string> Header(const std::string& csv) {
    auto line_end = csv.find('\n');
    auto records = pricing::ParseCsv(csv.substr(0, line_end), "header");
    if (!records.ok() || records.value().empty()) {
        return {};
    }
    return records.value().front().fields;
}

void AppendRow(std::string& csv, const std::vector<std::string>& header,
               const std::map<std::string, std::string>& values) {
    if (!csv.empty() && csv.back() != '\n') {
        csv += '\n';
    }
    for (std::size_t i = 0; i < header.size(); ++i) {
        auto it = values.find(header[i]);
        csv += (i ? "," : "") + CsvField(it != values.end() ? it->second : std::string());
    }
    csv += '\n';
}

std::map<std::string, std::string> OfferingRow(const pricing::Offering& o) {
    return {{"id", o.id},
            {"provider", o.provider},
            {"instance_type", o.instance_type},
            {"accelerator", o.accelerator},
            {"accelerator_count", std::to_string(o.accelerator_count)},
            {"accelerator_memory_gb", Optional(o.accelerator_memory_gb)},
            {"vcpus", Optional(o.vcpus)},
            {"ram_gib", Optional(o.ram_gib)},
            {"interconnect", o.interconnect},
            {"scale_out_gbit_per_s", Optional(o.scale_out_gbit_per_s)},
            {"region", o.region},
            {"price_type", std::string(pricing::PriceTypeName(o.price_type))},
            {"spot_interruption_bucket", o.spot_interruption ? o.spot_interruption->label : ""},
            {"notes", o.notes}};
}

std::map<std::string, std::string> PriceRow(const std::string& offering_id,
                                            const pricing::PriceObservation& p) {
    return {{"offering_id", offering_id},
            {"usd_per_hour", Number(p.usd_per_hour)},
            {"as_of", p.as_of},
            {"as_of_estimated", p.as_of_estimated ? "true" : "false"},
            {"source", p.source},
            {"verified", p.verified ? "true" : "false"},
            {"notes", p.notes}};
}

}  // namespace

ImportPlan PlanImport(const pricing::Catalog& base, const std::vector<FileResult>& files) {
    ImportPlan plan;
    std::map<std::string, std::size_t> added;  // new offering id -> index in new_offerings
    // Offering id -> indexes in new_prices: the check for a price already planned looks at
    // that offering's few planned prices, not at every one (which made the merge quadratic).
    std::unordered_map<std::string, std::vector<std::size_t>> planned;
    auto known_observation = [&](const std::string& id, const pricing::PriceObservation& p) {
        auto it = planned.find(id);
        if (it == planned.end()) {
            return false;
        }
        for (std::size_t i : it->second) {
            if (SameObservation(plan.new_prices[i].second, p)) {
                return true;
            }
        }
        return false;
    };
    for (const FileResult& file : files) {
        for (const auto& [reason, count] : file.skipped) {
            plan.skipped[reason] += count;
        }
        for (const pricing::Offering& o : file.offerings) {
            if (!base.FindAccelerator(o.accelerator).ok()) {
                ++plan.skipped["accelerator_not_in_catalog"];
                continue;
            }
            std::optional<pricing::Offering> existing;
            if (auto found = base.FindOffering(o.id); found.ok()) {
                existing = found.value();
            } else if (auto it = added.find(o.id); it != added.end()) {
                existing = plan.new_offerings[it->second];
            }
            if (!existing) {
                added[o.id] = plan.new_offerings.size();
                plan.new_offerings.push_back(o);
                ++plan.offerings_added;
                ++plan.prices_added;
                ++plan.by_provider[o.provider].offerings_added;
                ++plan.by_provider[o.provider].prices_added;
                continue;
            }
            if (existing->accelerator != o.accelerator ||
                existing->accelerator_count != o.accelerator_count) {
                ++plan.skipped["conflicts_with_catalog_offering"];
                continue;
            }
            bool recorded =
                SameObservation(existing->price, o.price) || known_observation(o.id, o.price);
            for (const auto& old : existing->superseded_prices) {
                recorded = recorded || SameObservation(old, o.price);
            }
            if (recorded) {
                ++plan.skipped["already_recorded"];
                continue;
            }
            planned[o.id].push_back(plan.new_prices.size());
            plan.new_prices.emplace_back(o.id, o.price);
            ++plan.prices_added;
            ++plan.by_provider[o.provider].prices_added;
            if (std::fabs(existing->price.usd_per_hour - o.price.usd_per_hour) > kSamePriceUsd) {
                ++plan.prices_changed;
                plan.price_changes.push_back(
                    {o.id, existing->price.usd_per_hour, o.price.usd_per_hour});
            } else {
                ++plan.prices_unchanged;
            }
        }
    }
    return plan;
}

pricing::CatalogCsv AppendToCatalog(const pricing::CatalogCsv& base, const ImportPlan& plan) {
    pricing::CatalogCsv out = base;
    const auto offering_header = Header(base.offerings_csv);
    const auto price_header = Header(base.prices_csv);
    for (const pricing::Offering& o : plan.new_offerings) {
        AppendRow(out.offerings_csv, offering_header, OfferingRow(o));
        AppendRow(out.prices_csv, price_header, PriceRow(o.id, o.price));
    }
    for (const auto& [id, price] : plan.new_prices) {
        AppendRow(out.prices_csv, price_header, PriceRow(id, price));
    }
    return out;
}

namespace {

namespace fs = std::filesystem;

// The files of a catalog directory a write replaces, and the marker that is its commit point:
// once the marker exists every staged file is whole, and renaming them over the old ones only
// finishes the write (FinishCatalogDirWrite).
constexpr std::array<const char*, 3> kCatalogFiles = {"accelerators.csv", "offerings.csv",
                                                      "prices.csv"};
constexpr char kCommitMarker[] = ".import-commit";

fs::path Staged(const std::string& dir, const char* name) {
    return fs::path(dir) / ("." + std::string(name) + ".import-tmp");
}

// Flushes a written file or a directory to disk, so that a rename never makes a file current
// whose bytes a crash could still lose, nor a crash undo a rename.
bool Flushed(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    const bool ok = ::fsync(fd) == 0;
    ::close(fd);
    return ok;
}

pricing::Status WriteFlushed(const fs::path& path, const std::string& text) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file || !Flushed(path)) {
        return pricing::MakeError(pricing::ErrorCode::kUnavailable,
                                  "cannot write " + path.string());
    }
    return pricing::Ok{};
}

// Renames every staged file over its target, then drops the commit marker.
pricing::Status RenameStaged(const std::string& dir) {
    std::error_code ec;
    for (const char* name : kCatalogFiles) {
        if (!fs::exists(Staged(dir, name))) continue;  // renamed before an interruption
        fs::rename(Staged(dir, name), fs::path(dir) / name, ec);
        if (ec) {
            return pricing::MakeError(pricing::ErrorCode::kUnavailable,
                                      "cannot rename " + Staged(dir, name).string() + ": " +
                                          ec.message() + " (the next import or sync finishes it)");
        }
    }
    Flushed(dir);
    fs::remove(fs::path(dir) / kCommitMarker, ec);
    return pricing::Ok{};
}

}  // namespace

pricing::Status FinishCatalogDirWrite(const std::string& dir) {
    std::error_code ec;
    if (fs::exists(fs::path(dir) / kCommitMarker, ec)) {
        return RenameStaged(dir);
    }
    for (const char* name : kCatalogFiles) {
        fs::remove(Staged(dir, name), ec);  // a write stopped before its commit point
    }
    return pricing::Ok{};
}

pricing::Status WriteCatalogDir(const std::string& dir, const pricing::CatalogCsv& csv) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        return pricing::MakeError(pricing::ErrorCode::kUnavailable,
                                  "cannot create " + dir + ": " + ec.message());
    }
    if (auto finished = FinishCatalogDirWrite(dir); !finished.ok()) return finished;
    const std::array<const std::string*, 3> texts = {&csv.accelerators_csv, &csv.offerings_csv,
                                                     &csv.prices_csv};
    for (std::size_t i = 0; i < kCatalogFiles.size(); ++i) {
        if (auto written = WriteFlushed(Staged(dir, kCatalogFiles[i]), *texts[i]); !written.ok()) {
            (void)FinishCatalogDirWrite(dir);  // no marker yet: discards what was staged
            return written;
        }
    }
    // The commit point: from here the write is finished, now or by the next import or sync.
    const fs::path marker = fs::path(dir) / kCommitMarker;
    const fs::path marker_tmp = fs::path(dir) / (std::string(kCommitMarker) + ".tmp");
    if (auto written = WriteFlushed(marker_tmp, "staged catalog files, to be renamed\n");
        !written.ok()) {
        (void)FinishCatalogDirWrite(dir);
        return written;
    }
    fs::rename(marker_tmp, marker, ec);
    if (ec) {
        (void)FinishCatalogDirWrite(dir);
        return pricing::MakeError(pricing::ErrorCode::kUnavailable,
                                  "cannot commit the write to " + dir + ": " + ec.message());
    }
    Flushed(dir);
    return RenameStaged(dir);
}

}  // namespace gpucost::import
