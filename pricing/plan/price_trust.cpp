#include "pricing/plan/price_trust.hpp"

#include "pricing/calendar.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/price_age.hpp"

namespace gpucost::pricing::plan {

std::optional<Distrust> DistrustedPrice(const Offering& o, const PriceTrust& trust) {
    // Checked first and whatever the request asks: a NaN price compares false with every
    // other, so a ranking that took it in could sort it first and call it the cheapest.
    if (!IsUsableUsdPerHour(o.price.usd_per_hour)) {
        return Distrust{"price_not_usable",
                        o.id +
                            ": its price is not a finite number of USD/h from 0 to 1000000; "
                            "left out of every ranking"};
    }
    if (trust.verified_only && !o.price.verified) {
        return Distrust{"unverified_price", o.id + ": price " + o.price.source.substr(0, 120) +
                                                " is not verified (constraints.verified_only)"};
    }
    if (trust.max_price_age_days && trust.today_days) {
        if (auto as_of = DaysFromIsoDate(o.price.as_of);
            as_of && static_cast<double>(*trust.today_days - *as_of) > *trust.max_price_age_days) {
            return Distrust{"price_too_old", o.id + ": price dated " + o.price.as_of +
                                                 (o.price.as_of_estimated ? " (estimated)" : "") +
                                                 ", " + std::to_string(*trust.today_days - *as_of) +
                                                 " days ago (constraints.max_price_age_days)"};
        }
    }
    return std::nullopt;
}

std::vector<std::string> PriceWarnings(const Offering& o, std::optional<long long> age_days,
                                       double max_age_days) {
    std::vector<std::string> out;
    if (StateOfPrice(o, age_days) == PriceState::kStale) {
        out.push_back(o.id + ": the price is stale: confirmed " + std::to_string(*age_days) +
                      " days ago, over " + o.provider + "'s " +
                      std::to_string(StaleAfterDays(o.provider)) + "-day bound");
    }
    if (age_days && static_cast<double>(*age_days) > max_age_days) {
        out.push_back(o.id + ": price dated " + o.price.as_of + " is " + std::to_string(*age_days) +
                      " days old (over " + Fixed(max_age_days, 0) + "); check the current price");
    }
    if (o.price.as_of_estimated) {
        out.push_back(o.id + ": the price's date " + o.price.as_of +
                      " is estimated (its source is undated)");
    }
    if (!o.price.verified) {
        out.push_back(o.id + ": the price is unverified");
    }
    return out;
}

std::string StalePriceText(const Offering& o, std::optional<long long> age_days) {
    return "stale price (confirmed " +
           (age_days ? std::to_string(*age_days) + " days ago" : "long ago") + ", over " +
           o.provider + "'s " + std::to_string(StaleAfterDays(o.provider)) + "-day bound)";
}

FieldError StaleBestWarning(std::size_t index, const Offering& o, std::optional<long long> age_days,
                            std::string_view meets) {
    return {"/best_by_provider/" + std::to_string(index) + "/offering",
            "no option of " + o.provider + " with a price that is not stale " + std::string(meets) +
                "; " + o.id + " has a " + StalePriceText(o, age_days) +
                ": check the current price"};
}

}  // namespace gpucost::pricing::plan
