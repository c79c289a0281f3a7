-- Stops watching a table (pgw_pq_unwatch_table): the DDL that drops the
-- triggers pgw_pq_watch_table created (watch.sql), statements separated by
-- semicolons, empty when there are none. A trigger is pgwitness's when it
-- has one of the four names and calls a function named notify_statement
-- (in whichever schema the library was installed); a trigger of the same
-- name that calls anything else is the table owner's and is left alone.
-- Run after watch_lock.sql, in the same transaction; then, when there is
-- one (column below), <schema>.watch_below(relid) drops the triggers of
-- the table's descendants (migration_004.sql).
-- Parameters: $1 text the table's schema, $2 text its name.
-- No row: there is no such table. By hand (psql; then run the ddl column):
--   PREPARE unwatch(text, text) AS <this query>;
--   EXECUTE unwatch('public', 'tasks');
SELECT array_to_string(ARRAY(SELECT format('DROP TRIGGER %I ON %I.%I', t.tgname, $1::text, $2::text)
               FROM pg_catalog.pg_trigger t
              WHERE t.tgrelid = c.oid
                AND t.tgname IN ('pgwitness_insert', 'pgwitness_update', 'pgwitness_delete',
                                 'pgwitness_truncate')
                AND EXISTS (SELECT FROM pg_catalog.pg_proc p
                             WHERE p.oid = t.tgfoid AND p.proname = 'notify_statement')
              ORDER BY t.tgname), ';' || chr(10)) AS ddl,
       c.oid AS relid,
       -- the watch_below() of the schema whose notify_statement() the
       -- table's triggers, or its descendants' (named for its OID), call;
       -- '' when there is none
       coalesce((SELECT CASE WHEN to_regprocedure(format('%s.watch_below(regclass, regclass)',
                                                         p.pronamespace::regnamespace)) IS NOT NULL
                             THEN format('%s.watch_below', p.pronamespace::regnamespace) END
                   FROM pg_catalog.pg_trigger t
                   JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
                  WHERE p.proname = 'notify_statement'
                    AND ((t.tgrelid = c.oid AND t.tgname IN ('pgwitness_insert', 'pgwitness_update',
                                                            'pgwitness_delete', 'pgwitness_truncate'))
                         OR t.tgname IN ('pgwitness_insert_' || c.oid, 'pgwitness_update_' || c.oid,
                                         'pgwitness_delete_' || c.oid,
                                         'pgwitness_truncate_' || c.oid))
                  ORDER BY t.tgrelid <> c.oid LIMIT 1), '') AS below
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1::text AND c.relname = $2::text;
