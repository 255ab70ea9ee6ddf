-- A team key's default price book (issue 25, docs/database.md "Stored price books"): a plan
-- request made with the key that does not name a `price_book` is priced with this book's
-- latest version. Forward-only: 001-004 are never edited.

-- NULL: the key plans at list prices. The reference keeps the id a real book's; a book that
-- is the default of a live key is not deleted (DELETE /v1/price-books/{id} answers 409 naming
-- the keys), and `gpucost apikey price-book` refuses a deleted book.
ALTER TABLE api_keys ADD COLUMN default_price_book text REFERENCES price_books (id);

CREATE INDEX api_keys_default_price_book ON api_keys (default_price_book)
    WHERE default_price_book IS NOT NULL;
