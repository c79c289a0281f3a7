-- The statement triggers of one watched table (pgw_pq_watch_table): what
-- the table is, whether the trigger function is installed, and the DDL that
-- (re)creates the four triggers, in order (the existing ones are dropped
-- first, so watching again replaces them; trigger names are fixed, see
-- unwatch.sql). Parameters:
--   $1 text    the table's schema      $2 text    the table's name
--   $3 text    the library schema      $4 text[]  the trigger arguments:
--                                                 the channel, then the
--                                                 value columns
-- The DDL comes as one text, statements separated by semicolons. No row:
-- there is no such table. EXECUTE PROCEDURE (not FUNCTION) keeps
-- PostgreSQL 10 working. By hand (psql; then run the ddl column):
--   PREPARE watch(text, text, text, text[]) AS <this query>;
--   EXECUTE watch('public', 'tasks', 'pgwitness', '{pgwitness,status}');
SELECT c.relkind::text AS relkind,
       c.relispartition,
       to_regprocedure(format('%I.notify_statement()', $3::text)) IS NOT NULL AS installed,
       array_to_string(ARRAY(SELECT format('DROP TRIGGER %I ON %I.%I', t.tgname, $1::text, $2::text)
               FROM pg_catalog.pg_trigger t
              WHERE t.tgrelid = c.oid
                AND t.tgname IN ('pgwitness_insert', 'pgwitness_update', 'pgwitness_delete',
                                 'pgwitness_truncate')
              ORDER BY t.tgname)
       || ARRAY[
            format('CREATE TRIGGER pgwitness_insert AFTER INSERT ON %I.%I '
                   'REFERENCING NEW TABLE AS pgw_new '
                   'FOR EACH STATEMENT EXECUTE PROCEDURE %I.notify_statement(%s)',
                   $1::text, $2::text, $3::text, a.args),
            format('CREATE TRIGGER pgwitness_update AFTER UPDATE ON %I.%I '
                   'REFERENCING OLD TABLE AS pgw_old NEW TABLE AS pgw_new '
                   'FOR EACH STATEMENT EXECUTE PROCEDURE %I.notify_statement(%s)',
                   $1::text, $2::text, $3::text, a.args),
            format('CREATE TRIGGER pgwitness_delete AFTER DELETE ON %I.%I '
                   'REFERENCING OLD TABLE AS pgw_old '
                   'FOR EACH STATEMENT EXECUTE PROCEDURE %I.notify_statement(%s)',
                   $1::text, $2::text, $3::text, a.args),
            format('CREATE TRIGGER pgwitness_truncate AFTER TRUNCATE ON %I.%I '
                   'FOR EACH STATEMENT EXECUTE PROCEDURE %I.notify_statement(%s)',
                   $1::text, $2::text, $3::text, a.args)], ';' || chr(10)) AS ddl
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 CROSS JOIN (SELECT string_agg(quote_literal(u.arg), ', ' ORDER BY u.i) AS args
               FROM unnest($4::text[]) WITH ORDINALITY AS u(arg, i)) a
 WHERE n.nspname = $1::text AND c.relname = $2::text;
