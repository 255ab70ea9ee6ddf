#include "pricing/price_age.hpp"

#include <chrono>

#include "pricing/catalog_loader.hpp"

namespace gpucost::pricing {
namespace {

std::optional<std::chrono::sys_days> ParseDate(std::string_view text) {
    std::string date(text);
    if (!IsIsoDate(date)) {
        return std::nullopt;
    }
    int y = std::stoi(date.substr(0, 4));
    unsigned m = static_cast<unsigned>(std::stoi(date.substr(5, 2)));
    unsigned d = static_cast<unsigned>(std::stoi(date.substr(8, 2)));
    return std::chrono::sys_days(std::chrono::year{y} / std::chrono::month{m} /
                                 std::chrono::day{d});
}

}  // namespace

std::optional<long> DaysBetween(std::string_view from, std::string_view to) {
    auto a = ParseDate(from);
    auto b = ParseDate(to);
    if (!a || !b) {
        return std::nullopt;
    }
    return static_cast<long>((*b - *a).count());
}

PriceAges SummarizePriceAges(const OfferingList& offerings, std::string_view today) {
    PriceAges ages;
    ages.today = std::string(today);
    for (const Offering& o : offerings) {
        ++ages.current_price_count;
        if (o.price.as_of_estimated) {
            ++ages.estimated_date_count;
        }
        if (!o.price.verified) {
            ++ages.unverified_count;
        }
        auto days = DaysBetween(o.price.as_of, today);
        if (days && *days > kStalePriceDays) {
            ++ages.older_than_90_days;
        }
        if (days && *days > kVeryStalePriceDays) {
            ++ages.older_than_180_days;
        }
    }
    return ages;
}

}  // namespace gpucost::pricing
