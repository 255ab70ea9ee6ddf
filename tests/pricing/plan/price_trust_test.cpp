// A price that is not a usable number (NaN, an infinity, negative, over kMaxUsdPerHour) is never
// ranked: NaN compares false with every price, so a ranking that took it in could sort it
// first and recommend it as the cheapest ("$nan"). Every planner leaves such an offering out
// under skipped.price_not_usable, or refuses it by name when the request names it.
#include "pricing/plan/price_trust.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "pricing/catalog_loader.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "pricing/plan/inference_explain.hpp"
#include "pricing/plan/inference_plan.hpp"
#include "pricing/plan/rent_vs_buy.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::plan;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The sample catalog with the prices of `prices` (offering id -> USD/h) as given.
std::shared_ptr<const InMemoryCatalog> WithPrices(const std::map<std::string, double>& prices) {
    auto base = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(base.ok());
    std::vector<Offering> offerings = base.value()->Offerings().Copy();
    for (Offering& o : offerings) {
        if (auto it = prices.find(o.id); it != prices.end()) o.price.usd_per_hour = it->second;
    }
    auto built = InMemoryCatalog::Build(base.value()->Accelerators(), offerings, "t", "t", 0);
    REQUIRE(built.ok());
    return built.value();
}

template <typename Plan>
std::size_t Skipped(const Plan& plan, const std::string& reason) {
    for (const auto& [name, count] : plan.skipped) {
        if (name == reason) return count;
    }
    return 0;
}

// How many times `what` occurs in `text`.
std::size_t Occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

const char kLambda[] = "lambda-gpu_1x_h100-us-on-demand";
const char kP5[] = "aws-p5.48xlarge-us-east-1-on-demand";
const char kP5Spot[] = "aws-p5.48xlarge-us-east-1-spot";

}  // namespace

TEST_SUITE("price_trust") {
    TEST_CASE("a price that is not a finite number from 0 to 1e6 USD/h is never trusted") {
        Offering o;
        o.id = "x";
        o.price.verified = true;
        for (double usd : {kNaN, kInf, -kInf, -0.01, kMaxUsdPerHour * 2}) {
            CAPTURE(usd);
            o.price.usd_per_hour = usd;
            auto distrust = DistrustedPrice(o, PriceTrust{});
            REQUIRE(distrust.has_value());
            CHECK(std::string(distrust->reason) == "price_not_usable");
        }
        for (double usd : {0.0, 55.04, kMaxUsdPerHour}) {
            o.price.usd_per_hour = usd;
            CHECK_FALSE(DistrustedPrice(o, PriceTrust{}).has_value());
        }
    }

    TEST_CASE(
        "a training plan never recommends, ranks or lists a NaN, infinite or negative price") {
        for (double bad : {kNaN, -kInf, -1.0}) {
            CAPTURE(bad);
            // The lambda H100 is the cheapest per GPU-hour: with a bad price it must drop out,
            // not win.
            auto catalog = WithPrices({{kLambda, bad}, {kP5Spot, kInf}});
            TrainingPlanRequest r;
            r.workload.model.params_b = 7;
            r.workload.tokens_b = 20;
            r.workload.precision = Precision::kBf16;
            r.constraints.max_total_accelerators = 64;
            r.constraints.accelerators = {"h100-sxm"};
            r.limit = kMaxPlanLimit;
            auto plan = PlanTraining(r, *catalog, gpucost::testing::SamplePlanReference());
            REQUIRE(plan.ok());
            const TrainingPlan& p = plan.value();
            CHECK(Skipped(p, "price_not_usable") == 2);
            REQUIRE(p.recommendation.has_value());
            CHECK(p.recommendation->offering->id == kP5);
            CHECK(std::isfinite(p.recommendation->expected_cost_usd));
            REQUIRE(p.cheapest.has_value());
            CHECK(p.cheapest->offering->id == kP5);
            for (const TrainingPlanOption& o : p.options) {
                CHECK(o.offering->id == kP5);
                CHECK(std::isfinite(o.expected_cost_usd));
            }
            for (const TrainingPlanOption& o : p.pareto_front) CHECK(o.offering->id == kP5);
        }
    }

    TEST_CASE("a serving plan leaves a NaN price out") {
        auto catalog = WithPrices({{kLambda, kNaN}});
        InferencePlanRequest r;
        r.workload.model.params_b = 7;
        r.workload.precision = Precision::kBf16;
        r.workload.input_tokens = 512;
        r.workload.output_tokens = 256;
        r.traffic.requests_per_second = 10;
        auto plan = PlanInference(r, *catalog, gpucost::testing::SamplePlanReference());
        REQUIRE(plan.ok());
        CHECK(Skipped(plan.value(), "price_not_usable") == 1);
        REQUIRE_FALSE(plan.value().options.empty());
        for (const auto& o : plan.value().options) {
            CHECK(o.offering->id != std::string(kLambda));
            CHECK(std::isfinite(o.monthly_cost_usd));
        }
    }

    TEST_CASE("a training plan recommends a stale price only with include_stale") {
        // On 2026-11-20 the sample's Lambda H100 price (2026-09-25) is 56 days old, over
        // Lambda's 7-day bound; the P5 price (2026-11-09) is 11 days old, within AWS's 30.
        // At 0.5 USD/h Lambda's is the cheapest run by far.
        auto catalog = WithPrices({{kLambda, 0.5}});
        TrainingPlanRequest r;
        r.workload.model.params_b = 7;
        r.workload.tokens_b = 20;
        r.workload.precision = Precision::kBf16;
        r.constraints.max_total_accelerators = 64;
        r.constraints.accelerators = {"h100-sxm"};
        r.constraints.price_types = {PriceType::kOnDemand};
        r.today = "2026-11-20";
        r.limit = kMaxPlanLimit;
        auto plan = PlanTraining(r, *catalog, gpucost::testing::SamplePlanReference());
        REQUIRE(plan.ok());
        REQUIRE(plan.value().cheaper_stale.has_value());
        CHECK(plan.value().cheaper_stale->offering->id == kLambda);
        CHECK(plan.value().cheaper_stale->price_state == PriceState::kStale);
        REQUIRE(plan.value().recommendation.has_value());
        CHECK(plan.value().recommendation->offering->id == kP5);
        CHECK(plan.value().recommendation->price_state == PriceState::kCurrent);
        CHECK(plan.value().reasoning.find("stale price (confirmed 56 days ago, over lambda's "
                                          "7-day bound)") != std::string::npos);

        r.include_stale = true;
        auto with_stale = PlanTraining(r, *catalog, gpucost::testing::SamplePlanReference());
        REQUIRE(with_stale.ok());
        REQUIRE(with_stale.value().recommendation.has_value());
        CHECK(with_stale.value().recommendation->offering->id == kLambda);
        bool warned = false;
        for (const auto& w : with_stale.value().warnings) {
            warned = warned || w.detail.find("the price is stale") != std::string::npos;
        }
        CHECK(warned);
    }

    TEST_CASE("cheapest and best_by_provider name a stale price only where none is current") {
        // On 2026-11-20 the sample's P5 spot price (2025-05-01) and Lambda's (2026-09-25) are
        // stale; P5 on demand (2026-11-09) is current. Spot is AWS's cheaper run; Lambda has
        // no current price at all.
        auto catalog = WithPrices({});
        TrainingPlanRequest r;
        r.workload.model.params_b = 7;
        r.workload.tokens_b = 20;
        r.workload.precision = Precision::kBf16;
        r.constraints.max_total_accelerators = 64;
        r.constraints.accelerators = {"h100-sxm"};
        r.constraints.price_types = {PriceType::kOnDemand, PriceType::kSpot};
        r.today = "2026-11-20";
        auto best_of = [](const TrainingPlan& p, const std::string& provider) {
            for (std::size_t i = 0; i < p.best_by_provider.size(); ++i) {
                if (p.best_by_provider[i].offering->provider == provider) return i;
            }
            FAIL("no best option of " << provider);
            return std::size_t{0};
        };
        auto stale_warnings = [](const TrainingPlan& p) {
            std::vector<std::string> fields;
            for (const auto& w : p.warnings) {
                if (w.detail.find("with a price that is not stale") != std::string::npos) {
                    fields.push_back(w.field);
                }
            }
            return fields;
        };
        auto plan = PlanTraining(r, *catalog, gpucost::testing::SamplePlanReference());
        REQUIRE(plan.ok());
        const TrainingPlan& p = plan.value();
        REQUIRE(p.cheapest.has_value());
        CHECK(p.cheapest->offering->id == kP5);
        CHECK(p.cheapest->price_state == PriceState::kCurrent);
        REQUIRE(p.cheaper_stale.has_value());
        CHECK(p.cheaper_stale->price_state == PriceState::kStale);
        const std::size_t aws = best_of(p, "aws");
        const std::size_t lambda = best_of(p, "lambda");
        CHECK(p.best_by_provider[aws].offering->id == kP5);
        CHECK(p.best_by_provider[lambda].offering->id == kLambda);
        CHECK(p.best_by_provider[lambda].price_state == PriceState::kStale);
        CHECK(stale_warnings(p) == std::vector<std::string>{"/best_by_provider/" +
                                                            std::to_string(lambda) + "/offering"});
        // The reasoning says once that the cheapest from another provider has a stale price.
        REQUIRE(p.recommendation.has_value());
        for (const auto& other : p.best_by_provider) {
            if (other.offering->provider == p.recommendation->offering->provider) continue;
            REQUIRE(other.price_state == PriceState::kStale);  // the sample's: Lambda
            CHECK(Occurrences(p.reasoning, StalePriceText(*other.offering, other.price_age_days)) ==
                  1);
            break;
        }

        r.include_stale = true;  // stale prices rank as any other
        auto any = PlanTraining(r, *catalog, gpucost::testing::SamplePlanReference());
        REQUIRE(any.ok());
        const TrainingPlan& a = any.value();
        REQUIRE(a.cheapest.has_value());
        CHECK(a.cheapest->price_state == PriceState::kStale);
        CHECK_FALSE(a.cheaper_stale.has_value());
        CHECK(a.best_by_provider[best_of(a, "aws")].offering->id == kP5Spot);
        CHECK(stale_warnings(a).empty());
    }

    TEST_CASE("a serving plan's best_by_provider prefers a provider's current price") {
        auto catalog = WithPrices({});
        InferencePlanRequest r;
        r.workload.model.params_b = 7;
        r.workload.precision = Precision::kBf16;
        r.workload.input_tokens = 512;
        r.workload.output_tokens = 256;
        r.traffic.requests_per_second = 1;
        r.accelerators = {"h100-sxm"};
        r.price_types = {PriceType::kOnDemand, PriceType::kSpot};
        r.today = "2026-11-20";
        r.limit = 200;
        auto plan = PlanInference(r, *catalog, gpucost::testing::SamplePlanReference());
        REQUIRE(plan.ok());
        StatePriceAges(plan.value().options, r.today);
        auto aws_best = [&](bool include_stale) {
            auto answer = RecommendInference(plan.value(), *catalog, include_stale);
            for (const auto& o : answer.best_by_provider) {
                if (o.offering->provider == "aws") return o.offering->id;
            }
            return std::string("none");
        };
        CHECK(aws_best(false) == kP5);     // current, over AWS's cheaper stale spot price
        CHECK(aws_best(true) == kP5Spot);  // stale prices rank as any other
        // Lambda's only price is stale: named, with a warning at its entry.
        auto fresh = RecommendInference(plan.value(), *catalog, /*include_stale=*/false);
        std::vector<std::string> warned;
        for (const auto& w : fresh.stale_warnings) warned.push_back(w.field);
        std::vector<std::string> expected;
        for (std::size_t i = 0; i < fresh.best_by_provider.size(); ++i) {
            if (fresh.best_by_provider[i].offering->provider == "lambda") {
                expected.push_back("/best_by_provider/" + std::to_string(i) + "/offering");
            }
        }
        CHECK(expected.size() == 1);
        CHECK(warned == expected);
        CHECK(RecommendInference(plan.value(), *catalog, true).stale_warnings.empty());
        // The reasoning says once that the cheapest from another provider has a stale price.
        REQUIRE(fresh.recommendation.has_value());
        for (const auto& other : fresh.best_by_provider) {
            if (other.offering->provider == fresh.recommendation->offering->provider) continue;
            REQUIRE(other.price_state == PriceState::kStale);  // the sample's: Lambda
            CHECK(Occurrences(fresh.reasoning,
                              StalePriceText(*other.offering, other.price_age_days)) == 1);
            break;
        }
    }

    TEST_CASE("a serving plan recommends a stale price only with include_stale") {
        auto catalog = WithPrices({});
        InferencePlanRequest r;
        r.workload.model.params_b = 7;
        r.workload.precision = Precision::kBf16;
        r.workload.input_tokens = 512;
        r.workload.output_tokens = 256;
        r.traffic.requests_per_second = 1;
        r.accelerators = {"h100-sxm"};
        r.price_types = {PriceType::kOnDemand};
        r.today = "2026-11-20";
        auto plan = PlanInference(r, *catalog, gpucost::testing::SamplePlanReference());
        REQUIRE(plan.ok());
        StatePriceAges(plan.value().options, r.today);
        REQUIRE_FALSE(plan.value().options.empty());
        CHECK(plan.value().options.front().offering->id == kLambda);
        CHECK(plan.value().options.front().price_state == PriceState::kStale);
        auto fresh = RecommendInference(plan.value(), *catalog, /*include_stale=*/false);
        REQUIRE(fresh.recommendation.has_value());
        CHECK(fresh.recommendation->offering->id == kP5);
        CHECK(fresh.reasoning.find("include_stale: true lets it rank first") != std::string::npos);
        auto any = RecommendInference(plan.value(), *catalog, /*include_stale=*/true);
        REQUIRE(any.recommendation.has_value());
        CHECK(any.recommendation->offering->id == kLambda);
    }

    TEST_CASE("spot and rent-vs-buy refuse a named offering whose price is not usable") {
        for (const auto& [field, prices] :
             std::vector<std::pair<std::string, std::map<std::string, double>>>{
                 {"/spot_offering_id", {{kP5Spot, kNaN}}},
                 {"/on_demand_offering_id", {{kP5, kNaN}}}}) {
            CAPTURE(field);
            auto catalog = WithPrices(prices);
            SpotPlanRequest r;
            r.job_hours = 100;
            r.spot_offering_id = kP5Spot;
            auto plan = PlanSpot(r, *catalog);
            REQUIRE_FALSE(plan.ok());
            CHECK(plan.error().code == ErrorCode::kFailedPrecondition);
            CHECK(plan.error().field == field);
        }
        auto catalog = WithPrices({{kLambda, kInf}});
        RentVsBuyRequest r;
        r.buy.accelerator = "h100-sxm";
        r.buy.total_accelerators = 8;
        r.rent.offering_id = kLambda;
        r.rent.accelerator_hours_per_month = 1000;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().code == ErrorCode::kFailedPrecondition);
        CHECK(plan.error().field == "/rent/offering_id");
    }
}
