#pragma once
// FOCUS export text for the actual-spend tests (POST /v1/actuals): the columns the readers take
// and an AWS p5.48xlarge usage row (8 H100 per instance).

#include <string>

namespace gpucost::testing {

inline constexpr char kFocusHeader[] =
    "BilledCost,EffectiveCost,ListCost,ConsumedQuantity,ConsumedUnit,ChargeCategory,ChargeClass,"
    "ChargePeriodStart,BillingCurrency,ProviderName,RegionId,PricingCategory,x_UsageType,"
    "ChargeDescription,Tags\n";

// A p5.48xlarge usage row of `hours` instance-hours billed `billed` (as written) at `effective`
// (list 1.25 x that), tagged `tag_key`: `scenario`.
inline std::string P5Row(const std::string& billed, double effective, double hours,
                         const std::string& scenario, const std::string& start = "2026-01-05",
                         const std::string& tag_key = "gpucost-scenario") {
    return billed + "," + std::to_string(effective) + "," + std::to_string(effective * 1.25) + "," +
           std::to_string(hours) + ",Hours,Usage,," + start +
           "T00:00:00Z,USD,AWS,us-east-1,Standard,USE1-BoxUsage:p5.48xlarge,p5 usage,"
           "\"{\"\"" +
           tag_key + "\"\":\"\"" + scenario + "\"\"}\"\n";
}

// The same row billed what it costs (billed = effective).
inline std::string P5Row(double effective, double hours, const std::string& scenario,
                         const std::string& start) {
    return P5Row(std::to_string(effective), effective, hours, scenario, start);
}

}  // namespace gpucost::testing
