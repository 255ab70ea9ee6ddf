// Every write's Idempotency-Key through the API in database mode: a retry of the same request
// is answered the first answer (Idempotent-Replayed: true), also where the first attempt made
// its If-Match stale or took its id; the same key with another request is 422 naming the key.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/service/storage/pg_fixture.hpp"
#include "tests/support/focus_export.hpp"
#include "tests/support/http_checks.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using gpucost::testing::Fixture;
using gpucost::testing::kFocusHeader;
using gpucost::testing::kTrainingScenario;
using gpucost::testing::P5Row;

namespace {

const json kBook = {{"id", "acme-2026"},
                    {"name", "acme EDP"},
                    {"rules", {{{"provider", "aws"}, {"discount_fraction", 0.18}}}}};

using Send = std::function<httplib::Result(const httplib::Headers&)>;

// The first answer of `send` with key `key` (and `extra` headers), then its retry: the same
// status and body, replayed, and nothing applied twice (the caller checks the database).
httplib::Result FirstThenReplay(const Fixture& f, const Send& send, const std::string& key,
                                int status, httplib::Headers extra = {}) {
    extra.emplace("Idempotency-Key", key);
    auto first = send(f.Auth(f.admin, extra));
    REQUIRE(first);
    INFO(first->body);
    REQUIRE(first->status == status);
    CHECK_FALSE(first->has_header("Idempotent-Replayed"));
    auto retry = send(f.Auth(f.admin, extra));
    REQUIRE(retry);
    INFO(retry->body);
    CHECK(retry->status == status);
    CHECK(retry->get_header_value("Idempotent-Replayed") == "true");
    CHECK(retry->body == first->body);
    CHECK(retry->get_header_value("ETag") == first->get_header_value("ETag"));
    CHECK(retry->get_header_value("Location") == first->get_header_value("Location"));
    return first;
}

// The same key with another request: 422 naming Idempotency-Key.
void KeyReusedRefused(const httplib::Result& r) {
    CheckProblem(r, 422, "invalid_argument", "Idempotency-Key");
}

}  // namespace

TEST_SUITE("recorded_answer") {
    TEST_CASE("POST /v1/price-books: a retry replays the 201, not 409 for the id it took") {
        Fixture f;
        auto c = f.server->Client();
        auto first = FirstThenReplay(
            f,
            [&](const httplib::Headers& h) {
                return c.Post("/v1/price-books", h, kBook.dump(), "application/json");
            },
            "book-1", 201);
        CHECK(first->get_header_value("Location") == "/v1/price-books/acme-2026");
        CHECK(f.db.Scalar("SELECT count(*) FROM price_book_versions") == "1");
        json other = kBook;
        other["name"] = "another name";
        KeyReusedRefused(c.Post("/v1/price-books", f.Auth(f.admin, {{"Idempotency-Key", "book-1"}}),
                                other.dump(), "application/json"));
        // The key is the API key's: another admin key's same key is a request of its own (409:
        // the id is taken).
        const std::string other_admin = f.db.CreateKey("admin", "ops-2");
        // The server reads a new key with its next snapshot refresh.
        for (int attempt = 0; attempt < 600 && !f.store->Authenticate(other_admin); ++attempt) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        CheckProblem(c.Post("/v1/price-books", f.Auth(other_admin, {{"Idempotency-Key", "book-1"}}),
                            kBook.dump(), "application/json"),
                     409, "failed_precondition", "/id");
    }

    TEST_CASE("PUT and DELETE /v1/price-books/{id} with If-Match: a retry replays, not 412") {
        Fixture f;
        auto c = f.server->Client();
        REQUIRE(
            c.Post("/v1/price-books", f.Auth(f.admin), kBook.dump(), "application/json")->status ==
            201);
        json next = kBook;
        next.erase("id");
        next["name"] = "acme EDP 2027";
        auto put = FirstThenReplay(f,
                                   [&](const httplib::Headers& h) {
                                       return c.Put("/v1/price-books/acme-2026", h, next.dump(),
                                                    "application/json");
                                   },
                                   "put-1", 200, {{"If-Match", "\"b1\""}});
        CHECK(put->get_header_value("ETag") == "\"b2\"");
        CHECK(f.db.Scalar("SELECT count(*) FROM price_book_versions") == "2");
        next["name"] = "yet another";
        KeyReusedRefused(
            c.Put("/v1/price-books/acme-2026",
                  f.Auth(f.admin, {{"Idempotency-Key", "put-1"}, {"If-Match", "\"b1\""}}),
                  next.dump(), "application/json"));

        FirstThenReplay(
            f, [&](const httplib::Headers& h) { return c.Delete("/v1/price-books/acme-2026", h); },
            "delete-1", 204, {{"If-Match", "\"b2\""}});
        KeyReusedRefused(
            c.Delete("/v1/price-books/other", f.Auth(f.admin, {{"Idempotency-Key", "delete-1"}})));
    }

    TEST_CASE("PATCH, PUT progress and DELETE of a scenario with If-Match: a retry replays") {
        Fixture f;
        auto c = f.server->Client();
        const std::string id = f.SaveScenario(kTrainingScenario, f.admin)["id"];
        const std::string path = "/v1/scenarios/" + id;
        auto patched = FirstThenReplay(f,
                                       [&](const httplib::Headers& h) {
                                           return c.Patch(path.c_str(), h, R"({"name": "renamed"})",
                                                          "application/merge-patch+json");
                                       },
                                       "patch-1", 200, {{"If-Match", "\"s1\""}});
        CHECK(Body(patched)["name"] == "renamed");
        CHECK(patched->get_header_value("ETag") == "\"s2\"");
        KeyReusedRefused(c.Patch(
            path.c_str(), f.Auth(f.admin, {{"Idempotency-Key", "patch-1"}, {"If-Match", "\"s1\""}}),
            R"({"name": "another"})", "application/merge-patch+json"));

        const std::string progress = R"({"tokens_done_b": 2, "as_of": "2026-01-02T00:00:00Z"})";
        auto put = FirstThenReplay(f,
                                   [&](const httplib::Headers& h) {
                                       return c.Put((path + "/progress").c_str(), h, progress,
                                                    "application/json");
                                   },
                                   "progress-1", 200, {{"If-Match", "\"s2\""}});
        CHECK(put->get_header_value("ETag") == "\"s3\"");

        FirstThenReplay(f, [&](const httplib::Headers& h) { return c.Delete(path.c_str(), h); },
                        "delete-1", 204, {{"If-Match", "\"s3\""}});
        CHECK(f.db.Scalar("SELECT count(*) FROM scenarios") == "0");
    }

    TEST_CASE("POST /v1/actuals: a retry replays the import, not a second one") {
        Fixture f;
        auto c = f.server->Client();
        const std::string focus = std::string(kFocusHeader) + P5Row("100", 80, 10, "1");
        auto first = FirstThenReplay(
            f,
            [&](const httplib::Headers& h) { return c.Post("/v1/actuals", h, focus, "text/csv"); },
            "import-1", 201);
        CHECK(Body(first)["added"] == 1);
        CHECK(f.db.Scalar("SELECT count(*) FROM actuals_imports") == "1");
        KeyReusedRefused(c.Post("/v1/actuals", f.Auth(f.admin, {{"Idempotency-Key", "import-1"}}),
                                focus + P5Row("50", 40, 5, "1"), "text/csv"));
        // The tag key read is a part of the request.
        KeyReusedRefused(c.Post("/v1/actuals?tag_key=team",
                                f.Auth(f.admin, {{"Idempotency-Key", "import-1"}}), focus,
                                "text/csv"));
        CHECK(f.db.Scalar("SELECT count(*) FROM actuals_imports") == "1");

        const std::string import_path =
            "/v1/actuals/imports/" + Body(first)["import_id"].get<std::string>();
        FirstThenReplay(
            f, [&](const httplib::Headers& h) { return c.Delete(import_path.c_str(), h); },
            "delete-import-1", 204);
        CHECK(f.db.Scalar("SELECT count(*) FROM actuals_imports") == "0");
    }

    TEST_CASE("the catalog writes keep the same rules: an If-Match retry replays, not 412") {
        Fixture f;
        auto c = f.server->Client();
        const std::string offering = "/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand";
        const std::string price =
            R"({"usd_per_hour": 44.0, "as_of": "2026-11-21", "source": "NEGOTIATED"})";
        auto put = FirstThenReplay(f,
                                   [&](const httplib::Headers& h) {
                                       return c.Put((offering + "/price").c_str(), h, price,
                                                    "application/json");
                                   },
                                   "price-1", 200, {{"If-Match", "\"v1\""}});
        CHECK(put->get_header_value("ETag") == "\"v2\"");
        const std::string created = R"({"provider": "aws", "instance_type": "p5.48xlarge",
            "accelerator": "h100-sxm", "accelerator_count": 8, "region": "eu-west-1",
            "price_type": "on_demand", "usd_per_hour": 60.5, "as_of": "2026-11-20",
            "source": "AWS PRICE API"})";
        FirstThenReplay(
            f,
            [&](const httplib::Headers& h) {
                return c.Post("/v1/offerings", h, created, "application/json");
            },
            "create-1", 201);
        FirstThenReplay(f, [&](const httplib::Headers& h) { return c.Delete(offering.c_str(), h); },
                        "retire-1", 200, {{"If-Match", "\"v2\""}});
        KeyReusedRefused(
            c.Delete(offering.c_str(), f.Auth(f.admin, {{"Idempotency-Key", "price-1"}})));
    }

    TEST_CASE("a malformed Idempotency-Key is 400 on every write, before anything is written") {
        Fixture f;
        auto c = f.server->Client();
        const httplib::Headers spaced = f.Auth(f.admin, {{"Idempotency-Key", "has space"}});
        CheckProblem(c.Post("/v1/price-books", spaced, kBook.dump(), "application/json"), 400,
                     "malformed_request", "Idempotency-Key");
        CheckProblem(c.Delete("/v1/price-books/acme-2026", spaced), 400, "malformed_request",
                     "Idempotency-Key");
        CheckProblem(c.Post("/v1/actuals", spaced, std::string(kFocusHeader), "text/csv"), 400,
                     "malformed_request", "Idempotency-Key");
        CheckProblem(c.Delete("/v1/scenarios/1", spaced), 400, "malformed_request",
                     "Idempotency-Key");
        CHECK(f.db.Scalar("SELECT count(*) FROM price_books") == "0");
    }
}
