-- The opt-in event triggers of pgw_pq_install_ddl_trigger and
-- pgw_pq_remove_ddl_trigger (functions in lib/pq/sql/migration_005.sql):
-- pgwitness_ddl_command_end (ON ddl_command_end) and pgwitness_sql_drop (ON
-- sql_drop), both calling on_ddl_event(). Event triggers belong to
-- the database, not to a schema: the names are fixed, and one library
-- schema per database has them. Parameters:
--   $1 text    the library schema      $2 text    'install' or 'remove'
-- Returns one row: whether current_user is a superuser (CREATE EVENT
-- TRIGGER needs it in PostgreSQL 15: "Event Triggers", "Overview"), the
-- first event trigger of these names that calls another function
-- (foreign_trigger; then nothing is changed), and the DDL to run, empty
-- when the triggers already are (install: enabled, no tag filter, calling
-- this schema's functions) or are not there (remove). An install also
-- records the tables watched now in trigger_watches (sync_watch()), which
-- the event trigger keeps from then on. Changes nothing itself.
WITH w(name, event, fn, fname) AS (
    -- the catalog, not to_regprocedure(): that raises for a role without
    -- USAGE on the schema, which must get the superuser refusal instead
    SELECT v.name, v.event,
           (SELECT p.oid FROM pg_catalog.pg_proc p
              JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = $1::text AND p.proname = v.fn AND p.pronargs = 0),
           format('%I.%I()', $1::text, v.fn)
      FROM (VALUES ('pgwitness_ddl_command_end', 'ddl_command_end', 'on_ddl_event'),
                   ('pgwitness_sql_drop', 'sql_drop', 'on_ddl_event')) v(name, event, fn)
)
SELECT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user),
                false) AS super,
       (SELECT format('%s (it calls %s)', e.evtname, e.evtfoid::regprocedure)
          FROM pg_catalog.pg_event_trigger e
          JOIN w ON w.name = e.evtname
         WHERE e.evtfoid IS DISTINCT FROM w.fn
         ORDER BY e.evtname LIMIT 1) AS foreign_trigger,
       CASE $2::text WHEN 'install' THEN
            (SELECT CASE WHEN cardinality(i.ddl) > 0 THEN
                    -- and what the triggers' watches are now, for the
                    -- event trigger to remember (trigger_watches)
                    array_to_string(i.ddl || format(
                        'SELECT %1$I.sync_watch(x.relid) FROM (SELECT t.tgrelid AS relid '
                        'FROM pg_catalog.pg_trigger t WHERE t.tgname = ''pgwitness_insert'' '
                        'AND t.tgfoid = %2$L::regprocedure UNION SELECT w.relid FROM '
                        '%1$I.trigger_watches w) x',
                        $1::text, format('%I.notify_statement()', $1::text)), ';' || chr(10))
                    ELSE '' END
               FROM (SELECT ARRAY(
                SELECT format('DROP EVENT TRIGGER IF EXISTS %I;' || chr(10)
                              || 'CREATE EVENT TRIGGER %I ON %s EXECUTE PROCEDURE %s',
                              w.name, w.name, w.event, w.fname)
                  FROM w
                 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_event_trigger e
                                    WHERE e.evtname = w.name AND e.evtevent = w.event
                                      AND e.evtfoid = w.fn AND e.evtenabled = 'O'
                                      AND e.evttags IS NULL)
                 ORDER BY w.name) AS ddl) i)
       ELSE
            array_to_string(ARRAY(
                SELECT format('DROP EVENT TRIGGER %I', e.evtname)
                  FROM pg_catalog.pg_event_trigger e JOIN w ON w.name = e.evtname
                 ORDER BY e.evtname), ';' || chr(10))
       END AS ddl
