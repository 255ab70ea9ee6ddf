#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "service/http/price_book_store.hpp"
#include "service/storage/pg_session.hpp"

namespace gpucost::storage {

// Stored price books on PostgreSQL (schema/migrations/003_price_books.sql): a row per book and
// a row per version written, none ever changed but the book's current version and deletion.
// Thread-safe (one connection, one call at a time: these routes write a few times a day).
class PgPriceBookStore final : public http::PriceBookStore {
public:
    explicit PgPriceBookStore(std::string database_url) : session_(std::move(database_url)) {}

    pricing::Result<http::StoredResponse> Create(const http::WriteRequest& request,
                                                 const http::StoredPriceBook& draft,
                                                 const BookEncoder& encode) override;
    pricing::Result<http::StoredPriceBook> Get(std::string_view id,
                                               std::optional<std::int64_t> version) override;
    pricing::Result<std::vector<http::StoredPriceBook>> List() override;
    pricing::Result<http::StoredResponse> Replace(const http::WriteRequest& request,
                                                  std::string_view id,
                                                  const http::StoredPriceBook& next,
                                                  const BookEncoder& encode) override;
    pricing::Result<http::StoredResponse> Delete(const http::WriteRequest& request,
                                                 std::string_view id) override;

private:
    PgSession session_;
};

}  // namespace gpucost::storage
