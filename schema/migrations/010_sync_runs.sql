-- Each `gpucost sync` run of one provider, recorded whether it changed the catalog or not: when
-- it ran, which files or URLs it read (API keys left out), whether it was imported, why not,
-- and what changed: offerings added, prices changed (each with the old and new hourly price)
-- or confirmed unchanged. A sync retires no offering (an offering no longer listed keeps its
-- last price and turns stale at its bound), so none is recorded as retired. Never updated.
CREATE TABLE sync_runs (
    id               bigserial PRIMARY KEY,
    started_at       timestamptz NOT NULL,
    finished_at      timestamptz NOT NULL,
    provider         text NOT NULL,
    sources          text[] NOT NULL,
    outcome          text NOT NULL CHECK (outcome IN ('imported', 'failed')),
    message          text NOT NULL DEFAULT '',
    offerings_added  integer NOT NULL DEFAULT 0 CHECK (offerings_added >= 0),
    prices_changed   integer NOT NULL DEFAULT 0 CHECK (prices_changed >= 0),
    prices_unchanged integer NOT NULL DEFAULT 0 CHECK (prices_unchanged >= 0),
    -- [{"offering_id", "old_usd_per_hour", "new_usd_per_hour"}], one per changed price
    price_changes    jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(price_changes) = 'array')
);
CREATE INDEX sync_runs_by_provider ON sync_runs (provider, id DESC);
