-- pgwitness migration 4: the triggers below a watched table (issue 16:
-- no silent writes). Applied by pgw_pq_install, after migration_002.sql is
-- applied again (it holds the current notify_statement(), which now also
-- serves the triggers made here); by hand (after migration_003.sql):
--   psql -v schema=pgwitness -f lib/pq/sql/migration_002.sql
--   psql -v schema=pgwitness -f lib/pq/sql/migration_004.sql
--
-- Why. A statement fires the statement triggers of the table it names,
-- not those of that table's partitions or inheritance children, and a
-- statement that names a partition or a child does not fire its
-- ancestors' (PostgreSQL documentation, CREATE TRIGGER, "Notes"). Yet a
-- write into a partition or a child changes SELECT ... FROM its ancestor.
-- So every descendant of a watched table (every level of its partitions
-- and inheritance children) gets statement triggers of its own, which
-- report the write as a write to the watched table (notify_statement(),
-- migration_002.sql, "descendants"). Statement triggers may have
-- transition tables on partitions, partitioned tables and inheritance
-- children alike (only ROW triggers with transition tables are refused
-- there); a foreign table may have none, and its triggers send the
-- table-level form.
--
-- The stream has the same hole in one place: a publication via the
-- partition root does not publish the TRUNCATE of a partition. Each
-- partition of a partitioned table watched for the stream gets an AFTER
-- TRUNCATE trigger that sends the truncate form as a logical message
-- (prefix 'pgwitness'), which the stream's decoder turns into a write set
-- at commit (include/pgwitness/pgoutput.h). That trigger is always ENABLE
-- ALWAYS (ALTER TABLE ... ENABLE ALWAYS TRIGGER, which needs the
-- partition's owner): the stream decodes every other write from the WAL
-- whatever the writer's session_replication_role, and a plain trigger does
-- not fire under session_replication_role = replica (replication tools,
-- bulk loaders), which would leave exactly this TRUNCATE unreported. One
-- that exists in another mode (plain, or disabled) is altered to ALWAYS,
-- not made anew. ALTER TABLE ... DISABLE TRIGGER still silences it, as it
-- does every trigger: watching the root again enables it. A role that may
-- create triggers on the partition but does not own it (ALTER TABLE needs
-- the owner) makes it plain ENABLE, and the stream reports that partition
-- as a GAP at each connect (stream_targets.sql).
--
-- The triggers, on each descendant D of a watched table W (OID w):
--   pgwitness_insert_<w>, pgwitness_update_<w>, pgwitness_delete_<w>,
--   pgwitness_truncate_<w>   when W is watched (its own pgwitness_insert
--                            trigger calls this schema's notify_statement):
--                            W's channel and value columns
--   pgwitness_stream_truncate_<w>
--                            when W is partitioned and watched for the
--                            stream (a row in stream_tables) and D is a
--                            partition
-- Names carry W's OID: a descendant may be watched itself (its own four
-- pgwitness_* triggers) and may lie below several watched tables. The
-- function checks at each statement that W still is an ancestor of D, so
-- a detached partition or a child after NO INHERIT sends nothing and
-- fails no writer; watch_below() drops such triggers when W is watched or
-- unwatched again.
--
-- None of these functions is called by a writer: writers need no privilege
-- on this schema. They run as the caller (SECURITY INVOKER), who needs the
-- TRIGGER privilege on the descendants.

-- The arguments of a trigger, as text: pg_trigger.tgargs holds each one in
-- the server's encoding followed by a zero byte.
CREATE OR REPLACE FUNCTION :"schema".trigger_args(tgargs bytea)
RETURNS text[]
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    _out text[] := '{}';
    _b   bytea := tgargs;
    _p   int;
BEGIN
    LOOP
        _p := position('\x00'::bytea IN _b);
        EXIT WHEN _p = 0;
        _out := _out || convert_from(substring(_b FROM 1 FOR _p - 1),
                                     current_setting('server_encoding'));
        _b := substring(_b FROM _p + 1);
    END LOOP;
    RETURN _out;
END
$fn$;

-- Whether the stream watches `watched` (a row in stream_tables); NULL when
-- the role may not read stream_tables (a role that watches with the
-- triggers needs no privilege on this schema's tables). PL/pgSQL, so that
-- the table is read, and its privilege checked, only when it may be.
CREATE OR REPLACE FUNCTION :"schema".stream_watched(watched regclass)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
BEGIN
    IF NOT has_table_privilege('stream_tables', 'SELECT') THEN  -- by search_path: this schema's
        RETURN NULL;
    END IF;
    RETURN EXISTS (SELECT FROM stream_tables st WHERE st.relid = watched);
END
$fn$;

-- What the descendants of `watched` (all of them, or `below` and its own
-- descendants when given) need changed: one row per relation whose
-- triggers are not what they should be (see above), with the DDL that
-- makes them so (statements separated by semicolons: the triggers of ours
-- that differ are dropped, the missing ones created), `missing` naming the
-- sources of the triggers that should be created ('triggers', 'stream' or
-- 'stream, triggers': those writes of the relation are not reported now;
-- NULL when none), and `problem` when a trigger of one of these names is not
-- pgwitness's (then no DDL). A relation no longer below `watched` that
-- still has its triggers is listed (to drop them) when `below` is NULL.
-- The triggers-path ones take the firing mode of the watched table's own
-- pgwitness_insert (ENABLE ALWAYS when it is, with
-- pgw_pq_watch_options.enable_always; else plain ENABLE); the stream's are
-- ENABLE ALWAYS. A trigger that is
-- right but for its firing mode (plain, ALWAYS, disabled, REPLICA) is
-- altered (ALTER TABLE ... ENABLE [ALWAYS] TRIGGER), not made anew; it
-- counts in `missing` unless it is ALWAYS (which fires in every role).
-- With the setting pgwitness.keep_firing_modes on (the DDL event
-- trigger's, migration 5) such a trigger is left as it is.
-- Reads only the catalog and stream_tables; changes nothing. A role that
-- may not read stream_tables leaves the stream's triggers as they are.
CREATE OR REPLACE FUNCTION :"schema".below_plan(watched regclass, below regclass DEFAULT NULL)
RETURNS TABLE (relid oid, missing text, ddl text, problem text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
WITH RECURSIVE
fn AS (
    SELECT p.oid, p.pronamespace::regnamespace::text || '.notify_statement' AS name
      FROM pg_proc p WHERE p.oid = 'notify_statement()'::regprocedure
),
-- the watched table's own triggers' arguments: channel, key (3), values
main AS (
    SELECT trigger_args(t.tgargs) AS a, t.tgenabled::text AS mode
      FROM pg_trigger t, fn
     WHERE t.tgrelid = watched AND t.tgname = 'pgwitness_insert' AND t.tgfoid = fn.oid
),
stream_on AS (
    SELECT stream_watched(watched) IS NOT NULL AS known,
           stream_watched(watched)
           AND (SELECT c.relkind = 'p' FROM pg_class c WHERE c.oid = watched) AS on
),
tree(relid) AS (
    SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = watched
    UNION
    SELECT i.inhrelid FROM pg_inherits i JOIN tree t ON i.inhparent = t.relid
),
sub(relid) AS (
    SELECT below::oid WHERE below IS NOT NULL
    UNION
    SELECT i.inhrelid FROM pg_inherits i JOIN sub s ON i.inhparent = s.relid
),
scope AS (
    SELECT t.relid FROM tree t
     WHERE below IS NULL OR t.relid IN (SELECT s.relid FROM sub s)
),
want AS (
    SELECT s.relid, w.name, w.tgtype, w.oldtab, w.newtab, w.args, w.mode
      FROM scope s
      JOIN pg_class c ON c.oid = s.relid
     CROSS JOIN LATERAL (
           SELECT 'pgwitness_' || e.op || '_' || watched::oid AS name, e.tgtype,
                  CASE WHEN c.relkind <> 'f' THEN e.oldtab END AS oldtab,
                  CASE WHEN c.relkind <> 'f' THEN e.newtab END AS newtab,
                  ARRAY[m.a[1], '', watched::oid::text,
                        CASE WHEN c.relkind = 'f' THEN 'n' ELSE 't' END] || m.a[5:] AS args,
                  CASE WHEN m.mode = 'A' THEN 'A' ELSE 'O' END AS mode
             FROM main m,
                  (VALUES ('insert', 4, NULL, 'pgw_new'), ('update', 16, 'pgw_old', 'pgw_new'),
                          ('delete', 8, 'pgw_old', NULL), ('truncate', 32, NULL, NULL))
                  AS e(op, tgtype, oldtab, newtab)
            WHERE c.relkind IN ('r', 'p', 'f')
           UNION ALL
           SELECT 'pgwitness_stream_truncate_' || watched::oid, 32, NULL, NULL,
                  ARRAY['', '', watched::oid::text, 'm'],
                  -- ALTER TABLE needs the owner: a role that may only
                  -- create triggers makes it plain (the stream reports it)
                  CASE WHEN pg_has_role(c.relowner, 'USAGE') THEN 'A' ELSE 'O' END
             FROM stream_on
            WHERE stream_on.on AND c.relispartition AND c.relkind IN ('r', 'p')) w
),
have AS (
    SELECT t.tgrelid AS relid, t.tgname::text AS name, t.tgtype::int AS tgtype,
           t.tgoldtable::text AS oldtab, t.tgnewtable::text AS newtab,
           trigger_args(t.tgargs) AS args, t.tgfoid = fn.oid AS ours, t.tgenabled::text AS mode,
           t.tgqual IS NULL AND cardinality(t.tgattr::int2[]) = 0 AS plain,
           t.tgfoid::regprocedure::text AS calls
      FROM pg_trigger t, fn
     WHERE t.tgname IN (SELECT 'pgwitness_' || op || '_' || watched::oid
                          FROM unnest(ARRAY['insert', 'update', 'delete', 'truncate',
                                            'stream_truncate']) op)
       AND (below IS NULL OR t.tgrelid IN (SELECT s.relid FROM scope s))
       AND (t.tgname NOT LIKE 'pgwitness\_stream\_%'
            OR (SELECT so.known FROM stream_on so))
),
-- a wanted trigger and the firing mode of the trigger of that name, if it
-- is that trigger (`mode` NULL: there is none, or it differs otherwise)
pairs AS (
    SELECT w.relid, w.name, w.tgtype, w.oldtab, w.newtab, w.args, w.mode AS want_mode,
           (SELECT h.mode FROM have h
             WHERE h.relid = w.relid AND h.name = w.name AND h.ours AND h.plain
               AND h.tgtype = w.tgtype AND h.oldtab IS NOT DISTINCT FROM w.oldtab
               AND h.newtab IS NOT DISTINCT FROM w.newtab AND h.args = w.args) AS mode
      FROM want w
),
changes AS (
    -- drops first: ours that are not wanted exactly
    SELECT h.relid, 0 AS ord, h.name,
           format('DROP TRIGGER %I ON %I.%I', h.name, n.nspname, c.relname) AS stmt
      FROM have h
      JOIN pg_class c ON c.oid = h.relid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE h.ours AND NOT EXISTS (SELECT FROM pairs p
                                   WHERE p.relid = h.relid AND p.name = h.name
                                     AND p.mode IS NOT NULL)
    UNION ALL
    SELECT p.relid, 1, p.name,
           format('CREATE TRIGGER %I AFTER %s ON %I.%I %sFOR EACH STATEMENT '
                  'EXECUTE PROCEDURE %s(%s)', p.name,
                  CASE p.tgtype WHEN 4 THEN 'INSERT' WHEN 8 THEN 'DELETE'
                                WHEN 16 THEN 'UPDATE' ELSE 'TRUNCATE' END,
                  n.nspname, c.relname,
                  CASE WHEN p.oldtab IS NOT NULL OR p.newtab IS NOT NULL THEN
                       'REFERENCING ' || coalesce('OLD TABLE AS ' || p.oldtab || ' ', '')
                       || coalesce('NEW TABLE AS ' || p.newtab || ' ', '') ELSE '' END,
                  (SELECT fn.name FROM fn),
                  (SELECT string_agg(quote_literal(u.x), ', ' ORDER BY u.i)
                     FROM unnest(p.args) WITH ORDINALITY AS u(x, i)))
           -- its firing mode: ALWAYS for the stream's, the watched table's
           -- for the others (pgw_pq_watch_options.enable_always)
           || CASE WHEN p.want_mode = 'A'
                   THEN format(';' || chr(10) || 'ALTER TABLE %I.%I ENABLE ALWAYS TRIGGER %I',
                               n.nspname, c.relname, p.name)
                   ELSE '' END
      FROM pairs p
      JOIN pg_class c ON c.oid = p.relid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE p.mode IS NULL
    UNION ALL
    -- the trigger is there in another firing mode: altered, not made anew;
    -- its writes are missed now (ord 1) unless it is ALWAYS (it fires in
    -- every role), which is only more than the watch asks
    SELECT p.relid, CASE WHEN p.mode = 'A' THEN 2 ELSE 1 END, p.name,
           format('ALTER TABLE %I.%I ENABLE %sTRIGGER %I', n.nspname, c.relname,
                  CASE WHEN p.want_mode = 'A' THEN 'ALWAYS ' ELSE '' END, p.name)
      FROM pairs p
      JOIN pg_class c ON c.oid = p.relid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE p.mode IS DISTINCT FROM p.want_mode AND p.mode IS NOT NULL
       -- (the stream's, ALWAYS when plain would do: left ALWAYS)
       AND NOT (p.mode = 'A' AND p.name LIKE 'pgwitness\_stream\_%')
       -- (the DDL event trigger's watch_descendant() leaves a firing mode
       -- someone chose, DISABLE TRIGGER included, as it is: only a watch
       -- puts it back, and the gaps report it meanwhile)
       AND coalesce(current_setting('pgwitness.keep_firing_modes', true), '') <> 'on'
)
SELECT x.relid,
       string_agg(DISTINCT CASE WHEN x.ord = 1 THEN
                      CASE WHEN x.name LIKE 'pgwitness\_stream\_%' THEN 'stream' ELSE 'triggers' END
                  END, ', '),
       CASE WHEN f.problem IS NULL THEN string_agg(x.stmt, ';' || chr(10) ORDER BY x.ord, x.name) END,
       f.problem
  FROM changes x
  LEFT JOIN LATERAL (
       SELECT format('%s has a trigger %s that pgwitness did not create (it calls %s): '
                     'rename or drop it', h.relid::regclass, h.name, h.calls) AS problem
         FROM have h WHERE h.relid = x.relid AND NOT h.ours
        ORDER BY h.name LIMIT 1) f ON true
 GROUP BY x.relid, f.problem
 ORDER BY x.relid
$fn$;

-- Makes the triggers below `watched` what they should be (see above): on
-- every descendant, or on `below` and its descendants when given; without
-- `below`, also drops this table's triggers from relations no longer below
-- it. Returns how many relations it changed (0: nothing was locked).
-- Raises when a trigger of one of these names is not pgwitness's.
-- pgw_pq_watch_table, pgw_pq_unwatch_table and their stream counterparts
-- call it after changing the watched table itself.
CREATE OR REPLACE FUNCTION :"schema".watch_below(watched regclass, below regclass DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _r record;
    _n int := 0;
    _outer text := current_setting('pgwitness.watch_below', true);
BEGIN
    -- Its own trigger DDL is no definition change: pgwitness.watch_below
    -- tells the DDL event trigger (migration 5) to let it be, so that it
    -- does not make these triggers again while this loop makes them.
    PERFORM set_config('pgwitness.watch_below', 'on', true);
    FOR _r IN SELECT * FROM below_plan(watched, below) LOOP
        IF _r.problem IS NOT NULL THEN
            RAISE EXCEPTION '%', _r.problem
                USING ERRCODE = 'duplicate_object',
                      HINT = format('the watch of %s covers its descendants', watched);
        END IF;
        EXECUTE _r.ddl;
        _n := _n + 1;
    END LOOP;
    PERFORM set_config('pgwitness.watch_below', coalesce(_outer, ''), true);
    RETURN _n;
END
$fn$;

-- The relation `rel` was just created, attached or made a child (the entry
-- point for a ddl_command_end event trigger): gives it, and its own
-- descendants, the triggers of every watched table above it. Returns how
-- many relations it changed.
CREATE OR REPLACE FUNCTION :"schema".watch_descendant(rel regclass)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _a oid;
    _n int := 0;
BEGIN
    FOR _a IN WITH RECURSIVE up(relid) AS (
                  SELECT i.inhparent FROM pg_inherits i WHERE i.inhrelid = rel
                  UNION
                  SELECT i.inhparent FROM pg_inherits i JOIN up ON i.inhrelid = up.relid)
              SELECT up.relid FROM up ORDER BY up.relid LOOP
        _n := _n + watch_below(_a, rel);
    END LOOP;
    RETURN _n;
END
$fn$;

-- (watch_gaps(), which lists the descendants below_plan() would change,
-- is in migration_005.sql: it also lists the watched tables made again
-- without their watch, which that migration remembers.)

COMMENT ON FUNCTION :"schema".watch_below(regclass, regclass) IS
    'pgwitness: gives the descendants of a watched table the triggers that report their writes '
    'as its writes (migration_004.sql)';
COMMENT ON FUNCTION :"schema".watch_descendant(regclass) IS
    'pgwitness: gives a new partition or inheritance child the triggers of every watched table '
    'above it (for a ddl_command_end event trigger)';
