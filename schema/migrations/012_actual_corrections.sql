-- Corrections of earlier periods' usage (FOCUS ChargeClass Correction) are stored as charges of
-- the month they correct, so actual spend reconciles with the invoice: a correction that takes
-- back instance-hours carries negative accelerator-hours, as it carries negative costs. The
-- hours keep the same bounds as the costs (-1e9 to 1e9), still refusing NaN and infinities.
ALTER TABLE actual_charges DROP CONSTRAINT actual_charges_accelerator_hours_finite;
ALTER TABLE actual_charges
    ADD CONSTRAINT actual_charges_accelerator_hours_bounded
        CHECK (accelerator_hours BETWEEN -1e9 AND 1e9);
