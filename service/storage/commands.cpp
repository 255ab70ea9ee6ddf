#include "service/storage/commands.hpp"

#include <cstdio>
#include <functional>

#include "service/storage/api_keys.hpp"
#include "service/storage/migrations.hpp"
#include "service/storage/pg_connection.hpp"
#include "service/storage/seed.hpp"

namespace gpucost::storage {
namespace {

int WithConnection(const std::string& url, const std::function<int(pqxx::connection&)>& body) {
    std::unique_ptr<pqxx::connection> conn;
    try {
        conn = Connect(url);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gpucost: cannot connect to %s: %s\n", RedactUrl(url).c_str(),
                     e.what());
        return 3;
    }
    try {
        return body(*conn);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gpucost: database error: %s\n", e.what());
        return 1;
    }
}

// Other commands need the schema in place first.
bool SchemaReady(pqxx::connection& conn) {
    auto status = CheckSchema(conn);
    if (!status.ok()) {
        std::fprintf(stderr, "gpucost: %s\n", status.error().message.c_str());
        return false;
    }
    if (!status.value().missing.empty()) {
        std::fprintf(
            stderr,
            "gpucost: the database schema is not up to date; run `gpucost migrate` first\n");
        return false;
    }
    return true;
}

}  // namespace

int RunMigrate(const std::string& database_url) {
    return WithConnection(database_url, [](pqxx::connection& conn) {
        auto applied = Migrate(conn);
        if (!applied.ok()) {
            std::fprintf(stderr, "gpucost: %s\n", applied.error().message.c_str());
            return 1;
        }
        if (applied.value().empty()) {
            std::printf("schema up to date (version %d)\n", KnownMigrations().back().version);
        }
        for (int version : applied.value()) {
            std::printf("applied migration %03d\n", version);
        }
        return 0;
    });
}

int RunSeed(const std::string& database_url, const pricing::Catalog& shipped) {
    return WithConnection(database_url, [&](pqxx::connection& conn) {
        if (!SchemaReady(conn)) {
            return 1;
        }
        SeedReport r = Seed(conn, shipped);
        std::printf(
            "seed: %zu accelerators, %zu offerings, %zu prices inserted; %zu offerings "
            "already present (left unchanged)\n",
            r.accelerators_inserted, r.offerings_inserted, r.prices_inserted, r.offerings_skipped);
        return 0;
    });
}

namespace {

int CreateKeyCommand(pqxx::connection& conn, const std::string& scope, const std::string& name,
                     const std::string& price_book, const std::string& team) {
    auto issued = CreateApiKey(conn, scope, name, price_book, team);
    if (!issued.ok()) {
        std::fprintf(stderr, "gpucost: %s\n", issued.error().message.c_str());
        return 1;
    }
    std::fprintf(stderr,
                 "created %s key '%s' of team '%s' (id %lld, prefix %s%s%s); it is shown only "
                 "once:\n",
                 scope.c_str(), name.c_str(), team.c_str(),
                 static_cast<long long>(issued.value().id), issued.value().prefix.c_str(),
                 price_book.empty() ? "" : ", default price book ", price_book.c_str());
    std::printf("%s\n", issued.value().key.c_str());
    return 0;
}

// `apikey price-book PREFIX|ID BOOK|none`: the key's default book set, or cleared by "none".
int SetPriceBookCommand(pqxx::connection& conn, const std::string& which, const std::string& book) {
    const std::string value = book == "none" ? "" : book;
    auto set = SetKeyPriceBook(conn, which, value);
    if (!set.ok()) {
        std::fprintf(stderr, "gpucost: %s\n", set.error().message.c_str());
        return 1;
    }
    std::printf("%s: default price book %s\n", which.c_str(),
                value.empty() ? "none (list prices)" : value.c_str());
    return 0;
}

void ListKeysCommand(pqxx::connection& conn) {
    std::printf("%-6s %-14s %-6s %-16s %-21s %-21s %-20s %s\n", "id", "prefix", "scope", "team",
                "created_at", "revoked_at", "price_book", "name");
    for (const KeyInfo& k : ListApiKeys(conn)) {
        std::printf("%-6lld %-14s %-6s %-16s %-21s %-21s %-20s %s\n", static_cast<long long>(k.id),
                    k.prefix.c_str(), k.scope.c_str(), k.team.c_str(), k.created_at.c_str(),
                    k.revoked_at.empty() ? "-" : k.revoked_at.c_str(),
                    k.default_price_book.empty() ? "-" : k.default_price_book.c_str(),
                    k.name.c_str());
    }
}

}  // namespace

int RunApiKey(const std::string& database_url, const std::vector<std::string>& args,
              const std::string& scope, const std::string& name, const std::string& price_book,
              const std::string& team) {
    return WithConnection(database_url, [&](pqxx::connection& conn) {
        if (!SchemaReady(conn)) {
            return 1;
        }
        if (args.at(0) == "create") {
            return CreateKeyCommand(conn, scope, name, price_book, team);
        }
        if (args.at(0) == "price-book") {
            return SetPriceBookCommand(conn, args.at(1), args.at(2));
        }
        if (args.at(0) == "revoke") {
            auto revoked = RevokeApiKey(conn, args.at(1));
            if (!revoked.ok()) {
                std::fprintf(stderr, "gpucost: %s\n", revoked.error().message.c_str());
                return 1;
            }
            std::printf("revoked %s\n", args.at(1).c_str());
            return 0;
        }
        ListKeysCommand(conn);
        return 0;
    });
}

}  // namespace gpucost::storage
