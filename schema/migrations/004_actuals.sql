-- Actual spend (issue 25, docs/billing.md): accelerator charges read from the clouds' FOCUS
-- exports by POST /v1/actuals, compared with a saved scenario's planned monthly spend by
-- GET /v1/scenarios/{id}/actuals. Forward-only: 001-003 are never edited.

-- One row per POST /v1/actuals: who sent it, under which tag key, and what was read.
CREATE TABLE actuals_imports (
    id          bigserial PRIMARY KEY,
    imported_at timestamptz NOT NULL DEFAULT now(),
    imported_by bigint REFERENCES api_keys (id),
    tag_key     text NOT NULL,
    rows_read   integer NOT NULL CHECK (rows_read >= 0),
    kept        integer NOT NULL CHECK (kept >= 0),
    added       integer NOT NULL CHECK (added >= 0)
);

-- One row per kept charge (an accelerator usage row of an export), as FOCUS gives it. row_id
-- is a hash of the export row's text (and its repeat number), so importing the same export
-- again adds nothing; the first import that stored a row is kept.
CREATE TABLE actual_charges (
    row_id              text PRIMARY KEY,
    import_id           bigint NOT NULL REFERENCES actuals_imports (id),
    provider            text NOT NULL,            -- aws | azure | gcp
    month               text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),  -- of ChargePeriodStart
    charge_period_start text NOT NULL,            -- FOCUS ChargePeriodStart as written
    billing_currency    text NOT NULL,            -- FOCUS BillingCurrency
    sku                 text NOT NULL,            -- instance type, VM size or GCP SKU description
    offering_id         text,                     -- the catalog's offering; null when none
    accelerator         text NOT NULL,
    region              text NOT NULL,
    pricing_category    text NOT NULL,            -- FOCUS PricingCategory
    accelerator_hours   double precision NOT NULL,
    billed_cost         double precision NOT NULL,  -- FOCUS BilledCost
    effective_cost      double precision NOT NULL,  -- FOCUS EffectiveCost
    list_cost           double precision NOT NULL,  -- FOCUS ListCost
    -- The attribution tag's value (FOCUS Tags, key actuals_imports.tag_key): a saved
    -- scenario's id when the resources were tagged with it; null when untagged.
    tag_value           text
);

CREATE INDEX actual_charges_tag_month ON actual_charges (tag_value, billing_currency, month);
