-- Saved scenarios get an owner's rules, tags, a version for If-Match, and the catalog version
-- their saved answer was computed on (issue 22). Forward-only: 001 is never edited.

-- The catalog version of the saved answer (its own `catalog_version`, "pg-r7" say); rows saved
-- before this migration take it from their answer, or name the revision they recorded.
ALTER TABLE scenarios ADD COLUMN catalog_version text;
UPDATE scenarios
   SET catalog_version = coalesce(saved_result ->> 'catalog_version', 'pg-r' || catalog_revision);
ALTER TABLE scenarios ALTER COLUMN catalog_version SET NOT NULL;
ALTER TABLE scenarios ADD CONSTRAINT scenarios_catalog_version_check
    CHECK (catalog_version <> '' AND length(catalog_version) <= 200);

-- Short labels, set at save and replaced by PATCH; at most 20 of 1-40 characters, no repeats
-- (the service checks each with its index; these keep the table honest).
ALTER TABLE scenarios ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
ALTER TABLE scenarios ADD CONSTRAINT scenarios_tags_check
    CHECK (cardinality(tags) <= 20 AND array_position(tags, NULL) IS NULL);
CREATE INDEX scenarios_tags_idx ON scenarios USING gin (tags);

-- Bumped by every change (PATCH); the ETag is derived from it.
ALTER TABLE scenarios ADD COLUMN version bigint NOT NULL DEFAULT 1;

-- The list filters: by plan and by owner, each paged by id.
CREATE INDEX scenarios_plan_kind_idx ON scenarios (plan_kind, id);
CREATE INDEX scenarios_created_by_idx ON scenarios (created_by, id);
