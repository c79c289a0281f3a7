-- pgwitness migration 3: what the stream (logical decoding, pgoutput) keeps
-- in the library schema (docs/stream.md). Applied by pgw_pq_install; by
-- hand (after migration_002.sql):
--   psql -v schema=pgwitness -f lib/pq/sql/migration_003.sql

-- The value columns of each table watched for the stream
-- (pgw_pq_stream_watch_table): the columns whose old/new values its write
-- sets carry. Publication membership itself lives in the catalog
-- (pg_publication_rel); a stream reads both when it connects. Keyed by the
-- table's OID: a table dropped and made again is a new table, and a stream
-- never reads the stale row (its OID is no longer published). The table's
-- name when it was watched (kept current by the DDL event trigger,
-- migration_005.sql) lets that event trigger publish a table made again
-- under the name of a dropped one.
CREATE TABLE :"schema".stream_tables (
    publication   name NOT NULL,
    relid         oid NOT NULL,
    value_columns text[] NOT NULL DEFAULT '{}',
    watched_at    timestamptz NOT NULL DEFAULT now(),
    schema_name   text,
    table_name    text,
    PRIMARY KEY (publication, relid)
);
COMMENT ON TABLE :"schema".stream_tables IS
    'pgwitness: value columns of the tables watched for the stream (pgw_pq_stream_watch_table)';

-- The permanent slots pgwitness streams made, so that pgw_pq_slots() can
-- tell them from others, and a stream can tell a slot that was dropped
-- from one that never existed (SLOT_LOST).
CREATE TABLE :"schema".slots (
    slot_name   name PRIMARY KEY,
    publication name NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE :"schema".slots IS
    'pgwitness: permanent replication slots made by pgwitness streams';
