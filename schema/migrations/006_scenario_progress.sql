-- A training scenario's progress (issue 25, docs/billing.md "Progress"): the tokens trained so
-- far and when that was true, recorded by PUT /v1/scenarios/{id}/progress and set against the
-- accelerator-hours billed for the scenario (the implied speed). Both or neither.
ALTER TABLE scenarios ADD COLUMN progress_tokens_done_b double precision;
ALTER TABLE scenarios ADD COLUMN progress_as_of timestamptz;
ALTER TABLE scenarios ADD CONSTRAINT scenarios_progress_check
    CHECK ((progress_tokens_done_b IS NULL) = (progress_as_of IS NULL)
           AND (progress_tokens_done_b IS NULL OR progress_tokens_done_b >= 0));
