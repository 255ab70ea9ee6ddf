// gpucost: wires configuration, the catalog and the HTTP API together, then serves until
// SIGTERM/SIGINT.
#include <pthread.h>
#include <sys/socket.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "service/app/catalog_factory.hpp"
#include "service/app/config.hpp"
#include "service/http/json_codec.hpp"
#include "service/http/router.hpp"
#include "service/log.hpp"
#ifdef GPUCOST_WITH_POSTGRES
#include "service/storage/commands.hpp"
#include "service/storage/pg_store.hpp"
#endif

namespace {

constexpr char kVersion[] = "0.1.0";

// Exposes the listening socket so the accept backlog can be raised: the Debian build of
// cpp-httplib 0.11.4 hard-codes 5, which turns connection bursts into 1-3 s SYN retries.
class Server final : public httplib::Server {
public:
    bool SetBacklog(int backlog) { return ::listen(svr_sock_, backlog) == 0; }
};

std::optional<std::string> GetEnv(const std::string& name) {
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): before threads
    return value ? std::optional<std::string>(value) : std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace gpucost;
    std::vector<std::string> args(argv + 1, argv + argc);
    auto parsed = app::ParseConfig(args, GetEnv);
    if (!parsed.ok()) {
        std::fprintf(stderr, "gpucost: %s\n", parsed.error().message.c_str());
        return 2;
    }
    const app::ServiceConfig config = parsed.value();
    if (config.command == "help") {
        std::fputs(app::HelpText().c_str(), stdout);
        return 0;
    }
    if (config.command == "version") {
        std::printf("gpucost %s\n", kVersion);
        return 0;
    }
    log::SetLevel(config.log_level);

    auto loaded = config.catalog_dir.empty() ? app::LoadEmbeddedCatalog()
                                             : app::LoadCatalogFromDir(config.catalog_dir);
    if (!loaded.ok()) {
        log::Error("catalog rejected; not starting", {{"error", loaded.error().message}});
        return 1;
    }
    std::shared_ptr<const pricing::Catalog> catalog = loaded.value();
    // The planners' reference data comes with the CSV catalog in every mode (a database
    // snapshot has no capacity or storage tables).
    auto reference = config.catalog_dir.empty()
                         ? app::LoadEmbeddedPlanReference(*catalog)
                         : app::LoadPlanReferenceFromDir(config.catalog_dir, *catalog);
    if (!reference.ok()) {
        log::Error("plan reference data rejected; not starting",
                   {{"error", reference.error().message}});
        return 1;
    }
    if (config.command == "check-catalog") {
        std::printf("%s\n", http::ToJson(catalog->Describe()).dump(2).c_str());
        return 0;
    }

    // PostgreSQL mode (issue 5): the database is the source of truth; reads come from a
    // snapshot of it that PgStore keeps current.
    std::shared_ptr<http::CatalogStore> store;
#ifdef GPUCOST_WITH_POSTGRES
    if (config.command == "migrate") {
        return storage::RunMigrate(config.database_url);
    }
    if (config.command == "seed") {
        return storage::RunSeed(config.database_url, *catalog);
    }
    if (config.command == "apikey") {
        return storage::RunApiKey(config.database_url, config.command_args, config.key_scope,
                                  config.key_name);
    }
    if (!config.database_url.empty()) {
        storage::PgStoreOptions pg;
        pg.database_url = config.database_url;
        pg.pool_size = config.db_pool_size;
        pg.refresh_interval = std::chrono::milliseconds(config.snapshot_refresh_ms);
        auto opened = storage::PgStore::Open(pg);
        if (!opened.ok()) {
            log::Error("PostgreSQL mode: cannot start", {{"error", opened.error().message}});
            return 1;
        }
        store = std::move(opened).value();
        catalog = store->Current();
    }
#else
    if (!config.database_url.empty() || config.command == "migrate" || config.command == "seed" ||
        config.command == "apikey") {
        std::fprintf(stderr, "gpucost: built without PostgreSQL (GPUCOST_WITH_POSTGRES=OFF)\n");
        return 2;
    }
#endif

    // Signals go to one waiting thread, never to a worker in the middle of a request.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    std::atomic<bool> shutting_down{false};
    http::Deps deps;
    if (store) {
        deps.catalog = [store] { return store->Current(); };
    } else {
        deps.catalog = [catalog] { return catalog; };
    }
    deps.store = store;
    deps.plan_reference =
        std::make_shared<const pricing::PlanReference>(std::move(reference).value());
    deps.require_read_key = config.require_read_key;
    deps.max_snapshot_age_s = config.max_snapshot_age_s;
    deps.openapi_yaml = std::string(app::EmbeddedOpenApiYaml());
    deps.service_version = kVersion;
    deps.shutting_down = [&shutting_down] { return shutting_down.load(); };

    http::ServerOptions options;
    options.threads = config.threads;
    options.max_body_bytes = config.max_body_bytes;
    options.access_log = config.access_log;

    Server server;
    http::ConfigureServer(server, options);
    http::RegisterRoutes(server, deps);
    int port = config.port;
    if (port == 0) {
        port = server.bind_to_any_port(config.bind);
    } else if (!server.bind_to_port(config.bind, port)) {
        port = -1;
    }
    if (port < 0) {
        log::Error("cannot listen", {{"bind", config.bind}, {"port", config.port}});
        return 1;
    }
    if (!server.SetBacklog(config.listen_backlog)) {
        log::Warn("could not raise the listen backlog", {{"backlog", config.listen_backlog}});
    }

    std::thread signal_thread([&] {
        int received = 0;
        sigwait(&signals, &received);
        log::Info("shutting down", {{"signal", received == SIGTERM ? "SIGTERM" : "SIGINT"}});
        shutting_down.store(true);
        server.stop();
    });

    auto info = catalog->Describe();
    log::Info("listening", {{"bind", config.bind},
                            {"port", port},
                            {"threads", config.threads},
                            {"version", kVersion},
                            {"catalog_origin", info.origin},
                            {"catalog_version", info.version},
                            {"accelerators", info.accelerator_count},
                            {"offerings", info.offering_count}});
    bool served = server.listen_after_bind();
    if (!shutting_down.load()) {
        // listen ended on its own (an error): wake the signal thread so it can be joined.
        pthread_kill(signal_thread.native_handle(), SIGTERM);
    }
    signal_thread.join();
    log::Info("stopped", {{"clean", served}});
    return served ? 0 : 1;
}
