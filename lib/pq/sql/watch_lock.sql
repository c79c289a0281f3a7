-- Serializes pgwitness's changes to one table's statement triggers
-- (pgw_pq_watch_table, pgw_pq_unwatch_table, and a host or the CLI that
-- reads what is installed before changing it): a transaction-level
-- advisory lock keyed on the table, held until the transaction ends, taken
-- before the triggers are read so that the read sees what the previous
-- holder committed. Key: PGW_PQ_WATCH_LOCK_BASE (0x7067770000000000,
-- "pgw" in the high bytes) plus the table's OID (pgwitness-pq.h).
-- Parameters: $1 text the table's schema, $2 text its name. No row: there
-- is no such table (nothing is locked; the read that follows says so).
-- Source: PostgreSQL documentation, "Advisory Locks" and "Advisory Lock
-- Functions" (pg_advisory_xact_lock).
SELECT pg_catalog.pg_advisory_xact_lock(8099573296732831744 + c.oid::int8)
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1::text AND c.relname = $2::text;
