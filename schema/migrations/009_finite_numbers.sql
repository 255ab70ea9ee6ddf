-- Nothing non-finite or impossible is stored (docs/database.md "What the schema refuses"):
-- every floating or numeric column refuses NaN and the infinities. NaN >= 0 is true in
-- PostgreSQL (NaN sorts above every number), so each check also bounds its column below
-- 'Infinity', which NaN is not below. Charges keep the bounds POST /v1/actuals states
-- (docs/billing.md "What an export must hold"). Forward-only: 001-008 are never edited.

-- Earlier versions let a NaN price in through `gpucost import` (the old CHECK (>= 0) passed
-- it). Such an observation was never a price: it is removed, and where it was current, the
-- observation it had closed is served again; the revision moves so every replica reloads.
CREATE TEMP TABLE nan_prices ON COMMIT DROP AS
    SELECT id, offering_id, valid_from, valid_to FROM prices WHERE usd_per_hour = 'NaN';
DELETE FROM prices WHERE id IN (SELECT id FROM nan_prices);
UPDATE prices SET valid_to = NULL
 WHERE id IN (SELECT DISTINCT ON (n.offering_id) p.id
                FROM nan_prices n
                JOIN prices p ON p.offering_id = n.offering_id AND p.valid_to = n.valid_from
                             AND p.valid_to > p.valid_from
               WHERE n.valid_to IS NULL
               ORDER BY n.offering_id, p.id DESC);
UPDATE offerings SET version = version + 1
 WHERE id IN (SELECT offering_id FROM nan_prices);
UPDATE catalog_state SET revision = revision + 1, changed_at = now()
 WHERE EXISTS (SELECT 1 FROM nan_prices);

-- And NaN, infinite or impossible charges through POST /v1/actuals: they were never spend.
DELETE FROM actual_charges
 WHERE NOT (accelerator_hours >= 0 AND accelerator_hours < 'Infinity')
    OR NOT (billed_cost BETWEEN -1e9 AND 1e9)
    OR NOT (effective_cost BETWEEN -1e9 AND 1e9)
    OR NOT (list_cost BETWEEN -1e9 AND 1e9)
    OR month !~ '^20[0-9]{2}-(0[1-9]|1[0-2])$';

ALTER TABLE prices ADD CONSTRAINT prices_usd_per_hour_finite
    CHECK (usd_per_hour >= 0 AND usd_per_hour < 'Infinity');

ALTER TABLE offerings
    ADD CONSTRAINT offerings_accelerator_memory_gb_finite
        CHECK (accelerator_memory_gb >= 0 AND accelerator_memory_gb < 'Infinity'),
    ADD CONSTRAINT offerings_vcpus_finite CHECK (vcpus >= 0 AND vcpus < 'Infinity'),
    ADD CONSTRAINT offerings_ram_gib_finite CHECK (ram_gib >= 0 AND ram_gib < 'Infinity'),
    ADD CONSTRAINT offerings_scale_out_gbit_per_s_finite
        CHECK (scale_out_gbit_per_s >= 0 AND scale_out_gbit_per_s < 'Infinity');

ALTER TABLE accelerators
    ADD CONSTRAINT accelerators_fp32_tflops_finite
        CHECK (fp32_tflops >= 0 AND fp32_tflops < 'Infinity'),
    ADD CONSTRAINT accelerators_tf32_tflops_finite
        CHECK (tf32_tflops >= 0 AND tf32_tflops < 'Infinity'),
    ADD CONSTRAINT accelerators_fp16_tflops_finite
        CHECK (fp16_tflops >= 0 AND fp16_tflops < 'Infinity'),
    ADD CONSTRAINT accelerators_bf16_tflops_finite
        CHECK (bf16_tflops >= 0 AND bf16_tflops < 'Infinity'),
    ADD CONSTRAINT accelerators_fp8_tflops_finite
        CHECK (fp8_tflops >= 0 AND fp8_tflops < 'Infinity'),
    ADD CONSTRAINT accelerators_int8_tops_finite CHECK (int8_tops >= 0 AND int8_tops < 'Infinity'),
    ADD CONSTRAINT accelerators_fp4_tflops_finite
        CHECK (fp4_tflops >= 0 AND fp4_tflops < 'Infinity'),
    ADD CONSTRAINT accelerators_memory_gb_finite CHECK (memory_gb > 0 AND memory_gb < 'Infinity'),
    ADD CONSTRAINT accelerators_memory_gb_per_s_finite
        CHECK (memory_gb_per_s > 0 AND memory_gb_per_s < 'Infinity'),
    ADD CONSTRAINT accelerators_cache_mb_finite CHECK (cache_mb >= 0 AND cache_mb < 'Infinity'),
    ADD CONSTRAINT accelerators_scale_up_gb_per_s_finite
        CHECK (scale_up_gb_per_s >= 0 AND scale_up_gb_per_s < 'Infinity'),
    ADD CONSTRAINT accelerators_tdp_w_finite CHECK (tdp_w >= 0 AND tdp_w < 'Infinity'),
    ADD CONSTRAINT accelerators_purchase_price_usd_finite
        CHECK (purchase_price_usd >= 0 AND purchase_price_usd < 'Infinity');

ALTER TABLE actual_charges
    ADD CONSTRAINT actual_charges_accelerator_hours_finite
        CHECK (accelerator_hours >= 0 AND accelerator_hours < 'Infinity'),
    ADD CONSTRAINT actual_charges_billed_cost_bounded CHECK (billed_cost BETWEEN -1e9 AND 1e9),
    ADD CONSTRAINT actual_charges_effective_cost_bounded
        CHECK (effective_cost BETWEEN -1e9 AND 1e9),
    ADD CONSTRAINT actual_charges_list_cost_bounded CHECK (list_cost BETWEEN -1e9 AND 1e9),
    -- A real month of the years 2000-2099 (the window of ChargePeriodStart).
    ADD CONSTRAINT actual_charges_month_real CHECK (month ~ '^20[0-9]{2}-(0[1-9]|1[0-2])$');

ALTER TABLE scenarios ADD CONSTRAINT scenarios_progress_tokens_finite
    CHECK (progress_tokens_done_b < 'Infinity');
