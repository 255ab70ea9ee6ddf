#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "service/ports/memory/recorded_answers.hpp"
#include "service/ports/price_book_store.hpp"

namespace gpucost::ports {

// The in-memory twin of storage::PgPriceBookStore: the same answers for the same calls (the
// store contract suite runs both), nothing kept past the process. Thread-safe.
class MemoryPriceBookStore final : public PriceBookStore {
public:
    explicit MemoryPriceBookStore(TimestampUs now_us = 0) : now_us_(now_us) {}

    // A team that books may be shared with (the database's teams table).
    void AddTeam(const std::string& team);
    // A live key that plans with `book` by default: the book is not deleted under it.
    void AddKeyDefault(const Principal& key, const std::string& book);

    pricing::Result<StoredResponse> Create(const WriteRequest& request,
                                           const StoredPriceBook& draft,
                                           const BookEncoder& encode) override;
    pricing::Result<StoredPriceBook> Get(std::string_view id,
                                         std::optional<std::int64_t> version) override;
    pricing::Result<std::vector<StoredPriceBook>> List() override;
    pricing::Result<StoredResponse> Replace(const WriteRequest& request, std::string_view id,
                                            const StoredPriceBook& next,
                                            const BookEncoder& encode) override;
    pricing::Result<StoredResponse> Delete(const WriteRequest& request,
                                           std::string_view id) override;

private:
    struct Book {
        std::string team;
        bool deleted = false;
        TimestampUs created_at_us = 0;
        std::vector<std::string> shared_with;   // sorted
        std::vector<StoredPriceBook> versions;  // version i + 1 at i
    };
    // Each under mutex_.
    StoredPriceBook Shown(const Book& book, std::size_t index) const;
    pricing::Result<Book*> ForChange(const WriteRequest& request, std::string_view id);
    pricing::Status Share(Book& book, const std::vector<std::string>& teams) const;
    void AddVersion(Book& book, const WriteRequest& request, const StoredPriceBook& draft) const;

    mutable std::mutex mutex_;
    std::map<std::string, Book, std::less<>> books_;
    std::set<std::string, std::less<>> teams_{kDefaultTeam};
    std::multimap<std::string, std::string, std::less<>> key_defaults_;  // book -> key label
    RecordedAnswers answers_;
    TimestampUs now_us_ = 0;
};

}  // namespace gpucost::ports
