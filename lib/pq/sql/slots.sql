-- The logical slots of this database that use pgoutput, for pgw_pq_slots:
-- what each keeps of the WAL (PostgreSQL documentation,
-- pg_replication_slots). pgwitness replaces the placeholder :registered by
-- EXISTS (SELECT FROM <schema>.slots r WHERE r.slot_name = s.slot_name)
-- when that table can be read, else by false. No parameters. Columns:
--   slot_name, database, plugin, temporary, active, active_pid (0: none),
--   registered (made by a pgwitness stream), restart_lsn and
--   confirmed_flush_lsn (pg_lsn text, '' when null), retained_bytes and
--   lag_bytes (from pg_current_wal_lsn()), wal_status ('' when null),
--   safe_wal_size (-1 when unbounded)
-- By hand: psql -v registered=false -f lib/pq/sql/slots.sql
SELECT s.slot_name::text, s.database::text, s.plugin::text, s.temporary, s.active,
       coalesce(s.active_pid, 0) AS active_pid,
       :registered AS registered,
       coalesce(s.restart_lsn::text, '') AS restart_lsn,
       coalesce(s.confirmed_flush_lsn::text, '') AS confirmed_flush_lsn,
       coalesce(pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), s.restart_lsn),
                0)::bigint AS retained_bytes,
       coalesce(pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(),
                                           s.confirmed_flush_lsn), 0)::bigint AS lag_bytes,
       coalesce(s.wal_status, '') AS wal_status,
       coalesce(s.safe_wal_size, -1) AS safe_wal_size
  FROM pg_catalog.pg_replication_slots s
 WHERE s.slot_type = 'logical' AND s.plugin = 'pgoutput' AND s.database = current_database()
 ORDER BY s.slot_name
