#include "service/storage/pg_store.hpp"

#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <csignal>
#include <map>
#include <set>

#include "service/log.hpp"
#include "service/storage/api_keys.hpp"
#include "service/storage/history_loader.hpp"
#include "service/storage/migrations.hpp"
#include "service/storage/pg_connection.hpp"
#include "service/storage/pg_store_lease.hpp"

// PgStore's lifecycle and snapshots: open, load, the LISTEN/NOTIFY refresher, health, keys. Its
// connection pool is in pg_store_pool.cpp, history reads in pg_store_history.cpp, catalog writes
// in pg_store_writes.cpp, saved scenarios in pg_store_scenarios.cpp.
namespace gpucost::storage {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

// Slice in which the refresher waits for a NOTIFY before checking `stop_` again.
constexpr std::chrono::milliseconds kListenSlice{100};

// Collects the payloads of the catalog channel's notifications, in delivery (commit) order.
class Listener final : public pqxx::notification_receiver {
public:
    Listener(pqxx::connection_base& conn, std::vector<std::string>& payloads)
        : pqxx::notification_receiver(conn, kCatalogChannel), payloads_(payloads) {}
    void operator()(const std::string& payload, int /*backend_pid*/) override {
        payloads_.push_back(payload);
    }

private:
    std::vector<std::string>& payloads_;
};

}  // namespace

// ---------------------------------------------------------------------------------------
// Lifecycle and snapshots

PgStore::PgStore(PgStoreOptions options) : options_(std::move(options)) {
    options_.pool_size = std::max<std::size_t>(1, options_.pool_size);
    pool_.resize(options_.pool_size);
    for (std::size_t i = 0; i < options_.pool_size; ++i) {
        free_slots_.push_back(i);
    }
}

pricing::Result<std::unique_ptr<PgStore>> PgStore::Open(PgStoreOptions options) {
    std::unique_ptr<PgStore> store(new PgStore(std::move(options)));
    try {
        auto conn = Connect(store->options_.database_url);
        auto schema = CheckSchema(*conn);
        if (!schema.ok()) {
            return schema.error();
        }
        if (!schema.value().missing.empty()) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "the database schema is at version " +
                                 std::to_string(schema.value().database_version) +
                                 " but this gpucost needs " +
                                 std::to_string(schema.value().binary_version) +
                                 "; run `gpucost migrate` first");
        }
        auto loaded = store->Reload(*conn);
        if (!loaded.ok()) {
            return loaded.error();
        }
    } catch (const pqxx::broken_connection& e) {
        return Unavailable("cannot connect to the database (" +
                           RedactUrl(store->options_.database_url) + "): " + e.what());
    } catch (const std::exception& e) {
        return Unavailable(std::string("cannot read the catalog from the database: ") + e.what());
    }
    store->connected_ = true;
    store->refresher_ = std::thread([s = store.get()] { s->RefresherLoop(); });
    return store;
}

PgStore::~PgStore() {
    stop_ = true;
    if (refresher_.joinable()) {
        refresher_.join();
    }
}

std::shared_ptr<const PgStore::Snapshot> PgStore::Load() const {
    std::lock_guard<std::mutex> lock(snapshot_mutex_);
    return snapshot_;
}

void PgStore::Install(std::shared_ptr<const CatalogHistory> history,
                      std::shared_ptr<const pricing::InMemoryCatalog> current) {
    auto built = std::make_shared<Snapshot>();
    built->history = std::move(history);
    built->current = std::move(current);
    std::shared_ptr<const Snapshot> next = std::move(built);
    {
        std::lock_guard<std::mutex> lock(snapshot_mutex_);
        // Two loaders may race (refresher and Open); never go back to an older revision.
        if (!snapshot_ || snapshot_->history->revision <= next->history->revision) {
            snapshot_ = std::move(next);
        }
        confirmed_at_ = std::chrono::steady_clock::now();
    }
    snapshot_changed_.notify_all();
    // as_of reads now key on the new revision: older entries would only hold memory.
    const std::int64_t installed = Revision();
    std::lock_guard<std::mutex> lock(as_of_mutex_);
    std::erase_if(as_of_cache_, [&](const AsOfEntry& e) { return e.revision < installed; });
}

pricing::Status PgStore::Reload(pqxx::connection& conn) {
    std::shared_ptr<const CatalogHistory> history;
    {
        pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::read_only> tx(conn);
        history = std::make_shared<const CatalogHistory>(LoadHistory(tx));
        tx.commit();
    }
    auto current = BuildSnapshot(*history, std::nullopt);
    if (!current.ok()) {
        log::Error("catalog snapshot rejected; keeping the previous one",
                   {{"revision", history->revision}, {"error", current.error().message}});
        return current.error();
    }
    Install(std::move(history), current.value());
    log::Info("catalog snapshot loaded",
              {{"revision", Revision()}, {"offerings", current.value()->Offerings().size()}});
    return pricing::Ok{};
}

// The error's text (libpq's, with host and port) goes to the log, never into an answer.
void PgStore::MarkDown(const std::string& error) {
    if (connected_.exchange(false)) {
        log::Warn("database unreachable; serving the last snapshot", {{"error", error}});
    }
}

void PgStore::RecheckSchema(pqxx::connection& conn) {
    auto schema = CheckSchema(conn);
    std::string problem;
    if (!schema.ok()) {
        problem = schema.error().message;
    } else if (!schema.value().missing.empty()) {
        problem = "the database schema is at migration " +
                  std::to_string(schema.value().database_version) + " but this gpucost needs " +
                  std::to_string(schema.value().binary_version) + "; run gpucost migrate";
    }
    std::lock_guard<std::mutex> lock(schema_mutex_);
    if (problem != schema_problem_ && !problem.empty()) {
        log::Warn("database schema does not match this binary; not ready", {{"error", problem}});
    }
    schema_problem_ = std::move(problem);
}

// Each applied change frees the previous snapshot's copy of every offering, on whichever
// thread dropped it last; glibc keeps such memory in per-thread arenas, so RSS grew with the
// number of changes (a replica at 20,000 offerings: 334 MB after about 600 applied writes and
// the as_of load; 240 MB with this). Freed pages go back once per periodic check.
static void ReturnFreedMemory() {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

void PgStore::ApplyNotified(pqxx::connection& conn, const std::vector<std::string>& payloads) {
    auto base = Load();
    const std::int64_t from = base->history->revision;
    std::int64_t to = from;
    CatalogChange change;
    std::set<std::string> ids;
    for (const std::string& payload : payloads) {
        auto decoded = DecodeChange(payload);
        if (!decoded || decoded->first <= to) {
            continue;  // already in the snapshot (a reload overtook it), or not ours
        }
        // A revision skipped (a notification lost) cannot be applied as a difference.
        change.everything |= decoded->first != to + 1 || decoded->second.everything;
        change.keys |= decoded->second.keys;
        ids.insert(decoded->second.offering_ids.begin(), decoded->second.offering_ids.end());
        to = decoded->first;
    }
    if (to == from) {
        return;
    }
    if (change.everything) {
        (void)Reload(conn);
        return;
    }
    change.offering_ids.assign(ids.begin(), ids.end());
    const auto started = std::chrono::steady_clock::now();
    std::vector<OfferingHistory> loaded;
    std::vector<KeyRecord> keys;
    {
        // The rows may already include later changes; their own notifications re-apply them.
        pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::read_only> tx(conn);
        loaded = LoadOfferingHistories(tx, change.offering_ids);
        if (change.keys) {
            keys = LoadKeys(tx);
        }
        tx.commit();
    }
    auto history = std::make_shared<const CatalogHistory>(
        ApplyChange(*base->history, to, change, std::move(loaded), std::move(keys)));
    const auto read = std::chrono::steady_clock::now();
    auto current = PatchSnapshot(*base->current, *history, change);
    const auto patched = std::chrono::steady_clock::now();
    if (!current.ok()) {
        log::Error("catalog change rejected; reloading",
                   {{"revision", to}, {"error", current.error().message}});
        (void)Reload(conn);
        return;
    }
    Install(std::move(history), current.value());
    using Ms = std::chrono::duration<double, std::milli>;
    log::Debug("catalog change applied", {{"revision", to},
                                          {"offerings_changed", change.offering_ids.size()},
                                          {"read_ms", Ms(read - started).count()},
                                          {"patch_ms", Ms(patched - read).count()}});
}

void PgStore::RefresherLoop() {
    // Process signals (SIGTERM/SIGINT) belong to main's signal thread, never to this one.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::unique_ptr<pqxx::connection> conn;
    std::unique_ptr<Listener> listener;
    std::vector<std::string> payloads;
    auto backoff = options_.reconnect_min;
    auto next_check = std::chrono::steady_clock::now();
    // The database's revision at the previous periodic check while the snapshot was behind
    // it: still behind it one check later means a notification was missed, so reload.
    std::int64_t behind_since_check = 0;
    bool catch_up = true;
    while (!stop_) {
        try {
            if (!conn) {
                conn = Connect(options_.database_url);
                payloads.clear();
                listener = std::make_unique<Listener>(*conn, payloads);
                next_check = std::chrono::steady_clock::now();  // catch up at once
                catch_up = true;
                backoff = options_.reconnect_min;
                if (!connected_.exchange(true)) {
                    log::Info("database reachable again; catching up");
                }
            }
            if (!payloads.empty()) {
                std::vector<std::string> batch;
                batch.swap(payloads);  // all that arrived: applied as one change
                ApplyNotified(*conn, batch);
                connected_ = true;
            }
            auto now = std::chrono::steady_clock::now();
            if (now >= next_check) {
                next_check = now + options_.refresh_interval;
                RecheckSchema(*conn);
                std::int64_t revision = 0;
                {
                    pqxx::nontransaction tx(*conn);
                    revision = LoadRevision(tx);
                }
                const std::int64_t served = Revision();
                if (revision == served) {
                    behind_since_check = 0;
                    std::lock_guard<std::mutex> lock(snapshot_mutex_);
                    confirmed_at_ = std::chrono::steady_clock::now();
                } else if (catch_up || served < behind_since_check || revision < served) {
                    // Behind for a whole interval (or just connected, or the database went
                    // back, e.g. restored): notifications cannot be trusted to bring it.
                    (void)Reload(*conn);
                    behind_since_check = 0;
                } else {
                    behind_since_check = revision;
                }
                catch_up = false;
                connected_ = true;
                FillPool();
                ReturnFreedMemory();
            }
            conn->await_notification(0, static_cast<long>(kListenSlice.count()) * 1000);
        } catch (const std::exception& e) {
            listener.reset();
            conn.reset();
            MarkDown(e.what());
            auto until = std::chrono::steady_clock::now() + backoff;
            while (!stop_ && std::chrono::steady_clock::now() < until) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            backoff = std::min(backoff * 2, options_.reconnect_max);
        }
    }
    listener.reset();
}

std::int64_t PgStore::Revision() const {
    return Load()->history->revision;
}

bool PgStore::WaitForRevision(std::int64_t revision, std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(snapshot_mutex_);
    return snapshot_changed_.wait_for(
        lock, timeout, [&] { return snapshot_ && snapshot_->history->revision >= revision; });
}

std::shared_ptr<const pricing::Catalog> PgStore::Current() const {
    return Load()->current;
}

ports::StoreHealth PgStore::Health() const {
    ports::StoreHealth h;
    h.database_connected = connected_.load();
    {
        std::lock_guard<std::mutex> lock(snapshot_mutex_);
        h.revision = snapshot_->history->revision;
        h.snapshot_age_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - confirmed_at_).count();
    }
    std::lock_guard<std::mutex> lock(schema_mutex_);
    h.schema_problem = schema_problem_;
    return h;
}

std::optional<ports::Principal> PgStore::Authenticate(std::string_view key) const {
    return VerifyKey(Load()->history->keys, key);
}

}  // namespace gpucost::storage
