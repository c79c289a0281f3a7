-- pgwitness migration 6: running streams follow a watched table's new name
-- and primary key; watched tables made again without their watch are gaps.
-- Applied by pgw_pq_install after migrations 4 and 5 again (their functions
-- changed: below_plan(), on_ddl_event(), announce_ddl(), ddl_targets(),
-- sync_watch(), adopt_stream(), rewatch(), and the new stream_published(),
-- stream_shape(), sync_stream(), remembered_gaps(); watch_gaps() moved to
-- migration 5). By hand (after migration_005.sql):
--   psql -v schema=pgwitness -f lib/pq/sql/migration_004.sql
--   psql -v schema=pgwitness -f lib/pq/sql/migration_005.sql
--   psql -v schema=pgwitness -f lib/pq/sql/migration_006.sql
--
-- stream_tables keeps what a running stream read of each watched table at
-- connect (stream_shape(): its primary key and whether its old tuples are
-- full rows, beside its name), so that sync_stream(), which the DDL event
-- trigger and announce_ddl() call, can tell when that went stale: a RENAME
-- or a new primary key then makes running streams read their
-- configuration again ("pgwitness.config").
ALTER TABLE :"schema".stream_tables
    ADD COLUMN IF NOT EXISTS key_columns text[],
    ADD COLUMN IF NOT EXISTS full_rows boolean;
COMMENT ON COLUMN :"schema".stream_tables.key_columns IS
    'pgwitness: the primary key a stream reads for the table (stream_shape(); NULL: unknown)';
COMMENT ON COLUMN :"schema".stream_tables.full_rows IS
    'pgwitness: whether its old tuples are full rows (stream_shape(); NULL: unknown)';
-- The rows of watches made before this version: as the catalog says now
-- (what a stream connecting now reads; nothing is sent).
UPDATE :"schema".stream_tables st
   SET (schema_name, table_name, key_columns, full_rows) =
       (SELECT sh.schema_name, sh.table_name, sh.key_columns, sh.full_rows
          FROM :"schema".stream_shape(st.relid) sh)
 WHERE st.key_columns IS NULL
   AND EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid = st.relid);
