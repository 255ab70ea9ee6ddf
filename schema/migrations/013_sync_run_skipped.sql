-- A provider `gpucost sync` was asked for but did not run, because its API key is not set (an
-- optional Secret left empty), is recorded as `skipped` with the reason, beside the imported
-- and failed runs: one provider's missing key no longer stops the others.
ALTER TABLE sync_runs DROP CONSTRAINT sync_runs_outcome_check;
ALTER TABLE sync_runs ADD CONSTRAINT sync_runs_outcome_check
    CHECK (outcome IN ('imported', 'failed', 'skipped'));
