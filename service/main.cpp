// gpucost: wires configuration, the catalog and the HTTP API together, then serves until
// SIGTERM/SIGINT.
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "service/app/catalog_factory.hpp"
#include "service/app/config.hpp"
#include "service/app/cpus.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_text.hpp"
#include "service/http/codec/timestamp.hpp"
#include "service/http/router.hpp"
#include "service/http/transport/transport.hpp"
#include "service/import/actuals_command.hpp"
#include "service/import/catalog_merge.hpp"
#include "service/import/focus_actuals.hpp"
#include "service/import/import_command.hpp"
#include "service/log.hpp"
#include "service/sync/sync_download.hpp"
#include "service/sync/sync_runs.hpp"
#include "service/text/json_text.hpp"
#include "service/text/timestamp.hpp"
#include "service/version.hpp"
#ifdef GPUCOST_WITH_POSTGRES
#include "service/storage/commands.hpp"
#include "service/storage/pg_actuals_store.hpp"
#include "service/storage/pg_price_book_store.hpp"
#include "service/storage/pg_store.hpp"
#include "service/storage/pg_sync_run_log.hpp"
#endif

namespace {

// Access-log lines buffered for the log writer thread before new ones are dropped (and
// counted in /metrics): about 20,000 lines of ~200 bytes, a few seconds of peak traffic
// while stderr's reader stalls.
constexpr std::size_t kLogBufferBytes = 4u << 20;

std::optional<std::string> GetEnv(const std::string& name) {
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): before threads
    return value ? std::optional<std::string>(value) : std::nullopt;
}

std::set<std::string> SplitRegions(const std::string& list) {
    std::set<std::string> regions;
    std::size_t start = 0;
    while (start <= list.size() && !list.empty()) {
        std::size_t comma = list.find(',', start);
        std::string region = list.substr(start, comma - start);
        if (!region.empty()) {
            regions.insert(region);
        }
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return regions;
}

// `gpucost import` (and each provider of `gpucost sync`) with DATABASE_URL and no --out:
// through the writable catalog's write path.
int ImportToDatabase(const gpucost::import::ImportArgs& args,
                     const gpucost::app::ServiceConfig& config) {
    using namespace gpucost;
#ifdef GPUCOST_WITH_POSTGRES
    storage::PgStoreOptions pg;
    pg.database_url = config.database_url;
    pg.pool_size = 1;
    auto opened = storage::PgStore::Open(pg);
    if (!opened.ok()) {
        std::fprintf(stderr, "gpucost %s: %s\n", config.command.c_str(),
                     opened.error().message.c_str());
        return import::kImportFailed;
    }
    return import::RunImportToStore(args, *opened.value(), stdout, stderr);
#else
    (void)args;
    (void)config;
    std::fprintf(stderr, "gpucost: built without PostgreSQL (GPUCOST_WITH_POSTGRES=OFF)\n");
    return import::kImportBadInput;
#endif
}

// An API key from `name`, or from the file `name`_FILE names (a mounted Secret).
std::string ApiKey(const std::string& name) {
    std::string key = GetEnv(name).value_or("");
    if (auto file = GetEnv(name + "_FILE"); file && key.empty()) {
        std::ifstream in(*file);
        std::getline(in, key);
    }
    return key;
}

// What `gpucost sync` reads from the environment: mirrors of the providers' price files
// (GPUCOST_SYNC_AWS_URL, _AZURE_URL, _GCP_URL, _LAMBDA_URL, _RUNPOD_URL, _VASTAI_URL,
// _COREWEAVE_URL; the tests point them at a fixture server), the GCP and Lambda API keys
// (GCP_API_KEY, LAMBDA_API_KEY, or *_FILE: a mounted Secret) and the first retry wait
// (GPUCOST_SYNC_RETRY_WAIT_MS).
gpucost::sync::SyncArgs SyncSettings(const gpucost::app::ServiceConfig& config) {
    gpucost::sync::SyncArgs sync;
    sync.providers = config.command_args;
    sync.regions = SplitRegions(config.import_regions);
    sync.aws_base = GetEnv("GPUCOST_SYNC_AWS_URL").value_or(sync.aws_base);
    sync.azure_base = GetEnv("GPUCOST_SYNC_AZURE_URL").value_or(sync.azure_base);
    sync.gcp_base = GetEnv("GPUCOST_SYNC_GCP_URL").value_or(sync.gcp_base);
    sync.lambda_url = GetEnv("GPUCOST_SYNC_LAMBDA_URL").value_or(sync.lambda_url);
    sync.runpod_url = GetEnv("GPUCOST_SYNC_RUNPOD_URL").value_or(sync.runpod_url);
    sync.vastai_url = GetEnv("GPUCOST_SYNC_VASTAI_URL").value_or(sync.vastai_url);
    sync.coreweave_url = GetEnv("GPUCOST_SYNC_COREWEAVE_URL").value_or(sync.coreweave_url);
    sync.gcp_api_key = ApiKey("GCP_API_KEY");
    sync.lambda_api_key = ApiKey("LAMBDA_API_KEY");
    if (auto wait = GetEnv("GPUCOST_SYNC_RETRY_WAIT_MS")) {
        sync.retry.first_wait = std::chrono::milliseconds(std::atoll(wait->c_str()));
    }
    return sync;
}

// The regions of --region that apply to `provider`: those written `provider:region`, and
// those with no provider named (one run can then name each provider's own region codes:
// --region aws:us-east-1,azure:eastus).
std::set<std::string> RegionsOf(const std::set<std::string>& regions, const std::string& provider) {
    std::set<std::string> out;
    for (const std::string& region : regions) {
        const auto colon = region.find(':');
        if (colon == std::string::npos) {
            out.insert(region);
        } else if (region.compare(0, colon, provider) == 0) {
            out.insert(region.substr(colon + 1));
        }
    }
    return out;
}

// `dir` (a catalog directory; empty: the embedded catalog) with an interrupted write finished.
gpucost::pricing::Status FinishedDir(const std::string& dir) {
    if (dir.empty() || !std::filesystem::is_directory(dir)) return gpucost::pricing::Ok{};
    return gpucost::import::FinishCatalogDirWrite(dir);
}

// Imports one provider's downloaded files into --out (extending `base_dir`, the catalog the
// previous provider's import left) or, without --out, into DATABASE_URL; `changed` receives
// what the import changed.
int ImportSynced(const gpucost::sync::DownloadedFiles& files,
                 const gpucost::app::ServiceConfig& config, const std::string& base_dir,
                 gpucost::import::ImportPlan& changed) {
    using namespace gpucost;
    import::ImportArgs args;
    args.format = files.format;
    args.files = files.files;
    args.out_dir = config.import_out;
    args.as_of = config.import_as_of.empty() ? http::TodayUtc() : config.import_as_of;
    args.regions = RegionsOf(SplitRegions(config.import_regions), files.provider);
    args.changed = &changed;
    if (args.out_dir.empty()) {
        return ImportToDatabase(args, config);
    }
    // A write of the directory a crash stopped after its commit point is finished first, so
    // the catalog extended is never a mix of two writes.
    if (auto finished = FinishedDir(base_dir); !finished.ok()) {
        std::fprintf(stderr, "gpucost sync: %s\n", finished.error().message.c_str());
        return import::kImportFailed;
    }
    auto base = app::ReadCatalogCsv(base_dir);
    if (!base.ok()) {
        std::fprintf(stderr, "gpucost sync: %s\n", base.error().message.c_str());
        return import::kImportFailed;
    }
    return import::RunImportToDir(args, base.value(), stdout, stderr);
}

// Where sync runs are recorded: --out DIR's sync-runs.jsonl, else DATABASE_URL's sync_runs.
std::unique_ptr<gpucost::ports::SyncRunLog> OpenRunLog(const gpucost::app::ServiceConfig& config) {
    if (!config.import_out.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(config.import_out, ec);
        return std::make_unique<gpucost::sync::FileSyncRunLog>(config.import_out +
                                                               "/sync-runs.jsonl");
    }
#ifdef GPUCOST_WITH_POSTGRES
    return std::make_unique<gpucost::storage::PgSyncRunLog>(config.database_url);
#else
    return nullptr;
#endif
}

// `gpucost sync --history N`: the latest N runs, newest first, as a JSON array.
int PrintSyncHistory(const gpucost::app::ServiceConfig& config) {
    auto log = OpenRunLog(config);
    if (log == nullptr) {
        std::fprintf(stderr, "gpucost: built without PostgreSQL (GPUCOST_WITH_POSTGRES=OFF)\n");
        return gpucost::import::kImportBadInput;
    }
    auto runs = log->Latest(static_cast<std::size_t>(config.sync_history));
    if (!runs.ok()) {
        std::fprintf(stderr, "gpucost sync: %s\n", runs.error().message.c_str());
        return gpucost::import::kImportFailed;
    }
    nlohmann::json out = nlohmann::json::array();
    for (const auto& run : runs.value()) out.push_back(gpucost::sync::SyncRunJson(run));
    std::printf("%s\n", gpucost::text::ToJsonText(out, 2).c_str());
    return gpucost::import::kImportOk;
}

// One provider of `gpucost sync`: downloads its price files into `tmp`, imports them in one
// write, and says how it went as a run to record.
gpucost::ports::SyncRun SyncProvider(const gpucost::app::ServiceConfig& config,
                                     const gpucost::sync::SyncArgs& settings,
                                     const std::string& provider, const std::filesystem::path& tmp,
                                     const std::string& base_dir) {
    using namespace gpucost;
    ports::SyncRun run;
    run.provider = provider;
    run.started_at = text::FormatTimestamp(text::NowUs());
    sync::SyncArgs one = settings;
    one.regions = RegionsOf(settings.regions, provider);
    if (auto missing = sync::MissingApiKey(one, provider)) {
        run.outcome = ports::kSyncSkipped;
        run.message = *missing;
        run.finished_at = text::FormatTimestamp(text::NowUs());
        return run;
    }
    auto downloaded = sync::DownloadProvider(one, provider, (tmp / provider).string());
    run.outcome = ports::kSyncFailed;
    if (!downloaded.ok()) {
        run.message = downloaded.error().message;
    } else {
        run.sources = downloaded.value().urls;
        import::ImportPlan changed;
        if (ImportSynced(downloaded.value(), config, base_dir, changed) != import::kImportOk) {
            run.message = "the import failed (its message is above)";
        } else {
            run.outcome = ports::kSyncImported;
            run.offerings_added = changed.offerings_added;
            run.prices_changed = changed.prices_changed;
            run.prices_unchanged = changed.prices_unchanged;
            for (const auto& c : changed.price_changes) {
                run.price_changes.push_back(
                    {c.offering_id, c.old_usd_per_hour, c.new_usd_per_hour});
            }
        }
    }
    run.finished_at = text::FormatTimestamp(text::NowUs());
    return run;
}

// `gpucost sync PROVIDER... [--region R,...] (--out DIR | DATABASE_URL)`: per provider,
// downloads its price files into a temporary directory, then imports them in one write. Each
// provider stands alone: one without its API key is skipped, one whose download fails, is cut
// short or does not parse changes nothing (its prices stay as they were, and so stale in time),
// and the others are still refreshed. Each provider's run is recorded (OpenRunLog), whatever its
// outcome, and the last line says how each ended. Exit status: sync::kSyncOk, kSyncSomeFailed,
// kSyncBadInput (also when every provider named was skipped), kSyncNotRecorded.
int RunSync(const gpucost::app::ServiceConfig& config) {
    using namespace gpucost;
    if (config.sync_history > 0) {
        return PrintSyncHistory(config);
    }
    const sync::SyncArgs settings = SyncSettings(config);
    for (const std::string& provider : settings.providers) {
        sync::SyncArgs one = settings;
        one.providers = {provider};
        one.regions = RegionsOf(settings.regions, provider);
        if (auto checked = sync::CheckSyncArgs(one); !checked.ok()) {
            std::fprintf(stderr, "gpucost sync: %s\n", checked.error().message.c_str());
            return sync::kSyncBadInput;
        }
    }
    auto log = OpenRunLog(config);
    std::error_code ec;
    auto tmp =
        std::filesystem::temp_directory_path(ec) / ("gpucost-sync-" + std::to_string(::getpid()));
    struct Cleanup {
        std::filesystem::path dir;
        ~Cleanup() {
            std::error_code ignored;
            std::filesystem::remove_all(dir, ignored);
        }
    } cleanup{tmp};
    std::string base_dir = config.catalog_dir;
    std::map<std::string, std::vector<std::string>> by_outcome;  // outcome -> providers
    bool unrecorded = false;
    for (const std::string& provider : settings.providers) {
        const ports::SyncRun run = SyncProvider(config, settings, provider, tmp, base_dir);
        by_outcome[run.outcome].push_back(provider);
        if (run.outcome == ports::kSyncSkipped) {
            std::fprintf(stderr,
                         "gpucost sync: %s: skipped, %s; its prices are left as they were\n",
                         provider.c_str(), run.message.c_str());
        } else if (run.outcome != ports::kSyncImported) {
            std::fprintf(stderr, "gpucost sync: %s: %s; its prices are left as they were\n",
                         provider.c_str(), run.message.c_str());
        } else if (!config.import_out.empty()) {
            base_dir = config.import_out;
        }
        if (log != nullptr) {
            if (auto recorded = log->Record(run); !recorded.ok()) {
                std::fprintf(stderr, "gpucost sync: %s: the run was not recorded: %s\n",
                             provider.c_str(), recorded.error().message.c_str());
                unrecorded = true;
            }
        }
    }
    std::string summary;
    for (const auto& [outcome, providers] : by_outcome) {
        summary += (summary.empty() ? "" : "; ") + outcome;
        for (const std::string& p : providers) summary += " " + p;
    }
    std::fprintf(stderr, "gpucost sync: %s\n", summary.c_str());
    if (by_outcome.count(ports::kSyncFailed) > 0) return sync::kSyncSomeFailed;
    if (by_outcome.count(ports::kSyncImported) == 0) return sync::kSyncBadInput;
    return unrecorded ? sync::kSyncNotRecorded : sync::kSyncOk;
}

// `gpucost import`: into --out DIR (a catalog directory), or with DATABASE_URL and no --out
// through the writable catalog's write path.
int RunImport(const gpucost::app::ServiceConfig& config) {
    using namespace gpucost;
    import::ImportArgs args;
    args.format = config.command_args.front();
    args.files.assign(config.command_args.begin() + 1, config.command_args.end());
    args.out_dir = config.import_out;
    args.as_of = config.import_as_of;
    args.regions = SplitRegions(config.import_regions);
    // A catalog directory may carry its own mapping tables (mappings/, as in schema/seed/).
    if (!config.catalog_dir.empty() &&
        std::filesystem::exists(config.catalog_dir + "/mappings/aws-instance-types.csv")) {
        args.mappings_dir = config.catalog_dir + "/mappings";
    }
    if (!args.out_dir.empty()) {
        if (auto finished = FinishedDir(config.catalog_dir); !finished.ok()) {
            std::fprintf(stderr, "gpucost import: %s\n", finished.error().message.c_str());
            return import::kImportFailed;
        }
        auto base = app::ReadCatalogCsv(config.catalog_dir);
        if (!base.ok()) {
            std::fprintf(stderr, "gpucost import: %s\n", base.error().message.c_str());
            return import::kImportFailed;
        }
        return import::RunImportToDir(args, base.value(), stdout, stderr);
    }
    return ImportToDatabase(args, config);
}

// What serving needs loaded before the server starts: the catalog, the planners' reference
// data, and in PostgreSQL mode the store that keeps the catalog current.
struct Loaded {
    std::shared_ptr<const gpucost::pricing::Catalog> catalog;
    std::shared_ptr<const gpucost::pricing::PlanReference> reference;
    // --catalog-dir's models.csv; null: the compiled-in library.
    std::shared_ptr<const gpucost::pricing::ModelLibrary> models;
    std::shared_ptr<gpucost::ports::CatalogStore> store;
    std::shared_ptr<gpucost::ports::PriceBookStore> price_books;  // with `store`
    std::shared_ptr<gpucost::ports::ActualsStore> actuals;        // with `store`
};

// The commands that answer without a catalog: help, version, import, sync. nullopt: go on.
std::optional<int> RunCommandWithoutCatalog(const gpucost::app::ServiceConfig& config) {
    if (config.command == "help") {
        std::fputs(gpucost::app::HelpText().c_str(), stdout);
        return 0;
    }
    if (config.command == "version") {
        std::printf("gpucost %s\n", std::string(gpucost::kVersion).c_str());
        return 0;
    }
    if (config.command == "import") {
        return RunImport(config);
    }
    if (config.command == "sync") {
        return RunSync(config);
    }
    return std::nullopt;
}

// The catalog (embedded or --catalog-dir), its model library and the plan reference data.
// nullopt (logged) when any is rejected.
std::optional<Loaded> LoadCatalog(const gpucost::app::ServiceConfig& config) {
    using namespace gpucost;
    auto loaded = config.catalog_dir.empty() ? app::LoadEmbeddedCatalog()
                                             : app::LoadCatalogFromDir(config.catalog_dir);
    if (!loaded.ok()) {
        log::Error("catalog rejected; not starting", {{"error", loaded.error().message}});
        return std::nullopt;
    }
    Loaded out;
    out.catalog = loaded.value();
    if (!config.catalog_dir.empty()) {
        // A models.csv beside the catalog files replaces the compiled-in model library.
        auto models = app::LoadModelLibraryFromDir(config.catalog_dir);
        if (!models.ok()) {
            log::Error("model library rejected; not starting", {{"error", models.error().message}});
            return std::nullopt;
        }
        out.models = models.value();
    }
    // The planners' reference data comes with the CSV catalog in every mode (a database
    // snapshot has no capacity or storage tables).
    auto reference = config.catalog_dir.empty()
                         ? app::LoadEmbeddedPlanReference(*out.catalog)
                         : app::LoadPlanReferenceFromDir(config.catalog_dir, *out.catalog);
    if (!reference.ok()) {
        log::Error("plan reference data rejected; not starting",
                   {{"error", reference.error().message}});
        return std::nullopt;
    }
    out.reference = std::make_shared<const pricing::PlanReference>(std::move(reference).value());
    return out;
}

// The commands that work on the loaded catalog or the database (check-catalog, migrate, seed,
// apikey); and in PostgreSQL mode, opens the store whose snapshot replaces the catalog.
// nullopt: go on and serve.
std::optional<int> RunCatalogCommandOrOpenStore(const gpucost::app::ServiceConfig& config,
                                                Loaded& loaded) {
    using namespace gpucost;
    if (config.command == "check-catalog") {
        auto summary = http::ToJson(loaded.catalog->Describe());
        summary["price_ages"] = http::ToJson(
            pricing::SummarizePriceAges(loaded.catalog->Offerings(), http::TodayUtc()));
        std::printf("%s\n", gpucost::http::ToJsonText(summary, 2).c_str());
        return 0;
    }
#ifdef GPUCOST_WITH_POSTGRES
    if (config.command == "migrate") {
        return storage::RunMigrate(config.database_url);
    }
    if (config.command == "seed") {
        return storage::RunSeed(config.database_url, *loaded.catalog);
    }
    if (config.command == "apikey") {
        return storage::RunApiKey(config.database_url, config.command_args, config.key_scope,
                                  config.key_name, config.key_price_book, config.key_team);
    }
    if (!config.database_url.empty()) {
        // PostgreSQL mode: the database is the source of truth; reads come from a
        // snapshot of it that PgStore keeps current.
        storage::PgStoreOptions pg;
        pg.database_url = config.database_url;
        pg.pool_size = config.db_pool_size;
        pg.refresh_interval = std::chrono::milliseconds(config.snapshot_refresh_ms);
        auto opened = storage::PgStore::Open(pg);
        if (!opened.ok()) {
            log::Error("PostgreSQL mode: cannot start", {{"error", opened.error().message}});
            return 1;
        }
        std::shared_ptr<storage::PgStore> store = std::move(opened).value();
        loaded.catalog = store->Current();
        loaded.store = store;
        loaded.price_books = std::make_shared<storage::PgPriceBookStore>(config.database_url);
        loaded.actuals = std::make_shared<storage::PgActualsStore>(config.database_url);
    }
#else
    if (!config.database_url.empty() || config.command == "migrate" || config.command == "seed" ||
        config.command == "apikey") {
        std::fprintf(stderr, "gpucost: built without PostgreSQL (GPUCOST_WITH_POSTGRES=OFF)\n");
        return 2;
    }
#endif
    return std::nullopt;
}

// POST /v1/actuals' reader: FOCUS CSV text against the catalog served now and the embedded
// mapping tables (as `gpucost actuals import`), attributed by the gpucost-scenario tag.
gpucost::http::FocusTextReader FocusReaderFor(
    std::function<std::shared_ptr<const gpucost::pricing::Catalog>()> catalog) {
    using namespace gpucost;
    auto mappings = import::LoadEmbeddedMappings();
    if (!mappings.ok()) {
        log::Error("FOCUS reader: no mapping tables", {{"error", mappings.error().message}});
        return nullptr;  // POST /v1/actuals answers 409 as without a database
    }
    auto shared = std::make_shared<const import::Mappings>(std::move(mappings).value());
    return
        [catalog = std::move(catalog), shared](
            std::string_view csv, const ports::FocusTagKeys& keys, pricing::ActualsReport& report,
            const std::function<void(const pricing::ActualCharge&)>& on_charge) {
            import::FocusReadOptions options;
            options.tag_key = keys.tag_key;
            options.group_by = keys.group_by;
            return import::ReadFocusText(csv, options, *catalog(), *shared, report, on_charge);
        };
}

// Where the server reads each provider's sync runs for /metrics and /readyz: the database's
// sync_runs, or --catalog-dir's sync-runs.jsonl (what `gpucost sync --out DIR` writes); none in
// embedded mode. Read at most once a minute, well within the 6-hour sync schedule.
std::function<std::vector<gpucost::ports::ProviderSyncState>()> SyncStatesFor(
    const gpucost::app::ServiceConfig& config) {
    using namespace gpucost;
    constexpr std::chrono::seconds kSyncStateMaxAge{60};
    std::unique_ptr<ports::SyncRunLog> log;
    if (!config.database_url.empty()) {
#ifdef GPUCOST_WITH_POSTGRES
        log = std::make_unique<storage::PgSyncRunLog>(config.database_url);
#endif
    } else if (!config.catalog_dir.empty()) {
        log = std::make_unique<sync::FileSyncRunLog>(config.catalog_dir + "/sync-runs.jsonl");
    }
    if (log == nullptr) return nullptr;
    auto cache = std::make_shared<sync::SyncStateCache>(std::move(log), kSyncStateMaxAge);
    return [cache] { return cache->Get(); };
}

gpucost::http::Deps MakeDeps(const gpucost::app::ServiceConfig& config, const Loaded& loaded,
                             const std::atomic<bool>& shutting_down) {
    using namespace gpucost;
    http::Deps deps;
    if (loaded.store) {
        deps.catalog = [store = loaded.store] { return store->Current(); };
    } else {
        deps.catalog = [catalog = loaded.catalog] { return catalog; };
    }
    deps.UseStore(loaded.store);
    deps.price_books = loaded.price_books;
    deps.actuals = loaded.actuals;
    if (loaded.actuals) deps.read_focus = FocusReaderFor(deps.catalog);
    deps.plan_reference = loaded.reference;
    deps.models = loaded.models;
    deps.require_read_key = config.require_read_key;
    deps.max_snapshot_age_s = config.max_snapshot_age_s;
    deps.cors_origins = config.cors_origins;
    deps.openapi_yaml = app::EmbeddedOpenApiYaml();
    deps.redoc_js = app::EmbeddedRedocJs();
    const app::WebFiles web = app::EmbeddedWebFiles();
    deps.web = {web.index_html, web.app_js, web.app_css};
    deps.service_version = gpucost::kVersion;
    deps.shutting_down = [&shutting_down] { return shutting_down.load(); };
    deps.cpus = app::UsableCpus();
    deps.request_budget = std::chrono::milliseconds(config.request_budget_ms);
    deps.sync_states = SyncStatesFor(config);
    return deps;
}

gpucost::http::ServerOptions MakeServerOptions(const gpucost::app::ServiceConfig& config,
                                               const gpucost::http::Deps& deps) {
    using namespace gpucost;
    http::ServerOptions options;
    options.threads = config.threads != 0 ? config.threads : app::DefaultThreads(config, deps.cpus);
    options.max_body_bytes = config.max_body_bytes;
    options.max_actuals_body_bytes = config.max_actuals_body_bytes;
    options.max_buffered_body_bytes = config.max_buffered_body_bytes;
    options.access_log = config.access_log;
    options.max_connections = config.max_connections;
    options.max_connections_per_address = config.max_connections_per_address;
    options.request_timeout_s = config.request_timeout_s;
    options.keep_alive_timeout_s = config.keep_alive_timeout_s;
    options.rate_limiter = std::make_shared<http::RateLimiter>(
        http::RateLimitOptions{config.rate_limit_rps, config.rate_limit_burst});
    options.key_store = deps.keys;
    return options;
}

// The server, configured, routed and bound. Plain HTTP: the epoll connection manager. HTTPS:
// the library's thread-per-connection TLS server (see docs/performance.md and SECURITY.md for
// what that gives up).
struct BoundServer {
    std::unique_ptr<gpucost::http::EventServer> event;
    std::unique_ptr<gpucost::http::TlsServer> tls;
    int port = -1;
    httplib::Server& server() const {
        return event ? static_cast<httplib::Server&>(*event) : static_cast<httplib::Server&>(*tls);
    }
};

std::optional<BoundServer> BindServer(const gpucost::app::ServiceConfig& config,
                                      const gpucost::http::ServerOptions& options,
                                      const gpucost::http::Deps& deps) {
    using namespace gpucost;
    BoundServer bound;
    if (config.tls_cert.empty()) {
        bound.event = std::make_unique<http::EventServer>(http::TransportFor(options));
    } else {
        std::string tls_error;
        bound.tls = http::MakeTlsServer(config.tls_cert, config.tls_key, &tls_error);
        if (!bound.tls) {
            log::Error("TLS: cannot start", {{"error", tls_error}});
            return std::nullopt;
        }
    }
    httplib::Server& server = bound.server();
    http::ConfigureServer(server, options);
    http::RegisterRoutes(server, deps);
    errno = 0;
    bound.port = config.port == 0
                     ? server.bind_to_any_port(config.bind)
                     : (server.bind_to_port(config.bind, config.port) ? config.port : -1);
    if (bound.port < 0) {
        // Most often another process (another gpucost) listens there: say so in one line.
        const int bind_errno = errno;
        std::string reason = bind_errno == EADDRINUSE ? "the port is already in use"
                             : bind_errno != 0        ? std::strerror(bind_errno)
                                                      : "bind failed";
        log::Error(
            "cannot listen on " + config.bind + ":" + std::to_string(config.port) + ": " + reason,
            {{"bind", config.bind}, {"port", config.port}});
        return std::nullopt;
    }
    bool raised = bound.event ? bound.event->SetBacklog(config.listen_backlog)
                              : bound.tls->SetBacklog(config.listen_backlog);
    if (!raised) {
        log::Warn("could not raise the listen backlog", {{"backlog", config.listen_backlog}});
    }
    return bound;
}

// Serves until SIGTERM/SIGINT (blocked in every thread before this, handled by one waiting
// thread, never by a worker in the middle of a request). True when the server stopped cleanly.
bool Serve(const gpucost::app::ServiceConfig& config, BoundServer& bound, const Loaded& loaded,
           std::size_t threads, unsigned cpus, const sigset_t& signals,
           std::atomic<bool>& shutting_down) {
    using namespace gpucost;
    std::thread signal_thread([&] {
        int received = 0;
        sigwait(&signals, &received);
        log::Info("shutting down", {{"signal", received == SIGTERM ? "SIGTERM" : "SIGINT"}});
        shutting_down.store(true);
        if (bound.event) {
            // Stops accepting, answers what was received, closes idle connections.
            bound.event->StopGracefully(std::chrono::seconds(config.shutdown_grace_s));
        } else {
            bound.tls->stop();  // the TLS thread pool finishes its queued connections
        }
    });

    // From here on log lines are written by their own thread (see log::StartAsyncWriter).
    log::StartAsyncWriter(kLogBufferBytes);
    auto info = loaded.catalog->Describe();
    log::Info("listening", {{"bind", config.bind},
                            {"port", bound.port},
                            {"threads", threads},
                            {"cpus", cpus},
                            {"tls", !config.tls_cert.empty()},
                            {"version", gpucost::kVersion},
                            {"catalog_origin", info.origin},
                            {"catalog_version", info.version},
                            {"accelerators", info.accelerator_count},
                            {"offerings", info.offering_count}});
    bool served = bound.server().listen_after_bind();
    if (!shutting_down.load()) {
        // listen ended on its own (an error): wake the signal thread so it can be joined. The
        // thread waits in sigwait for exactly this signal; it is not terminated by it.
        // NOLINTNEXTLINE(bugprone-bad-signal-to-kill-thread)
        pthread_kill(signal_thread.native_handle(), SIGTERM);
    }
    signal_thread.join();
    return served;
}

}  // namespace

namespace {

// `gpucost actuals ...`: its own arguments and the embedded mappings; with DATABASE_URL set
// the database's catalog and imported-spend store (the kept rows go there, as `gpucost import`
// writes prices there), else the embedded catalog.
int RunActuals(const std::vector<std::string>& args) {
    using namespace gpucost;
    auto mappings = import::LoadEmbeddedMappings();
    if (!mappings.ok()) {
        std::fprintf(stderr, "gpucost actuals: %s\n", mappings.error().message.c_str());
        return import::kImportFailed;
    }
    const std::string database_url = GetEnv("DATABASE_URL").value_or("");
    // An explicit --into store wins over DATABASE_URL, as `gpucost import --out DIR` does.
    const bool into_database = !database_url.empty() && !args.empty() && args[0] == "import" &&
                               std::find(args.begin(), args.end(), "--into") == args.end();
    if (!into_database) {
        auto catalog = app::LoadEmbeddedCatalog();
        if (!catalog.ok()) {
            std::fprintf(stderr, "gpucost actuals: %s\n", catalog.error().message.c_str());
            return import::kImportFailed;
        }
        return import::RunActualsCommand(args, *catalog.value(), mappings.value(), stdout, stderr);
    }
#ifdef GPUCOST_WITH_POSTGRES
    storage::PgStoreOptions pg;
    pg.database_url = database_url;
    pg.pool_size = 1;
    auto opened = storage::PgStore::Open(pg);
    if (!opened.ok()) {
        std::fprintf(stderr, "gpucost actuals: %s\n", opened.error().message.c_str());
        return import::kImportFailed;
    }
    storage::PgActualsStore actuals(database_url);
    return import::RunActualsCommand(args, *opened.value()->Current(), mappings.value(), stdout,
                                     stderr, &actuals);
#else
    std::fprintf(stderr, "gpucost: built without PostgreSQL (GPUCOST_WITH_POSTGRES=OFF)\n");
    return import::kImportBadInput;
#endif
}

}  // namespace

int main(int argc, char** argv) {
    using namespace gpucost;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args.front() == "actuals") {
        return RunActuals({args.begin() + 1, args.end()});
    }
    auto parsed = app::ParseConfig(args, GetEnv);
    if (!parsed.ok()) {
        std::fprintf(stderr, "gpucost: %s\n", parsed.error().message.c_str());
        return 2;
    }
    const app::ServiceConfig config = parsed.value();
    log::SetLevel(config.log_level);
    if (auto status = RunCommandWithoutCatalog(config)) {
        return *status;
    }
    std::optional<Loaded> loaded = LoadCatalog(config);
    if (!loaded) {
        return 1;
    }
    if (auto status = RunCatalogCommandOrOpenStore(config, *loaded)) {
        return *status;
    }

    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    std::atomic<bool> shutting_down{false};
    http::Deps deps = MakeDeps(config, *loaded, shutting_down);
    http::ServerOptions options = MakeServerOptions(config, deps);
    std::optional<BoundServer> bound = BindServer(config, options, deps);
    if (!bound) {
        return 1;
    }
    bool served =
        Serve(config, *bound, *loaded, options.threads, deps.cpus, signals, shutting_down);
    bound.reset();
    if (loaded->store) {
        deps = http::Deps{};
        options.key_store = nullptr;
        loaded->store.reset();  // closes the database connections
        loaded->price_books.reset();
        loaded->actuals.reset();
        log::Info("database closed");
    }
    log::Info("stopped", {{"clean", served}});
    log::StopAsyncWriter();  // writes the buffered lines before the process exits
    return served ? 0 : 1;
}
