-- The listener's first query after LISTEN on a triggers tenant's
-- connection (lib/pq/inval/listener.c): the pgwitness schemas whose gaps
-- it reads next (listen_gaps.sql). One row per schema, by name: a schema
-- whose notify_statement() a watched table's pgwitness_insert trigger
-- calls, that has watch_gaps()'s parts (below_plan(regclass, regclass)
-- and trigger_args(bytea), schema version 4), and that the role may use
-- (USAGE on it, EXECUTE on them). None when nothing is watched, the
-- schema is older, or the role may not read it: a tenant needs no
-- privilege on the schema, so then there is nothing to report. Also a
-- schema with remembered_gaps() (version 6) whose watched tables were all
-- dropped and made again without their watch. Columns:
--   schema_name
--   remembers    the role may call its remembered_gaps() (migration 5):
--                listen_remembered_gaps.sql is read too
-- Reads the catalog only; fails for no role.
-- By hand: psql -f lib/pq/sql/listen_gap_schemas.sql
SELECT n.nspname::text AS schema_name, r.remembers
  FROM pg_catalog.pg_namespace n
 CROSS JOIN LATERAL (
       SELECT coalesce(pg_catalog.has_function_privilege(
                           pg_catalog.to_regprocedure(
                               pg_catalog.format('%I.remembered_gaps()', n.nspname)),
                           'EXECUTE'), false) AS remembers) r
 WHERE pg_catalog.has_schema_privilege(n.oid, 'USAGE')
   AND (r.remembers
        OR EXISTS (SELECT FROM pg_catalog.pg_trigger t
                     JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
                    WHERE t.tgname = 'pgwitness_insert' AND p.proname = 'notify_statement'
                      AND p.pronargs = 0 AND p.pronamespace = n.oid))
   AND (SELECT count(*) FROM pg_catalog.pg_proc f
         WHERE f.pronamespace = n.oid
           AND pg_catalog.has_function_privilege(f.oid, 'EXECUTE')
           AND ((f.proname = 'below_plan'
                 AND pg_catalog.array_to_string(f.proargtypes::pg_catalog.regtype[], ',')
                     = 'regclass,regclass')
                OR (f.proname = 'trigger_args'
                    AND pg_catalog.array_to_string(f.proargtypes::pg_catalog.regtype[], ',')
                        = 'bytea'))) = 2
 ORDER BY n.nspname
