// The sync run logs (service/ports/sync_run_log.hpp): the in-memory twin and the catalog
// directory's sync-runs.jsonl answer alike: runs numbered in the order recorded, read back newest
// first, each with what it changed.
#include "service/sync/sync_runs.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "service/ports/memory/memory_sync_run_log.hpp"

namespace gpucost::sync {
namespace {

ports::SyncRun Run(const std::string& provider, const std::string& outcome) {
    ports::SyncRun run;
    run.started_at = "2026-12-06T06:00:00.000000Z";
    run.finished_at = "2026-12-06T06:00:02.500000Z";
    run.provider = provider;
    run.sources = {"https://api.runpod.io/graphql"};
    run.outcome = outcome;
    if (outcome == ports::kSyncImported) {
        run.prices_changed = 1;
        run.price_changes = {{"runpod-h100-sxm-secure-global-on-demand", 3.99, 2.99}};
    } else {
        run.message = "HTTP status 503 (4 attempts)";
    }
    return run;
}

void CheckContract(ports::SyncRunLog& log) {
    REQUIRE(log.Record(Run("runpod", ports::kSyncImported)).ok());
    REQUIRE(log.Record(Run("vastai", ports::kSyncFailed)).ok());
    auto latest = log.Latest(5);
    REQUIRE(latest.ok());
    REQUIRE(latest.value().size() == 2);
    CHECK(latest.value()[0].id == 2);
    CHECK(latest.value()[0].message == "HTTP status 503 (4 attempts)");
    const ports::SyncRun& runpod = latest.value()[1];
    CHECK(runpod.id == 1);
    CHECK(runpod.sources == std::vector<std::string>{"https://api.runpod.io/graphql"});
    REQUIRE(runpod.price_changes.size() == 1);
    CHECK(runpod.price_changes[0].old_usd_per_hour == 3.99);
    CHECK(runpod.price_changes[0].new_usd_per_hour == 2.99);
    CHECK(log.Latest(1).value().size() == 1);
}

TEST_CASE("sync run logs: the in-memory twin and sync-runs.jsonl keep the same runs") {
    ports::MemorySyncRunLog memory;
    CheckContract(memory);
    const auto path = std::filesystem::temp_directory_path() /
                      ("gpucost-sync-runs-test-" + std::to_string(::getpid()) + ".jsonl");
    std::filesystem::remove(path);
    FileSyncRunLog file(path.string());
    CheckContract(file);
    std::filesystem::remove(path);
}

TEST_CASE("a run as --history prints it: the change in percent of the old price") {
    const auto doc = SyncRunJson(Run("runpod", ports::kSyncImported));
    CHECK(doc["price_changes"][0]["change_percent"] == -25.06);
    CHECK(SyncRunFromJson(doc).price_changes[0].offering_id ==
          "runpod-h100-sxm-secure-global-on-demand");
}

TEST_CASE("each provider's sync state: its latest run and its latest imported run") {
    ports::MemorySyncRunLog log;
    auto later = [](ports::SyncRun run, const char* at) {
        run.finished_at = at;
        return run;
    };
    REQUIRE(log.Record(Run("runpod", ports::kSyncImported)).ok());
    REQUIRE(log.Record(Run("vastai", ports::kSyncFailed)).ok());
    REQUIRE(
        log.Record(later(Run("runpod", ports::kSyncFailed), "2026-12-06T12:00:00.000000Z")).ok());
    auto states = log.ProviderStates();
    REQUIRE(states.ok());
    REQUIRE(states.value().size() == 2);
    const ports::ProviderSyncState& runpod = states.value()[0];
    CHECK(runpod.provider == "runpod");
    CHECK(runpod.last_outcome == ports::kSyncFailed);
    CHECK(runpod.last_run_at == "2026-12-06T12:00:00.000000Z");
    CHECK(runpod.last_imported_at == "2026-12-06T06:00:02.500000Z");
    CHECK(states.value()[1].provider == "vastai");
    CHECK(states.value()[1].last_imported_at.empty());
}

TEST_CASE("the sync states /metrics and /readyz show are read at most once per max age") {
    auto owned = std::make_unique<ports::MemorySyncRunLog>();
    ports::MemorySyncRunLog& log = *owned;
    REQUIRE(log.Record(Run("runpod", ports::kSyncImported)).ok());
    SyncStateCache hourly(std::move(owned), std::chrono::hours(1));
    REQUIRE(hourly.Get().size() == 1);
    REQUIRE(log.Record(Run("vastai", ports::kSyncFailed)).ok());
    CHECK(hourly.Get().size() == 1);  // within the hour: the states read before

    auto fresh_log = std::make_unique<ports::MemorySyncRunLog>();
    ports::MemorySyncRunLog& fresh = *fresh_log;
    SyncStateCache always(std::move(fresh_log), std::chrono::seconds(0));
    CHECK(always.Get().empty());
    REQUIRE(fresh.Record(Run("vastai", ports::kSyncFailed)).ok());
    CHECK(always.Get().size() == 1);
}

}  // namespace
}  // namespace gpucost::sync
