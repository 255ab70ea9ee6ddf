#pragma once

// What every route handler is given: the dependencies the service wires in service/main.cpp.
// Standard library, the domain core and the storage ports only, so a header that needs only
// Deps (auth, as_of, plan kinds) does not pull in cpp-httplib or the route table.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/model_library.hpp"
#include "pricing/plan_reference.hpp"
#include "service/http/metrics.hpp"
#include "service/http/ports.hpp"
#include "service/ports/sync_run_log.hpp"

namespace gpucost::http {

// The planning page's files (web/, built and embedded at build time); app_js empty: the binary
// was built without them and / explains how to build them.
struct WebBundle {
    std::string_view index_html;
    std::string_view app_js;
    std::string_view app_css;
};

// What the handlers need from the rest of the service. Every member is thread-safe.
// --request-budget-ms's default. The costliest plan the request bounds allow (docs/api.md
// "Request bounds") took 0.6 s of CPU in the sanitized debug build on the shared 2-core VM
// (tests/bench/request_budget_bench.sh; the old bounds' costliest: 40 ms in a release build);
// the tests' and the planning page's plans are far smaller, and a load of 15 on 2 cores
// stretches them about sevenfold. Ten seconds stops only a request that would hold its worker
// far longer (a much larger catalog, a starved machine), as --request-timeout-s does.
inline constexpr int kDefaultRequestBudgetMs = 10000;

struct Deps {
    // The catalog snapshot to serve; called once per request, so a new snapshot can be
    // swapped in behind it at any time.
    std::function<std::shared_ptr<const pricing::Catalog>()> catalog;
    // Static text (built into the binary): every route captures a copy of Deps, so a
    // std::string here cost a copy of the whole document per route (MBs of memory).
    std::string_view openapi_yaml;
    std::string service_version;
    // True once shutdown has begun; /readyz then answers 503.
    std::function<bool()> shutting_down = [] { return false; };
    std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();
    // PostgreSQL mode: the writable catalog with its history, as the ports the routes take
    // (service/ports/), all five from one store (UseStore). Null in embedded mode, where
    // writes, history, as_of and scenarios answer 503.
    std::shared_ptr<CatalogReads> history;
    std::shared_ptr<CatalogWrites> writes;
    std::shared_ptr<KeyAuthenticator> keys;
    std::shared_ptr<StoreHealthProbe> health;
    std::shared_ptr<ScenarioStore> scenarios;
    void UseStore(const std::shared_ptr<CatalogStore>& store) {
        history = store;
        writes = store;
        keys = store;
        health = store;
        scenarios = store;
    }
    // PostgreSQL mode: stored price books (docs/billing.md); null in embedded mode, where
    // /v1/price-books and "price_book": "<id>" answer 409 database_required.
    std::shared_ptr<PriceBookStore> price_books;
    // PostgreSQL mode: imported actual spend (docs/billing.md) and the FOCUS reader that fills it;
    // null in embedded mode, where /v1/actuals and /v1/scenarios/{id}/actuals answer 409
    // database_required.
    std::shared_ptr<ActualsStore> actuals;
    FocusTextReader read_focus;
    // Reads under /v1/ need an API key (read or admin scope) too (--require-read-key).
    bool require_read_key = false;
    // /readyz stays ready while the snapshot was confirmed current this recently.
    double max_snapshot_age_s = 300;
    // Browser origins allowed to call the API (--cors-origins); none by default.
    std::vector<std::string> cors_origins;
    // Redoc's standalone bundle served under /docs (embedded at build time); empty: no page.
    std::string_view redoc_js;
    // The planning page served at / to browsers and its assets under /web/.
    WebBundle web;
    // Each provider's recorded `gpucost sync` runs (the database's sync_runs, or --catalog-dir's
    // sync-runs.jsonl), read for /metrics and /readyz; null where none is read (embedded mode).
    std::function<std::vector<ports::ProviderSyncState>()> sync_states;
    // Request counters and histograms behind GET /metrics; shared by every copy of Deps.
    std::shared_ptr<Metrics> metrics = std::make_shared<Metrics>();
    // The model library that ids in requests and GET /v1/models name: --catalog-dir's
    // models.csv when it has one. Null: the compiled-in library (ModelsOf in model_codec.hpp).
    std::shared_ptr<const pricing::ModelLibrary> models;
    // The planners' reference data (capacity limits, storage/egress prices, accelerator
    // workloads), loaded with the CSV catalog at start in every mode. Null: an empty one
    // (every offering at the conservative capacity defaults).
    std::shared_ptr<const pricing::PlanReference> plan_reference;
    // CPUs the process may use (app::UsableCpus); a training plan spreads its estimates over
    // those the other plans in flight leave (docs/performance.md, "Plans across idle CPUs").
    unsigned cpus = 1;
    // How long one plan or estimate may compute (--request-budget-ms): past it the answer is
    // 503 request_budget_exceeded (pricing/deadline.hpp), not a worker held for the rest.
    std::chrono::milliseconds request_budget{kDefaultRequestBudgetMs};
};

}  // namespace gpucost::http
