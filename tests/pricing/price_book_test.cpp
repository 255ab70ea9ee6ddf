#include "pricing/price_book.hpp"

#include <doctest/doctest.h>

#include "pricing/calendar.hpp"
#include "pricing/in_memory_catalog.hpp"
#include "pricing/plan/spot.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;

namespace {

std::shared_ptr<const Catalog> Sample() {
    auto r = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(r.ok());
    return r.value();
}

PriceBookRule Discount(std::string provider, double fraction) {
    PriceBookRule r;
    r.provider = std::move(provider);
    r.discount_fraction = fraction;
    return r;
}

const char kP5OnDemand[] = "aws-p5.48xlarge-us-east-1-on-demand";
const char kP5Spot[] = "aws-p5.48xlarge-us-east-1-spot";
const char kLambda[] = "lambda-gpu_1x_h100-us-on-demand";

}  // namespace

TEST_CASE("a provider-wide discount lowers the on-demand prices of that provider and no other") {
    auto priced = ApplyPriceBook(Sample(), {"acme EDP", "", 1, {Discount("aws", 0.18)}, {}});
    REQUIRE(priced.ok());
    const PricedCatalog& c = *priced.value();
    CHECK(c.FindOffering(kP5OnDemand).value().price.usd_per_hour == doctest::Approx(55.04 * 0.82));
    // An enterprise discount is written against on-demand rates: spot keeps its list price.
    CHECK(c.FindOffering(kP5Spot).value().price.usd_per_hour == doctest::Approx(20.9934));
    CHECK(c.PriceOf(kP5Spot)->rule_index == std::nullopt);
    CHECK(c.FindOffering(kLambda).value().price.usd_per_hour == doctest::Approx(4.29));
    CHECK(c.PriceOf(kP5OnDemand)->list_usd_per_hour == doctest::Approx(55.04));
    CHECK(c.PriceOf(kLambda)->rule_index == std::nullopt);
    CHECK(c.MatchesPerRule() == std::vector<std::size_t>{1});
    CHECK(c.Warnings().empty());
    // The view keeps provenance: the date and source of the list price are unchanged.
    CHECK(c.FindOffering(kP5OnDemand).value().price.as_of == "2026-11-09");
    CHECK(c.Offerings().size() == Sample()->Offerings().size());
}

TEST_CASE(
    "the narrowest matching discount wins, a fixed rate beats every discount, and "
    "discounts do not stack") {
    PriceBookRule spot_only = Discount("aws", 0.5);
    spot_only.price_types = {PriceType::kSpot};
    spot_only.instance_family = "P5";  // case-insensitive, up to the '.'
    spot_only.region = "us-east-1";
    spot_only.accelerator = "h100-sxm";
    PriceBookRule fixed;
    fixed.offering_id = kLambda;
    fixed.usd_per_hour = 2.5;
    PriceBookRule lambda_wide = Discount("lambda", 0.1);
    auto priced = ApplyPriceBook(
        Sample(),
        {"rate card", "rc-1", 3, {Discount("aws", 0.18), spot_only, fixed, lambda_wide}, {}});
    REQUIRE(priced.ok());
    const PricedCatalog& c = *priced.value();
    CHECK(c.PriceOf(kP5Spot)->effective_usd_per_hour == doctest::Approx(20.9934 * 0.5));
    CHECK(c.PriceOf(kP5Spot)->rule_index == 1u);
    CHECK(c.PriceOf(kP5OnDemand)->effective_usd_per_hour == doctest::Approx(55.04 * 0.82));
    CHECK(c.PriceOf(kLambda)->effective_usd_per_hour == doctest::Approx(2.5));
    CHECK(c.PriceOf(kLambda)->rule_index == 2u);
    // The spot deal is warned (contracts rarely discount spot); the lambda-wide rule matched but
    // lost everywhere to the fixed rate: warned.
    REQUIRE(c.Warnings().size() == 2);
    CHECK(c.Warnings()[0].field == "/price_book/rules/1/price_types");
    CHECK(c.Warnings()[1].field == "/price_book/rules/3");
    auto echoed = c.BookAssumptions();
    REQUIRE(echoed.size() == 4);
    CHECK(echoed[2].name == "price_book.rules[2].usd_per_hour");
    CHECK(echoed[2].value == 2.5);
    CHECK(echoed[0].unit == "fraction");
}

TEST_CASE("an instance family matches only up to a separator") {
    Offering o;
    o.provider = "aws";
    o.instance_type = "p5e.48xlarge";
    PriceBookRule r = Discount("aws", 0.1);
    r.instance_family = "p5";
    CHECK_FALSE(RuleMatches(r, o));
    o.instance_type = "p5.48xlarge";
    CHECK(RuleMatches(r, o));
    o.instance_type = "a3-highgpu-8g";
    o.provider = "gcp";
    r.provider = "gcp";
    r.instance_family = "a3-highgpu";
    CHECK(RuleMatches(r, o));
}

TEST_CASE("rules matching nothing are warned, not refused") {
    PriceBookRule none = Discount("azure", 0.2);
    auto priced = ApplyPriceBook(Sample(), {"empty", "", 1, {none}, {}});
    REQUIRE(priced.ok());
    REQUIRE(priced.value()->Warnings().size() == 1);
    CHECK(priced.value()->Warnings()[0].field == "/price_book/rules/0");
}

TEST_CASE("invalid books name every failing field") {
    PriceBookRule both = Discount("aws", 0.1);
    both.usd_per_hour = 3;
    PriceBookRule free_compute = Discount("aws", 1.0);
    PriceBookRule no_provider;
    no_provider.discount_fraction = 0.1;
    PriceBook book{"", "", 1, {both, free_compute, no_provider}, {}};
    auto s = book.Validate();
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == ErrorCode::kInvalidArgument);
    CHECK(s.error().field == "/price_book/name");
    std::vector<std::string> fields;
    for (const auto& e : s.error().errors) fields.push_back(e.field);
    CHECK(fields == std::vector<std::string>{
                        "/price_book/name", "/price_book/rules/0/offering_id",
                        "/price_book/rules/0/discount_fraction", "/price_book/rules/0",
                        "/price_book/rules/1/discount_fraction", "/price_book/rules/2/provider"});
    PriceBook empty{"x", "", 1, {}, {}};
    CHECK(empty.Validate().error().field == "/price_book/rules");
}

TEST_CASE("a fixed rate for an offering the catalog lacks is refused naming it") {
    PriceBookRule fixed;
    fixed.offering_id = "no-such-offering";
    fixed.usd_per_hour = 1;
    auto priced = ApplyPriceBook(Sample(), {"x", "", 1, {fixed}, {}});
    REQUIRE_FALSE(priced.ok());
    CHECK(priced.error().field == "/price_book/rules/0/offering_id");
}

TEST_CASE("a planner given the priced catalog compares effective prices") {
    // Spot savings of the p5: list 55.04 vs 20.9934; with half off spot only the gap widens.
    PriceBookRule spot_half = Discount("aws", 0.5);
    spot_half.price_types = {PriceType::kSpot};
    auto priced = ApplyPriceBook(Sample(), {"spot deal", "", 1, {spot_half}, {}});
    REQUIRE(priced.ok());
    plan::SpotPlanRequest request;
    request.job_hours = 10;
    request.spot_offering_id = kP5Spot;
    request.on_demand_offering_id = kP5OnDemand;
    request.interruptions_per_hour = 0.1;
    auto list_plan = plan::PlanSpot(request, *Sample());
    auto book_plan = plan::PlanSpot(request, *priced.value());
    REQUIRE(list_plan.ok());
    REQUIRE(book_plan.ok());
    CHECK(book_plan.value().spot_usd_per_hour ==
          doctest::Approx(list_plan.value().spot_usd_per_hour * 0.5));
    CHECK(book_plan.value().on_demand_usd_per_hour ==
          doctest::Approx(list_plan.value().on_demand_usd_per_hour));
}

TEST_CASE("owned capacity is validated field by field and its offering must exist") {
    OwnedCapacity bad;
    bad.nodes = 0;
    bad.start_date = "2026-13-01";
    bad.end_date = "2026-12-01";
    bad.usd_per_hour = -1;
    OwnedCapacity backwards{kP5OnDemand, 1, "2026-12-01", "2026-12-01", 30};
    PriceBook book{"owned", "", 1, {}, {bad, backwards}};
    auto s = book.Validate();
    REQUIRE_FALSE(s.ok());
    std::vector<std::string> fields;
    for (const auto& e : s.error().errors) fields.push_back(e.field);
    CHECK(fields == std::vector<std::string>{"/price_book/owned_capacity/0/offering_id",
                                             "/price_book/owned_capacity/0/nodes",
                                             "/price_book/owned_capacity/0/start_date",
                                             "/price_book/owned_capacity/0/usd_per_hour",
                                             "/price_book/owned_capacity/1/end_date"});
    // Owned capacity alone is a book; nothing at all is not.
    PriceBook owned_only{"owned", "", 1, {}, {{kP5OnDemand, 2, "2026-12-01", "2027-12-01", 30}}};
    CHECK(owned_only.Validate().ok());
    auto priced = ApplyPriceBook(Sample(), owned_only);
    REQUIRE(priced.ok());
    auto echoed = priced.value()->BookAssumptions();
    REQUIRE(echoed.size() == 1);
    CHECK(echoed[0].name == "price_book.owned_capacity[0].usd_per_hour");
    CHECK(echoed[0].value == 30);
    owned_only.owned_capacity[0].offering_id = "no-such-offering";
    auto missing = ApplyPriceBook(Sample(), owned_only);
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().field == "/price_book/owned_capacity/0/offering_id");
}

TEST_CASE("a run is covered by live entries of its offering, at most its nodes at a time") {
    const double day = kHoursPerDay;
    const double dec1 = static_cast<double>(*DaysFromIsoDate("2026-12-01")) * day;
    std::vector<OwnedCapacity> owned = {
        {kP5OnDemand, 1, "2026-12-01", "2026-12-03", 10},                            // days 0-1
        {"AWS-P5.48XLARGE-US-EAST-1-ON-DEMAND", 3, "2026-12-02", "2026-12-04", 20},  // days 1-2
        {kP5Spot, 5, "2026-12-01", "2027-01-01", 1},  // another offering
    };
    // 2 nodes over days 0-3 (72 h): day 0 one node (entry 0), day 1 entry 0 then one of entry
    // 1, day 2 two of entry 1, from hour 72 nothing.
    OwnedCover c = CoverRun(owned, kP5OnDemand, 2, dec1, dec1 + 4 * day);
    CHECK(c.instance_hours == doctest::Approx(day * (1 + 2 + 2)));
    CHECK(c.sunk_usd == doctest::Approx(day * (10 + 10 + 20 + 2 * 20)));
    CHECK(CoverRun(owned, kLambda, 2, dec1, dec1 + 4 * day).instance_hours == 0);
    // A run before the reservations starts gets nothing; one straddling their end pays the rest.
    CHECK(CoverRun(owned, kP5OnDemand, 1, dec1 - day, dec1).instance_hours == 0);
    CHECK(CoverRun(owned, kP5OnDemand, 1, dec1 + 2.5 * day, dec1 + 5 * day).instance_hours ==
          doctest::Approx(0.5 * day));
}

TEST_CASE("a discount reaches spot and commitment prices only where price_types opts in") {
    Offering commit;
    commit.provider = "aws";
    commit.instance_type = "p5.48xlarge";
    commit.price_type = PriceType::kCommit1y;
    PriceBookRule edp = Discount("aws", 0.1);
    CHECK_FALSE(RuleMatches(edp, commit));  // EDP-style discounts do not stack on commitments
    PriceBookRule on_commitments = edp;
    on_commitments.price_types = {PriceType::kCommit1y};
    CHECK(RuleMatches(on_commitments, commit));

    PriceBookRule with_spot = Discount("aws", 0.3);
    with_spot.price_types = {PriceType::kOnDemand, PriceType::kSpot};
    auto priced = ApplyPriceBook(Sample(), {"spot too", "", 1, {with_spot}, {}});
    REQUIRE(priced.ok());
    CHECK(priced.value()->PriceOf(kP5Spot)->effective_usd_per_hour ==
          doctest::Approx(20.9934 * 0.7));
    // Applying a discount to spot is allowed and warned: contracts rarely grant it.
    REQUIRE(priced.value()->Warnings().size() == 1);
    CHECK(priced.value()->Warnings()[0].field == "/price_book/rules/0/price_types");
    CHECK(priced.value()->Warnings()[0].detail.find("spot") != std::string::npos);
}

TEST_CASE("a rule prices only on the days its contract grants it, and the answer says so") {
    PriceBookRule expired = Discount("aws", 0.18);
    expired.valid_from = "2026-01-01";
    expired.valid_until = "2026-06-30";
    PriceBookRule later = Discount("lambda", 0.1);
    later.valid_from = "2027-01-01";
    PriceBook book{"dated", "", 1, {expired, later}, {}};
    REQUIRE(book.Validate().ok());
    auto december = ApplyPriceBook(Sample(), book, std::string("2026-12-06"));
    REQUIRE(december.ok());
    CHECK(december.value()->PriceOf(kP5OnDemand)->effective_usd_per_hour == doctest::Approx(55.04));
    CHECK(december.value()->PriceOf(kLambda)->rule_index == std::nullopt);
    CHECK(december.value()->PricedOn() == std::optional<std::string>("2026-12-06"));
    const auto warnings = december.value()->Warnings();
    REQUIRE(warnings.size() == 2);
    CHECK(warnings[0].field == "/price_book/rules/0/valid_until");
    CHECK(warnings[0].detail.find("2026-06-30") != std::string::npos);
    CHECK(warnings[1].field == "/price_book/rules/1/valid_from");
    // Both ends are days included.
    auto last_day = ApplyPriceBook(Sample(), book, std::string("2026-06-30"));
    REQUIRE(last_day.ok());
    CHECK(last_day.value()->PriceOf(kP5OnDemand)->effective_usd_per_hour ==
          doctest::Approx(55.04 * 0.82));
    CHECK(RuleInForce(later, *DaysFromIsoDate("2027-01-01")));
    CHECK_FALSE(RuleInForce(later, *DaysFromIsoDate("2026-12-31")));

    PriceBookRule backwards = Discount("aws", 0.1);
    backwards.valid_from = "2026-07-01";
    backwards.valid_until = "2026-06-30";
    PriceBookRule not_a_date = Discount("aws", 0.1);
    not_a_date.valid_from = "July 2026";
    auto s = PriceBook{"bad", "", 1, {backwards, not_a_date}, {}}.Validate();
    REQUIRE_FALSE(s.ok());
    std::vector<std::string> fields;
    for (const auto& e : s.error().errors) fields.push_back(e.field);
    CHECK(fields == std::vector<std::string>{"/price_book/rules/0/valid_until",
                                             "/price_book/rules/1/valid_from"});
}

TEST_CASE("a book in another currency gives discounts only and says its amounts are USD") {
    PriceBook eur{"EU contract", "", 1, {Discount("aws", 0.18)}, {}};
    eur.currency = "EUR";
    auto priced = ApplyPriceBook(Sample(), eur);
    REQUIRE(priced.ok());
    CHECK(priced.value()->PriceOf(kP5OnDemand)->effective_usd_per_hour ==
          doctest::Approx(55.04 * 0.82));
    REQUIRE(priced.value()->Warnings().size() == 1);
    CHECK(priced.value()->Warnings()[0].field == "/price_book/currency");
    CHECK(priced.value()->Warnings()[0].detail.find("USD") != std::string::npos);

    PriceBookRule fixed;
    fixed.offering_id = kLambda;
    fixed.usd_per_hour = 2.5;
    eur.rules.push_back(fixed);
    eur.owned_capacity.push_back({kP5OnDemand, 1, "2026-12-01", "2027-12-01", 30});
    auto mixed = eur.Validate();
    REQUIRE_FALSE(mixed.ok());
    std::vector<std::string> fields;
    for (const auto& e : mixed.error().errors) fields.push_back(e.field);
    CHECK(fields == std::vector<std::string>{"/price_book/rules/1/usd_per_hour",
                                             "/price_book/owned_capacity/0/usd_per_hour"});
    eur.currency = "eur";
    CHECK(eur.Validate().error().field == "/price_book/currency");
}
