#include "pricing/price_age.hpp"

#include <algorithm>
#include <chrono>
#include <map>

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

int StaleAfterDays(std::string_view provider) {
    for (const StalenessBound& bound : kStalenessBounds) {
        if (bound.provider == provider) return bound.stale_after_days;
    }
    return kDefaultStaleAfterDays;
}

const char* PriceStateName(PriceState state) {
    switch (state) {
        case PriceState::kCurrent:
            return "current";
        case PriceState::kEstimatedDate:
            return "estimated_date";
        case PriceState::kStale:
            return "stale";
    }
    return "stale";
}

PriceState StateOfPrice(const Offering& o, std::optional<long long> age_days) {
    if (age_days && *age_days > StaleAfterDays(o.provider)) return PriceState::kStale;
    return o.price.as_of_estimated ? PriceState::kEstimatedDate : PriceState::kCurrent;
}

PriceAges SummarizePriceAges(const OfferingList& offerings, std::string_view today) {
    PriceAges ages;
    ages.today = std::string(today);
    std::map<std::string, ProviderStaleness, std::less<>> by_provider;
    for (const Offering& o : offerings) {
        auto days = DaysBetween(o.price.as_of, today);
        auto [it, added] = by_provider.try_emplace(o.provider);
        ProviderStaleness& provider = it->second;
        if (added) {
            provider.provider = o.provider;
            provider.stale_after_days = StaleAfterDays(o.provider);
        }
        ++provider.current_price_count;
        if (days) provider.oldest_age_days = std::max(provider.oldest_age_days, *days);
        if (StateOfPrice(o, days) == PriceState::kStale) {
            ++provider.stale_count;
            ++ages.stale_count;
        }
        ++ages.current_price_count;
        if (o.price.as_of_estimated) {
            ++ages.estimated_date_count;
        }
        if (!o.price.verified) {
            ++ages.unverified_count;
        }
        if (days && *days > kStalePriceDays) {
            ++ages.older_than_90_days;
        }
        if (days && *days > kVeryStalePriceDays) {
            ++ages.older_than_180_days;
        }
    }
    for (auto& [id, provider] : by_provider) {
        ages.by_provider.push_back(std::move(provider));
    }
    return ages;
}

}  // namespace gpucost::pricing
