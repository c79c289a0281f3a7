-- The gaps of a triggers tenant, read by the listener at each connect
-- after listen_gap_schemas.sql named this schema (lib/pq/inval/listener.c;
-- reported as GAP events, pgwitness-pq.h, PGW_PQ_LISTENER_GAP). Parameter:
--   $1 text   the channel the tenant listens on
-- One row per descendant of a table watched by this schema's triggers on
-- that channel (TG_ARGV[0] of its pgwitness_insert trigger, which calls
-- this schema's notify_statement(); read as ddl_targets() reads it,
-- migration_005.sql) that lacks the triggers reporting its writes as the
-- watched table's: a partition attached or created, or an inheritance
-- child made, since the watch. These are the rows of watch_gaps()
-- (migration_004.sql) whose source includes 'triggers', for this channel's
-- tables; read through below_plan() directly, as watch_gaps() reads them,
-- so that only this channel's tables are planned and a descendant whose
-- trigger names are taken by another's (below_plan's `problem`) is said
-- too. Columns:
--   schema_name, table_name         the descendant
--   watched_schema, watched_table   the watched table above it
--   message                         one line saying so and what to do, in
--                                   the shape of the stream's GAP messages
--                                   (stream_targets.sql)
-- Ordered by the watched table, then the descendant. Reads the catalog
-- only. By hand:
--   PREPARE gaps(text) AS <this query, with :"schema" and :'schema'>;
--   EXECUTE gaps('pgwitness');
WITH watched AS MATERIALIZED (
    SELECT t.tgrelid AS relid
      FROM pg_catalog.pg_trigger t
      JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
      JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
     WHERE t.tgname = 'pgwitness_insert' AND p.proname = 'notify_statement'
       AND p.pronargs = 0 AND pn.nspname = :'schema'
       AND (:"schema".trigger_args(t.tgargs))[1] = $1::text
)
SELECT dn.nspname::text AS schema_name, d.relname::text AS table_name,
       wn.nspname::text AS watched_schema, wc.relname::text AS watched_table,
       CASE WHEN b.problem IS NULL THEN
            pg_catalog.format('%I.%I %s %I.%I without pgwitness''s triggers, so its writes are '
                              'not sent: watch %I.%I again (pgw_pq_watch_table) to add them',
                              dn.nspname, d.relname,
                              CASE WHEN d.relispartition THEN 'is a partition of'
                                   ELSE 'inherits from' END,
                              wn.nspname, wc.relname, wn.nspname, wc.relname)
       ELSE
            pg_catalog.format('%I.%I %s %I.%I without pgwitness''s triggers, so its writes are '
                              'not sent, and watching %I.%I again cannot add them: %s',
                              dn.nspname, d.relname,
                              CASE WHEN d.relispartition THEN 'is a partition of'
                                   ELSE 'inherits from' END,
                              wn.nspname, wc.relname, wn.nspname, wc.relname, b.problem)
       END AS message
  FROM watched w
 CROSS JOIN LATERAL :"schema".below_plan(w.relid::pg_catalog.regclass) b
  JOIN pg_catalog.pg_class d ON d.oid = b.relid
  JOIN pg_catalog.pg_namespace dn ON dn.oid = d.relnamespace
  JOIN pg_catalog.pg_class wc ON wc.oid = w.relid
  JOIN pg_catalog.pg_namespace wn ON wn.oid = wc.relnamespace
 WHERE 'triggers' = ANY (pg_catalog.string_to_array(b.missing, ', '))
 ORDER BY wn.nspname, wc.relname, dn.nspname, d.relname
