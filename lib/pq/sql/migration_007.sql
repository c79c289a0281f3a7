-- pgwitness migration 7: the event trigger's functions for a role without
-- USAGE on this schema, and for stale rows of stream_tables. Applied by
-- pgw_pq_install after migrations 4 and 5 again (their functions changed:
-- on_ddl_event() announces a watched table's drop from the catalog alone
-- and remembers it for the session (pgwitness.dropped_watched), and warns
-- when a trigger of ours is disabled; rewatch() reads the publications to
-- publish a table made again in through remembered_publications(), new;
-- adopt_stream() takes over one stale row per publication and name). By
-- hand (after migration_006.sql):
--   psql -v schema=pgwitness -f lib/pq/sql/migration_004.sql
--   psql -v schema=pgwitness -f lib/pq/sql/migration_005.sql
--   psql -v schema=pgwitness -f lib/pq/sql/migration_007.sql
COMMENT ON FUNCTION :"schema".remembered_publications(regclass) IS
    'pgwitness: the publications a dropped table of this table''s name was watched in for '
    'the stream (rewatch(); migration_005.sql)';
