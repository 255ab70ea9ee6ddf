#include "pricing/region_table.hpp"

#include <algorithm>
#include <set>

#include "pricing/catalog.hpp"

namespace gpucost::pricing {
namespace {

std::string Upper(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return out;
}

bool AllAmong(const std::vector<std::string>& places, const std::vector<std::string>& wanted,
              std::string (*key)(std::string_view)) {
    return std::all_of(places.begin(), places.end(), [&](const std::string& place) {
        return std::any_of(wanted.begin(), wanted.end(),
                           [&](const std::string& w) { return key(w) == key(place); });
    });
}

std::string LowerKey(std::string_view text) {
    return IdKey(text);
}

std::vector<std::string> Distinct(const std::vector<RegionPlace>& rows,
                                  std::vector<std::string> RegionPlace::*places) {
    std::set<std::string> out;
    for (const RegionPlace& row : rows) {
        out.insert((row.*places).begin(), (row.*places).end());
    }
    return {out.begin(), out.end()};
}

}  // namespace

RegionTable::RegionTable(std::vector<RegionPlace> rows) : rows_(std::move(rows)) {
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        index_.emplace(std::pair{IdKey(rows_[i].provider), IdKey(rows_[i].region)}, i);
    }
}

const RegionPlace* RegionTable::Find(std::string_view provider, std::string_view region) const {
    auto it = index_.find({IdKey(provider), IdKey(region)});
    return it == index_.end() ? nullptr : &rows_[it->second];
}

bool RegionTable::Within(std::string_view provider, std::string_view region,
                         const Geography& wanted) const {
    if (wanted.Any()) return true;
    const RegionPlace* place = Find(provider, region);
    if (place == nullptr || place->countries.empty()) return false;
    return (wanted.countries.empty() || AllAmong(place->countries, wanted.countries, &Upper)) &&
           (wanted.continents.empty() || AllAmong(place->continents, wanted.continents, &LowerKey));
}

std::vector<std::string> RegionTable::Countries() const {
    return Distinct(rows_, &RegionPlace::countries);
}

std::vector<std::string> RegionTable::Continents() const {
    return Distinct(rows_, &RegionPlace::continents);
}

std::string AcceleratorFamily(std::string_view accelerator_id) {
    return IdKey(accelerator_id.substr(0, accelerator_id.find('-')));
}

namespace {

std::string Joined(const std::vector<std::string>& values) {
    std::string out;
    for (const std::string& v : values) {
        out += (out.empty() ? "" : ", ") + v;
    }
    return out;
}

// Each value not among `known` (compared by `key`) added to `error` at its field.
void CheckValues(const std::vector<std::string>& values, const std::vector<std::string>& known,
                 std::string (*key)(std::string_view), const FilterField& field, const char* what,
                 Error& error) {
    for (std::size_t i = 0; i < values.size(); ++i) {
        const bool found = std::any_of(known.begin(), known.end(), [&](const std::string& k) {
            return key(k) == key(values[i]);
        });
        if (found) continue;
        error.errors.push_back(
            {field.pointer ? field.name + "/" + std::to_string(i) : field.name,
             "unknown " + std::string(what) + " '" + values[i].substr(0, 40) + "'; known: " +
                 (known.empty() ? std::string("none (no region table)") : Joined(known))});
    }
}

Status Outcome(Error error) {
    if (error.errors.empty()) return Ok{};
    error.field = error.errors.front().field;
    error.message = error.errors.front().field + ": " + error.errors.front().detail;
    return error;
}

}  // namespace

Status CheckGeography(const Geography& wanted, const RegionTable& table,
                      const FilterField& countries, const FilterField& continents) {
    Error error{ErrorCode::kInvalidArgument, "", "", {}};
    CheckValues(wanted.countries, table.Countries(), &Upper, countries,
                "country (ISO 3166-1 alpha-2)", error);
    CheckValues(wanted.continents, table.Continents(), &LowerKey, continents, "continent", error);
    return Outcome(std::move(error));
}

Status CheckAcceleratorFamilies(const std::vector<std::string>& families,
                                const std::vector<Accelerator>& accelerators,
                                const FilterField& field) {
    std::set<std::string> known;
    for (const Accelerator& a : accelerators) {
        known.insert(AcceleratorFamily(a.id));
    }
    Error error{ErrorCode::kInvalidArgument, "", "", {}};
    CheckValues(families, {known.begin(), known.end()}, &LowerKey, field, "accelerator family",
                error);
    return Outcome(std::move(error));
}

}  // namespace gpucost::pricing
