-- 001: the writable catalog (accelerators, offerings, sources, prices with validity
-- intervals), API keys, idempotency keys and saved scenarios.
-- Forward-only: never edit an applied migration; add 002_*.sql instead.

-- One row; every catalog write bumps `revision` in its own transaction. The row lock
-- serialises writers, and replicas compare `revision` with their snapshot's.
CREATE TABLE catalog_state (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    revision   bigint NOT NULL DEFAULT 0 CHECK (revision >= 0),
    changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO catalog_state (singleton, revision) VALUES (true, 0);

CREATE TABLE accelerators (
    id                    text PRIMARY KEY CHECK (id ~ '^[a-z0-9._-]{1,200}$'),
    name                  text NOT NULL,
    vendor                text NOT NULL,
    form_factor           text NOT NULL DEFAULT '',
    launch_year           integer NOT NULL CHECK (launch_year >= 1990),
    fp32_tflops           numeric CHECK (fp32_tflops >= 0),
    tf32_tflops           numeric CHECK (tf32_tflops >= 0),
    fp16_tflops           numeric CHECK (fp16_tflops >= 0),
    bf16_tflops           numeric CHECK (bf16_tflops >= 0),
    fp8_tflops            numeric CHECK (fp8_tflops >= 0),
    int8_tops             numeric CHECK (int8_tops >= 0),
    fp4_tflops            numeric CHECK (fp4_tflops >= 0),
    memory_gb             numeric NOT NULL CHECK (memory_gb > 0),
    memory_type           text NOT NULL DEFAULT '',
    memory_gb_per_s       numeric NOT NULL CHECK (memory_gb_per_s > 0),
    cache_mb              numeric CHECK (cache_mb >= 0),
    scale_up_interconnect text NOT NULL DEFAULT '',
    scale_up_gb_per_s     numeric CHECK (scale_up_gb_per_s >= 0),
    host_pcie_gen         text NOT NULL DEFAULT '',
    tdp_w                 numeric CHECK (tdp_w >= 0),
    purchase_price_usd    numeric CHECK (purchase_price_usd >= 0),
    purchase_price_as_of  text NOT NULL DEFAULT '',
    purchase_price_source text NOT NULL DEFAULT '',
    spec_source           text NOT NULL CHECK (spec_source <> ''),
    confidence            text NOT NULL DEFAULT '',
    notes                 text NOT NULL DEFAULT ''
);

-- Where a price came from ("AWS PRICE API", a contract number, ...).
CREATE TABLE sources (
    id         bigserial PRIMARY KEY,
    name       text NOT NULL UNIQUE CHECK (name <> '' AND length(name) <= 200),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE offerings (
    id                       text PRIMARY KEY CHECK (id ~ '^[a-z0-9._-]{1,200}$'),
    provider                 text NOT NULL CHECK (provider ~ '^[a-z0-9._-]{1,64}$'),
    instance_type            text NOT NULL CHECK (instance_type <> ''),
    accelerator_id           text NOT NULL REFERENCES accelerators (id),
    accelerator_count        integer NOT NULL CHECK (accelerator_count BETWEEN 1 AND 100000),
    accelerator_memory_gb    numeric CHECK (accelerator_memory_gb >= 0),
    vcpus                    numeric CHECK (vcpus >= 0),
    ram_gib                  numeric CHECK (ram_gib >= 0),
    interconnect             text NOT NULL DEFAULT '',
    scale_out_gbit_per_s     numeric CHECK (scale_out_gbit_per_s >= 0),
    region                   text NOT NULL CHECK (region <> ''),
    price_type               text NOT NULL
        CHECK (price_type IN ('on_demand', 'spot', 'commit_1y', 'commit_3y', 'capacity_block')),
    spot_interruption_bucket text
        CHECK (spot_interruption_bucket IS NULL OR price_type = 'spot'),
    notes                    text NOT NULL DEFAULT '',
    -- Bumped by every write to the offering or its price; the ETag is derived from it.
    version                  bigint NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at               timestamptz NOT NULL DEFAULT now(),
    retired_at               timestamptz
);

-- Every price observation with the interval during which it was the served price:
-- [valid_from, valid_to). valid_to IS NULL marks the current price; an empty interval
-- (valid_from = valid_to) is an observation that was recorded but never served (for
-- example an unverified seed row older than a verified one).
CREATE TABLE prices (
    id              bigserial PRIMARY KEY,
    offering_id     text NOT NULL REFERENCES offerings (id),
    usd_per_hour    numeric(18, 6) NOT NULL CHECK (usd_per_hour >= 0),
    as_of           date NOT NULL,
    as_of_estimated boolean NOT NULL DEFAULT false,
    source_id       bigint NOT NULL REFERENCES sources (id),
    verified        boolean NOT NULL DEFAULT true,
    notes           text NOT NULL DEFAULT '',
    valid_from      timestamptz NOT NULL,
    valid_to        timestamptz CHECK (valid_to IS NULL OR valid_to >= valid_from),
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    recorded_by     bigint  -- api_keys.id of the writer; NULL for seed rows
);
-- One current price per offering.
CREATE UNIQUE INDEX prices_one_current ON prices (offering_id) WHERE valid_to IS NULL;
CREATE INDEX prices_by_offering ON prices (offering_id, valid_from);

CREATE TABLE api_keys (
    id           bigserial PRIMARY KEY,
    -- Non-secret identifier embedded in the key ("gpc_<prefix>_<secret>").
    prefix       text NOT NULL UNIQUE CHECK (prefix ~ '^[0-9a-f]{12}$'),
    salt         bytea NOT NULL CHECK (length(salt) = 16),
    key_hash     bytea NOT NULL CHECK (length(key_hash) = 32),  -- SHA-256(salt || key)
    scope        text NOT NULL CHECK (scope IN ('admin', 'read')),
    name         text NOT NULL CHECK (name <> '' AND length(name) <= 200),
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);
ALTER TABLE prices ADD CONSTRAINT prices_recorded_by_fk
    FOREIGN KEY (recorded_by) REFERENCES api_keys (id);

-- A retried write with the same key (per API key) replays the stored answer.
CREATE TABLE idempotency_keys (
    api_key_id    bigint NOT NULL REFERENCES api_keys (id),
    key           text NOT NULL CHECK (length(key) BETWEEN 1 AND 200),
    request_hash  text NOT NULL,
    status        integer NOT NULL CHECK (status BETWEEN 200 AND 599),
    response_body text NOT NULL,
    etag          text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (api_key_id, key)
);

-- A named plan request, with the answer it had when it was saved.
CREATE TABLE scenarios (
    id               bigserial PRIMARY KEY,
    name             text NOT NULL CHECK (name <> '' AND length(name) <= 200),
    plan_kind        text NOT NULL CHECK (plan_kind ~ '^[a-z0-9_-]{1,64}$'),
    request          jsonb NOT NULL,
    saved_result     jsonb NOT NULL,
    catalog_revision bigint NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    created_by       bigint REFERENCES api_keys (id)
);
