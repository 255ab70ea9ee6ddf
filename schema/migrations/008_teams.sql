-- Teams (docs/database.md, "Teams and who reads what"): every key belongs to a team, and price
-- books, saved scenarios and actuals imports are owned by one. A team reads and writes its own;
-- an `org` key (finance) reads every team's and writes nothing. Existing keys and rows go to the
-- `default` team, so a database used by one team answers as before. Forward-only: 001-007 are
-- never edited.

CREATE TABLE teams (
    id         text PRIMARY KEY CHECK (id ~ '^[a-z0-9._-]{1,64}$'),
    name       text NOT NULL CHECK (name <> '' AND length(name) <= 200),
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO teams (id, name) VALUES ('default', 'default');

-- A key's team; `gpucost apikey create` without --team issues keys of the default team.
ALTER TABLE api_keys ADD COLUMN team text NOT NULL DEFAULT 'default' REFERENCES teams (id);
-- The organisation scope: reads every team's books, scenarios and actual spend, writes nothing.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check
    CHECK (scope IN ('admin', 'read', 'org'));

-- The owners. Existing rows take the default team; new rows name their writer's team (no
-- default: a write that forgot it fails instead of landing in the default team).
ALTER TABLE price_books ADD COLUMN team text NOT NULL DEFAULT 'default' REFERENCES teams (id);
ALTER TABLE price_books ALTER COLUMN team DROP DEFAULT;
ALTER TABLE scenarios ADD COLUMN team text NOT NULL DEFAULT 'default' REFERENCES teams (id);
ALTER TABLE scenarios ALTER COLUMN team DROP DEFAULT;
ALTER TABLE actuals_imports ADD COLUMN team text NOT NULL DEFAULT 'default' REFERENCES teams (id);
ALTER TABLE actuals_imports ALTER COLUMN team DROP DEFAULT;

-- A saved scenario is confidential when its request carries a price book (a stored book by id,
-- a key's default book written into it at save, or an inline book of negotiated rules) or
-- `calibration` (other scenarios' billed accelerator-hours): only its team and org keys read,
-- list, evaluate it or read its actual spend. Derived here, once, from the saved request.
ALTER TABLE scenarios ADD COLUMN confidential boolean GENERATED ALWAYS AS (
    coalesce(jsonb_typeof(request -> 'price_book'), 'null') <> 'null' OR request ? 'calibration'
) STORED;
CREATE INDEX scenarios_team_idx ON scenarios (team, id);

-- Books shared with other teams: their keys may plan with the book (name it, or have it as a
-- key's default book) but not read its rules or versions. Replaced by the owner's PUT.
CREATE TABLE price_book_shares (
    book_id text NOT NULL REFERENCES price_books (id),
    team    text NOT NULL REFERENCES teams (id),
    PRIMARY KEY (book_id, team)
);

-- A charge is its importing team's: an export row is stored once per team (another team that
-- imported the same row first does not keep it from this team's plan vs actual), and deleting
-- an import (DELETE /v1/actuals/imports/{id}) removes the charges it first stored.
ALTER TABLE actual_charges ADD COLUMN team text NOT NULL DEFAULT 'default' REFERENCES teams (id);
ALTER TABLE actual_charges ALTER COLUMN team DROP DEFAULT;
ALTER TABLE actual_charges DROP CONSTRAINT actual_charges_pkey;
ALTER TABLE actual_charges ADD PRIMARY KEY (team, row_id);
CREATE INDEX actual_charges_import_idx ON actual_charges (import_id);
CREATE INDEX actuals_imports_team_idx ON actuals_imports (team, id);
