#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/error.hpp"

namespace gpucost::pricing {

// Where a provider's region is (schema/seed/regions.csv): the countries (ISO 3166-1 alpha-2,
// upper case) and continents its machines are in, with the page that says so. A marketplace
// listing that spans several places names each; one with no stated place ("global") names none
// and so matches no geography filter: a plan asked to stay in a country must not guess.
struct RegionPlace {
    std::string provider;
    std::string region;
    std::vector<std::string> countries;
    std::vector<std::string> continents;
    std::string source;
    std::string notes;
};

// The continents a row may name (the seven-continent model, as slugs).
inline constexpr std::array<std::string_view, 7> kContinents = {
    "africa", "antarctica", "asia", "europe", "north-america", "oceania", "south-america"};

// "Only offerings in these places": countries and continents as the API takes them (any
// case). Empty lists mean any; values in one list are alternatives; both lists given, a
// region must satisfy both.
struct Geography {
    std::vector<std::string> countries;
    std::vector<std::string> continents;
    bool Any() const { return countries.empty() && continents.empty(); }
};

class RegionTable {
public:
    RegionTable() = default;
    explicit RegionTable(std::vector<RegionPlace> rows);

    // nullptr when the table has no row for the provider's region (compared case-insensitively).
    const RegionPlace* Find(std::string_view provider, std::string_view region) const;
    // Whether every place of the region is among the wanted ones: a region listed in the US and
    // Hungary is "in the US" only when Hungary is wanted too. A region without a row, or with no
    // stated place, is in no geography.
    bool Within(std::string_view provider, std::string_view region, const Geography& wanted) const;
    // The countries and continents the rows name, sorted, each once.
    std::vector<std::string> Countries() const;
    std::vector<std::string> Continents() const;
    const std::vector<RegionPlace>& Rows() const { return rows_; }

private:
    std::vector<RegionPlace> rows_;
    std::map<std::pair<std::string, std::string>, std::size_t> index_;
};

// An accelerator's family, what "all H100 variants" names: its id up to the first '-'
// (h100-sxm, h100-pcie and h100-nvl are "h100"; tpu-v5e is "tpu"; a10g is its own).
std::string AcceleratorFamily(std::string_view accelerator_id);

// Where a filter's value is reported: a query parameter ("country") or a request member's
// JSON pointer ("/constraints/countries", each value then at "/constraints/countries/<i>").
struct FilterField {
    std::string name;
    bool pointer = false;
};

// A country or continent no row of `table` names is a kInvalidArgument naming its field, the
// known ones listed (a typo must not read as "nothing there"); every such value in `errors`.
[[nodiscard]] Status CheckGeography(const Geography& wanted, const RegionTable& table,
                                    const FilterField& countries, const FilterField& continents);
// A family no accelerator of the catalog is in, likewise.
[[nodiscard]] Status CheckAcceleratorFamilies(const std::vector<std::string>& families,
                                              const std::vector<Accelerator>& accelerators,
                                              const FilterField& field);

}  // namespace gpucost::pricing
