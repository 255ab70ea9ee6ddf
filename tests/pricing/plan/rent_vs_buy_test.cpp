#include "pricing/plan/rent_vs_buy.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pricing/catalog_loader.hpp"
#include "pricing/field_checker.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::plan;

namespace {

std::shared_ptr<const InMemoryCatalog> Sample() {
    auto r = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(r.ok());
    return r.value();
}

// Seed "Enterprise Scenario": 80 GPUs x $10K = $800K upfront, $5K/month running, against
// 10,000 GPU-hours/month in the cloud at $2/h = $20K/month.
RentVsBuyRequest EnterpriseSeed() {
    RentVsBuyRequest r;
    r.buy.capex_usd = 800000;
    r.buy.opex_usd_per_month = 5000;
    r.buy.total_accelerators = 80;
    r.rent.usd_per_accelerator_hour = 2;
    r.rent.accelerator_hours_per_month = 10000;
    return r;
}

// Seed "Small Startup Scenario": ~1,000 GPU-hours a month. Renting H100s at the sample
// catalog's Lambda price against buying one 8-GPU H100 server (the smallest HGX unit).
RentVsBuyRequest SmallTeam() {
    RentVsBuyRequest r;
    r.buy.accelerator = "h100-sxm";
    r.buy.total_accelerators = 8;
    r.rent.offering_id = "lambda-gpu_1x_h100-us-on-demand";
    r.rent.accelerator_hours_per_month = 1000;
    return r;
}

}  // namespace

TEST_SUITE("plan_rent_vs_buy") {
    TEST_CASE("seed: 80 GPUs x $10K with $5K/month against $20K/month breaks even in 4.4 years") {
        auto catalog = Sample();
        auto plan = PlanRentVsBuy(EnterpriseSeed(), *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        CHECK(p.monthly_rent_usd == doctest::Approx(20000));
        // 800,000 / (20,000 - 5,000) = 53.33 months = 4.44 years.
        REQUIRE(p.break_even_months);
        CHECK(*p.break_even_months == doctest::Approx(53.3333333));
        CHECK(*p.break_even_months / 12.0 == doctest::Approx(4.44).epsilon(0.01));
        // Discounted (the recommendation's basis) it breaks even after 65.5 > 60 months.
        CHECK_FALSE(p.breaks_even_within_horizon);
        CHECK(p.horizon_months == 60);
        // Discounted at 8 %/year (0.6434 %/month): -ln(1 - 800000 i / 15000) / ln(1 + i).
        CHECK(*p.discounted_break_even_months == doctest::Approx(65.5339835751));
        // Undiscounted over 5 years: rent 1.2M; own 800K + 300K - 64K resale = 1.036M, the
        // resale being the 10 % book value less the 20 % used-market haircut.
        CHECK(p.residual_value_at_horizon_usd == doctest::Approx(800000 * 0.1 * 0.8));
        CHECK(p.total_rent_usd == doctest::Approx(1200000));
        CHECK(p.total_own_usd == doctest::Approx(1036000));
        CHECK(p.npv_rent_usd == doctest::Approx(992898.0670128557));
        // 800K + the $5K annuity (60 months at 1.08^(1/12) - 1) - 64K / 1.08^5; before the
        // haircut 80K was credited and owning came to $993,777.86.
        CHECK(p.npv_own_usd == doctest::Approx(993777.8609905136 + 16000 / std::pow(1.08, 5)));
        // Amortised: (800K - 64K) / 60 + 5K.
        CHECK(p.monthly_own_usd == doctest::Approx(736000.0 / 60 + 5000));
        // In present value: owning's NPV (no power to scale) = annuity x $2/h x 80 x 730 h x u,
        // the annuity factor being npv_rent / $20K: 17.14 %, just above the 17.12 % in use,
        // as the (near-tie) rent recommendation says.
        CHECK(*p.break_even_utilization ==
              doctest::Approx(p.npv_own_usd / (p.npv_rent_usd / 20000.0 * 116800.0)));
        CHECK(*p.break_even_utilization > *p.utilization);
        CHECK(p.recommendation == RentVsBuyRecommendation::kRent);
        // Whole percents would read alike; one decimal tells them apart.
        CHECK(p.reasoning.find("above 17.3%, yours is 17.1%") != std::string::npos);
        CHECK(*p.utilization == doctest::Approx(10000.0 / 58400.0));
    }

    TEST_CASE("seed: a small team renting about 1,000 GPU-hours a month should rent") {
        auto catalog = Sample();
        auto plan = PlanRentVsBuy(SmallTeam(), *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        CHECK(p.recommendation == RentVsBuyRecommendation::kRent);
        // 1,000 h x $4.29 (Lambda H100 in the sample catalog).
        CHECK(p.monthly_rent_usd == doctest::Approx(4290));
        // Servers 8 x $27,500 x 1.3 chassis overhead = $286,000; one server needs no fabric
        // (network 0); shared storage 2 % of the servers.
        CHECK(p.capex_usd == doctest::Approx(286000 * 1.02));
        // Power 8 x 0.7 kW x 1.5 host x 1.4 PUE x $0.10 x 730 h = $858.48 at full use, x
        // (0.25 idle floor + 0.75 x 17.1 % utilisation); hosting 8 x $200/kW-month x 1.05 kW;
        // support 10 % of capex a year; staff 8 x $50. Before: $1,747 (no idle floor, hosting
        // 8 x $150, no support).
        const double utilization = 1000.0 / 5840.0;
        const double power = 858.48 * (0.25 + 0.75 * utilization);
        const double opex = power + 8 * 200 * 1.05 + 286000 * 1.02 * 0.10 / 12 + 400;
        CHECK(p.opex_usd_per_month == doctest::Approx(opex));
        // Owning now costs more a month than the rent: it never breaks even (was 112 months).
        CHECK(p.opex_usd_per_month > p.monthly_rent_usd);
        CHECK_FALSE(p.break_even_months.has_value());
        CHECK_FALSE(p.breaks_even_within_horizon);
        CHECK(p.reasoning.find("never breaks even") != std::string::npos);
        // In present value over 60 months, with A the annuity factor and the idle floor's power
        // in the fixed opex: u = (capex - PV(resale) + A x fixed) / (A x (rent at full use -
        // power above the floor at full use)). Was 28.8 %.
        const double i = std::pow(1.08, 1.0 / 12.0) - 1.0;
        const double annuity = (1 - std::pow(1.08, -5.0)) / i;
        const double resale = 286000 * 1.02 * 0.1 * 0.8;
        const double fixed = opex - 858.48 * 0.75 * utilization;
        const double u = (286000 * 1.02 - resale / std::pow(1.08, 5) + annuity * fixed) /
                         (annuity * (4.29 * 8 * 730 - 858.48 * 0.75));
        CHECK(*p.break_even_utilization == doctest::Approx(u).epsilon(1e-6));
        CHECK(*p.break_even_utilization > *p.utilization);
        CHECK(p.reasoning.find("utilisation above 42%") != std::string::npos);
        RentVsBuyRequest at_break_even = SmallTeam();
        at_break_even.rent.accelerator_hours_per_month = *p.break_even_utilization * 8 * 730;
        const RentVsBuyPlan even = PlanRentVsBuy(at_break_even, *catalog).value();
        CHECK(even.npv_rent_usd == doctest::Approx(even.npv_own_usd));
    }

    // 1,000 rented hours fill 17 % of 8 owned GPUs; a utilisation of 90 % on the buy side
    // describes another workload. The answer once said "owning pays above 24%, yours is 90%"
    // and recommended renting, with nothing pointing at the disagreement.
    TEST_CASE("a utilisation that disagrees with the rented hours draws a warning") {
        auto catalog = Sample();
        CHECK(PlanRentVsBuy(SmallTeam(), *catalog).value().warnings.empty());
        RentVsBuyRequest close = SmallTeam();
        close.buy.utilization = 0.2;  // 17 %, within the tolerance
        CHECK(PlanRentVsBuy(close, *catalog).value().warnings.empty());
        RentVsBuyRequest r = SmallTeam();
        r.buy.utilization = 0.9;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        REQUIRE(p.warnings.size() == 1);
        CHECK(p.warnings[0].field == "/buy/utilization");
        CHECK(p.warnings[0].detail.find("fill 17% of the 8 owned accelerators") !=
              std::string::npos);
        CHECK(p.reasoning.find("different workloads") != std::string::npos);
        CHECK(*p.utilization == doctest::Approx(0.9));  // kept as given
        RentVsBuyRequest only_hours = SmallTeam();      // utilisation derived: nothing to disagree
        CHECK(PlanRentVsBuy(only_hours, *catalog).value().warnings.empty());
    }

    TEST_CASE("renting stays cheaper for ever when the running cost reaches the rent") {
        auto catalog = Sample();
        RentVsBuyRequest r = EnterpriseSeed();
        r.buy.opex_usd_per_month = 25000;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        CHECK_FALSE(plan.value().break_even_months.has_value());
        CHECK_FALSE(plan.value().discounted_break_even_months.has_value());
        CHECK(plan.value().recommendation == RentVsBuyRecommendation::kRent);
        CHECK(plan.value().reasoning.find("never breaks even") != std::string::npos);
    }

    TEST_CASE("the cumulative series starts at the purchase and crosses at break-even") {
        auto catalog = Sample();
        RentVsBuyRequest r = EnterpriseSeed();
        r.horizon_months = 72;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        const auto& series = plan.value().cumulative;
        REQUIRE(series.size() == 73);
        CHECK(series[0].own_usd == 800000);
        CHECK(series[0].rent_usd == 0);
        CHECK(series[53].own_usd > series[53].rent_usd);
        CHECK(series[54].own_usd < series[54].rent_usd);
        // Resale falls linearly to 10 % of capex at 60 months and stays there, less the 20 %
        // used-market haircut throughout: 80 % of capex at month 0, 8 % from month 60.
        CHECK(series[0].own_usd - series[0].own_net_of_resale_usd == doctest::Approx(640000));
        CHECK(series[60].own_usd - series[60].own_net_of_resale_usd == doctest::Approx(64000));
        CHECK(series[72].own_usd - series[72].own_net_of_resale_usd == doctest::Approx(64000));
    }

    TEST_CASE("higher prices never lower either side's cost") {
        auto catalog = Sample();
        double previous_rent = 0;
        double previous_own = 0;
        for (double factor : {0.5, 1.0, 1.5, 3.0}) {
            RentVsBuyRequest r = SmallTeam();
            r.rent.usd_per_accelerator_hour = 4.29 * factor;
            r.buy.purchase_price_usd_per_accelerator = 27500 * factor;
            r.buy.usd_per_kwh = 0.1 * factor;
            auto plan = PlanRentVsBuy(r, *catalog);
            REQUIRE(plan.ok());
            CHECK(plan.value().npv_rent_usd > previous_rent);
            CHECK(plan.value().npv_own_usd > previous_own);
            previous_rent = plan.value().npv_rent_usd;
            previous_own = plan.value().npv_own_usd;
        }
    }

    TEST_CASE("with no discounting the discounted break-even equals the cash one") {
        auto catalog = Sample();
        RentVsBuyRequest r = EnterpriseSeed();
        r.discount_rate_annual = 0;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        CHECK(*plan.value().discounted_break_even_months ==
              doctest::Approx(*plan.value().break_even_months));
        CHECK(plan.value().npv_rent_usd == doctest::Approx(plan.value().total_rent_usd));
        CHECK(plan.value().npv_own_usd == doctest::Approx(plan.value().total_own_usd));
        CHECK(plan.value().recommendation == RentVsBuyRecommendation::kBuy);
    }

    TEST_CASE("every derived constant is echoed with its source, and request values say so") {
        auto catalog = Sample();
        RentVsBuyRequest r = SmallTeam();
        r.buy.pue = 1.2;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        int found = 0;
        for (const auto& a : plan.value().assumptions) {
            if (a.name == "pue") {
                CHECK(a.value == 1.2);
                CHECK(a.source == "request");
                ++found;
            }
            if (a.name == "usd_per_kwh" || a.name == "chassis_overhead_fraction" ||
                a.name == "depreciation_years" || a.name == "discount_rate_annual") {
                CHECK(a.source.view().rfind("default", 0) == 0);
                ++found;
            }
        }
        CHECK(found == 5);
    }

    TEST_CASE("missing and invalid inputs are reported per field") {
        auto catalog = Sample();
        RentVsBuyRequest empty;
        auto none = PlanRentVsBuy(empty, *catalog);
        REQUIRE_FALSE(none.ok());
        CHECK(none.error().code == ErrorCode::kInvalidArgument);
        CHECK(none.error().errors.size() == 3);

        RentVsBuyRequest bad = EnterpriseSeed();
        bad.buy.pue = 0.5;
        bad.horizon_months = 0;
        bad.discount_rate_annual = INFINITY;
        auto invalid = PlanRentVsBuy(bad, *catalog);
        REQUIRE_FALSE(invalid.ok());
        CHECK(invalid.error().field == "/buy/pue");
        CHECK(invalid.error().errors.size() == 3);

        RentVsBuyRequest too_many = SmallTeam();
        too_many.rent.accelerator_hours_per_month = 8 * 730 + 1;
        CHECK(PlanRentVsBuy(too_many, *catalog).error().code == ErrorCode::kFailedPrecondition);

        RentVsBuyRequest unknown = SmallTeam();
        unknown.buy.accelerator = "h100";
        CHECK(PlanRentVsBuy(unknown, *catalog).error().field == "/buy/accelerator");

        RentVsBuyRequest tpu = SmallTeam();
        tpu.buy.accelerator = "tpu-v5e";  // rent only: no purchase price, no TDP
        CHECK(PlanRentVsBuy(tpu, *catalog).error().code == ErrorCode::kFailedPrecondition);
    }

    TEST_CASE("the rent side compares buying with on-demand and whole-term commitments") {
        auto base = Sample();
        std::vector<Offering> offerings = base->Offerings().Copy();
        Offering commit = base->FindOffering("aws-p5.48xlarge-us-east-1-on-demand").value();
        commit.id = "aws-p5.48xlarge-us-east-1-commit-3y";
        commit.price_type = PriceType::kCommit3y;
        commit.price.usd_per_hour = 20;
        offerings.push_back(commit);
        auto catalog = InMemoryCatalog::Build(base->Accelerators(), offerings, "t", "t", 0);
        REQUIRE(catalog.ok());
        RentVsBuyRequest r;
        r.buy.accelerator = "h100-sxm";
        r.buy.total_accelerators = 16;
        r.rent.offering_id = "aws-p5.48xlarge-us-east-1-on-demand";
        r.rent.accelerator_hours_per_month = 4000;
        auto plan = PlanRentVsBuy(r, *catalog.value());
        REQUIRE(plan.ok());
        const auto& options = plan.value().rent_options;
        REQUIRE(options.size() == 2);  // on-demand and 3-year; no 1-year in this catalog
        CHECK(options[0].price_type == PriceType::kOnDemand);
        CHECK(options[0].monthly_usd == doctest::Approx(55.04 / 8 * 4000));
        CHECK(options[0].monthly_usd == doctest::Approx(plan.value().monthly_rent_usd));
        CHECK(options[1].price_type == PriceType::kCommit3y);
        CHECK(options[1].nodes == 2);  // 16 accelerators on 8-GPU instances
        CHECK(options[1].monthly_usd == doctest::Approx(2 * 20 * 730.0));
        CHECK(options[1].billed_months == 72);  // two whole 3-year terms cover 60 months
        CHECK(options[1].total_usd == doctest::Approx(options[1].monthly_usd * 72));
        for (const auto& o : options) {
            CHECK(o.cheaper_than_buying == (o.npv_usd < plan.value().npv_own_usd));
        }
        CHECK(plan.value().reasoning.find("commit_3y") != std::string::npos);

        // The rent side can name the price type: the sibling offering's rate is used.
        r.rent.price_type = PriceType::kCommit3y;
        auto committed = PlanRentVsBuy(r, *catalog.value());
        REQUIRE(committed.ok());
        CHECK(*committed.value().rent_usd_per_accelerator_hour == doctest::Approx(20.0 / 8));
        r.rent.price_type = PriceType::kCommit1y;
        auto missing = PlanRentVsBuy(r, *catalog.value());
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().field == "/rent/price_type");
    }

    TEST_CASE("a commitment chosen as the rent is billed as reserved whole instances and terms") {
        auto base = Sample();
        std::vector<Offering> offerings = base->Offerings().Copy();
        Offering commit = base->FindOffering("aws-p5.48xlarge-us-east-1-on-demand").value();
        commit.id = "aws-p5.48xlarge-us-east-1-commit-3y";
        commit.price_type = PriceType::kCommit3y;
        commit.price.usd_per_hour = 20;
        offerings.push_back(commit);
        auto catalog = InMemoryCatalog::Build(base->Accelerators(), offerings, "t", "t", 0);
        REQUIRE(catalog.ok());
        RentVsBuyRequest r;
        r.buy.accelerator = "h100-sxm";
        r.buy.total_accelerators = 8;
        r.rent.offering_id = "aws-p5.48xlarge-us-east-1-on-demand";
        r.rent.price_type = PriceType::kCommit3y;
        r.rent.accelerator_hours_per_month = 1000;
        auto plan = PlanRentVsBuy(r, *catalog.value());
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        // One p5 reserved every hour ($20 x 730 h), not $2.50 x the 1,000 hours used.
        CHECK(p.monthly_rent_usd == doctest::Approx(20.0 * 730));
        REQUIRE(p.rent_nodes);
        CHECK(*p.rent_nodes == 1);
        CHECK(p.rent_billed_months == 72);  // two whole 3-year terms cover the 60 months
        CHECK(p.total_rent_usd == doctest::Approx(20.0 * 730 * 72));
        REQUIRE(p.rent_options.size() == 2);
        CHECK(p.npv_rent_usd == doctest::Approx(p.rent_options[1].npv_usd));
        CHECK_FALSE(p.break_even_utilization.has_value());  // the rent does not scale with use
        CHECK(p.reasoning.find("commit_3y commitment: 1 x p5.48xlarge reserved") !=
              std::string::npos);
        // The commitment's id named directly answers the same.
        RentVsBuyRequest direct = r;
        direct.rent.price_type.reset();
        direct.rent.offering_id = "aws-p5.48xlarge-us-east-1-commit-3y";
        CHECK(PlanRentVsBuy(direct, *catalog.value()).value().npv_rent_usd ==
              doctest::Approx(p.npv_rent_usd));
    }

    TEST_CASE("spot as the steady rent is refused, naming the field that chose it") {
        auto catalog = Sample();
        RentVsBuyRequest r = SmallTeam();
        r.rent.offering_id = "aws-p5.48xlarge-us-east-1-spot";
        auto direct = PlanRentVsBuy(r, *catalog);
        REQUIRE_FALSE(direct.ok());
        CHECK(direct.error().code == ErrorCode::kInvalidArgument);
        CHECK(direct.error().field == "/rent/offering_id");
        CHECK(direct.error().message.find("/v1/plans/spot") != std::string::npos);
        r.rent.offering_id = "aws-p5.48xlarge-us-east-1-on-demand";
        r.rent.price_type = PriceType::kSpot;
        auto sibling = PlanRentVsBuy(r, *catalog);
        REQUIRE_FALSE(sibling.ok());
        CHECK(sibling.error().field == "/rent/price_type");
    }

    TEST_CASE("break-even utilisation and break-even within the horizon follow the NPV basis") {
        auto catalog = Sample();
        // The review's case: at 25 % a year, 12,000 h a month (21 % of 80 GPUs) rents.
        RentVsBuyRequest r = EnterpriseSeed();
        r.rent.accelerator_hours_per_month = 12000;
        r.discount_rate_annual = 0.25;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        CHECK(p.recommendation == RentVsBuyRecommendation::kRent);
        CHECK(*p.discounted_break_even_months > 60);
        CHECK_FALSE(p.breaks_even_within_horizon);          // was true on the 53-month cash basis
        CHECK(*p.break_even_utilization > *p.utilization);  // was 15 % against 21 %
        // (800K - 64K / 1.25^5 + A x 5K) / (A x $116,800), A = 35.82: 22.90 % (22.78 % before
        // the resale haircut).
        CHECK(*p.break_even_utilization == doctest::Approx(0.2290).epsilon(1e-3));
        CHECK(p.reasoning.find("owning pays at utilisation above 23%, yours is 21%") !=
              std::string::npos);
        // Undiscounted over the depreciation period it is the amortised monthly balance.
        r.discount_rate_annual = 0;
        CHECK(*PlanRentVsBuy(r, *catalog).value().break_even_utilization ==
              doctest::Approx((736000.0 / 60 + 5000) / 116800.0));
        // A break-even utilisation above 1 reads "at no utilisation", not "above 319%".
        r.rent.usd_per_accelerator_hour = 0.25;  // all 58,400 owned hours rent for $14,600
        r.rent.accelerator_hours_per_month = 40000;
        auto never = PlanRentVsBuy(r, *catalog);
        REQUIRE(never.ok());
        CHECK(*never.value().break_even_utilization > 1);
        CHECK(never.value().reasoning.find("at no utilisation") != std::string::npos);
    }

    TEST_CASE("renting other accelerators than the ones bought draws a warning") {
        auto catalog = Sample();
        CHECK(PlanRentVsBuy(SmallTeam(), *catalog).value().warnings.empty());  // H100 both
        RentVsBuyRequest r = SmallTeam();
        r.rent.offering_id = "gcp-tpu-v5e-us-central1-on-demand";  // 1 x TPU v5e per instance
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        REQUIRE(p.warnings.size() == 1);
        CHECK(p.warnings[0].field == "/rent/offering_id");
        CHECK(p.warnings[0].detail.find("1 x tpu-v5e per instance while buy.accelerator is "
                                        "h100-sxm") != std::string::npos);
        CHECK(p.reasoning.find("the rented tpu-v5e is not the h100-sxm you would buy") !=
              std::string::npos);
        CHECK(p.reasoning.find("different workloads") == std::string::npos);
    }

    TEST_CASE("a monthly rent that disagrees with rate x hours is named and read one way") {
        auto catalog = Sample();
        RentVsBuyRequest r = EnterpriseSeed();
        r.rent.usd_per_accelerator_hour = 4;
        r.rent.accelerator_hours_per_month = 1000;
        r.rent.usd_per_month = 4000 * 1.005;  // within 1 %: no warning
        CHECK(PlanRentVsBuy(r, *catalog).value().warnings.empty());
        r.rent.usd_per_month = 10000;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        REQUIRE(p.warnings.size() == 1);
        CHECK(p.warnings[0].field == "/rent/usd_per_month");
        CHECK(p.warnings[0].detail.find("$10,000") != std::string::npos);
        CHECK(p.warnings[0].detail.find("$4,000") != std::string::npos);
        CHECK(p.monthly_rent_usd == doctest::Approx(10000));
        // The rate used elsewhere is the monthly figure's: $10 per accelerator-hour.
        CHECK(*p.rent_usd_per_accelerator_hour == doctest::Approx(10));
        RentVsBuyRequest at_ten = EnterpriseSeed();
        at_ten.rent.usd_per_accelerator_hour = 10;
        at_ten.rent.accelerator_hours_per_month = 1000;
        CHECK(*p.break_even_utilization ==
              doctest::Approx(*PlanRentVsBuy(at_ten, *catalog).value().break_even_utilization));
    }

    TEST_CASE("owning that wins only through resale over a short horizon draws a warning") {
        auto catalog = Sample();
        RentVsBuyRequest r;
        r.buy.accelerator = "h100-sxm";
        r.buy.total_accelerators = 8;
        r.rent.offering_id = "aws-p5.48xlarge-us-east-1-on-demand";
        CHECK(PlanRentVsBuy(r, *catalog).value().warnings.empty());
        r.horizon_months = 1;
        // Resold after a month at 98.5 % of capex less the 20 % used-market haircut (78.8 %):
        // buying for a month no longer wins.
        CHECK(PlanRentVsBuy(r, *catalog).value().recommendation == RentVsBuyRecommendation::kRent);
        r.buy.resale_haircut_fraction = 0;  // at full book value it would
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        CHECK(p.recommendation == RentVsBuyRecommendation::kBuy);  // resold at 98.5 % of capex
        CHECK_FALSE(p.breaks_even_within_horizon);
        REQUIRE(p.warnings.size() == 1);
        CHECK(p.warnings[0].field == "/horizon_months");
        CHECK(p.warnings[0].detail.find("98.5% of capex") != std::string::npos);
        CHECK(p.reasoning.find("reselling the hardware at its book value") != std::string::npos);
        // The resale price named is the one at which the two present values meet.
        const double i = std::pow(1.08, 1.0 / 12.0) - 1.0;
        const double needed =
            (p.capex_usd + p.opex_usd_per_month / (1 + i) - p.npv_rent_usd) * (1 + i);
        CHECK(p.warnings[0].detail.find(UsdText(needed)) != std::string::npos);
    }

    TEST_CASE(
        "a depreciation period under a month is refused, not answered with an infinite cost") {
        auto catalog = Sample();
        RentVsBuyRequest r = EnterpriseSeed();
        r.buy.depreciation_years = 5e-324;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().field == "/buy/depreciation_years");
        r.buy.depreciation_years = 1.0 / 12.0;
        CHECK(PlanRentVsBuy(r, *catalog).ok());
    }

    // Owning left out the cluster network, storage, hardware support and an
    // idle-power floor, and hosted at $150 per accelerator-month against its own source's
    // $195-325; all of these favoured buying.
    TEST_CASE("owning counts network, storage, support, idle power and hosting per kW, echoed") {
        auto catalog = Sample();
        RentVsBuyRequest r;
        r.buy.accelerator = "h100-sxm";
        r.buy.total_accelerators = 1024;  // 128 servers: two switch tiers
        r.buy.utilization = 0.5;
        r.rent.usd_per_accelerator_hour = 2.5;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        const double servers = 27500 * 1024 * 1.3;
        CHECK(p.capex_usd == doctest::Approx(servers * (1 + 0.11 + 0.02)));
        const double power_at_full_use = 1024 * 0.7 * 1.5 * 1.4 * 0.10 * 730;
        const double opex = power_at_full_use * (0.25 + 0.75 * 0.5) + 1024 * 200 * 1.05 +
                            p.capex_usd * 0.10 / 12 + 1024 * 50;
        CHECK(p.opex_usd_per_month == doctest::Approx(opex));
        std::map<std::string, std::pair<double, std::string>> echoed;
        for (const auto& a : p.assumptions) {
            echoed[std::string(a.name.view())] = {a.value, std::string(a.source.view())};
        }
        for (const auto& [name, value] :
             std::vector<std::pair<std::string, double>>{{"network_fraction", 0.11},
                                                         {"storage_fraction", 0.02},
                                                         {"maintenance_fraction_per_year", 0.10},
                                                         {"idle_power_fraction", 0.25},
                                                         {"hosting_usd_per_kw_month", 200},
                                                         {"hosting_usd_per_accelerator_month", 210},
                                                         {"resale_haircut_fraction", 0.20}}) {
            CAPTURE(name);
            REQUIRE(echoed.count(name) == 1);
            CHECK(echoed[name].first == doctest::Approx(value));
            CHECK(echoed[name].second.rfind(
                      name == "hosting_usd_per_accelerator_month" ? "derived" : "default", 0) == 0);
        }
        // Each is overridable, and the override is echoed as the request's.
        r.buy.network_fraction = 0;
        r.buy.storage_fraction = 0;
        r.buy.maintenance_fraction_per_year = 0;
        r.buy.idle_power_fraction = 0;
        r.buy.hosting_usd_per_kw_month = 150.0 / 1.05;
        r.buy.resale_haircut_fraction = 0;
        auto bare = PlanRentVsBuy(r, *catalog);
        REQUIRE(bare.ok());
        CHECK(bare.value().capex_usd == doctest::Approx(servers));
        // The old model: power x utilisation + $150 hosting + staff.
        CHECK(bare.value().opex_usd_per_month ==
              doctest::Approx(power_at_full_use * 0.5 + 1024 * 150 + 1024 * 50));
        CHECK(bare.value().npv_own_usd < p.npv_own_usd);
        for (const auto& a : bare.value().assumptions) {
            if (a.name.view() == "network_fraction" || a.name.view() == "idle_power_fraction") {
                CHECK(a.source.view() == "request");
                CHECK(a.value == 0);
            }
        }
    }

    TEST_CASE("the cluster network's share follows the switch tiers the servers need") {
        auto catalog = Sample();
        for (const auto& [count, fraction] : std::vector<std::pair<int, double>>{
                 {8, 0.0}, {16, 0.049}, {512, 0.049}, {520, 0.11}, {16384, 0.11}, {16392, 0.171}}) {
            CAPTURE(count);
            RentVsBuyRequest r;
            r.buy.accelerator = "h100-sxm";
            r.buy.total_accelerators = count;
            r.rent.usd_per_accelerator_hour = 2.5;
            auto plan = PlanRentVsBuy(r, *catalog);
            REQUIRE(plan.ok());
            CHECK(plan.value().capex_usd ==
                  doctest::Approx(27500.0 * count * 1.3 * (1 + fraction + 0.02)));
        }
    }

    TEST_CASE("the new owning costs are range-checked per field") {
        auto catalog = Sample();
        for (const auto& [field, set] : std::vector<std::pair<std::string, void (*)(BuySide&)>>{
                 {"/buy/idle_power_fraction", [](BuySide& b) { b.idle_power_fraction = 1.5; }},
                 {"/buy/network_fraction", [](BuySide& b) { b.network_fraction = -0.1; }},
                 {"/buy/storage_fraction", [](BuySide& b) { b.storage_fraction = -1; }},
                 {"/buy/maintenance_fraction_per_year",
                  [](BuySide& b) { b.maintenance_fraction_per_year = 2; }},
                 {"/buy/hosting_usd_per_kw_month",
                  [](BuySide& b) { b.hosting_usd_per_kw_month = -5; }},
                 {"/buy/resale_haircut_fraction",
                  [](BuySide& b) { b.resale_haircut_fraction = 1.2; }}}) {
            CAPTURE(field);
            RentVsBuyRequest r = SmallTeam();
            set(r.buy);
            auto plan = PlanRentVsBuy(r, *catalog);
            REQUIRE_FALSE(plan.ok());
            CHECK(plan.error().field == field);
        }
    }
}

TEST_SUITE("plan_rent_vs_buy_owned") {
    // Two p5 instances' worth of work (16 accelerators at full use: 11,680 accelerator-hours,
    // $80,358.40 a month on demand at $55.04 per instance-hour) against buying them for $1M
    // and $10K a month, over a year without discounting, from December 2026; one p5 on-demand
    // instance owned for December to February at $30 an hour.
    RentVsBuyRequest OwnedP5() {
        RentVsBuyRequest r;
        r.buy.capex_usd = 1000000;
        r.buy.opex_usd_per_month = 10000;
        r.buy.total_accelerators = 16;
        r.rent.offering_id = "aws-p5.48xlarge-us-east-1-on-demand";
        r.rent.accelerator_hours_per_month = 16 * 730;
        r.horizon_months = 12;
        r.discount_rate_annual = 0;
        r.today = "2026-12-15";
        r.owned_capacity = {
            {"aws-p5.48xlarge-us-east-1-on-demand", 1, "2026-12-01", "2027-03-01", 30}};
        return r;
    }

    TEST_CASE("covered hours are stated without floating-point residue") {
        // 70 % of 16 accelerators: 511 instance-hours a month on two instances, one of them
        // owned for a year from November 2026: 12 x 511 = 6,132 covered hours, not
        // 6131.999999999999 (the months' shares summed).
        auto catalog = Sample();
        RentVsBuyRequest r = OwnedP5();
        r.rent.accelerator_hours_per_month = 16 * 730 * 0.7;
        r.horizon_months = 36;
        r.today = "2026-11-27";
        r.owned_capacity = {
            {"aws-p5.48xlarge-us-east-1-on-demand", 1, "2026-10-01", "2027-11-01", 30}};
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        REQUIRE(plan.value().owned.has_value());
        CHECK(plan.value().owned->instance_hours == 6132.0);
    }

    TEST_CASE("owned capacity of the rented offering makes the covered rent sunk") {
        auto catalog = Sample();
        auto plan = PlanRentVsBuy(OwnedP5(), *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        CHECK(p.monthly_rent_usd == doctest::Approx(80358.40));
        // The rent's 1,460 instance-hours a month run on two instances; one of them is owned
        // every hour of December, January and February: half of each of those months' rent
        // ($40,179.20) is sunk, 730 instance-hours at $30 ($21,900).
        REQUIRE(p.owned.has_value());
        CHECK(p.owned->first_month == "2026-12");
        CHECK(p.owned->instance_hours == doctest::Approx(3 * 730));
        CHECK(p.owned->sunk_usd == doctest::Approx(3 * 21900));
        CHECK(p.owned->without_owned_rent_usd == doctest::Approx(12 * 80358.40));
        REQUIRE(p.rent_months.size() == 12);
        CHECK(p.rent_months[0].usd == doctest::Approx(40179.20));
        CHECK(p.rent_months[2].usd == doctest::Approx(40179.20));
        CHECK(p.rent_months[3].usd == doctest::Approx(80358.40));
        CHECK(p.rent_months[3].owned_instance_hours == 0);
        // 3 x 40,179.20 + 9 x 80,358.40.
        CHECK(p.total_rent_usd == doctest::Approx(843763.20));
        CHECK(p.npv_rent_usd == doctest::Approx(843763.20));
        CHECK(p.cumulative[1].rent_usd == doctest::Approx(40179.20));
        CHECK(p.cumulative[3].rent_usd == doctest::Approx(120537.60));
        CHECK(p.cumulative[12].rent_usd == doctest::Approx(843763.20));
        // Cash break-even on the marginal rent: three months recover 3 x (40,179.20 - 10,000)
        // = 90,537.60, the rest at 70,358.40 a month: 3 + 909,462.40 / 70,358.40 months
        // (without owned capacity 1,000,000 / 70,358.40 = 14.21).
        REQUIRE(p.break_even_months.has_value());
        CHECK(*p.break_even_months == doctest::Approx(3 + 909462.40 / 70358.40));
        CHECK(*p.discounted_break_even_months == doctest::Approx(*p.break_even_months));
        // No single rate balances a rent whose first hours are owned.
        CHECK_FALSE(p.break_even_utilization.has_value());
        CHECK(p.reasoning.find("covers 2190.0 instance-hours of "
                               "aws-p5.48xlarge-us-east-1-on-demand") != std::string::npos);
        // The on-demand alternative is the same offering: the same marginal rent.
        bool on_demand_seen = false;
        for (const RentOption& o : p.rent_options) {
            if (o.price_type != PriceType::kOnDemand) {
                CHECK(o.owned_instance_hours == 0);
                continue;
            }
            on_demand_seen = true;
            CHECK(o.owned_instance_hours == doctest::Approx(3 * 730));
            CHECK(o.total_usd == doctest::Approx(843763.20));
            CHECK(o.npv_usd == doctest::Approx(843763.20));
        }
        CHECK(on_demand_seen);
    }

    TEST_CASE("owned capacity the rent path does not use changes nothing, and is said to") {
        auto catalog = Sample();
        RentVsBuyRequest r = OwnedP5();
        r.owned_capacity[0].offering_id = "lambda-gpu_1x_h100-us-on-demand";
        auto owned = PlanRentVsBuy(r, *catalog);
        r.owned_capacity.clear();
        auto plain = PlanRentVsBuy(r, *catalog);
        REQUIRE(owned.ok());
        REQUIRE(plain.ok());
        CHECK_FALSE(owned.value().owned.has_value());
        CHECK(owned.value().rent_months.empty());
        CHECK(owned.value().total_rent_usd == plain.value().total_rent_usd);
        CHECK(*owned.value().break_even_months == *plain.value().break_even_months);
        CHECK(*plain.value().break_even_months == doctest::Approx(1000000 / 70358.40));
        CHECK(owned.value().reasoning.find("covers none of the rent path's hours") !=
              std::string::npos);
    }

    TEST_CASE("a commitment rent's owned months come off its whole terms") {
        auto base = Sample();
        std::vector<Offering> offerings = base->Offerings().Copy();
        Offering commit = base->FindOffering("aws-p5.48xlarge-us-east-1-on-demand").value();
        commit.id = "aws-p5.48xlarge-us-east-1-commit-3y";
        commit.price_type = PriceType::kCommit3y;
        commit.price.usd_per_hour = 20;
        offerings.push_back(commit);
        auto catalog = InMemoryCatalog::Build(base->Accelerators(), offerings, "t", "t", 0);
        REQUIRE(catalog.ok());
        RentVsBuyRequest r;
        r.buy.accelerator = "h100-sxm";
        r.buy.total_accelerators = 8;
        r.rent.offering_id = "aws-p5.48xlarge-us-east-1-commit-3y";
        r.rent.accelerator_hours_per_month = 1000;
        r.discount_rate_annual = 0;
        r.today = "2026-12-10";
        // The same commitment already held for the first year, at $18 an hour.
        r.owned_capacity = {
            {"aws-p5.48xlarge-us-east-1-commit-3y", 1, "2026-12-01", "2027-12-01", 18}};
        auto plan = PlanRentVsBuy(r, *catalog.value());
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        // One instance reserved every hour ($14,600 a month), two whole 3-year terms (72
        // months) billed from the purchase month; the first 12 are owned: 60 x $14,600 paid.
        CHECK(p.rent_billed_months == 72);
        REQUIRE(p.owned.has_value());
        CHECK(p.owned->instance_hours == doctest::Approx(12 * 730));
        CHECK(p.owned->sunk_usd == doctest::Approx(12 * 730 * 18));
        CHECK(p.owned->without_owned_rent_usd == doctest::Approx(72 * 14600));
        CHECK(p.total_rent_usd == doctest::Approx(60 * 14600));
        CHECK(p.rent_months[11].usd == 0);
        CHECK(p.rent_months[12].usd == doctest::Approx(14600));
        CHECK(p.cumulative[12].rent_usd == 0);
        CHECK(p.cumulative[13].rent_usd == doctest::Approx(14600));
        for (const RentOption& o : p.rent_options) {
            if (o.offering_id != "aws-p5.48xlarge-us-east-1-commit-3y") continue;
            CHECK(o.owned_instance_hours == doctest::Approx(12 * 730));
            CHECK(o.total_usd == doctest::Approx(60 * 14600));
        }
    }

    TEST_CASE("the discounted break-even walks the marginal rent month by month") {
        auto catalog = Sample();
        RentVsBuyRequest r = OwnedP5();
        r.discount_rate_annual = 0.08;
        auto plan = PlanRentVsBuy(r, *catalog);
        REQUIRE(plan.ok());
        const RentVsBuyPlan& p = plan.value();
        // Present value still owed after the three half-covered months, then the closed form
        // for a steady margin from month 3: x = -ln(1 - owed_3 i / (m v^3)) / ln(1 + i).
        const double i = std::pow(1.08, 1.0 / 12.0) - 1.0;
        const double v = 1.0 / (1.0 + i);
        const double owed_3 = 1000000 - 30179.20 * (v + v * v + v * v * v);
        const double x = -std::log1p(-owed_3 * i / (70358.40 * v * v * v)) / std::log1p(i);
        CHECK(*p.discounted_break_even_months == doctest::Approx(3 + x));
        double npv = 0;
        for (int m = 0; m < 12; ++m) npv += (m < 3 ? 40179.20 : 80358.40) * std::pow(v, m + 1);
        CHECK(p.npv_rent_usd == doctest::Approx(npv));
    }
}
