-- pgwitness install preamble: the schema and its migration ledger.
-- pgw_pq_install runs this, then every migration_NNN.sql not yet recorded,
-- in one transaction under an advisory lock (so two sessions installing at
-- once take turns). By hand:
--   psql -v schema=pgwitness -f lib/pq/sql/install.sql
CREATE SCHEMA IF NOT EXISTS :"schema";

CREATE TABLE IF NOT EXISTS :"schema".schema_version (
    version     integer PRIMARY KEY,
    description text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE :"schema".schema_version IS
    'pgwitness migrations applied to this schema (pgw_pq_install)';
