#pragma once

// The store contract: what every implementation of the ports (service/ports/) answers, run
// against the in-memory twins (memory_stores_test.cpp, no database) and against PostgreSQL
// (tests/service/storage/pg_stores_contract_test.cpp, through tests/pg/with_pg.sh) alike.
// A fixture type gives the stores and makes keys:
//   ports::CatalogStore& Catalog();  ports::PriceBookStore& Books();
//   ports::ActualsStore& Actuals();
//   ports::Principal Key(ports::KeyScope scope, const std::string& name,
//                        const std::string& team);  // the team made when new

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pricing/actuals.hpp"
#include "service/ports/actuals_store.hpp"
#include "service/ports/catalog_store.hpp"
#include "service/ports/price_book_store.hpp"
#include "service/text/timestamp.hpp"

namespace gpucost::testing::contract {

using ports::KeyScope;
using ports::StoredResponse;
using ports::WriteRequest;

inline constexpr char kOffering[] = "aws-p5.48xlarge-us-east-1-on-demand";

inline WriteRequest As(const ports::Principal& who, std::string idempotency_key = "",
                       std::string request_hash = "", std::optional<std::string> if_match = {}) {
    return WriteRequest{who, std::move(idempotency_key), std::move(request_hash),
                        std::move(if_match)};
}

inline ports::Scenario Draft(const std::string& name, const std::string& request_json = "{}") {
    ports::Scenario s;
    s.name = name;
    s.plan_kind = "training";
    s.request_json = request_json;
    s.saved_result_json = "{}";
    s.catalog_version = "test";
    s.tags = {"q1"};
    return s;
}

// The answer a scenario change is encoded as: its version, as the ETag.
inline StoredResponse VersionAnswer(const ports::Scenario& s) {
    return StoredResponse{200, s.name, ports::ScenarioEtag(s.version), false};
}

inline ports::NewPrice TodaysPrice(double usd_per_hour) {
    return ports::NewPrice{usd_per_hour, text::TodayUtc(), false, "CONTRACT", true, ""};
}

inline StoredResponse HistoryAnswer(const ports::OfferingHistory& h) {
    return StoredResponse{200, std::to_string(h.prices.size()), ports::OfferingEtag(h.version),
                          false};
}

inline void CheckError(const pricing::Error& e, pricing::ErrorCode code, const std::string& field) {
    CHECK(e.code == code);
    CHECK(e.field == field);
}

// ---------------------------------------------------------------------------------------
// Scenarios

TEST_CASE_TEMPLATE_DEFINE("store contract: a saved scenario is read back as saved, by its team", T,
                          scenario_saved) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    auto saved = stores.Catalog().SaveScenario(As(ops), Draft("plan a"));
    REQUIRE(saved.ok());
    const ports::Scenario& s = saved.value();
    CHECK(s.id > 0);
    CHECK(s.version == 1);
    CHECK(s.created_by == "ops");
    CHECK(s.team == "default");
    CHECK_FALSE(s.confidential);
    CHECK_FALSE(s.replayed);
    auto read = stores.Catalog().GetScenario(s.id);
    REQUIRE(read.ok());
    CHECK(read.value().name == "plan a");
    CHECK(read.value().tags == std::vector<std::string>{"q1"});
    CheckError(stores.Catalog().GetScenario(s.id + 1000).error(), pricing::ErrorCode::kNotFound,
               "id");
    // A request carrying a price book is confidential, whoever saves it.
    auto booked = stores.Catalog().SaveScenario(As(ops), Draft("booked", R"({"price_book":"x"})"));
    REQUIRE(booked.ok());
    CHECK(booked.value().confidential);
}

TEST_CASE_TEMPLATE_DEFINE(
    "store contract: an Idempotency-Key saves one scenario, and only for "
    "its own request",
    T, scenario_idempotent) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    auto first = stores.Catalog().SaveScenario(As(ops, "k1", "h1"), Draft("once"));
    auto again = stores.Catalog().SaveScenario(As(ops, "k1", "h1"), Draft("once"));
    REQUIRE(first.ok());
    REQUIRE(again.ok());
    CHECK(again.value().id == first.value().id);
    CHECK(again.value().replayed);
    CheckError(stores.Catalog().SaveScenario(As(ops, "k1", "h2"), Draft("other")).error(),
               pricing::ErrorCode::kInvalidArgument, "Idempotency-Key");
    auto page = stores.Catalog().FindScenarios({}, 10, 0);
    REQUIRE(page.ok());
    CHECK(page.value().total_count == 1);
}

TEST_CASE_TEMPLATE_DEFINE(
    "store contract: a scenario change checks If-Match, the owner and the "
    "team, and a retry replays it",
    T, scenario_change) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    const auto ana = stores.Key(KeyScope::kRead, "ana", "default");
    const auto bob = stores.Key(KeyScope::kRead, "bob", "default");
    const auto other = stores.Key(KeyScope::kAdmin, "them", "other");
    auto saved = stores.Catalog().SaveScenario(As(ana), Draft("mine"));
    REQUIRE(saved.ok());
    const std::int64_t id = saved.value().id;
    ports::ScenarioChange rename;
    rename.name = "renamed";

    CheckError(stores.Catalog()
                   .UpdateScenario(As(ana, "", "", "\"s9\""), id, rename, &VersionAnswer)
                   .error(),
               pricing::ErrorCode::kFailedPrecondition, ports::kIfMatchField);
    CheckError(stores.Catalog().UpdateScenario(As(bob), id, rename, &VersionAnswer).error(),
               pricing::ErrorCode::kFailedPrecondition, ports::kOwnerField);
    CheckError(stores.Catalog().UpdateScenario(As(other), id, rename, &VersionAnswer).error(),
               pricing::ErrorCode::kFailedPrecondition, ports::kOwnerField);

    auto changed =
        stores.Catalog().UpdateScenario(As(ana, "u1", "h", "\"s1\""), id, rename, &VersionAnswer);
    REQUIRE(changed.ok());
    CHECK(changed.value().etag == "\"s2\"");
    CHECK_FALSE(changed.value().replayed);
    // The retry is answered what the first got, though its If-Match is stale now.
    auto retry =
        stores.Catalog().UpdateScenario(As(ana, "u1", "h", "\"s1\""), id, rename, &VersionAnswer);
    REQUIRE(retry.ok());
    CHECK(retry.value().replayed);
    CHECK(retry.value().etag == "\"s2\"");
    // An admin of the team changes anyone's.
    auto by_admin = stores.Catalog().UpdateScenario(As(ops), id, rename, &VersionAnswer);
    REQUIRE(by_admin.ok());
    CHECK(by_admin.value().etag == "\"s3\"");
    CHECK(stores.Catalog().GetScenario(id).value().name == "renamed");
}

TEST_CASE_TEMPLATE_DEFINE("store contract: a deleted scenario is gone, and the delete replays", T,
                          scenario_delete) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    const auto them = stores.Key(KeyScope::kAdmin, "them", "other");
    auto secret = stores.Catalog().SaveScenario(As(ops), Draft("s", R"({"calibration":{}})"));
    REQUIRE(secret.ok());
    // Another team's confidential scenario is not there for it.
    CheckError(stores.Catalog().DeleteScenario(As(them), secret.value().id).error(),
               pricing::ErrorCode::kNotFound, "id");
    auto deleted = stores.Catalog().DeleteScenario(As(ops, "d1", "h"), secret.value().id);
    REQUIRE(deleted.ok());
    CHECK(deleted.value().status == 204);
    auto replay = stores.Catalog().DeleteScenario(As(ops, "d1", "h"), secret.value().id);
    REQUIRE(replay.ok());
    CHECK(replay.value().status == 204);
    CHECK(replay.value().replayed);
    CheckError(stores.Catalog().GetScenario(secret.value().id).error(),
               pricing::ErrorCode::kNotFound, "id");
    CheckError(stores.Catalog().DeleteScenario(As(ops), secret.value().id).error(),
               pricing::ErrorCode::kNotFound, "id");
}

TEST_CASE_TEMPLATE_DEFINE(
    "store contract: a scenario list filters, pages and hides what the "
    "reader may not read",
    T, scenario_find) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    const auto them = stores.Key(KeyScope::kRead, "them", "other");
    const auto finance = stores.Key(KeyScope::kOrg, "finance", "default");
    REQUIRE(stores.Catalog().SaveScenario(As(ops), Draft("a")).ok());
    auto b = Draft("b", R"({"price_book":"negotiated"})");
    b.tags = {"q2"};
    REQUIRE(stores.Catalog().SaveScenario(As(ops), b).ok());
    REQUIRE(stores.Catalog().SaveScenario(As(them), Draft("c")).ok());

    auto count = [&](ports::ScenarioFilter f) {
        return stores.Catalog().FindScenarios(f, 10, 0).value().total_count;
    };
    CHECK(count({}) == 2);                            // anonymous: the open ones
    CHECK(count({"", "", "", ops}) == 3);             // its team's too
    CHECK(count({"", "", "", them}) == 2);            // not another team's confidential one
    CHECK(count({"", "", "", finance}) == 3);         // org: everything
    CHECK(count({"", "q2", "", ops}) == 1);           // by tag
    CHECK(count({"", "", "them", finance}) == 1);     // by the saving key's name
    CHECK(count({"serving", "", "", finance}) == 0);  // by plan kind
    auto first = stores.Catalog().FindScenarios({"", "", "", finance}, 2, 0);
    REQUIRE(first.ok());
    REQUIRE(first.value().items.size() == 2);
    auto rest =
        stores.Catalog().FindScenarios({"", "", "", finance}, 2, first.value().items.back().id);
    REQUIRE(rest.ok());
    REQUIRE(rest.value().items.size() == 1);
    CHECK(rest.value().items.front().name == "c");
    CHECK(rest.value().total_count == 3);
}

// ---------------------------------------------------------------------------------------
// Catalog writes

TEST_CASE_TEMPLATE_DEFINE(
    "store contract: a price write checks If-Match, bumps the version, "
    "serves the price and replays",
    T, catalog_put_price) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    auto& catalog = stores.Catalog();
    const auto before = catalog.History(kOffering);
    REQUIRE(before.ok());
    const std::string etag = ports::OfferingEtag(before.value().version);

    CheckError(
        catalog.PutPrice(As(ops), "no-such-offering", TodaysPrice(50), &HistoryAnswer).error(),
        pricing::ErrorCode::kNotFound, "id");
    CheckError(
        catalog.PutPrice(As(ops, "", "", "\"v999\""), kOffering, TodaysPrice(50), &HistoryAnswer)
            .error(),
        pricing::ErrorCode::kFailedPrecondition, ports::kIfMatchField);

    auto put =
        catalog.PutPrice(As(ops, "p1", "h", etag), kOffering, TodaysPrice(50.5), &HistoryAnswer);
    REQUIRE(put.ok());
    CHECK(put.value().etag == ports::OfferingEtag(before.value().version + 1));
    auto retry =
        catalog.PutPrice(As(ops, "p1", "h", etag), kOffering, TodaysPrice(50.5), &HistoryAnswer);
    REQUIRE(retry.ok());
    CHECK(retry.value().replayed);
    CHECK(retry.value().etag == put.value().etag);
    CheckError(
        catalog.PutPrice(As(ops, "p1", "other"), kOffering, TodaysPrice(1), &HistoryAnswer).error(),
        pricing::ErrorCode::kInvalidArgument, "Idempotency-Key");

    auto after = catalog.History(kOffering);
    REQUIRE(after.ok());
    CHECK(after.value().version == before.value().version + 1);
    CHECK(after.value().prices.size() == before.value().prices.size() + 1);
    CHECK(after.value().offering.price.usd_per_hour == doctest::Approx(50.5));
    CHECK(catalog.Current()->FindOffering(kOffering).value().price.usd_per_hour ==
          doctest::Approx(50.5));
}

TEST_CASE_TEMPLATE_DEFINE(
    "store contract: a retired offering leaves the catalog and takes no "
    "price",
    T, catalog_retire) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    auto& catalog = stores.Catalog();
    REQUIRE(catalog.Current()->FindOffering(kOffering).ok());
    auto retired = catalog.RetireOffering(As(ops), kOffering, &HistoryAnswer);
    REQUIRE(retired.ok());
    CHECK_FALSE(catalog.Current()->FindOffering(kOffering).ok());
    CHECK(catalog.History(kOffering).value().retired_at_us.has_value());
    CHECK(catalog.PutPrice(As(ops), kOffering, TodaysPrice(1), &HistoryAnswer).error().code ==
          pricing::ErrorCode::kFailedPrecondition);
    CHECK(catalog.RetireOffering(As(ops), kOffering, &HistoryAnswer).error().code ==
          pricing::ErrorCode::kFailedPrecondition);
}

TEST_CASE_TEMPLATE_DEFINE(
    "store contract: created offerings are served; a taken id or an "
    "unknown accelerator creates nothing",
    T, catalog_create) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    auto& catalog = stores.Catalog();
    pricing::Offering o = catalog.Current()->FindOffering(kOffering).value();
    o.superseded_prices.clear();
    o.price = pricing::PriceObservation{12.5, text::TodayUtc(), false, "CONTRACT", true, ""};
    auto count = [](const std::vector<ports::OfferingHistory>& created) {
        return StoredResponse{201, std::to_string(created.size()), "", false};
    };
    CHECK(catalog.CreateOfferings(As(ops), {o}, count).error().code ==
          pricing::ErrorCode::kFailedPrecondition);
    o.id = "contract-new-offering";
    pricing::Offering unknown = o;
    unknown.id = "contract-unknown";
    unknown.accelerator = "no-such-accelerator";
    CHECK(catalog.CreateOfferings(As(ops), {o, unknown}, count).error().code ==
          pricing::ErrorCode::kInvalidArgument);
    CHECK_FALSE(catalog.History("contract-new-offering").ok());
    auto created = catalog.CreateOfferings(As(ops), {o}, count);
    REQUIRE(created.ok());
    CHECK(created.value().body == "1");
    CHECK(catalog.Current()->FindOffering("contract-new-offering").value().price.usd_per_hour ==
          doctest::Approx(12.5));
}

// ---------------------------------------------------------------------------------------
// Price books

inline ports::StoredPriceBook Book(const std::string& id, const std::string& name) {
    ports::StoredPriceBook b;
    b.id = id;
    b.name = name;
    b.rules_json = "[]";
    return b;
}

inline StoredResponse BookAnswer(const ports::StoredPriceBook& b) {
    return StoredResponse{200, std::to_string(b.version), ports::PriceBookEtag(b.version), false};
}

TEST_CASE_TEMPLATE_DEFINE(
    "store contract: price book versions, ids, If-Match, teams and "
    "shares",
    T, price_books) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    const auto shared = stores.Key(KeyScope::kAdmin, "partner", "partner");
    const auto stranger = stores.Key(KeyScope::kAdmin, "stranger", "stranger");
    auto& books = stores.Books();
    auto draft = Book("negotiated", "v1 name");
    draft.shared_with = std::vector<std::string>{"partner"};
    auto created = books.Create(As(ops), draft, &BookAnswer);
    REQUIRE(created.ok());
    CHECK(created.value().etag == "\"b1\"");
    CheckError(books.Create(As(ops), draft, &BookAnswer).error(),
               pricing::ErrorCode::kFailedPrecondition, "/id");
    auto unknown_team = Book("other-book", "x");
    unknown_team.shared_with = std::vector<std::string>{"no-such-team"};
    CheckError(books.Create(As(ops), unknown_team, &BookAnswer).error(),
               pricing::ErrorCode::kInvalidArgument, "/shared_with/0");
    CheckError(books.Get("other-book", std::nullopt).error(), pricing::ErrorCode::kNotFound, "id");

    CheckError(
        books.Replace(As(ops, "", "", "\"b7\""), "negotiated", Book("", "v2"), &BookAnswer).error(),
        pricing::ErrorCode::kFailedPrecondition, ports::kIfMatchField);
    CheckError(books.Replace(As(shared), "negotiated", Book("", "v2"), &BookAnswer).error(),
               pricing::ErrorCode::kFailedPrecondition, ports::kOwnerField);
    CheckError(books.Replace(As(stranger), "negotiated", Book("", "v2"), &BookAnswer).error(),
               pricing::ErrorCode::kNotFound, "id");
    auto replaced =
        books.Replace(As(ops, "r1", "h", "\"b1\""), "negotiated", Book("", "v2"), &BookAnswer);
    REQUIRE(replaced.ok());
    CHECK(replaced.value().etag == "\"b2\"");
    auto retry =
        books.Replace(As(ops, "r1", "h", "\"b1\""), "negotiated", Book("", "v2"), &BookAnswer);
    REQUIRE(retry.ok());
    CHECK(retry.value().replayed);

    auto latest = books.Get("negotiated", std::nullopt);
    REQUIRE(latest.ok());
    CHECK(latest.value().version == 2);
    CHECK(latest.value().latest_version == 2);
    CHECK(latest.value().name == "v2");
    CHECK(latest.value().team == "default");
    CHECK(latest.value().written_by == "ops");
    CHECK(latest.value().shared_with == std::vector<std::string>{"partner"});
    CHECK(books.Get("negotiated", 1).value().name == "v1 name");
    CheckError(books.Get("negotiated", 3).error(), pricing::ErrorCode::kNotFound, "version");
    CHECK(books.List().value().size() == 1);

    auto deleted = books.Delete(As(ops), "negotiated");
    REQUIRE(deleted.ok());
    CHECK(deleted.value().status == 204);
    CheckError(books.Get("negotiated", std::nullopt).error(), pricing::ErrorCode::kNotFound, "id");
    CHECK(books.List().value().empty());
    // The id of a deleted book is not reused.
    CheckError(books.Create(As(ops), Book("negotiated", "again"), &BookAnswer).error(),
               pricing::ErrorCode::kFailedPrecondition, "/id");
}

// ---------------------------------------------------------------------------------------
// Actual spend

inline pricing::ActualCharge Charge(const std::string& row_id, const std::string& month,
                                    double billed, const std::string& tag) {
    pricing::ActualCharge c;
    c.row_id = row_id;
    c.provider = "aws";
    c.month = month;
    c.charge_period_start = month + "-01T00:00:00Z";
    c.billing_currency = "USD";
    c.sku = "p5.48xlarge";
    c.accelerator = "h100-sxm";
    c.region = "us-east-1";
    c.pricing_category = "Standard";
    c.accelerator_hours = 8;
    c.billed_cost = billed;
    c.effective_cost = billed;
    c.list_cost = billed;
    c.tag_value = tag;
    return c;
}

inline StoredResponse ImportAnswer(const ports::ActualsImport& i) {
    return StoredResponse{201,
                          std::to_string(i.id) + " " + std::to_string(i.added) + " " +
                              std::to_string(i.already_imported),
                          "", false};
}

TEST_CASE_TEMPLATE_DEFINE(
    "store contract: actual spend is stored once per row, summed by month "
    "for its team, listed and deleted",
    T, actuals) {
    T stores;
    const auto ops = stores.Key(KeyScope::kAdmin, "ops", "default");
    const auto them = stores.Key(KeyScope::kAdmin, "them", "other");
    auto& actuals = stores.Actuals();
    pricing::ActualsReport report;
    report.rows_read = 3;
    report.kept = 3;
    const std::vector<pricing::ActualCharge> charges = {Charge("r1", "2026-01", 0.1, "7"),
                                                        Charge("r2", "2026-01", 0.2, "7"),
                                                        Charge("r3", "2026-02", 5, "8")};
    auto first =
        actuals.Import(As(ops, "i1", "h"), "gpucost-scenario", report, charges, &ImportAnswer);
    REQUIRE(first.ok());
    auto replay =
        actuals.Import(As(ops, "i1", "h"), "gpucost-scenario", report, charges, &ImportAnswer);
    REQUIRE(replay.ok());
    CHECK(replay.value().replayed);
    CHECK(replay.value().body == first.value().body);
    auto again = actuals.Import(As(ops), "gpucost-scenario", report, charges, &ImportAnswer);
    REQUIRE(again.ok());
    CHECK(again.value().body.substr(again.value().body.find(' ')) == " 0 3");
    // A failed read stores nothing.
    auto failed = actuals.Import(
        As(ops), "gpucost-scenario",
        [](const ports::ActualsStore::ChargeSink& sink)
            -> pricing::Result<ports::ActualsStore::ExportCounts> {
            sink(Charge("r9", "2026-03", 1, "7"));
            return pricing::MakeError(pricing::ErrorCode::kInvalidArgument, "bad row", "file");
        },
        &ImportAnswer);
    CHECK_FALSE(failed.ok());

    auto months = actuals.MonthsTagged("gpucost-scenario", "7", "default");
    REQUIRE(months.ok());
    REQUIRE(months.value().size() == 1);
    CHECK(months.value()[0].month == "2026-01");
    CHECK(months.value()[0].rows == 2);
    CHECK(months.value()[0].billed_cost == 0.3);  // to the cent, exactly
    CHECK(months.value()[0].accelerator_hours == doctest::Approx(16));
    CHECK(actuals.MonthsTagged("gpucost-scenario", "7", "other").value().empty());
    CHECK(actuals.MonthsTagged("another-key", "7", "default").value().empty());
    // The same charges by kind (category and offering): the price effect's split reads them.
    auto classes = actuals.ClassesTagged("gpucost-scenario", "7", "default");
    REQUIRE(classes.ok());
    REQUIRE(classes.value().size() == 1);
    CHECK(classes.value()[0].month == "2026-01");
    CHECK(classes.value()[0].pricing_category == "Standard");
    CHECK(classes.value()[0].offering_id.empty());
    CHECK(classes.value()[0].effective_cost == 0.3);
    CHECK(classes.value()[0].accelerator_hours == doctest::Approx(16));
    CHECK(actuals.ClassesTagged("gpucost-scenario", "7", "other").value().empty());

    auto listed = actuals.ListImports("default", 10, 0);
    REQUIRE(listed.ok());
    CHECK(listed.value().second == 2);
    REQUIRE(listed.value().first.size() == 2);
    CHECK(listed.value().first[0].id > listed.value().first[1].id);  // newest first
    CHECK(listed.value().first[1].charges == 3);
    CHECK(listed.value().first[1].imported_by == "ops");
    CHECK(actuals.ListImports("other", 10, 0).value().second == 0);

    const std::int64_t id = listed.value().first[1].id;
    CheckError(actuals.DeleteImport(As(them), id).error(), pricing::ErrorCode::kNotFound, "id");
    auto deleted = actuals.DeleteImport(As(ops), id);
    REQUIRE(deleted.ok());
    CHECK(deleted.value().status == 204);
    CHECK(actuals.MonthsTagged("gpucost-scenario", "7", "default").value().empty());
}

}  // namespace gpucost::testing::contract
