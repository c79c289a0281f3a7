-- The firing mode of one watched table's triggers, and the server setting
-- that bears on its writers (pgw_pq_watch_table), run after watch.sql's DDL
-- in the same transaction. Parameters:
--   $1 text    the table's schema      $2 text    the table's name
--   $3 text    the mode asked: 'A' (ENABLE ALWAYS: fires whatever
--              session_replication_role) or 'O' (plain ENABLE: fires in the
--              origin and local roles only)
-- Columns:
--   ddl   the ALTER TABLE ... ENABLE [ALWAYS] TRIGGER statements that put
--         pgwitness's triggers (the four names, calling a notify_statement
--         function) in that mode, separated by semicolons; '' when they are
--         in it already (then no lock is taken). A disabled trigger ('D')
--         never reaches here: watch.sql recreates it.
--   max_prepared_transactions  the server's setting (PREPARE TRANSACTION
--         fails in a transaction that sent a NOTIFY).
-- PostgreSQL documentation, ALTER TABLE ("DISABLE/ENABLE [ REPLICA |
-- ALWAYS ] TRIGGER"); pg_trigger.tgenabled: O origin, D disabled, R
-- replica, A always. By hand (psql; then run the ddl column):
--   PREPARE watch_mode(text, text, text) AS <this query>;
--   EXECUTE watch_mode('public', 'tasks', 'A');
SELECT coalesce((SELECT string_agg(format('ALTER TABLE %I.%I ENABLE %sTRIGGER %I', $1::text,
                                          $2::text,
                                          CASE WHEN $3::text = 'A' THEN 'ALWAYS ' ELSE '' END,
                                          t.tgname),
                                   ';' || chr(10) ORDER BY t.tgname)
                   FROM pg_catalog.pg_trigger t
                   JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
                   JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = $1::text AND c.relname = $2::text
                    AND t.tgname IN ('pgwitness_insert', 'pgwitness_update',
                                     'pgwitness_delete', 'pgwitness_truncate')
                    AND EXISTS (SELECT FROM pg_catalog.pg_proc p
                                 WHERE p.oid = t.tgfoid AND p.proname = 'notify_statement')
                    AND t.tgenabled::text <> $3::text), '') AS ddl,
       current_setting('max_prepared_transactions')::int AS max_prepared_transactions;
