#include "pricing/plan/inference_plan.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <string>

#include "pricing/catalog_loader.hpp"
#include "pricing/money.hpp"
#include "pricing/plan/training_plan.hpp"
#include "tests/support/published_models.hpp"
#include "tests/support/sample_catalog.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::plan;

namespace {

std::shared_ptr<const InMemoryCatalog> Sample() {
    auto r = LoadCatalog(gpucost::testing::SampleCatalogCsv());
    REQUIRE(r.ok());
    return r.value();
}

const PlanReference& Ref() {
    return gpucost::testing::SamplePlanReference();
}

std::size_t Skipped(const InferencePlan& plan, const std::string& reason) {
    for (const auto& [name, count] : plan.skipped) {
        if (name == reason) return count;
    }
    return 0;
}

std::string Example(const InferencePlan& plan, const std::string& reason) {
    for (const auto& [name, text] : plan.skipped_examples) {
        if (name == reason) return text;
    }
    return "";
}

// A 7B model answering 10 requests/s of 512 prompt tokens and 256 generated tokens.
InferencePlanRequest Chat() {
    InferencePlanRequest r;
    r.workload.model.params_b = 7;
    r.workload.precision = Precision::kBf16;
    r.workload.input_tokens = 512;
    r.workload.output_tokens = 256;
    r.traffic.requests_per_second = 10;
    return r;
}

// GPT-OSS 120B in FP8 answering `requests_per_second` of the given prompt and answer lengths.
InferencePlanRequest GptOss120bFp8(int input_tokens, int output_tokens,
                                   double requests_per_second) {
    InferencePlanRequest r = Chat();
    r.workload.model = gpucost::testing::GptOss120b();
    r.workload.precision = Precision::kFp8;
    r.workload.input_tokens = input_tokens;
    r.workload.output_tokens = output_tokens;
    r.traffic.requests_per_second = requests_per_second;
    return r;
}

}  // namespace

TEST_SUITE("plan_inference") {
    TEST_CASE("every option serves the traffic and its token prices add up to its monthly cost") {
        auto catalog = Sample();
        auto plan = PlanInference(Chat(), *catalog, Ref());
        REQUIRE(plan.ok());
        const InferencePlan& p = plan.value();
        CHECK(p.output_tokens_per_second == doctest::Approx(2560));
        REQUIRE(p.total_count >= 2);
        const double requests_per_month = 10 * kSecondsPerMonth;
        for (const auto& o : p.options) {
            CHECK(o.monthly_cost_usd ==
                  doctest::Approx(o.nodes * o.offering->price.usd_per_hour * 730));
            CHECK(o.capacity_requests_per_second >= 10 - 1e-9);
            CHECK(o.total_accelerators == o.nodes * o.offering->accelerator_count);
            CHECK(o.replicas * o.tensor_parallel <= o.total_accelerators);
            const double billed =
                requests_per_month *
                (512 * o.usd_per_million_input_tokens + 256 * o.usd_per_million_output_tokens) /
                1e6;
            CHECK(billed == doctest::Approx(o.monthly_cost_usd));
        }
        for (std::size_t i = 1; i < p.options.size(); ++i) {
            CHECK(p.options[i - 1].monthly_cost_usd <= p.options[i].monthly_cost_usd);
        }
    }

    // A model of 10 KV heads too large for one or two H100s: tensor parallel 4 and 8 were
    // planned with 2.5 and 1.25 KV heads per rank, layouts no serving engine runs.
    TEST_CASE("no option uses a tensor-parallel degree that splits KV heads unevenly") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.workload.model = {};
        r.workload.model.layers = 80;
        r.workload.model.hidden_size = 10240;
        r.workload.model.attention_heads = 40;
        r.workload.model.kv_heads = 10;
        r.workload.model.ffn_hidden_size = 35840;
        r.workload.model.gated_mlp = true;
        r.traffic.requests_per_second = 1;
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        for (const auto& o : plan.value().options) {
            CHECK((10 % o.tensor_parallel == 0 || o.tensor_parallel % 10 == 0));
        }
        CHECK(plan.value().total_count == 0);
        CHECK(Example(plan.value(), "does_not_fit").find("kv_heads") != std::string::npos);
    }

    TEST_CASE("tokens per day convert to requests per second over input plus output") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.traffic.requests_per_second.reset();
        r.traffic.tokens_per_day = 768.0 * 86400.0 * 10.0;
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        CHECK(plan.value().requests_per_second == doctest::Approx(10));
    }

    TEST_CASE("more traffic never costs less") {
        auto catalog = Sample();
        std::map<std::string, double> previous;
        for (double rps : {0.1, 1.0, 10.0, 100.0}) {
            InferencePlanRequest r = Chat();
            r.traffic.requests_per_second = rps;
            auto plan = PlanInference(r, *catalog, Ref());
            REQUIRE(plan.ok());
            for (const auto& o : plan.value().options) {
                CHECK(o.monthly_cost_usd >= previous[o.offering->id]);
                previous[o.offering->id] = o.monthly_cost_usd;
            }
        }
    }

    TEST_CASE("a latency target smaller batches or rules hardware out") {
        auto catalog = Sample();
        auto loose = PlanInference(Chat(), *catalog, Ref());
        InferencePlanRequest tight = Chat();
        tight.max_inter_token_latency_ms = 1e-3;
        auto none = PlanInference(tight, *catalog, Ref());
        REQUIRE(none.ok());
        CHECK(none.value().total_count == 0);
        bool latency_reason = false;
        for (const auto& [reason, count] : none.value().skipped) {
            latency_reason = latency_reason || (reason == "latency_target_unmet" && count > 0);
        }
        CHECK(latency_reason);
        // A target between batch 1 and the loose choice gives a smaller batch.
        const auto& fast = loose.value().options.front();
        InferencePlanRequest mid = Chat();
        mid.max_inter_token_latency_ms = fast.inter_token_latency_ms * 0.99;
        auto smaller = PlanInference(mid, *catalog, Ref());
        REQUIRE(smaller.ok());
        for (const auto& o : smaller.value().options) {
            CHECK(o.inter_token_latency_ms <= *mid.max_inter_token_latency_ms);
        }
    }

    // gpt-oss-120b at 8000 in / 500 out: the planner took the largest concurrency meeting the
    // ITL target (4 on one H200: 126 output tokens/s) although one request alone gave 378
    // (while the serving model spread prompts over every step, a second sequence made every
    // step read most experts). Throughput need not grow with concurrency; the choice holds.
    TEST_CASE(
        "each replica runs the concurrency with the most output tokens/s within the targets") {
        auto catalog = Sample();
        InferencePlanRequest r = GptOss120bFp8(8000, 500, 1);
        auto loose = PlanInference(r, *catalog, Ref());
        REQUIRE(loose.ok());
        REQUIRE_FALSE(loose.value().options.empty());
        const InferencePlanOption& first = loose.value().options.front();
        estimate::ClusterSpec cluster;
        auto h100 = catalog->FindAccelerator("h100-sxm");
        REQUIRE(h100.ok());
        cluster.accelerator = h100.value();
        // The first option's replica: tensor parallel, or expert parallel within the instance.
        const int replica = first.tensor_parallel * first.expert_parallel;
        cluster.accelerator_count = replica;
        cluster.accelerators_per_node = replica;
        estimate::InferenceRequest w = r.workload;
        if (first.expert_parallel > 1) {
            w.expert_parallel = first.expert_parallel;
        } else {
            w.tensor_parallel = first.tensor_parallel;
        }
        w.concurrency = 1;
        auto curve = estimate::EstimateInference(w, cluster);
        REQUIRE(curve.ok());
        const auto& points = curve.value().serving->curve;
        REQUIRE(points.size() >= 3);
        r.max_inter_token_latency_ms = points[2].inter_token_latency_ms * 1.001;
        auto tight = PlanInference(r, *catalog, Ref());
        REQUIRE(tight.ok());
        for (const auto& o : tight.value().options) {
            CAPTURE(o.offering->id);
            if (o.tensor_parallel != first.tensor_parallel ||
                o.expert_parallel != first.expert_parallel) {
                continue;
            }
            for (const auto& p : points) {
                if (p.inter_token_latency_ms <= *r.max_inter_token_latency_ms) {
                    CHECK(o.output_tokens_per_second_per_replica >=
                          p.output_tokens_per_second * (1 - 1e-9));
                }
            }
        }
    }

    // Splitting by time gave the prompt only its TTFT: Llama 3.3 70B fp8 at 8000 in / 100 out
    // priced input at $0.005/M and output at $14-17/M.
    TEST_CASE("input and output tokens are priced by their share of a request's FLOPs") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.workload.model = {};
        r.workload.model.params_b = 70.6;
        r.workload.model.layers = 80;
        r.workload.model.hidden_size = 8192;
        r.workload.model.attention_heads = 64;
        r.workload.model.kv_heads = 8;
        r.workload.model.ffn_hidden_size = 28672;
        r.workload.model.gated_mlp = true;
        r.workload.model.vocab_size = 128256;
        r.workload.precision = Precision::kFp8;
        r.workload.input_tokens = 8000;
        r.workload.output_tokens = 100;
        r.traffic.requests_per_second = 1;
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        REQUIRE_FALSE(plan.value().options.empty());
        auto model = estimate::DeriveModel(r.workload.model);
        REQUIRE(model.ok());
        const estimate::RequestFlops f = estimate::ServedRequestFlops(model.value(), 8000, 100);
        const double requests_per_month = kSecondsPerMonth;
        for (const auto& o : plan.value().options) {
            const double per_request = o.monthly_cost_usd / requests_per_month;
            CHECK(o.usd_per_million_input_tokens * 8000 / 1e6 ==
                  doctest::Approx(per_request * f.prefill / (f.prefill + f.decode)));
            // A token costs about the same in either phase: an output token more, for its
            // longer context and its logits.
            CHECK(o.usd_per_million_output_tokens > o.usd_per_million_input_tokens);
            CHECK(o.usd_per_million_output_tokens < 1.5 * o.usd_per_million_input_tokens);
            CHECK(o.usd_per_million_tokens * 8100 / 1e6 == doctest::Approx(per_request));
        }
    }

    TEST_CASE("a request longer than the model's context is planned, with a warning") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.workload.model.max_context = 512;
        r.workload.model.max_context_source = "test library";
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        CHECK(plan.value().total_count > 0);
        REQUIRE(plan.value().warnings.size() == 1);
        CHECK(plan.value().warnings[0].field == "/input_tokens");
        CHECK(plan.value().warnings[0].detail.find("768 tokens") != std::string::npos);
        r.workload.model.max_context = 768;
        CHECK(PlanInference(r, *catalog, Ref()).value().warnings.empty());
    }

    TEST_CASE("an API price gives the monthly API bill and the saving against it") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.api_usd_per_million_input_tokens = 0.5;
        r.api_usd_per_million_output_tokens = 1.5;
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        const double api = 10 * kSecondsPerMonth * (512 * 0.5 + 256 * 1.5) / 1e6;
        for (const auto& o : plan.value().options) {
            CHECK(*o.api_monthly_cost_usd == doctest::Approx(api));
            CHECK(*o.savings_vs_api_fraction == doctest::Approx(1 - o.monthly_cost_usd / api));
        }
    }

    TEST_CASE("verified_only and max_price_age_days leave out the prices not trusted") {
        auto catalog = Sample();
        InferencePlanRequest all = Chat();
        all.limit = 500;
        all.price_types = {PriceType::kOnDemand, PriceType::kSpot};  // the spot price is unverified
        auto every = PlanInference(all, *catalog, Ref());
        REQUIRE(every.ok());
        std::size_t unverified = 0;
        for (const auto& o : every.value().options)
            unverified += o.offering->price.verified ? 0 : 1;
        REQUIRE(unverified > 0);  // the sample has unverified prices to leave out
        InferencePlanRequest verified = all;
        verified.verified_only = true;
        auto trusted = PlanInference(verified, *catalog, Ref());
        REQUIRE(trusted.ok());
        CHECK(trusted.value().total_count == every.value().total_count - unverified);
        CHECK(Skipped(trusted.value(), "unverified_price") >= unverified);
        for (const auto& o : trusted.value().options) CHECK(o.offering->price.verified);
        CHECK(Example(trusted.value(), "unverified_price").find("verified_only") !=
              std::string::npos);

        InferencePlanRequest recent = all;
        recent.today = "2100-01-01";  // every price is older than a year then
        recent.max_price_age_days = 365;
        auto none = PlanInference(recent, *catalog, Ref());
        REQUIRE(none.ok());
        CHECK(none.value().options.empty());
        CHECK(Skipped(none.value(), "price_too_old") > 0);
        recent.max_price_age_days = -1;
        CHECK(PlanInference(recent, *catalog, Ref()).error().field ==
              "/constraints/max_price_age_days");
    }

    TEST_CASE("invalid traffic and limits name the field") {
        auto catalog = Sample();
        InferencePlanRequest both = Chat();
        both.traffic.tokens_per_day = 5;
        CHECK(PlanInference(both, *catalog, Ref()).error().field == "/traffic");
        InferencePlanRequest bad = Chat();
        bad.traffic.requests_per_second = -1;
        bad.utilization = 0;
        auto e = PlanInference(bad, *catalog, Ref());
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().errors.size() == 2);
        InferencePlanRequest wrong = Chat();
        wrong.workload.model.params_b = -3;
        CHECK_FALSE(PlanInference(wrong, *catalog, Ref()).ok());
    }

    TEST_CASE("no option needs more instances than one customer can get of its offering") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.limit = 500;
        // Small traffic: every offering serves it within its provider's limit.
        auto small = PlanInference(r, *catalog, Ref());
        REQUIRE(small.ok());
        CHECK(Skipped(small.value(), "over_capacity") == 0);
        for (const auto& o : small.value().options) {
            CHECK(o.max_instances == Ref().CapacityOf(*o.offering).max_instances);
            CHECK(o.nodes <= o.max_instances);
        }
        // Traffic that needs more single-GPU Lambda hosts than the 4 one customer can get.
        r.traffic.requests_per_second = 400;
        auto large = PlanInference(r, *catalog, Ref());
        REQUIRE(large.ok());
        for (const auto& o : large.value().options) {
            CHECK(o.nodes <= o.max_instances);
            CHECK(o.offering->provider != "lambda");
        }
        CHECK(Skipped(large.value(), "over_capacity") >= 1);
        const std::string example = Example(large.value(), "over_capacity");
        CHECK(example.find("lambda-gpu_1x_h100-us-on-demand") != std::string::npos);
        CHECK(example.find("one customer can get 4 (TEST LAMBDA)") != std::string::npos);
    }

    TEST_CASE("an accelerator not offered for serving is skipped, with the vendor's document") {
        auto catalog = Sample();
        PlanReference training_only = Ref();
        training_only.workloads["h100-sxm"] = {true, false, "TEST TRAINING-ONLY DOC"};
        InferencePlanRequest r = Chat();
        r.limit = 500;
        auto plan = PlanInference(r, *catalog, training_only);
        REQUIRE(plan.ok());
        for (const auto& o : plan.value().options) {
            CHECK(o.offering->accelerator != "h100-sxm");
        }
        CHECK(Skipped(plan.value(), "not_for_inference") >= 2);
        CHECK(Example(plan.value(), "not_for_inference") ==
              "H100 SXM is offered for training only (TEST TRAINING-ONLY DOC)");
    }

    TEST_CASE("spot is planned only when price_types names it, and then with spare replicas") {
        auto catalog = Sample();
        auto plain = PlanInference(Chat(), *catalog, Ref());
        REQUIRE(plain.ok());
        std::size_t left_out = 0;
        for (const auto& [reason, count] : plain.value().skipped) {
            left_out += reason == "spot_not_requested" ? count : 0;
        }
        CHECK(left_out > 0);
        for (const auto& o : plain.value().options) {
            CHECK(o.offering->price_type != PriceType::kSpot);
            CHECK(o.spare_replicas == 0);
            CHECK_FALSE(o.reasoning.has_value());
        }
        InferencePlanRequest r = Chat();
        r.price_types = {PriceType::kSpot};
        r.limit = 500;
        auto spot = PlanInference(r, *catalog, Ref());
        REQUIRE(spot.ok());
        REQUIRE_FALSE(spot.value().options.empty());
        for (const auto& o : spot.value().options) {
            CHECK(o.offering->price_type == PriceType::kSpot);
            // Spares are whole instances: a reclaim takes an instance with all its replicas,
            // so spare replicas on the one instance a service runs on protected nothing.
            const int per_instance = o.offering->accelerator_count / o.tensor_parallel;
            const int needed = o.replicas - o.spare_replicas;
            const int needed_nodes = (needed + per_instance - 1) / per_instance;
            const int spare_nodes = o.nodes - needed_nodes;
            CHECK(spare_nodes ==
                  std::max(1, static_cast<int>(std::ceil(
                                  needed_nodes * kSpotServingSpareInstanceFraction - 1e-9))));
            CHECK(o.nodes >= 2);
            CHECK(o.replicas == o.nodes * per_instance);
            CHECK((o.nodes - spare_nodes) * per_instance >= needed);
            CHECK(o.capacity_requests_per_second >= 10 - 1e-9);
            REQUIRE(o.reasoning.has_value());
            CHECK(o.reasoning->find("spare instance") != std::string::npos);
        }
    }

    TEST_CASE("equal monthly costs are ordered by latency, then by offering id") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.limit = 500;
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        const auto& o = plan.value().options;
        for (std::size_t i = 1; i < o.size(); ++i) {
            if (o[i - 1].monthly_cost_usd != o[i].monthly_cost_usd) {
                continue;
            }
            CHECK(o[i - 1].inter_token_latency_ms <= o[i].inter_token_latency_ms);
            if (o[i - 1].inter_token_latency_ms == o[i].inter_token_latency_ms &&
                o[i - 1].time_to_first_token_ms == o[i].time_to_first_token_ms) {
                CHECK(o[i - 1].offering->id < o[i].offering->id);
            }
        }
        // The same request twice gives the same order.
        auto again = PlanInference(r, *catalog, Ref());
        REQUIRE(again.ok());
        REQUIRE(again.value().options.size() == o.size());
        for (std::size_t i = 0; i < o.size(); ++i) {
            CHECK(again.value().options[i].offering->id == o[i].offering->id);
        }
    }

    TEST_CASE("a time-to-first-token target is met by every option or counted as unmet") {
        auto catalog = Sample();
        auto loose = PlanInference(Chat(), *catalog, Ref());
        REQUIRE(loose.ok());
        REQUIRE_FALSE(loose.value().options.empty());
        InferencePlanRequest r = Chat();
        r.max_time_to_first_token_ms = loose.value().options.front().time_to_first_token_ms * 0.8;
        auto tight = PlanInference(r, *catalog, Ref());
        REQUIRE(tight.ok());
        for (const auto& o : tight.value().options) {
            CHECK(o.time_to_first_token_ms <= *r.max_time_to_first_token_ms);
        }
    }

    TEST_CASE("a replica is planned only on a slice size the provider sells") {
        auto catalog = Sample();
        PlanReferenceCsv csv = gpucost::testing::SamplePlanReferenceCsv();
        csv.capacity_csv.replace(csv.capacity_csv.find("source,notes\n"), 13,
                                 "source,notes,instance_counts\n");
        csv.capacity_csv += "gcp,tpu-v5e,*,64,true,,,TEST SLICES,,4|8\n";
        auto reference = LoadPlanReference(csv);
        REQUIRE(reference.ok());
        InferencePlanRequest r = Chat();
        r.workload.model.params_b = 1;  // one 16 GB chip serves it
        r.traffic.requests_per_second = 1;
        r.accelerators = {"tpu-v5e"};
        auto sold_in_fours = PlanInference(r, *catalog, reference.value());
        REQUIRE(sold_in_fours.ok());
        CHECK(sold_in_fours.value().options.empty());
        std::size_t unsold = 0;
        for (const auto& [reason, n] : sold_in_fours.value().skipped) {
            if (reason == "size_not_sold") unsold = n;
        }
        CHECK(unsold == 1);
        // The same offering where single chips are sold is planned.
        auto any_size = PlanInference(r, *catalog, Ref());
        REQUIRE(any_size.ok());
        CHECK_FALSE(any_size.value().options.empty());
    }

    TEST_CASE("traffic below one request in 11.6 days is refused, not priced at infinity") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.traffic.requests_per_second = 5e-324;
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().field == "/traffic/requests_per_second");
    }

    TEST_CASE("the budget view bills each calendar day around the clock, in cents adding up") {
        Offering o;
        o.id = "x";
        o.accelerator_count = 8;
        o.price.usd_per_hour = 98.32;
        InferencePlanOption option;
        option.offering = &o;
        option.nodes = 3;
        InferencePlanRequest r = Chat();
        r.today = "2027-01-20";
        auto b = ServingBudget(r, option);
        REQUIRE(b.has_value());
        CHECK(b->start_date == "2027-01-20");
        CHECK(b->start_date_source == "today");
        CHECK(b->months == kDefaultServingBudgetMonths);
        CHECK(b->end_date == "2028-01-20");
        CHECK(b->usd_per_day == doctest::Approx(3 * 98.32 * 24));
        // Jan 2027 (12 days from the 20th) to Jan 2028 (19 days): 13 calendar months.
        REQUIRE(b->monthly.size() == 13);
        CHECK(b->monthly.front().month == "2027-01");
        CHECK(b->monthly.back().month == "2028-01");
        long long month_cents = 0;
        for (const MonthlySpend& m : b->monthly) month_cents += std::llround(m.usd * 100);
        CHECK(month_cents == std::llround(b->total_usd * 100));
        CHECK(b->total_usd == doctest::Approx(365 * 3 * 98.32 * 24).epsilon(1e-12));
        // A month's cost is its days' share: February 2027 has 28 days, March 31.
        CHECK(b->monthly[1].usd == doctest::Approx(28 * 3 * 98.32 * 24).epsilon(1e-9));
        CHECK(b->monthly[2].usd == doctest::Approx(31 * 3 * 98.32 * 24).epsilon(1e-9));
        CHECK(b->monthly[0].usd == doctest::Approx(12 * 3 * 98.32 * 24).epsilon(1e-9));

        // A start date of the request: whole months from the 1st; a month-end start keeps to
        // the shorter month's last day.
        r.start_date = "2027-02-01";
        r.budget_months = 2;
        b = ServingBudget(r, option);
        REQUIRE(b.has_value());
        CHECK(b->start_date_source == "request");
        CHECK(b->end_date == "2027-04-01");
        REQUIRE(b->monthly.size() == 2);
        CHECK(b->total_usd == doctest::Approx(59 * 3 * 98.32 * 24).epsilon(1e-12));
        r.start_date = "2027-01-31";
        r.budget_months = 1;
        CHECK(ServingBudget(r, option)->end_date == "2027-02-28");
        r.start_date.reset();
        r.today = "";
        CHECK_FALSE(ServingBudget(r, option).has_value());
    }

    TEST_CASE("the budget view's months and start date are checked and echoed") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.budget_months = 0;
        CHECK(PlanInference(r, *catalog, Ref()).error().field == "/budget_months");
        r.budget_months = kMaxServingBudgetMonths + 1;
        CHECK(PlanInference(r, *catalog, Ref()).error().field == "/budget_months");
        r.budget_months = 24;
        r.start_date = "2027-02-30";
        CHECK(PlanInference(r, *catalog, Ref()).error().field == "/start_date");
        r.start_date = "2027-02-28";
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        std::map<std::string, double> echoed;
        for (const Assumption& a : plan.value().assumptions) echoed[a.name.str()] = a.value;
        CHECK(echoed["budget_months"] == 24);
        CHECK(echoed["serving_hours_per_day"] == kServingHoursPerDay);
    }
}

TEST_SUITE("plan_inference_owned_capacity") {
    constexpr const char* kP5 = "aws-p5.48xlarge-us-east-1-on-demand";

    const InferencePlanOption& Find(const InferencePlan& plan, const std::string& id) {
        for (const auto& o : plan.options) {
            if (o.offering->id == id) return o;
        }
        FAIL("no option on " << id);
        return plan.options.front();
    }

    // The chat workload on AWS on-demand, its traffic sized so that the p5 option needs 4
    // instances, over a 12-month budget window from 2027-01-01 (365 days, 8760 h).
    InferencePlanRequest FourP5() {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.providers = {"aws"};
        r.price_types = {PriceType::kOnDemand};
        r.limit = 500;
        r.start_date = "2027-01-01";
        r.budget_months = 12;
        auto probe = PlanInference(r, *catalog, Ref());
        REQUIRE(probe.ok());
        const InferencePlanOption& p5 = Find(probe.value(), kP5);
        REQUIRE(p5.pipeline_parallel == 1);
        const double per_instance = p5.capacity_requests_per_second / p5.replicas *
                                    p5.offering->accelerator_count / p5.tensor_parallel;
        r.traffic.requests_per_second = 3.5 * per_instance;
        return r;
    }

    TEST_CASE("owned capacity covers a serving fleet's hours first, at no marginal cost") {
        auto catalog = Sample();
        InferencePlanRequest r = FourP5();
        auto list = PlanInference(r, *catalog, Ref());
        REQUIRE(list.ok());
        const InferencePlanOption listed = Find(list.value(), kP5);
        REQUIRE(listed.nodes == 4);
        CHECK_FALSE(listed.owned.has_value());
        // Two p5 instances owned for the first 3 of the 12 months (bought in October, ending
        // 2027-04-01: 90 days of the window) at 30 USD an hour, paid whether used or not.
        r.owned_capacity = {{kP5, 2, "2026-10-01", "2027-04-01", 30.0}};
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        const InferencePlanOption& o = Find(plan.value(), kP5);
        const double price = o.offering->price.usd_per_hour;
        REQUIRE(o.owned.has_value());
        // By hand: 4 nodes x 8760 h = 35040 instance-hours; owned 2 x 90 days x 24 h = 4320
        // of them; 30720 paid at the effective price.
        CHECK(o.owned->window_instance_hours == doctest::Approx(35040));
        CHECK(o.owned->instance_hours == doctest::Approx(4320));
        CHECK(o.owned->sunk_usd == doctest::Approx(4320 * 30.0));
        CHECK(o.owned->without_owned_cost_usd == doctest::Approx(35040 * price));
        CHECK(o.owned->marginal_cost_usd == doctest::Approx(30720 * price));
        CHECK(o.owned->FullyLoadedCostUsd() == doctest::Approx(30720 * price + 4320 * 30.0));
        // The month as the option states it (730 h) and the per-token prices: the uncovered
        // share, 30720 / 35040, of what they were without it.
        CHECK(o.owned->without_owned_monthly_cost_usd == doctest::Approx(4 * price * 730));
        CHECK(o.owned->without_owned_monthly_cost_usd == doctest::Approx(listed.monthly_cost_usd));
        CHECK(o.monthly_cost_usd == doctest::Approx(4 * price * 730 * 30720 / 35040));
        CHECK(o.owned->without_owned_usd_per_million_tokens ==
              doctest::Approx(listed.usd_per_million_tokens));
        CHECK(o.usd_per_million_tokens ==
              doctest::Approx(listed.usd_per_million_tokens * 30720 / 35040));
        CHECK(o.usd_per_million_input_tokens ==
              doctest::Approx(listed.usd_per_million_input_tokens * 30720 / 35040));
        // Other offerings are not covered.
        for (const auto& other : plan.value().options) {
            if (other.offering->id != kP5) CHECK_FALSE(other.owned.has_value());
        }
        CHECK(plan.value().warnings.empty());

        // The budget view pays January to March for 2 of the 4 instances, then all 4; the
        // owned hours at the commitment's rate are owned_usd, not in the months or the total.
        auto b = ServingBudget(r, o);
        REQUIRE(b.has_value());
        REQUIRE(b->owned_usd.has_value());
        CHECK(*b->owned_usd == doctest::Approx(129600.0));
        CHECK(b->total_usd == FromCents(ToCents(30720 * price)));
        REQUIRE(b->monthly.size() == 12);
        CHECK(b->monthly[0].usd == doctest::Approx(31 * 24 * 2 * price).epsilon(1e-9));
        CHECK(b->monthly[1].usd == doctest::Approx(28 * 24 * 2 * price).epsilon(1e-9));
        CHECK(b->monthly[3].usd == doctest::Approx(30 * 24 * 4 * price).epsilon(1e-9));
        long long month_cents = 0;
        for (const MonthlySpend& m : b->monthly) month_cents += std::llround(m.usd * 100);
        CHECK(month_cents == ToCents(b->total_usd));
        // Without the book's capacity the budget is the whole fleet's, with no owned_usd.
        r.owned_capacity.clear();
        CHECK_FALSE(ServingBudget(r, listed)->owned_usd.has_value());
        CHECK(ServingBudget(r, listed)->total_usd == FromCents(ToCents(35040 * price)));
    }

    TEST_CASE("a fleet owned for the whole window ranks first at no marginal cost") {
        auto catalog = Sample();
        InferencePlanRequest r = FourP5();
        r.price_types = {PriceType::kOnDemand, PriceType::kSpot};  // spot serves it for less
        auto list = PlanInference(r, *catalog, Ref());
        REQUIRE(list.ok());
        REQUIRE(Find(list.value(), kP5).nodes == 4);
        // Without owned capacity the p5 is not the cheapest way to serve this traffic.
        REQUIRE(list.value().options.front().offering->id != kP5);
        r.owned_capacity = {{kP5, 4, "2027-01-01", "2028-01-01", 30.0}};
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        const InferencePlanOption& first = plan.value().options.front();
        CHECK(first.offering->id == kP5);
        CHECK(first.monthly_cost_usd == 0);
        CHECK(first.usd_per_million_tokens == 0);
        CHECK(first.owned->marginal_cost_usd == 0);
        CHECK(first.owned->instance_hours == doctest::Approx(35040));
        auto b = ServingBudget(r, first);
        CHECK(b->total_usd == 0);
        CHECK(*b->owned_usd == doctest::Approx(35040 * 30.0));
    }

    TEST_CASE("owned capacity that covers no option planned is warned, not applied") {
        auto catalog = Sample();
        InferencePlanRequest r = FourP5();
        // Owned before the budget window: nothing of it is left to use.
        r.owned_capacity = {{kP5, 2, "2026-01-01", "2026-04-01", 30.0}};
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        for (const auto& o : plan.value().options) CHECK_FALSE(o.owned.has_value());
        REQUIRE(plan.value().warnings.size() == 1);
        CHECK(plan.value().warnings[0].field == "/price_book/owned_capacity");
        CHECK(plan.value().warnings[0].detail.find(kP5) != std::string::npos);
    }
}

TEST_SUITE("plan_inference_spanning_replicas") {
    // DeepSeek-V3 in FP8 (671B: 671 GB of weights) on H100: one 8 x 80 GB instance gives the
    // engine 576 GB, so a replica must span instances.
    InferencePlanRequest DeepSeekOnH100() {
        InferencePlanRequest r;
        r.workload.model = gpucost::testing::DeepSeekV3Published();
        r.workload.precision = Precision::kFp8;
        r.workload.input_tokens = 1000;
        r.workload.output_tokens = 250;
        r.traffic.requests_per_second = 2;
        r.accelerators = {"h100-sxm"};
        r.limit = 500;
        return r;
    }

    TEST_CASE("a model one instance cannot hold is served by replicas over several instances") {
        auto catalog = Sample();
        auto plan = PlanInference(DeepSeekOnH100(), *catalog, Ref());
        REQUIRE(plan.ok());
        const InferencePlan& p = plan.value();
        REQUIRE_FALSE(p.options.empty());
        for (const auto& o : p.options) {
            CHECK(o.offering->accelerator_count == 8);  // 8 single H100s hold it no better
            CHECK(o.pipeline_parallel >= 2);
            CHECK(o.instances_per_replica == o.pipeline_parallel);
            CHECK(o.tensor_parallel == 8);
            CHECK(o.nodes == o.replicas * o.instances_per_replica);
            CHECK(o.capacity_requests_per_second >= 2 - 1e-9);
            REQUIRE(o.reasoning.has_value());
            CHECK(o.reasoning->find("one instance cannot hold the model") != std::string::npos);
        }
        CHECK(Skipped(p, "does_not_fit") >= 1);  // the single-GPU Lambda host
        bool echoed = false;
        for (const Assumption& a : p.assumptions) {
            echoed = echoed ||
                     (a.name == "max_instances_per_replica" && a.value == kMaxInstancesPerReplica);
        }
        CHECK(echoed);
    }

    TEST_CASE("a MoE replica goes expert parallel over instances when that needs fewer") {
        // At 60 requests/s pipeline stages over two instances need 6 H100
        // instances (at this commit); experts spread over the 16 GPUs of two instances
        // (attention data parallel on each) run 256 sequences per GPU and need 4.
        auto catalog = Sample();
        InferencePlanRequest r = DeepSeekOnH100();
        r.traffic.requests_per_second = 60;
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        const InferencePlan& p = plan.value();
        REQUIRE_FALSE(p.options.empty());
        for (const auto& o : p.options) {
            CHECK(o.expert_parallel >= 16);
            CHECK(o.expert_parallel == 8 * o.instances_per_replica);
            CHECK(o.tensor_parallel == 1);
            CHECK(o.pipeline_parallel == 1);
            CHECK(o.nodes == o.replicas * o.instances_per_replica);
            CHECK(o.capacity_requests_per_second >= 60 - 1e-9);
            REQUIRE(o.reasoning.has_value());
            CHECK(o.reasoning->find("expert parallel") != std::string::npos);
            CHECK(o.reasoning->find("(pipeline parallel)") != std::string::npos);
        }
        std::map<std::string, double> echoed;
        for (const Assumption& a : p.assumptions) echoed[a.name.str()] = a.value;
        CHECK(echoed["expert_all_to_all_fixed_s"] == estimate::kExpertAllToAllFixedS);
        CHECK(echoed["expert_combine_bytes_per_element"] ==
              estimate::kExpertCombineBytesPerElement);
        CHECK(echoed["expert_parallel_max_sequences_per_rank"] ==
              estimate::kExpertParallelMaxSequencesPerRank);
    }

    TEST_CASE("a MoE replica goes expert parallel within one instance when that needs fewer") {
        // GPT-OSS 120B in FP8 on 8-GPU instances: tensor parallel splits the attention and
        // the KV cache of one engine; experts spread over the 8 GPUs, attention data parallel
        // on each, give every GPU its own sequences (as TensorRT-LLM's DEP layouts and SGLang
        // serve MoE models). The planner laid out within an instance tensor parallel only.
        auto catalog = Sample();
        InferencePlanRequest r = GptOss120bFp8(1000, 1000, 5);
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        bool within = false;
        for (const auto& o : plan.value().options) {
            if (o.expert_parallel <= 1 || o.instances_per_replica != 1) continue;
            within = true;
            CHECK(o.tensor_parallel == 1);
            CHECK(o.pipeline_parallel == 1);
            CHECK(o.offering->accelerator_count % o.expert_parallel == 0);
            CHECK(o.capacity_requests_per_second >= 5 - 1e-9);
            REQUIRE(o.reasoning.has_value());
            CHECK(o.reasoning->find("expert parallel " + std::to_string(o.expert_parallel) +
                                    " within one instance") != std::string::npos);
        }
        CHECK(within);
    }

    TEST_CASE("an option says how likely it carries the traffic, the estimate's error counted") {
        // The chance the needed replicas' real throughput covers the traffic: Phi(ln(headroom)
        // / sigma), sigma = ln(1 + spread) / z90, from the serving rows' measured spread (a
        // MoE model's wider). Options gave a point capacity as if the estimate were exact.
        auto catalog = Sample();
        auto probability = [](double headroom, double spread) {
            const double sigma = std::log1p(spread) / kZ90;
            return 0.5 * std::erfc(-std::log(headroom) / (sigma * std::sqrt(2.0)));
        };
        auto check_plan = [&](const InferencePlanRequest& r, double spread) {
            auto plan = PlanInference(r, *catalog, Ref());
            REQUIRE(plan.ok());
            REQUIRE_FALSE(plan.value().options.empty());
            for (const auto& o : plan.value().options) {
                const double needed = o.replicas - o.spare_replicas;
                const double headroom = needed * o.output_tokens_per_second_per_replica /
                                        plan.value().output_tokens_per_second;
                CHECK(headroom >= 1 / 0.7 - 1e-9);
                CHECK(o.traffic_met_probability ==
                      doctest::Approx(probability(headroom, spread)).epsilon(1e-12));
            }
            return plan.value().options.front().traffic_met_probability;
        };
        // A 7B model at the default utilisation 0.7: ln(1 / 0.7) against sigma 0.149.
        const double dense = check_plan(Chat(), 0.21);
        CHECK(dense > 0.99);
        // GPT-OSS 120B on many instances (little rounding headroom): the MoE spread 0.51 leaves
        // about one chance in seven at 0.7.
        const double moe = check_plan(GptOss120bFp8(1000, 1000, 300), 0.51);
        CHECK(moe > 0.75);
        CHECK(moe < 0.99);
        // Weight-only serving, named or read from the checkpoint, carries its own measured
        // spread (every published weight-only row ran slower than estimated).
        InferencePlanRequest named = Chat();
        named.workload.weight_precision = Precision::kFp4;
        const double weight_only = check_plan(named, 0.86);
        CHECK(weight_only < dense - 0.03);
        InferencePlanRequest stored = Chat();
        stored.workload.model.checkpoint_precision = Precision::kFp4;
        stored.workload.model.checkpoint_precision_source = "test";
        CHECK(check_plan(stored, 0.86) == doctest::Approx(weight_only));
    }

    TEST_CASE("traffic_confidence rents the replicas that carry the traffic that likely") {
        // Sized by utilisation alone a MoE fleet carries its traffic with about 87 %: a
        // request asking 0.95 gets each option's probability at or above it, and no fewer
        // replicas than utilisation asks.
        auto catalog = Sample();
        InferencePlanRequest r = GptOss120bFp8(1000, 1000, 300);
        auto plain = PlanInference(r, *catalog, Ref());
        r.traffic_confidence = 0.95;
        auto sized = PlanInference(r, *catalog, Ref());
        REQUIRE(plain.ok());
        REQUIRE(sized.ok());
        REQUIRE_FALSE(sized.value().options.empty());
        bool enlarged = false;
        for (const auto& o : sized.value().options) {
            CAPTURE(o.offering->id);
            CHECK(o.traffic_met_probability >= 0.95 - 1e-12);
            for (const auto& p : plain.value().options) {
                if (p.offering != o.offering) continue;
                CHECK(o.replicas - o.spare_replicas >= p.replicas - p.spare_replicas);
                if (o.replicas - o.spare_replicas > p.replicas - p.spare_replicas) {
                    enlarged = true;
                    REQUIRE(o.reasoning.has_value());
                    CHECK(o.reasoning->find("(traffic_confidence)") != std::string::npos);
                }
            }
        }
        CHECK(enlarged);
        // At 0.95 the MoE spread 0.51 asks exp(1.645 x ln(1.51) / 1.2816) = 1.70x the
        // traffic over the estimate's throughput.
        const auto& first = sized.value().options.front();
        const double needed = first.replicas - first.spare_replicas;
        CHECK(needed * first.output_tokens_per_second_per_replica /
                  sized.value().output_tokens_per_second >=
              1.69);
        bool echoed = false;
        for (const auto& a : sized.value().assumptions) {
            if (a.name == "traffic_confidence") {
                echoed = true;
                CHECK(a.value == 0.95);
                CHECK(a.source == "request");
            }
        }
        CHECK(echoed);
        // A dense model at the default utilisation already meets 0.95 (1.43x >= 1.25x).
        InferencePlanRequest chat = Chat();
        auto chat_plain = PlanInference(chat, *catalog, Ref());
        chat.traffic_confidence = 0.95;
        auto chat_sized = PlanInference(chat, *catalog, Ref());
        REQUIRE(chat_plain.ok());
        REQUIRE(chat_sized.ok());
        REQUIRE(chat_plain.value().options.size() == chat_sized.value().options.size());
        for (std::size_t i = 0; i < chat_sized.value().options.size(); ++i) {
            CHECK(chat_sized.value().options[i].replicas == chat_plain.value().options[i].replicas);
        }
        // Out of its range it is refused naming the field.
        r.traffic_confidence = 0.2;
        auto refused = PlanInference(r, *catalog, Ref());
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().field == "/uncertainty/traffic_confidence");
    }

    TEST_CASE("spot spares of a spanning replica are whole replicas") {
        auto catalog = Sample();
        InferencePlanRequest r = DeepSeekOnH100();
        r.price_types = {PriceType::kSpot};
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        REQUIRE_FALSE(plan.value().options.empty());
        for (const auto& o : plan.value().options) {
            REQUIRE(o.pipeline_parallel >= 2);
            CHECK(o.nodes % o.instances_per_replica == 0);
            CHECK(o.replicas * o.instances_per_replica == o.nodes);
            CHECK(o.spare_replicas >= 1);
            const int needed_nodes = (o.replicas - o.spare_replicas) * o.instances_per_replica;
            CHECK(o.nodes - needed_nodes >=
                  std::ceil(needed_nodes * kSpotServingSpareInstanceFraction - 1e-9));
        }
    }

    TEST_CASE("a model that fits one instance keeps replicas within one instance") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        r.limit = 500;
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE(plan.ok());
        for (const auto& o : plan.value().options) {
            CHECK(o.pipeline_parallel == 1);
            CHECK(o.expert_parallel == 1);  // a dense model has no experts to spread
            CHECK(o.instances_per_replica == 1);
        }
    }
}

TEST_SUITE("plan_inference deadline") {
    TEST_CASE("a serving plan whose deadline has passed is kBudgetExceeded before any shape") {
        auto catalog = Sample();
        InferencePlanRequest r = Chat();
        REQUIRE(PlanInference(r, *catalog, Ref()).ok());
        r.deadline = gpucost::pricing::Deadline::After(std::chrono::milliseconds(0));
        auto plan = PlanInference(r, *catalog, Ref());
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().code == gpucost::pricing::ErrorCode::kBudgetExceeded);
    }
}
