-- Stored price books (issue 25, docs/billing.md): negotiated prices as named, versioned sets
-- of rules that a plan names by id ("price_book": "acme-2026"). Forward-only: 001 and 002 are
-- never edited.

-- One row per book: its id (a slug, as offering ids are), the version plans get, and when it
-- was deleted (a deleted book answers 404 and its id is not reused; its versions stay).
CREATE TABLE price_books (
    id              text PRIMARY KEY CHECK (id ~ '^[a-z0-9._-]{1,200}$'),
    current_version integer NOT NULL DEFAULT 1 CHECK (current_version >= 1),
    created_at      timestamptz NOT NULL DEFAULT now(),
    deleted_at      timestamptz
);

-- Every version ever written, kept like prices: PUT adds one, nothing is changed or removed,
-- so an answer that echoes (id, version) can always be traced to the rules it used.
CREATE TABLE price_book_versions (
    book_id    text NOT NULL REFERENCES price_books (id),
    version    integer NOT NULL CHECK (version >= 1),
    name       text NOT NULL CHECK (name <> '' AND length(name) <= 200),
    -- The rules as written (validated by the service: docs/billing.md, "A price book").
    rules      jsonb NOT NULL CHECK (jsonb_typeof(rules) = 'array'),
    written_at timestamptz NOT NULL DEFAULT now(),
    written_by bigint REFERENCES api_keys (id),
    PRIMARY KEY (book_id, version)
);
