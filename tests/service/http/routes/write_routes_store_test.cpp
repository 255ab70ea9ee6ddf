#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/service/http/routes/memory_fixture.hpp"
#include "tests/support/http_checks.hpp"

using json = nlohmann::json;
using gpucost::testing::Body;
using gpucost::testing::CheckProblem;
using namespace gpucost;
using gpucost::testing::MemoryFixture;

namespace {

constexpr char kOffering[] = "/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand";

const std::string kPrice =
    R"({"usd_per_hour": 44.0, "as_of": "2026-11-21", "source": "NEGOTIATED"})";

}  // namespace

TEST_SUITE("write_routes") {
    TEST_CASE("PUT price needs an admin key: none or unknown is 401, read scope is 403") {
        MemoryFixture f;
        auto c = f.server->Client();
        std::string path = std::string(kOffering) + "/price";
        auto none = c.Put(path.c_str(), kPrice, "application/json");
        CheckProblem(none, 401, "unauthenticated");
        CHECK(none->get_header_value("WWW-Authenticate").find("Bearer") == 0);
        CheckProblem(c.Put(path.c_str(), f.Auth("gpc_000000000000_" + std::string(48, '0')), kPrice,
                           "application/json"),
                     401, "unauthenticated");
        CheckProblem(
            c.Put(path.c_str(), {{"Authorization", "Basic abc"}}, kPrice, "application/json"), 401,
            "unauthenticated");
        CheckProblem(c.Put(path.c_str(), f.Auth(f.reader), kPrice, "application/json"), 403,
                     "forbidden");
        CHECK(f.store->PriceRowCount() == 6);
    }

    TEST_CASE("PUT price applies once, returns the history with an ETag, and GET shows it") {
        MemoryFixture f;
        auto c = f.server->Client();
        std::string path = std::string(kOffering) + "/price";
        auto put = c.Put(path.c_str(), f.Auth(f.admin, {{"Idempotency-Key", "abc-1"}}), kPrice,
                         "application/json");
        REQUIRE(put);
        CHECK(put->status == 200);
        CHECK(put->get_header_value("ETag") == "\"v2\"");
        json body = Body(put);
        CHECK(body["offering"]["usd_per_hour"] == 44.0);
        CHECK(body["prices"].size() == 4);
        CHECK(body["prices"][3]["current"] == true);
        CHECK(body["prices"][1]["usd_per_hour"] == 55.04);
        CHECK(body["prices"][1]["valid_to"] == body["prices"][3]["valid_from"]);
        CHECK(body["prices"][2]["served"] == false);

        auto replay = c.Put(path.c_str(), f.Auth(f.admin, {{"Idempotency-Key", "abc-1"}}), kPrice,
                            "application/json");
        REQUIRE(replay);
        CHECK(replay->status == 200);
        CHECK(replay->get_header_value("Idempotent-Replayed") == "true");
        CHECK(replay->body == put->body);
        CHECK(f.store->PriceRowCount() == 7);

        // The same request written another way (member order, spacing, 44 for 44.0) is a
        // replay, not a conflict: the key is compared with the parsed request.
        auto rewritten =
            c.Put(path.c_str(), f.Auth(f.admin, {{"Idempotency-Key", "abc-1"}}),
                  R"({ "source": "NEGOTIATED",   "as_of": "2026-11-21", "usd_per_hour": 44 })",
                  "application/json");
        REQUIRE(rewritten);
        CHECK(rewritten->status == 200);
        CHECK(rewritten->get_header_value("Idempotent-Replayed") == "true");
        CHECK(rewritten->body == put->body);

        auto reused = c.Put(path.c_str(), f.Auth(f.admin, {{"Idempotency-Key", "abc-1"}}),
                            R"({"usd_per_hour": 45, "source": "X"})", "application/json");
        CheckProblem(reused, 422, "invalid_argument");

        auto current = c.Get(kOffering);
        REQUIRE(current);
        CHECK(Body(current)["usd_per_hour"] == 44.0);
        CHECK(current->get_header_value("ETag").rfind("\"v2.", 0) == 0);
        auto history = c.Get((std::string(kOffering) + "/history").c_str());
        REQUIRE(history);
        CHECK(history->status == 200);
        CHECK(history->get_header_value("ETag").rfind("\"v2.", 0) == 0);
        CHECK(Body(history)["prices"].size() == 4);
        // The offering in the history says what the offering itself says.
        CHECK(Body(history)["offering"]["superseded_price_count"] ==
              Body(current)["superseded_price_count"]);
        CHECK(Body(current)["superseded_price_count"] == 3);
        CheckProblem(c.Get("/v1/offerings/nope/history"), 404, "not_found");
    }

    TEST_CASE("a stale If-Match is 412 and the current one is accepted") {
        MemoryFixture f;
        auto c = f.server->Client();
        std::string path = std::string(kOffering) + "/price";
        auto stale = c.Put(path.c_str(), f.Auth(f.admin, {{"If-Match", "\"v7\""}}), kPrice,
                           "application/json");
        CheckProblem(stale, 412, "precondition_failed");
        auto fresh = c.Put(path.c_str(), f.Auth(f.admin, {{"If-Match", "\"v1\""}}), kPrice,
                           "application/json");
        REQUIRE(fresh);
        CHECK(fresh->status == 200);
        CheckProblem(c.Put(path.c_str(), f.Auth(f.admin, {{"If-Match", "\"v1\""}}), kPrice,
                           "application/json"),
                     412, "precondition_failed");
    }

    TEST_CASE("bad price bodies are 400 or 422 naming the field, and nothing is written") {
        MemoryFixture f;
        auto c = f.server->Client();
        std::string path = std::string(kOffering) + "/price";
        struct Case {
            std::string body;
            int status;
            std::string field;
        };
        for (const Case& k : std::vector<Case>{
                 {"{", 400, ""},
                 {"[]", 400, ""},
                 {R"({"usd_per_hour": "1", "source": "x"})", 400, "/usd_per_hour"},
                 {R"({"usd_per_hour": 1})", 422, "/source"},  // missing: 422 everywhere
                 {R"({"usd_per_hour": 1, "source": "x", "extra": 1})", 400, "/extra"},
                 {R"({"usd_per_hour": -1, "source": "x"})", 422, "/usd_per_hour"},
                 {R"({"usd_per_hour": 1e300, "source": "x"})", 422, "/usd_per_hour"},
                 {R"({"usd_per_hour": 1, "source": ""})", 422, "/source"},
                 {R"({"usd_per_hour": 1, "source": "x", "as_of": "2026-02-30"})", 422, "/as_of"},
                 // A date in the future would become the catalog's newest, current for years.
                 {R"({"usd_per_hour": 1, "source": "x", "as_of": "2099-01-01"})", 422, "/as_of"},
                 // An estimated date is never verified (the catalog loader's rule).
                 {R"({"usd_per_hour": 1, "source": "x", "as_of": "2026-11-01",
                      "as_of_estimated": true, "verified": true})",
                  422, "/verified"},
                 // PostgreSQL would keep the text cut at the NUL.
                 {R"({"usd_per_hour": 1, "source": "AWS\u0000x"})", 422, "/source"},
                 {R"({"usd_per_hour": 1, "source": "x", "notes": "a\u0000b"})", 422, "/notes"},
             }) {
            auto r = c.Put(path.c_str(), f.Auth(f.admin), k.body, "application/json");
            REQUIRE(r);
            CHECK_MESSAGE(r->status == k.status, k.body);
            if (!k.field.empty()) {
                CHECK_MESSAGE(json::parse(r->body)["field"] == k.field, k.body);
            }
        }
        CheckProblem(c.Put(path.c_str(), f.Auth(f.admin), kPrice, "text/plain"), 415,
                     "unsupported_media_type");
        CheckProblem(c.Put("/v1/offerings/nope/price", f.Auth(f.admin), kPrice, "application/json"),
                     404, "not_found");
        CheckProblem(
            c.Put(path.c_str(), f.Auth(f.admin, {{"Idempotency-Key", std::string(201, 'k')}}),
                  kPrice, "application/json"),
            400, "malformed_request");
        // Sent empty or blank, a key is a mistake, not "no key" (the write would apply twice).
        for (const std::string& blank : {std::string(), std::string("   ")}) {
            auto r = c.Put(path.c_str(), f.Auth(f.admin, {{"Idempotency-Key", blank}}), kPrice,
                           "application/json");
            CheckProblem(r, 400, "malformed_request");
            CHECK(json::parse(r->body)["field"] == "Idempotency-Key");
        }
        CHECK(f.store->PriceRowCount() == 6);
    }

    TEST_CASE("POST offerings creates one (201), a bulk array, or CSV rows; duplicates are 409") {
        MemoryFixture f;
        auto c = f.server->Client();
        const std::string one = R"({"provider": "aws", "instance_type": "p5.48xlarge",
            "accelerator": "h100-sxm", "accelerator_count": 8, "region": "eu-west-1",
            "price_type": "on_demand", "usd_per_hour": 60.5, "as_of": "2026-11-20",
            "source": "AWS PRICE API"})";
        auto created = c.Post("/v1/offerings", f.Auth(f.admin), one, "application/json");
        REQUIRE(created);
        CHECK(created->status == 201);
        CHECK(created->get_header_value("Location") ==
              "/v1/offerings/aws-p5.48xlarge-eu-west-1-on-demand");
        CHECK(Body(c.Get("/v1/offerings/aws-p5.48xlarge-eu-west-1-on-demand"))["usd_per_hour"] ==
              60.5);

        CheckProblem(c.Post("/v1/offerings", f.Auth(f.admin), one, "application/json"), 409,
                     "failed_precondition");

        const std::string bulk = R"([
            {"id": "lambda-h100-a", "provider": "Lambda", "instance_type": "gpu_1x_h100",
             "accelerator": "H100 SXM", "accelerator_count": 1, "region": "us-west",
             "price_type": "on_demand", "usd_per_hour": 2.99, "as_of": "2026-11-20", "source": "L"},
            {"id": "lambda-h100-b", "provider": "lambda", "instance_type": "gpu_8x_h100",
             "accelerator": "h100-sxm", "accelerator_count": 8, "region": "us-west",
             "price_type": "on_demand", "usd_per_hour": 23.92, "as_of": "2026-11-20", "source": "L"}])";
        auto many = c.Post("/v1/offerings", f.Auth(f.admin), bulk, "application/json");
        REQUIRE(many);
        CHECK(many->status == 201);
        CHECK(Body(many)["created_count"] == 2);

        const std::string csv =
            "provider,sku,accelerator,accel_count,accel_mem_gb_each,vcpus,ram_gib,interconnect,"
            "region,price_type,usd_per_hour,usd_per_accel_hour,as_of,source,verified,notes\n"
            "AWS,p5.48xlarge,H100 SXM,8,80,192,2048,EFA,ap-south-1,spot,30.1,3.76,2026-11-19,"
            "spot page,yes,\"a, quoted note\"\n";
        auto imported = c.Post("/v1/offerings", f.Auth(f.admin), csv, "text/csv");
        REQUIRE(imported);
        CHECK(imported->status == 201);
        auto row = Body(c.Get("/v1/offerings/aws-p5.48xlarge-ap-south-1-spot"));
        CHECK(row["usd_per_hour"] == 30.1);
        CHECK(row["price_notes"] == "a, quoted note");

        CheckProblem(
            c.Post("/v1/offerings", f.Auth(f.admin), "provider,bogus\naws,1\n", "text/csv"), 422,
            "invalid_argument");
        auto unknown_acc =
            c.Post("/v1/offerings", f.Auth(f.admin),
                   R"([{"provider": "aws", "instance_type": "x", "accelerator": "nope",
                                  "accelerator_count": 1, "region": "r", "price_type": "spot",
                                  "usd_per_hour": 1, "as_of": "2026-01-01", "source": "s"}])",
                   "application/json");
        CheckProblem(unknown_acc, 422, "invalid_argument");
        CHECK(json::parse(unknown_acc->body)["field"] == "/0/accelerator");
        CheckProblem(c.Post("/v1/offerings", f.Auth(f.reader), one, "application/json"), 403,
                     "forbidden");
        CHECK(f.store->OfferingCount() == 8);

        // Excel's "CSV UTF-8" begins with a byte order mark: not part of the first column.
        std::string with_bom = "\xEF\xBB\xBF" + csv;
        with_bom.replace(with_bom.find("ap-south-1"), 10, "ap-south-2");
        auto excel = c.Post("/v1/offerings", f.Auth(f.admin), with_bom, "text/csv");
        REQUIRE(excel);
        CHECK(excel->status == 201);
        CHECK(Body(c.Get("/v1/offerings/aws-p5.48xlarge-ap-south-2-spot"))["usd_per_hour"] == 30.1);
    }

    TEST_CASE("POST offerings takes spot risk as the spot_interruption object offerings answer") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto spot = [](const std::string& risk) {
            return R"({"provider": "aws", "instance_type": "p5.48xlarge", "accelerator": "h100-sxm",
                "accelerator_count": 8, "region": "eu-north-1", "price_type": "spot",
                "usd_per_hour": 30.5, "as_of": "2026-11-20", "source": "spot page", )" +
                   risk + "}";
        };
        // The bounds follow from the bucket; sent, they must be the bucket's own.
        auto wrong_min =
            c.Post("/v1/offerings", f.Auth(f.admin),
                   spot(R"("spot_interruption": {"bucket": ">20%", "min_percent_per_month": 5})"),
                   "application/json");
        CheckProblem(wrong_min, 422, "invalid_argument");
        CHECK(json::parse(wrong_min->body)["field"] == "/spot_interruption/min_percent_per_month");
        auto bad_bucket =
            c.Post("/v1/offerings", f.Auth(f.admin),
                   spot(R"("spot_interruption": {"bucket": "often"})"), "application/json");
        CheckProblem(bad_bucket, 422, "invalid_argument");
        CHECK(json::parse(bad_bucket->body)["field"] == "/spot_interruption/bucket");
        // The old string member is gone: an unknown field, 400 naming it.
        auto old_name = c.Post("/v1/offerings", f.Auth(f.admin),
                               spot(R"("spot_interruption_bucket": ">20%")"), "application/json");
        CheckProblem(old_name, 400, "malformed_request");
        CHECK(json::parse(old_name->body)["field"] == "/spot_interruption_bucket");
        CHECK(f.store->OfferingCount() == 4);

        auto created =
            c.Post("/v1/offerings", f.Auth(f.admin),
                   spot(R"("spot_interruption": {"bucket": ">20%", "min_percent_per_month": 22,
                                      "max_percent_per_month": 100})"),
                   "application/json");
        REQUIRE(created);
        CHECK(created->status == 201);
        const json risk =
            Body(c.Get("/v1/offerings/aws-p5.48xlarge-eu-north-1-spot"))["spot_interruption"];
        CHECK(risk == json{{"bucket", ">20%"},
                           {"min_percent_per_month", 22},
                           {"max_percent_per_month", 100}});

        // The CSV column keeps the shared file's name and fills the same object.
        const std::string csv =
            "provider,sku,accelerator,accel_count,region,price_type,usd_per_hour,as_of,source,"
            "spot_interruption_bucket\n"
            "AWS,p5.48xlarge,H100 SXM,8,eu-south-1,spot,31,2026-11-19,spot page,5-10%\n";
        auto imported = c.Post("/v1/offerings", f.Auth(f.admin), csv, "text/csv");
        REQUIRE(imported);
        CHECK(imported->status == 201);
        CHECK(
            Body(c.Get(
                "/v1/offerings/aws-p5.48xlarge-eu-south-1-spot"))["spot_interruption"]["bucket"] ==
            "5-10%");
    }

    TEST_CASE("DELETE retires an offering: reads lose it, its history stays") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto retired = c.Delete(kOffering, f.Auth(f.admin));
        REQUIRE(retired);
        CHECK(retired->status == 200);
        CHECK(Body(retired)["retired"] == true);
        CheckProblem(c.Get(kOffering), 404, "not_found");
        auto history = Body(c.Get((std::string(kOffering) + "/history").c_str()));
        CHECK(history["retired"] == true);
        CHECK(history["prices"].size() == 3);
        CheckProblem(c.Delete(kOffering, f.Auth(f.admin)), 409, "failed_precondition");
        CheckProblem(c.Delete(kOffering), 401, "unauthenticated");
    }

    TEST_CASE("with --require-read-key, reads need a key of either scope; probes stay open") {
        MemoryFixture f(/*require_read_key=*/true);
        auto c = f.server->Client();
        CheckProblem(c.Get("/v1/offerings"), 401, "unauthenticated");
        auto with_reader = c.Get("/v1/offerings", f.Auth(f.reader));
        REQUIRE(with_reader);
        CHECK(with_reader->status == 200);
        auto with_admin = c.Get("/v1/accelerators", f.Auth(f.admin));
        REQUIRE(with_admin);
        CHECK(with_admin->status == 200);
        auto health = c.Get("/healthz");
        REQUIRE(health);
        CHECK(health->status == 200);
        CHECK(Body(health)["database"]["connected"] == true);
        CHECK(c.Get("/readyz")->status == 200);
    }

    // A write answers JSON only: an Accept that refuses it is 406 before anything is written,
    // not a write whose answer the client said it cannot read.
    TEST_CASE("a write whose JSON answer Accept refuses is 406 naming Accept, and writes nothing") {
        MemoryFixture f;
        auto c = f.server->Client();
        const std::string one = R"({"provider": "aws", "instance_type": "p5.48xlarge",
            "accelerator": "h100-sxm", "accelerator_count": 8, "region": "eu-west-1",
            "price_type": "on_demand", "usd_per_hour": 60.5, "as_of": "2026-11-20",
            "source": "AWS PRICE API"})";
        const std::size_t offerings = f.store->OfferingCount();
        const std::size_t prices = f.store->PriceRowCount();
        for (const char* accept : {"text/csv", "application/xml", "application/json;q=0, */*"}) {
            INFO(accept);
            auto post = c.Post("/v1/offerings", f.Auth(f.admin, {{"Accept", accept}}), one,
                               "application/json");
            CheckProblem(post, 406, "not_acceptable", "Accept");
            std::string path = std::string(kOffering) + "/price";
            CheckProblem(c.Put(path.c_str(), f.Auth(f.admin, {{"Accept", accept}}), kPrice,
                               "application/json"),
                         406, "not_acceptable");
            CheckProblem(c.Delete(kOffering, f.Auth(f.admin, {{"Accept", accept}})), 406,
                         "not_acceptable");
        }
        CHECK(f.store->OfferingCount() == offerings);
        CHECK(f.store->PriceRowCount() == prices);
        CHECK(c.Get(kOffering)->status == 200);  // not retired
        auto accepted = c.Post("/v1/offerings", f.Auth(f.admin, {{"Accept", "application/*"}}), one,
                               "application/json");
        REQUIRE(accepted);
        CHECK(accepted->status == 201);
    }

    TEST_CASE("an offering's ETag leads with its version: 304 until a write changes it") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto first = c.Get(kOffering);
        REQUIRE(first);
        const std::string etag = first->get_header_value("ETag");
        CHECK(etag.rfind("\"v1.", 0) == 0);
        auto same = c.Get(kOffering, {{"If-None-Match", etag}});
        REQUIRE(same);
        CHECK(same->status == 304);
        CHECK(same->body.empty());
        std::string path = std::string(kOffering) + "/price";
        REQUIRE(c.Put(path.c_str(), f.Auth(f.admin), kPrice, "application/json"));
        auto changed = c.Get(kOffering, {{"If-None-Match", etag}});
        REQUIRE(changed);
        CHECK(changed->status == 200);
        CHECK(changed->get_header_value("ETag").rfind("\"v2.", 0) == 0);
        CHECK(Body(changed)["usd_per_hour"] == 44.0);
    }

    // The offering's body names the catalog version it was read from, which any write moves:
    // a revalidation after ANOTHER offering's write must not keep the old catalog_version.
    TEST_CASE("another offering's write changes the first one's ETag: 200 with the new body") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto first = c.Get(kOffering);
        REQUIRE(first);
        REQUIRE(first->status == 200);
        const std::string etag = first->get_header_value("ETag");
        const std::string other = "/v1/offerings/lambda-gpu_1x_h100-us-on-demand/price";
        auto write = c.Put(other.c_str(), f.Auth(f.admin), kPrice, "application/json");
        REQUIRE(write);
        REQUIRE(write->status == 200);
        auto again = c.Get(kOffering, {{"If-None-Match", etag}});
        REQUIRE(again);
        CHECK(again->status == 200);
        CHECK(again->get_header_value("ETag") != etag);
        CHECK(Body(again)["catalog_version"] != Body(first)["catalog_version"]);
        CHECK(again->get_header_value("Catalog-Version") ==
              Body(again)["catalog_version"].get<std::string>());
        // The offering itself did not change: its tag still leads with version 1, and a write
        // with that tag in If-Match is accepted.
        const std::string fresh = again->get_header_value("ETag");
        CHECK(fresh.rfind("\"v1.", 0) == 0);
        auto unchanged = c.Get(kOffering, {{"If-None-Match", fresh}});
        REQUIRE(unchanged);
        CHECK(unchanged->status == 304);
    }

    TEST_CASE("If-Match takes the tag a GET answered, in any coding; a stale one is 412") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto read = c.Get(kOffering, {{"Accept-Encoding", "gzip"}});
        REQUIRE(read);
        const std::string etag = read->get_header_value("ETag");
        CHECK(etag.find("-gzip\"") != std::string::npos);
        std::string path = std::string(kOffering) + "/price";
        auto put =
            c.Put(path.c_str(), f.Auth(f.admin, {{"If-Match", etag}}), kPrice, "application/json");
        REQUIRE(put);
        CHECK(put->status == 200);
        CheckProblem(
            c.Put(path.c_str(), f.Auth(f.admin, {{"If-Match", etag}}), kPrice, "application/json"),
            412, "precondition_failed");
    }

    TEST_CASE("a 304 in database mode has no Content-Length or Content-Type on the wire") {
        MemoryFixture f;
        auto head_of = [&f](const std::string& fields) {
            std::string answer =
                f.server->Raw(std::string("GET ") + kOffering + " HTTP/1.1\r\nHost: x\r\n" +
                              fields + "Connection: close\r\n\r\n");
            std::string head = answer.substr(0, answer.find("\r\n\r\n") + 2);
            for (char& ch : head)
                ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            return head;
        };
        const std::string ok = head_of("");
        REQUIRE(ok.rfind("http/1.1 200", 0) == 0);
        const std::size_t at = ok.find("\r\netag: ");
        REQUIRE(at != std::string::npos);
        const std::string etag = ok.substr(at + 8, ok.find("\r\n", at + 2) - at - 8);
        const std::string head = head_of("If-None-Match: " + etag + "\r\n");
        CAPTURE(head);
        CHECK(head.rfind("http/1.1 304", 0) == 0);
        CHECK(head.find("\r\ncontent-length:") == std::string::npos);
        CHECK(head.find("\r\ncontent-type:") == std::string::npos);
        CHECK(head.find("\r\netag: " + etag + "\r\n") != std::string::npos);
    }
}

TEST_SUITE("write_routes") {
    // The bodies' members come from their request tables: the unknown-member answer lists
    // exactly the members each route reads.
    TEST_CASE("an unknown member of a price or offering body is 400 listing the members read") {
        MemoryFixture f;
        auto c = f.server->Client();
        auto detail = [](const httplib::Result& r) { return Body(r).value("detail", ""); };
        const std::string path = std::string(kOffering) + "/price";
        auto price = c.Put(path.c_str(), f.Auth(f.admin), R"({"usd": 1})", "application/json");
        CheckProblem(price, 400, "malformed_request", "/usd");
        CHECK(detail(price) ==
              "/usd: unknown member; known members: as_of, as_of_estimated, notes, "
              "source, usd_per_hour, verified");
        auto offering =
            c.Post("/v1/offerings", f.Auth(f.admin), R"({"gpus": 8})", "application/json");
        CheckProblem(offering, 400, "malformed_request", "/gpus");
        CHECK(detail(offering) ==
              "/gpus: unknown member; known members: accelerator, accelerator_count, "
              "accelerator_memory_gb, as_of, as_of_estimated, id, instance_type, interconnect, "
              "notes, price_notes, price_type, provider, ram_gib, region, scale_out_gbit_per_s, "
              "source, spot_interruption, usd_per_hour, vcpus, verified");
        auto spot = c.Post("/v1/offerings", f.Auth(f.admin), R"({"provider": "aws",
                "instance_type": "p5.48xlarge", "accelerator": "h100-sxm", "accelerator_count": 8,
                "region": "eu-north-1", "price_type": "spot", "usd_per_hour": 30.5,
                "as_of": "2026-11-20", "source": "spot page",
                "spot_interruption": {"bucket": ">20%", "min_percent": 5}})",
                           "application/json");
        CheckProblem(spot, 400, "malformed_request", "/spot_interruption/min_percent");
        CHECK(detail(spot) ==
              "/spot_interruption/min_percent: unknown member; known members: bucket, "
              "max_percent_per_month, "
              "min_percent_per_month");
    }
}
