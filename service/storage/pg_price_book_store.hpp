#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "service/ports/price_book_store.hpp"
#include "service/storage/pg_session.hpp"

namespace gpucost::storage {

// Stored price books on PostgreSQL (schema/migrations/003_price_books.sql): a row per book and
// a row per version written, none ever changed but the book's current version and deletion.
// Thread-safe (one connection, one call at a time: these routes write a few times a day).
class PgPriceBookStore final : public ports::PriceBookStore {
public:
    explicit PgPriceBookStore(std::string database_url) : session_(std::move(database_url)) {}

    pricing::Result<ports::StoredResponse> Create(const ports::WriteRequest& request,
                                                  const ports::StoredPriceBook& draft,
                                                  const BookEncoder& encode) override;
    pricing::Result<ports::StoredPriceBook> Get(std::string_view id,
                                                std::optional<std::int64_t> version) override;
    pricing::Result<std::vector<ports::StoredPriceBook>> List() override;
    pricing::Result<ports::StoredResponse> Replace(const ports::WriteRequest& request,
                                                   std::string_view id,
                                                   const ports::StoredPriceBook& next,
                                                   const BookEncoder& encode) override;
    pricing::Result<ports::StoredResponse> Delete(const ports::WriteRequest& request,
                                                  std::string_view id) override;

private:
    PgSession session_;
};

}  // namespace gpucost::storage
