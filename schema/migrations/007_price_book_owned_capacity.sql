-- Owned capacity in stored price books (issue 25, docs/billing.md "Owned capacity"): the
-- reservations and committed capacity a book lists beside its rules, as written (validated by
-- the service). Existing versions own nothing. Forward-only: 001-006 are never edited.
ALTER TABLE price_book_versions
    ADD COLUMN owned_capacity jsonb NOT NULL DEFAULT '[]'
        CHECK (jsonb_typeof(owned_capacity) = 'array');
