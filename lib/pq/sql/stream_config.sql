-- The first thing a stream reads on its replication connection, before
-- START_REPLICATION (simple query protocol: no parameters; pgwitness
-- substitutes :'publication', :'schema' and :'slot' as literals). One row:
-- the server, the publication and the slot.
--   server_version, wal_level, database
--   pub_exists, pub_all_ops (publishes insert, update, delete and
--   truncate), pub_via_root (publish_via_partition_root)
--   values_readable  the library schema's stream_tables can be read
--   slot_exists, slot_plugin, slot_database, slot_wal_status (reserved,
--   extended, unreserved, lost), slot_active_pid (0: none)
--   slots_writable   the library schema's slots table can be read and
--                    written (where the stream records the slots it makes)
--   slot_confirmed_lsn  the slot's confirmed_flush_lsn ('' when none): a
--                    reconnecting stream compares it with its own position
--   remembers        values_readable, and the library schema has
--                    remembered_gaps() (version 6; migration_005.sql): the
--                    tables watched for the stream that were made again
--                    outside the publication are read as gaps
-- Then stream_targets.sql.
-- By hand: psql "dbname=... replication=database" -v publication=pgwitness
--   -v schema=pgwitness -v slot=s1 -f lib/pq/sql/stream_config.sql
SELECT current_setting('server_version_num')::int AS server_version,
       current_setting('wal_level') AS wal_level,
       p.oid IS NOT NULL AS pub_exists,
       coalesce(p.pubinsert AND p.pubupdate AND p.pubdelete AND p.pubtruncate, false)
           AS pub_all_ops,
       coalesce(p.pubviaroot, false) AS pub_via_root,
       coalesce(has_table_privilege(to_regclass(format('%I.stream_tables', :'schema')),
                                    'SELECT'), false) AS values_readable,
       s.slot_name IS NOT NULL AS slot_exists,
       coalesce(s.plugin::text, '') AS slot_plugin,
       coalesce(s.database::text, '') AS slot_database,
       coalesce(s.wal_status, '') AS slot_wal_status,
       coalesce(s.active_pid, 0) AS slot_active_pid,
       coalesce(has_table_privilege(to_regclass(format('%I.slots', :'schema')),
                                    'SELECT, INSERT'), false) AS slots_writable,
       current_database() AS database,
       coalesce(s.confirmed_flush_lsn::text, '') AS slot_confirmed_lsn,
       coalesce(has_table_privilege(to_regclass(format('%I.stream_tables', :'schema')),
                                    'SELECT')
                AND has_function_privilege(
                        to_regprocedure(format('%I.remembered_gaps()', :'schema')), 'EXECUTE'),
                false) AS remembers
  FROM (SELECT 1) one
  LEFT JOIN pg_catalog.pg_publication p ON p.pubname = :'publication'
  LEFT JOIN pg_catalog.pg_replication_slots s ON s.slot_name = :'slot'
