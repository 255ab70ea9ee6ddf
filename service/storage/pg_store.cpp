#include "service/storage/pg_store.hpp"

#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <csignal>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "service/http/codec/timestamp.hpp"

#include "service/log.hpp"
#include "service/storage/api_keys.hpp"
#include "service/storage/history_loader.hpp"
#include "service/storage/migrations.hpp"
#include "service/storage/pg_connection.hpp"
#include "service/storage/recorded_answer.hpp"

namespace gpucost::storage {
namespace {

using pricing::ErrorCode;
using pricing::MakeError;

// Slice in which the refresher waits for a NOTIFY before checking `stop_` again.
constexpr std::chrono::milliseconds kListenSlice{100};
// How long a writer waits for its own change to reach this process's snapshot before it
// answers (read-your-writes on the same replica).
constexpr std::chrono::milliseconds kOwnWriteWait{2000};

// SQL fragment: the timestamptz of a microsecond count passed as text parameter $n.
std::string Us(int n) {
    return "(timestamptz 'epoch' + $" + std::to_string(n) + "::bigint * interval '1 microsecond')";
}

pricing::Error Unavailable(const std::string& detail) {
    return MakeError(ErrorCode::kUnavailable, detail);
}

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

// A catalog that answers as `base` does but describes itself as `info` says: an as_of
// snapshot shared by several instants carries each request's own version string.
class DescribedAs final : public pricing::Catalog {
public:
    DescribedAs(std::shared_ptr<const pricing::InMemoryCatalog> base, pricing::CatalogInfo info)
        : base_(std::move(base)), info_(std::move(info)) {}
    const std::vector<pricing::Accelerator>& Accelerators() const override {
        return base_->Accelerators();
    }
    const pricing::OfferingList& Offerings() const override { return base_->Offerings(); }
    pricing::Result<pricing::Accelerator> FindAccelerator(std::string_view id) const override {
        return base_->FindAccelerator(id);
    }
    pricing::Result<pricing::Offering> FindOffering(std::string_view id) const override {
        return base_->FindOffering(id);
    }
    pricing::CatalogInfo Describe() const override { return info_; }
    std::vector<pricing::ProviderSummary> Providers() const override { return base_->Providers(); }

private:
    std::shared_ptr<const pricing::InMemoryCatalog> base_;
    pricing::CatalogInfo info_;
};

bool IfMatchAccepts(const std::string& header, const std::string& etag) {
    std::size_t start = 0;
    while (start <= header.size()) {
        std::size_t end = header.find(',', start);
        if (end == std::string::npos) {
            end = header.size();
        }
        std::string item = header.substr(start, end - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (item == "*" || item == etag) {
            return true;
        }
        start = end + 1;
    }
    return false;
}

std::optional<pricing::Error> CheckIfMatch(const http::WriteRequest& request,
                                           const http::OfferingHistory& h) {
    if (!request.if_match) {
        return std::nullopt;
    }
    std::string etag = http::OfferingEtag(h.version);
    if (IfMatchAccepts(*request.if_match, etag)) {
        return std::nullopt;
    }
    return MakeError(ErrorCode::kFailedPrecondition,
                     "If-Match does not match the offering's current ETag " + etag +
                         "; it changed since you read it: read it again and reapply your change",
                     http::kIfMatchField);
}

// SQL for the timestamptz of a microsecond count (an integer this code computed, never input).
std::string UsLiteral(http::TimestampUs us) {
    return "(timestamptz 'epoch' + " + std::to_string(us) + "::bigint * interval '1 microsecond')";
}

// Rows per multi-row INSERT: one statement stays well under libpq's limits at 1,000.
constexpr std::size_t kInsertChunk = 1000;

// Writes what placing prices changed: one UPDATE for every interval that moved (rows are
// never deleted), multi-row INSERTs of the new rows (ids < 0 in `histories`, inserted in the
// order placed), one version bump per offering.
void WritePlaced(pqxx::work& tx, const std::map<std::string, OfferingHistory>& histories,
                 const std::map<std::int64_t, std::optional<http::TimestampUs>>& before,
                 std::int64_t key_id, bool bump_versions) {
    std::string moved;
    std::vector<std::pair<const std::string*, const PriceInterval*>> added;
    std::string offerings;
    for (const auto& [id, h] : histories) {
        offerings += (offerings.empty() ? "" : ", ") + tx.quote(id);
        for (const PriceInterval& p : h.prices) {
            if (p.id < 0) {
                added.emplace_back(&id, &p);
            } else if (p.valid_to_us && before.at(p.id) != p.valid_to_us) {
                moved += (moved.empty() ? "(" : ", (") + std::to_string(p.id) + ", " +
                         std::to_string(*p.valid_to_us) + ")";
            }
        }
    }
    if (!moved.empty()) {
        // Before the inserts: the closed current row frees prices_one_current for the new one.
        tx.exec(
            "UPDATE prices p SET valid_to = timestamptz 'epoch' + u.to_us * interval"
            " '1 microsecond' FROM (VALUES " +
            moved + ") AS u(id, to_us) WHERE p.id = u.id");
    }
    std::sort(added.begin(), added.end(),
              [](const auto& a, const auto& b) { return a.second->id > b.second->id; });
    std::map<std::string, std::int64_t> sources;
    for (const auto& [id, p] : added) {
        if (!sources.contains(p->observation.source)) {
            sources[p->observation.source] = SourceId(tx, p->observation.source);
        }
    }
    for (std::size_t start = 0; start < added.size(); start += kInsertChunk) {
        std::string rows;
        for (std::size_t i = start; i < std::min(added.size(), start + kInsertChunk); ++i) {
            const PriceInterval& p = *added[i].second;
            const pricing::PriceObservation& o = p.observation;
            rows += std::string(rows.empty() ? "(" : ", (") + tx.quote(*added[i].first) + ", " +
                    tx.quote(pqxx::to_string(o.usd_per_hour)) + "::numeric, " + tx.quote(o.as_of) +
                    "::date, " + (o.as_of_estimated ? "true" : "false") + ", " +
                    std::to_string(sources.at(o.source)) + ", " + (o.verified ? "true" : "false") +
                    ", " + tx.quote(o.notes) + ", " + UsLiteral(p.valid_from_us) + ", " +
                    (p.valid_to_us ? UsLiteral(*p.valid_to_us) : std::string("NULL")) + ", " +
                    (key_id == 0 ? std::string("NULL") : std::to_string(key_id)) + ")";
        }
        tx.exec(
            "INSERT INTO prices (offering_id, usd_per_hour, as_of, as_of_estimated,"
            " source_id, verified, notes, valid_from, valid_to, recorded_by) VALUES " +
            rows);
    }
    if (bump_versions && !offerings.empty()) {
        tx.exec("UPDATE offerings SET version = version + 1 WHERE id IN (" + offerings + ")");
    }
}

// Places `prices`, in order, into `histories` (read in this transaction, under the catalog
// lock) by the current-price rule (PlacePrice) and writes the result (WritePlaced).
pricing::Status PlaceAndWrite(pqxx::work& tx, std::map<std::string, OfferingHistory>& histories,
                              const std::vector<http::PriceUpdate>& prices,
                              http::TimestampUs now_us, std::int64_t key_id,
                              bool bump_versions = true) {
    std::map<std::int64_t, std::optional<http::TimestampUs>> before;
    for (const auto& [id, h] : histories) {
        for (const PriceInterval& p : h.prices) {
            before[p.id] = p.valid_to_us;
        }
    }
    std::int64_t next_new = -1;
    for (std::size_t i = 0; i < prices.size(); ++i) {
        const std::string& id = prices[i].offering_id;
        const std::string item = prices.size() > 1 ? " (item " + std::to_string(i) + ")" : "";
        auto found = histories.find(id);
        if (found == histories.end()) {
            return MakeError(ErrorCode::kNotFound, "no offering with id '" + id + "'" + item, "id");
        }
        OfferingHistory& h = found->second;
        if (h.retired_at_us) {
            return MakeError(ErrorCode::kFailedPrecondition,
                             "offering '" + id + "' is retired; create a new offering" + item);
        }
        const http::NewPrice& n = prices[i].price;
        pricing::PriceObservation p{n.usd_per_hour, n.as_of,    n.as_of_estimated,
                                    n.source,       n.verified, n.notes};
        PricePlacement placed = PlacePrice(h, p, now_us);
        for (const PriceInterval& row : h.prices) {
            if (placed.current && !row.valid_to_us && row.id > 0 && row.valid_from_us >= now_us) {
                return MakeError(ErrorCode::kFailedPrecondition,
                                 "the current price of '" + id +
                                     "' takes effect later than now; it cannot be replaced yet");
            }
        }
        ApplyPlacement(h, placed, p, next_new--, now_us);
    }
    WritePlaced(tx, histories, before, key_id, bump_versions);
    return pricing::Ok{};
}

http::Scenario ScenarioFromRow(const pqxx::row& r) {
    http::Scenario s;
    s.id = r[0].as<std::int64_t>();
    s.name = r[1].as<std::string>();
    s.plan_kind = r[2].as<std::string>();
    s.request_json = r[3].as<std::string>();
    s.saved_result_json = r[4].as<std::string>();
    s.catalog_revision = r[5].as<std::int64_t>();
    s.created_at_us = r[6].as<std::int64_t>();
    s.created_by = r[7].is_null() ? std::string() : r[7].as<std::string>();
    s.catalog_version = r[8].as<std::string>();
    s.version = r[9].as<std::int64_t>();
    s.team = r[13].as<std::string>();
    s.confidential = r[14].as<bool>();
    if (!r[11].is_null()) {
        s.progress = http::ScenarioProgress{r[11].as<double>(), r[12].as<std::int64_t>()};
    }
    // array_to_json: a JSON array of strings, parsed here rather than libpqxx 6's array parser.
    auto tags = nlohmann::json::parse(r[10].as<std::string>(), nullptr, false);
    if (tags.is_array()) {
        for (const auto& t : tags) {
            if (t.is_string()) {
                s.tags.push_back(t.get<std::string>());
            }
        }
    }
    return s;
}

constexpr char kScenarioColumns[] =
    "SELECT s.id, s.name, s.plan_kind, s.request::text, s.saved_result::text,"
    " s.catalog_revision, (extract(epoch from s.created_at) * 1000000)::bigint, k.name,"
    " s.catalog_version, s.version, array_to_json(s.tags)::text, s.progress_tokens_done_b,"
    " (extract(epoch from s.progress_as_of) * 1000000)::bigint, s.team, s.confidential"
    " FROM scenarios s LEFT JOIN api_keys k ON k.id = s.created_by";

// A text[] literal's value as one JSON array parameter ($n::jsonb turned into text[] in SQL).
std::string TagsParam(const std::vector<std::string>& tags) {
    return nlohmann::json(tags).dump();
}
constexpr char kTagsFromJson[] = "ARRAY(SELECT jsonb_array_elements_text(%s::jsonb))";

std::string TagsFrom(int param) {
    std::string out = kTagsFromJson;
    out.replace(out.find("%s"), 2, "$" + std::to_string(param));
    return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Pool

class PgStore::Lease {
public:
    Lease(PgStore& store, std::size_t slot) : store_(store), slot_(slot) {}
    ~Lease() {
        std::lock_guard<std::mutex> lock(store_.pool_mutex_);
        auto& conn = store_.pool_[slot_];
        if (conn && !conn->is_open()) {
            conn.reset();
        }
        store_.free_slots_.push_back(slot_);
        store_.pool_cv_.notify_one();
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease(Lease&&) = delete;
    Lease& operator=(Lease&&) = delete;

    pqxx::connection& conn() { return *store_.pool_[slot_]; }
    void Drop() {
        std::lock_guard<std::mutex> lock(store_.pool_mutex_);
        store_.pool_[slot_].reset();
    }

private:
    PgStore& store_;
    std::size_t slot_;
};

pricing::Result<std::unique_ptr<PgStore::Lease>> PgStore::Checkout() {
    std::size_t slot = 0;
    bool needs_connect = false;
    {
        std::unique_lock<std::mutex> lock(pool_mutex_);
        if (!pool_cv_.wait_for(lock, options_.checkout_timeout,
                               [this] { return !free_slots_.empty(); })) {
            return Unavailable("all database connections are busy; retry shortly");
        }
        slot = free_slots_.back();
        needs_connect = !pool_[slot];
        if (needs_connect && std::chrono::steady_clock::now() < next_connect_at_) {
            // The slot stays free (it was not taken); fail fast while the backoff runs.
            return Unavailable(
                "the database is unreachable; retrying the connection in the "
                "background");
        }
        free_slots_.pop_back();
    }
    auto lease = std::make_unique<Lease>(*this, slot);
    if (needs_connect) {
        try {
            auto conn = Connect(options_.database_url);
            std::lock_guard<std::mutex> lock(pool_mutex_);
            pool_[slot] = std::move(conn);
            connect_backoff_ = std::chrono::milliseconds(0);
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(pool_mutex_);
            connect_backoff_ =
                std::clamp(connect_backoff_ * 2, options_.reconnect_min, options_.reconnect_max);
            next_connect_at_ = std::chrono::steady_clock::now() + connect_backoff_;
            return Unavailable("the database is unreachable; retry later");
        }
    }
    return lease;
}

// Connects the pool's idle, closed slots on the refresher's thread, so that a write takes a
// connection that is already open: while the database is reachable a request waits on
// neither a name lookup nor a connect (a container network's DNS can miss queries for
// seconds while containers join it).
void PgStore::FillPool() {
    for (;;) {
        std::size_t slot = 0;
        {
            std::lock_guard<std::mutex> lock(pool_mutex_);
            auto closed = std::find_if(free_slots_.begin(), free_slots_.end(),
                                       [this](std::size_t s) { return !pool_[s]; });
            if (closed == free_slots_.end()) {
                return;
            }
            slot = *closed;
            free_slots_.erase(closed);
        }
        std::unique_ptr<pqxx::connection> conn;
        try {
            conn = Connect(options_.database_url);
        } catch (const std::exception& e) {
            log::Debug("pool connection not opened ahead", {{"error", e.what()}});
        }
        const bool opened = conn != nullptr;
        {
            std::lock_guard<std::mutex> lock(pool_mutex_);
            pool_[slot] = std::move(conn);
            free_slots_.push_back(slot);
        }
        pool_cv_.notify_one();
        if (!opened) {
            return;
        }
    }
}

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

pricing::Result<std::shared_ptr<const pricing::Catalog>> PgStore::At(http::TimestampUs at) const {
    auto snapshot = Load();
    auto built = AsOfCatalog(*snapshot, at);
    if (!built.ok()) {
        return built.error();
    }
    pricing::CatalogInfo info = built.value()->Describe();
    info.version = RevisionVersion(snapshot->history->revision) + "@" + http::FormatTimestamp(at);
    return std::shared_ptr<const pricing::Catalog>(
        std::make_shared<const DescribedAs>(std::move(built).value(), std::move(info)));
}

pricing::Result<std::shared_ptr<const pricing::InMemoryCatalog>> PgStore::AsOfCatalog(
    const Snapshot& snapshot, http::TimestampUs at) const {
    std::call_once(snapshot.change_points_once,
                   [&] { snapshot.change_points = ChangePoints(*snapshot.history); });
    const auto& points = snapshot.change_points;
    const std::size_t interval = static_cast<std::size_t>(
        std::upper_bound(points.begin(), points.end(), at) - points.begin());
    const std::int64_t revision = snapshot.history->revision;
    auto cached = [&]() -> std::shared_ptr<const pricing::InMemoryCatalog> {
        std::lock_guard<std::mutex> lock(as_of_mutex_);
        for (auto it = as_of_cache_.begin(); it != as_of_cache_.end(); ++it) {
            if (it->revision == revision && it->interval == interval) {
                AsOfEntry hit = *it;
                as_of_cache_.erase(it);
                as_of_cache_.push_back(hit);
                return hit.catalog;
            }
        }
        return nullptr;
    };
    if (auto hit = cached()) {
        return hit;
    }
    std::lock_guard<std::mutex> building(as_of_build_mutex_);
    if (auto hit = cached()) {
        return hit;  // another request built it while this one waited
    }
    auto built = BuildSnapshot(*snapshot.history, at);
    if (!built.ok()) {
        return built.error();
    }
    std::lock_guard<std::mutex> lock(as_of_mutex_);
    if (as_of_cache_.size() >= kAsOfCacheEntries) {
        as_of_cache_.erase(as_of_cache_.begin());
    }
    as_of_cache_.push_back(AsOfEntry{revision, interval, built.value()});
    return built.value();
}

pricing::Result<http::OfferingHistory> PgStore::History(std::string_view id) const {
    auto snapshot = Load();
    const OfferingHistory* h = FindHistory(*snapshot->history, id);
    if (h == nullptr) {
        return MakeError(ErrorCode::kNotFound, "no offering with id '" + std::string(id) + "'",
                         "id");
    }
    OfferingHistory found = *h;
    found.catalog_version = RevisionVersion(snapshot->history->revision);
    return found;
}

http::StoreHealth PgStore::Health() const {
    http::StoreHealth h;
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

std::optional<http::Principal> PgStore::Authenticate(std::string_view key) const {
    return VerifyKey(Load()->history->keys, key);
}

// ---------------------------------------------------------------------------------------
// Writes

pricing::Result<http::StoredResponse> PgStore::RunWrite(const http::WriteRequest& request,
                                                        const WriteBody& body) {
    std::optional<pricing::Error> last_failure;
    for (int attempt = 1; attempt <= options_.max_write_attempts; ++attempt) {
        auto lease = Checkout();
        if (!lease.ok()) {
            return lease.error();
        }
        bool committing = false;
        std::int64_t revision = 0;
        std::optional<pricing::Result<http::StoredResponse>> committed;
        try {
            // tx ends with this block, before the lease is given back below.
            pqxx::work tx(lease.value()->conn());
            tx.exec_params("SELECT revision FROM catalog_state FOR UPDATE");
            auto recorded = RecordedAnswer(tx, request);
            if (!recorded.ok()) {
                return recorded.error();
            }
            if (recorded.value()) {
                return *recorded.value();
            }
            // key_id 0 is the operator on the command line (`gpucost import` with
            // DATABASE_URL): no API key, the rows are recorded with recorded_by NULL.
            // The key check and the write's instant (taken after the lock, so intervals never
            // overlap) in one round trip: every statement here runs under the catalog lock.
            auto active = tx.exec_params(
                "SELECT (extract(epoch from clock_timestamp()) * 1000000)::bigint"
                " WHERE $1 = 0 OR EXISTS (SELECT 1 FROM api_keys WHERE id = $1 AND"
                " revoked_at IS NULL)",
                request.principal.key_id);
            if (active.empty()) {
                return MakeError(ErrorCode::kFailedPrecondition, "the API key has been revoked",
                                 "Authorization");
            }
            const auto now_us = active[0][0].as<std::int64_t>();
            CatalogChange changed;
            auto outcome = body(tx, now_us, changed);
            if (!outcome.ok()) {
                return outcome.error();
            }
            revision = BumpRevision(tx, changed);
            RecordAnswer(tx, request, outcome.value());
            committing = true;
            tx.commit();
            committed = std::move(outcome);
        } catch (const pqxx::in_doubt_error& e) {
            lease.value()->Drop();
            MarkDown(e.what());
            return Unavailable(
                "the database connection was lost while committing, so the outcome "
                "is unknown; retry with the same Idempotency-Key to apply it once");
        } catch (const pqxx::transaction_rollback& e) {
            // Serialization failure or deadlock: nothing was applied; retry the whole thing.
            last_failure = Unavailable("the write conflicted with another one; retry");
            log::Info("retrying write", {{"attempt", attempt}, {"sqlstate", SqlState(e)}});
        } catch (const pqxx::unique_violation& e) {
            // A concurrent request with the same Idempotency-Key won; the retry replays it.
            last_failure = MakeError(ErrorCode::kFailedPrecondition,
                                     "a conflicting write happened at the same time; retry");
            log::Info("retrying write", {{"attempt", attempt}, {"sqlstate", SqlState(e)}});
        } catch (const pqxx::integrity_constraint_violation& e) {
            log::Warn("write rejected by a database constraint", {{"error", e.what()}});
            return MakeError(ErrorCode::kInvalidArgument,
                             "the write breaks a catalog constraint (unknown accelerator, "
                             "negative price or overlapping validity)");
        } catch (const std::exception& e) {
            bool open = lease.value()->conn().is_open();
            if (committing) {
                lease.value()->Drop();
                MarkDown(e.what());
                return Unavailable(
                    "the outcome of the commit is unknown; retry with the same "
                    "Idempotency-Key to apply it once");
            }
            if (!open || dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
                SqlState(e).rfind("57", 0) == 0 || SqlState(e).rfind("08", 0) == 0) {
                // Lost before COMMIT was sent: nothing applied, safe to try once more.
                lease.value()->Drop();
                MarkDown(e.what());
                last_failure = Unavailable("the database is unreachable; retry later");
                continue;
            }
            log::Error("write failed", {{"error", e.what()}, {"sqlstate", SqlState(e)}});
            return MakeError(ErrorCode::kInternal, "write failed");
        }
        if (committed) {
            connected_ = true;
            // The connection goes back before the wait, so that writers queue on the
            // catalog_state lock, not on the pool.
            lease.value().reset();
            return AwaitOwnWrite(revision, std::move(*committed));
        }
    }
    return last_failure.value_or(Unavailable("the write could not be applied; retry"));
}

pricing::Result<http::StoredResponse> PgStore::AwaitOwnWrite(
    std::int64_t revision, pricing::Result<http::StoredResponse> outcome) const {
    if (!WaitForRevision(revision, kOwnWriteWait)) {
        log::Warn("write committed but not yet in this replica's snapshot",
                  {{"revision", revision}});
    }
    return outcome;
}

namespace {

// The catalog version a write makes, for its answer. Every catalog write holds the
// catalog_state lock (RunWrite) and bumps the revision once when it succeeds.
std::string WrittenCatalogVersion(pqxx::work& tx) {
    return RevisionVersion(
        tx.exec("SELECT revision + 1 FROM catalog_state")[0][0].as<std::int64_t>());
}

http::OfferingHistory AsWritten(pqxx::work& tx, http::OfferingHistory history) {
    history.catalog_version = WrittenCatalogVersion(tx);
    return history;
}

std::vector<http::OfferingHistory> AsWritten(pqxx::work& tx,
                                             std::vector<http::OfferingHistory> histories) {
    const std::string version = WrittenCatalogVersion(tx);
    for (http::OfferingHistory& h : histories) {
        h.catalog_version = version;
    }
    return histories;
}

}  // namespace

pricing::Result<http::StoredResponse> PgStore::PutPrice(const http::WriteRequest& request,
                                                        std::string_view id,
                                                        const http::NewPrice& price,
                                                        const HistoryEncoder& encode) {
    const std::string offering_id(id);
    return RunWrite(request,
                    [&](pqxx::work& tx, http::TimestampUs now_us,
                        CatalogChange& changed) -> pricing::Result<http::StoredResponse> {
                        auto h = LoadOfferingHistory(tx, offering_id, /*lock=*/true);
                        if (!h) {
                            return MakeError(ErrorCode::kNotFound,
                                             "no offering with id '" + offering_id + "'", "id");
                        }
                        if (h->retired_at_us) {
                            return MakeError(
                                ErrorCode::kFailedPrecondition,
                                "offering '" + offering_id + "' is retired; create a new offering");
                        }
                        if (auto stale = CheckIfMatch(request, *h)) {
                            return *stale;
                        }
                        // Placed by the current-price rule: a back-dated price goes into the
                        // history in its place and does not become current by being written last
                        //.
                        std::map<std::string, OfferingHistory> histories;
                        histories.emplace(offering_id, std::move(*h));
                        auto written =
                            PlaceAndWrite(tx, histories, {http::PriceUpdate{offering_id, price}},
                                          now_us, request.principal.key_id);
                        if (!written.ok()) {
                            return written.error();
                        }
                        changed.offering_ids.push_back(offering_id);
                        return encode(AsWritten(tx, *LoadOfferingHistory(tx, offering_id, false)));
                    });
}

pricing::Result<http::StoredResponse> PgStore::PutPrices(
    const http::WriteRequest& request, const std::vector<http::PriceUpdate>& prices,
    const HistoriesEncoder& encode) {
    std::vector<std::string> ids;
    std::set<std::string> seen;
    for (const http::PriceUpdate& p : prices) {
        if (seen.insert(p.offering_id).second) {
            ids.push_back(p.offering_id);
        }
    }
    return RunWrite(request,
                    [&](pqxx::work& tx, http::TimestampUs now_us,
                        CatalogChange& changed) -> pricing::Result<http::StoredResponse> {
                        // Every catalog writer holds the catalog_state lock (RunWrite), so no row
                        // locks here.
                        std::map<std::string, OfferingHistory> histories;
                        for (OfferingHistory& h : LoadOfferingHistories(tx, ids)) {
                            std::string id = h.offering.id;
                            histories.emplace(std::move(id), std::move(h));
                        }
                        auto written =
                            PlaceAndWrite(tx, histories, prices, now_us, request.principal.key_id);
                        if (!written.ok()) {
                            return written.error();
                        }
                        changed.offering_ids = ids;
                        return encode(AsWritten(tx, LoadOfferingHistories(tx, ids)));
                    });
}

// All in bulk: one accelerator check, multi-row INSERTs of the offerings and of
// their first prices (PlaceAndWrite, as a price batch writes them), one read for the answer;
// per item statements made 1,000 items about 6,000 round trips under the catalog lock.
pricing::Result<http::StoredResponse> PgStore::CreateOfferings(
    const http::WriteRequest& request, const std::vector<pricing::Offering>& offerings,
    const CreatedEncoder& encode) {
    return RunWrite(
        request,
        [&](pqxx::work& tx, http::TimestampUs now_us,
            CatalogChange& changed) -> pricing::Result<http::StoredResponse> {
            std::set<std::string> accelerators;
            std::string wanted;
            for (const pricing::Offering& o : offerings) {
                wanted += (wanted.empty() ? "" : ", ") + tx.quote(o.accelerator);
            }
            if (!wanted.empty()) {
                for (const auto& r :
                     tx.exec("SELECT id FROM accelerators WHERE id IN (" + wanted + ")")) {
                    accelerators.insert(r[0].as<std::string>());
                }
            }
            std::set<std::string> inserted;
            for (std::size_t start = 0; start < offerings.size(); start += kInsertChunk) {
                std::string rows;
                for (std::size_t i = start; i < std::min(offerings.size(), start + kInsertChunk);
                     ++i) {
                    const pricing::Offering& o = offerings[i];
                    if (!accelerators.contains(o.accelerator)) {
                        return MakeError(ErrorCode::kInvalidArgument,
                                         "unknown accelerator '" + o.accelerator + "' (item " +
                                             std::to_string(i) + ")");
                    }
                    auto opt = [&](const std::optional<double>& v) {
                        return v ? tx.quote(pqxx::to_string(*v)) + "::numeric"
                                 : std::string("NULL");
                    };
                    rows += std::string(rows.empty() ? "(" : ", (") + tx.quote(o.id) + ", " +
                            tx.quote(o.provider) + ", " + tx.quote(o.instance_type) + ", " +
                            tx.quote(o.accelerator) + ", " + std::to_string(o.accelerator_count) +
                            ", " + opt(o.accelerator_memory_gb) + ", " + opt(o.vcpus) + ", " +
                            opt(o.ram_gib) + ", " + tx.quote(o.interconnect) + ", " +
                            opt(o.scale_out_gbit_per_s) + ", " + tx.quote(o.region) + ", " +
                            tx.quote(std::string(pricing::PriceTypeName(o.price_type))) + ", " +
                            (o.spot_interruption ? tx.quote(o.spot_interruption->label)
                                                 : std::string("NULL")) +
                            ", " + tx.quote(o.notes) + ", " + UsLiteral(now_us) + ")";
                }
                for (const auto& r : tx.exec(
                         "INSERT INTO offerings (id, provider, instance_type, accelerator_id,"
                         " accelerator_count, accelerator_memory_gb, vcpus, ram_gib, interconnect,"
                         " scale_out_gbit_per_s, region, price_type, spot_interruption_bucket, "
                         "notes,"
                         " created_at) VALUES " +
                         rows + " ON CONFLICT (id) DO NOTHING RETURNING id")) {
                    inserted.insert(r[0].as<std::string>());
                }
            }
            std::map<std::string, OfferingHistory> histories;
            std::vector<http::PriceUpdate> prices;
            for (std::size_t i = 0; i < offerings.size(); ++i) {
                const pricing::Offering& o = offerings[i];
                // Not inserted: it existed, or an earlier item of this batch has its id.
                if (!inserted.contains(o.id) || histories.contains(o.id)) {
                    return MakeError(ErrorCode::kFailedPrecondition,
                                     "offering '" + o.id + "' already exists (item " +
                                         std::to_string(i) + "); use PUT /v1/offerings/" + o.id +
                                         "/price to change its price");
                }
                histories[o.id].offering = o;
                prices.push_back({o.id, http::NewPrice{o.price.usd_per_hour, o.price.as_of,
                                                       o.price.as_of_estimated, o.price.source,
                                                       o.price.verified, o.price.notes}});
                changed.offering_ids.push_back(o.id);
            }
            auto written = PlaceAndWrite(tx, histories, prices, now_us, request.principal.key_id,
                                         /*bump_versions=*/false);
            if (!written.ok()) {
                return written.error();
            }
            std::map<std::string, OfferingHistory> read;
            for (OfferingHistory& h : LoadOfferingHistories(tx, changed.offering_ids)) {
                std::string id = h.offering.id;
                read.emplace(std::move(id), std::move(h));
            }
            std::vector<http::OfferingHistory> created;
            created.reserve(offerings.size());
            for (const pricing::Offering& o : offerings) {
                created.push_back(std::move(read.at(o.id)));
            }
            return encode(AsWritten(tx, std::move(created)));
        });
}

pricing::Result<http::StoredResponse> PgStore::RetireOffering(const http::WriteRequest& request,
                                                              std::string_view id,
                                                              const HistoryEncoder& encode) {
    const std::string offering_id(id);
    return RunWrite(request,
                    [&](pqxx::work& tx, http::TimestampUs now_us,
                        CatalogChange& changed) -> pricing::Result<http::StoredResponse> {
                        auto h = LoadOfferingHistory(tx, offering_id, /*lock=*/true);
                        if (!h) {
                            return MakeError(ErrorCode::kNotFound,
                                             "no offering with id '" + offering_id + "'", "id");
                        }
                        if (h->retired_at_us) {
                            return MakeError(ErrorCode::kFailedPrecondition,
                                             "offering '" + offering_id + "' is already retired");
                        }
                        if (auto stale = CheckIfMatch(request, *h)) {
                            return *stale;
                        }
                        tx.exec_params("UPDATE prices SET valid_to = greatest(valid_from, " +
                                           Us(2) + ") WHERE offering_id = $1 AND valid_to IS NULL",
                                       offering_id, now_us);
                        tx.exec_params("UPDATE offerings SET retired_at = " + Us(2) +
                                           ", version = version + 1 WHERE id = $1",
                                       offering_id, now_us);
                        changed.offering_ids.push_back(offering_id);
                        return encode(AsWritten(tx, *LoadOfferingHistory(tx, offering_id, false)));
                    });
}

// ---------------------------------------------------------------------------------------
// Scenarios

template <typename T>
pricing::Result<T> PgStore::RunSimple(
    const std::function<pricing::Result<T>(pqxx::connection&)>& body) {
    auto lease = Checkout();
    if (!lease.ok()) {
        return lease.error();
    }
    try {
        auto out = body(lease.value()->conn());
        connected_ = true;
        return out;
    } catch (const std::exception& e) {
        if (!lease.value()->conn().is_open() ||
            dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
            SqlState(e).rfind("57", 0) == 0 || SqlState(e).rfind("08", 0) == 0) {
            lease.value()->Drop();
            MarkDown(e.what());
            return Unavailable("the database is unreachable; retry later");
        }
        log::Error("database call failed", {{"error", e.what()}, {"sqlstate", SqlState(e)}});
        return MakeError(ErrorCode::kInternal, "database call failed");
    }
}

pricing::Result<http::Scenario> PgStore::SaveScenario(const http::WriteRequest& request,
                                                      const http::Scenario& draft) {
    return RunSimple<http::Scenario>([&](pqxx::connection& conn)
                                         -> pricing::Result<http::Scenario> {
        pqxx::work tx(conn);
        if (!request.idempotency_key.empty()) {
            // The key's row is locked for the transaction, so two retries racing each other
            // save one scenario: the second waits, then finds the first's row.
            auto recorded = ClaimKey(tx, request);
            if (!recorded.ok()) {
                return recorded.error();
            }
            if (recorded.value()) {
                auto row = tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1",
                                          std::stoll(recorded.value()->body));
                if (row.empty()) {
                    return MakeError(ErrorCode::kNotFound,
                                     "the scenario saved with this Idempotency-Key has since been "
                                     "deleted",
                                     "Idempotency-Key");
                }
                http::Scenario replay = ScenarioFromRow(row[0]);
                replay.replayed = true;
                return replay;
            }
        }
        auto id = tx.exec_params(
                        "INSERT INTO scenarios (name, plan_kind, request, saved_result,"
                        " catalog_revision, created_by, catalog_version, tags, team) VALUES"
                        " ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, " +
                            TagsFrom(8) + ", $9) RETURNING id",
                        draft.name, draft.plan_kind, draft.request_json, draft.saved_result_json,
                        draft.catalog_revision, request.principal.key_id, draft.catalog_version,
                        TagsParam(draft.tags), request.principal.team)[0][0]
                      .as<std::int64_t>();
        // The answer recorded is the scenario's id: a replay answers the scenario as it is then.
        RecordAnswer(tx, request, http::StoredResponse{201, std::to_string(id), "", false});
        auto row = tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1", id);
        tx.commit();
        return ScenarioFromRow(row[0]);
    });
}

pricing::Result<std::vector<http::Scenario>> PgStore::ListScenarios(std::size_t limit,
                                                                    std::int64_t after_id) {
    auto page = FindScenarios({}, limit, after_id);
    if (!page.ok()) {
        return page.error();
    }
    return std::move(page.value().items);
}

pricing::Result<http::ScenarioPage> PgStore::FindScenarios(const http::ScenarioFilter& filter,
                                                           std::size_t limit,
                                                           std::int64_t after_id) {
    return RunSimple<http::ScenarioPage>(
        [&](pqxx::connection& conn) -> pricing::Result<http::ScenarioPage> {
            pqxx::read_transaction tx(conn);
            // An empty filter value matches every row; one snapshot for the page and its count.
            // The reader sees what it may read: what is not confidential, its team's, or (org)
            // everything; the count is of those too.
            const std::string where =
                " WHERE ($1 = '' OR s.plan_kind = $1) AND ($2 = '' OR $2 = ANY (s.tags))"
                " AND ($3 = '' OR k.name = $3) AND (NOT s.confidential OR $4 OR s.team = $5)";
            const bool reads_all = filter.reader && filter.reader->scope == http::KeyScope::kOrg;
            // No key: a team id no row can have (teams are slugs), so only open rows match.
            const std::string team = filter.reader ? filter.reader->team : std::string(" ");
            http::ScenarioPage page;
            page.total_count =
                tx.exec_params(
                      "SELECT count(*) FROM scenarios s LEFT JOIN api_keys k ON"
                      " k.id = s.created_by" +
                          where,
                      filter.plan_kind, filter.tag, filter.created_by, reads_all, team)[0][0]
                    .as<std::int64_t>();
            for (const auto& r :
                 tx.exec_params(std::string(kScenarioColumns) + where +
                                    " AND s.id > $6 ORDER BY s.id LIMIT $7",
                                filter.plan_kind, filter.tag, filter.created_by, reads_all, team,
                                after_id, static_cast<std::int64_t>(limit))) {
                page.items.push_back(ScenarioFromRow(r));
            }
            return page;
        });
}

pricing::Result<http::Scenario> PgStore::GetScenario(std::int64_t id) {
    return RunSimple<http::Scenario>(
        [&](pqxx::connection& conn) -> pricing::Result<http::Scenario> {
            pqxx::read_transaction tx(conn);
            auto rows = tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1", id);
            if (rows.empty()) {
                return MakeError(ErrorCode::kNotFound, "no scenario with id " + std::to_string(id),
                                 "id");
            }
            return ScenarioFromRow(rows[0]);
        });
}

namespace {

// The scenario `id` locked for a change by request.principal, or why it may not be changed.
pricing::Result<http::Scenario> LockScenarioForChange(pqxx::work& tx,
                                                      const http::WriteRequest& request,
                                                      std::int64_t id) {
    auto rows =
        tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1 FOR UPDATE OF s", id);
    if (rows.empty()) {
        return MakeError(ErrorCode::kNotFound, "no scenario with id " + std::to_string(id), "id");
    }
    http::Scenario s = ScenarioFromRow(rows[0]);
    const http::Principal& who = request.principal;
    // Another team's confidential scenario is not there for this key; one it may read is not
    // its to change (org keys change nothing).
    if (s.confidential && !http::ReadsTeam(who, s.team)) {
        return MakeError(ErrorCode::kNotFound, "no scenario with id " + std::to_string(id), "id");
    }
    if (who.team != s.team || who.scope == http::KeyScope::kOrg) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "scenario " + std::to_string(id) + " belongs to team '" + s.team +
                             "': only its team's keys may change it",
                         http::kOwnerField);
    }
    if (who.scope != http::KeyScope::kAdmin && s.created_by != who.name) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "scenario " + std::to_string(id) + " belongs to '" + s.created_by +
                             "': only its owner's keys or an admin key of its team may change it",
                         http::kOwnerField);
    }
    if (request.if_match && !IfMatchAccepts(*request.if_match, http::ScenarioEtag(s.version))) {
        return MakeError(
            ErrorCode::kFailedPrecondition,
            "If-Match does not match the scenario's current ETag " + http::ScenarioEtag(s.version) +
                "; it changed since you read it: read it again and reapply your change",
            http::kIfMatchField);
    }
    return s;
}

}  // namespace

pricing::Result<http::StoredResponse> PgStore::UpdateScenario(const http::WriteRequest& request,
                                                              std::int64_t id,
                                                              const http::ScenarioChange& change,
                                                              const ScenarioEncoder& encode) {
    return RunSimple<http::StoredResponse>(
        [&](pqxx::connection& conn) -> pricing::Result<http::StoredResponse> {
            pqxx::work tx(conn);
            return AnswerOnce<http::Scenario>(
                tx, request,
                [&]() -> pricing::Result<http::Scenario> {
                    auto locked = LockScenarioForChange(tx, request, id);
                    if (!locked.ok()) {
                        return locked.error();
                    }
                    const http::Scenario& s = locked.value();
                    tx.exec_params("UPDATE scenarios SET name = $2, tags = " + TagsFrom(3) +
                                       ", version = version + 1 WHERE id = $1",
                                   id, change.name.value_or(s.name),
                                   TagsParam(change.tags.value_or(s.tags)));
                    if (change.progress) {
                        tx.exec_params(
                            "UPDATE scenarios SET progress_tokens_done_b = $2, progress_as_of ="
                            " to_timestamp($3::double precision / 1000000) WHERE id = $1",
                            id, change.progress->tokens_done_b,
                            static_cast<double>(change.progress->as_of_us));
                    }
                    auto row =
                        tx.exec_params(std::string(kScenarioColumns) + " WHERE s.id = $1", id);
                    return ScenarioFromRow(row[0]);
                },
                encode);
        });
}

pricing::Result<http::StoredResponse> PgStore::DeleteScenario(const http::WriteRequest& request,
                                                              std::int64_t id) {
    return RunSimple<http::StoredResponse>(
        [&](pqxx::connection& conn) -> pricing::Result<http::StoredResponse> {
            pqxx::work tx(conn);
            return AnswerOnce<std::monostate>(
                tx, request,
                [&]() -> pricing::Result<std::monostate> {
                    auto locked = LockScenarioForChange(tx, request, id);
                    if (!locked.ok()) {
                        return locked.error();
                    }
                    tx.exec_params("DELETE FROM scenarios WHERE id = $1", id);
                    return std::monostate{};
                },
                [](const std::monostate&) { return http::DeletedAnswer(); });
        });
}

}  // namespace gpucost::storage
