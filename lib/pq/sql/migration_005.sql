-- pgwitness migration 5: announcing a table's definition change (DDL) to
-- both write sources, by hand (announce_ddl(), pgw_pq_announce_ddl) or by
-- an opt-in event trigger (pgw_pq_install_ddl_trigger).
-- Applied by pgw_pq_install; by hand (after migration_004.sql):
--   psql -v schema=pgwitness -f lib/pq/sql/migration_005.sql
--
-- A DDL that rewrites rows or changes columns (ALTER COLUMN ... TYPE,
-- ADD COLUMN with a volatile default, DROP or RENAME COLUMN, DROP TABLE,
-- ATTACH/DETACH PARTITION...) fires no row trigger, and the stream sees it
-- only in the Relation message before the table's next change: with no
-- later write, nothing reports it. The announcement is the ddl write set
-- (docs/wire.md: {"version":1,"schema":S,"table":T,"op":"ddl"}) sent
--   * as pg_notify(channel, payload) on every channel of the triggers of
--     the watched table (TG_ARGV[0] of its pgwitness_insert trigger), and
--   * as pg_logical_emit_message(true, 'pgwitness', payload) when
--     wal_level is logical (transactional: decoded at commit, as a write
--     set, by the stream; include/pgwitness/pgoutput.h).
-- Both are transactional: nothing is sent when the transaction rolls back.
-- Every function here runs as its caller (SECURITY INVOKER): the event
-- triggers fire for every role's DDL, and a definer's rights would let any
-- role create triggers and send through the installer. The role running
-- the DDL needs USAGE on this schema (without it, the event triggers warn
-- for watched tables and leave other DDL alone) and, to create the
-- triggers of a new partition or child, the right to create triggers on it
-- (its owner does).
-- Sources: PostgreSQL documentation, "Event Triggers" (ddl_command_end,
-- sql_drop; "Event Trigger Functions": pg_event_trigger_ddl_commands,
-- pg_event_trigger_dropped_objects), NOTIFY, "Replication Management
-- Functions" (pg_logical_emit_message).

-- The watched tables a change of `rel` changes: rel itself and each of its
-- ancestors (partitioned tables, inheritance parents) that is watched by
-- the triggers (trigger_channel: the channel of its pgwitness_insert) or
-- by the stream (streamed; NULL when the role may not read stream_tables).
CREATE OR REPLACE FUNCTION :"schema".ddl_targets(rel regclass)
RETURNS TABLE (relid oid, schema_name text, table_name text, trigger_channel text,
               streamed boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
WITH RECURSIVE up(relid) AS (
    SELECT rel::oid
    UNION
    SELECT i.inhparent FROM pg_inherits i JOIN up ON i.inhrelid = up.relid
)
SELECT c.oid, n.nspname::text, c.relname::text, w.channel, w.streamed
  FROM up
  JOIN pg_class c ON c.oid = up.relid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 CROSS JOIN LATERAL (
       SELECT (SELECT (trigger_args(t.tgargs))[1] FROM pg_trigger t
                WHERE t.tgrelid = c.oid AND t.tgname = 'pgwitness_insert'
                  AND t.tgfoid = 'notify_statement()'::regprocedure) AS channel,
              stream_watched(c.oid::regclass) AS streamed) w
 WHERE w.channel IS NOT NULL OR w.streamed
 ORDER BY n.nspname, c.relname
$fn$;

-- Announces that the definition of rel_schema.rel_name changed. When that
-- relation exists and it, or an ancestor of it, is watched (ddl_targets),
-- the payload names each such watched table, on its triggers' channel and
-- on `channels`; otherwise (a dropped table, or one not watched) it names
-- rel_schema.rel_name, on `channels` (NULL or empty: 'pgwitness', the
-- default channel). The logical message goes out for each named table
-- when wal_level is logical. Returns what it sent: one row per
-- notification (channel) and per logical message (channel NULL).
CREATE OR REPLACE FUNCTION :"schema".announce_ddl(rel_schema text, rel_name text,
                                                 channels text[] DEFAULT NULL)
RETURNS TABLE (watched_schema text, watched_table text, channel text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _rel regclass := to_regclass(format('%I.%I', rel_schema, rel_name));
    _t record;
    _payload text;
BEGIN
    FOR _t IN
        SELECT d.schema_name AS s, d.table_name AS t, d.trigger_channel AS ch
          FROM ddl_targets(_rel) d WHERE _rel IS NOT NULL
        UNION ALL
        SELECT rel_schema, rel_name,
               CASE WHEN coalesce(cardinality(channels), 0) = 0 THEN 'pgwitness' END
         WHERE _rel IS NULL OR NOT EXISTS (SELECT FROM ddl_targets(_rel))
    LOOP
        _payload := format('{"version":1,"schema":%s,"table":%s,"op":"ddl"}',
                           to_json(_t.s)::text, to_json(_t.t)::text);
        FOR channel IN
            SELECT DISTINCT u.c FROM unnest(_t.ch || coalesce(channels, '{}')) u(c)
             WHERE u.c IS NOT NULL ORDER BY u.c
        LOOP
            PERFORM pg_notify(channel, _payload);
            watched_schema := _t.s;
            watched_table := _t.t;
            RETURN NEXT;
        END LOOP;
        IF current_setting('wal_level') = 'logical' THEN
            PERFORM pg_logical_emit_message(true, 'pgwitness', _payload);
            watched_schema := _t.s;
            watched_table := _t.t;
            channel := NULL;
            RETURN NEXT;
        END IF;
    END LOOP;
END
$fn$;

-- The event triggers' function (pgw_pq_install_ddl_trigger): ON
-- ddl_command_end, for each command on a table (or on an index or constraint of a table) that is
-- watched or lies below a watched table: first the triggers of its
-- descendants (watch_descendant(): a partition created or attached, a
-- child made, after the watch; and watch_below() of the table itself when
-- it is watched, for ATTACH PARTITION, which names the parent), then
-- announce_ddl() of it. Conservative: every such command announces (a
-- refresh is never wrong), CREATE TRIGGER and other objects do not. A
-- new table (CREATE TABLE, CREATE TABLE AS, SELECT INTO, CREATE FOREIGN
-- TABLE) that is not below a watched table is announced by name on the
-- default channel (it may replace a dropped table a subscription reads).
-- Temporary tables are left out (no subscription reads another session's,
-- and applications make them often). It never fails the DDL: any error is
-- caught and raised as a WARNING (the DDL commits; that announcement is
-- lost).
--
-- ON sql_drop: a dropped table that was watched (the dropped objects include its pgwitness_insert trigger, or stream_tables
-- lists it) is announced by name: its triggers are gone by now, so their
-- channel cannot be read, and it goes out on the default channel only (a
-- host using another channel calls pgw_pq_announce_ddl with it). A dropped
-- partition or child of a watched table that still exists (its triggers
-- pgwitness_*_<oid of that table>) announces that table: its rows left it.
-- An inheritance child (not a partition: the root publishes those via the
-- partition root) of a table watched for the stream joins the ancestors'
-- publications, as pgw_pq_stream_watch_table() would add it, and running
-- streams read their configuration again at the commit
-- ("pgwitness.config"). A child without a usable replica identity is not
-- added, since publishing it would fail its writers' UPDATE and DELETE: a
-- WARNING names it (the stream also reports it as a GAP at its next
-- connect). Returns how many publications it joined.
CREATE OR REPLACE FUNCTION :"schema".publish_child(rel regclass)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _p record;
    _n int := 0;
BEGIN
    IF (SELECT c.relispartition OR c.relkind NOT IN ('r', 'p') FROM pg_class c
         WHERE c.oid = rel) OR stream_watched(rel) IS NULL THEN
        RETURN 0;
    END IF;
    FOR _p IN
        WITH RECURSIVE up(relid) AS (
            SELECT i.inhparent FROM pg_inherits i WHERE i.inhrelid = rel
            UNION
            SELECT i.inhparent FROM pg_inherits i JOIN up ON i.inhrelid = up.relid)
        SELECT DISTINCT st.publication::text AS pub
          FROM stream_tables st JOIN up ON up.relid = st.relid
         WHERE NOT EXISTS (SELECT FROM pg_publication_rel pr
                             JOIN pg_publication p ON p.oid = pr.prpubid
                            WHERE p.pubname = st.publication AND pr.prrelid = rel)
    LOOP
        IF NOT (SELECT c.relreplident = 'f'
                       OR (c.relreplident = 'd' AND EXISTS (
                               SELECT FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))
                       OR (c.relreplident = 'i' AND EXISTS (
                               SELECT FROM pg_index i
                                WHERE i.indrelid = c.oid AND i.indisreplident))
                  FROM pg_class c WHERE c.oid = rel) THEN
            RAISE WARNING 'pgwitness: % inherits from a table watched for the stream but has no '
                          'usable replica identity, so it was not added to publication %: its '
                          'writes are not sent', rel, _p.pub
                USING HINT = format('give it a primary key (or REPLICA IDENTITY FULL) and watch '
                                    'its parent again');
            CONTINUE;
        END IF;
        EXECUTE format('ALTER PUBLICATION %I ADD TABLE ONLY %s', _p.pub, rel);
        _n := _n + 1;
    END LOOP;
    IF _n > 0 THEN
        PERFORM pg_logical_emit_message(true, 'pgwitness.config', '');
    END IF;
    RETURN _n;
END
$fn$;

CREATE OR REPLACE FUNCTION :"schema".on_ddl_event()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _r record;
    _usage boolean := coalesce((SELECT has_schema_privilege(p.pronamespace, 'USAGE')
                                  FROM pg_event_trigger e JOIN pg_proc p ON p.oid = e.evtfoid
                                 WHERE e.evtname IN ('pgwitness_ddl_command_end',
                                                     'pgwitness_sql_drop')
                                 LIMIT 1), true);
BEGIN
    -- The DDL of watch_below() (migration 4), pgwitness's own triggers:
    -- no definition change, and made by it while it runs.
    IF coalesce(current_setting('pgwitness.watch_below', true), '') = 'on' THEN
        RETURN;
    END IF;
    IF TG_EVENT = 'sql_drop' THEN
        IF NOT _usage THEN
            -- (see below) the watched tables dropped, by their
            -- pgwitness triggers among the dropped objects
            FOR _r IN
                SELECT DISTINCT g.address_names[1] AS s, g.address_names[2] AS t
                  FROM pg_event_trigger_dropped_objects() g
                 WHERE g.object_type = 'trigger' AND g.address_names[3] LIKE 'pgwitness\_%'
                 ORDER BY 1, 2
            LOOP
                RAISE WARNING 'pgwitness: the drop of %.% was not announced: role % has no USAGE '
                              'on the pgwitness schema', _r.s, _r.t, current_user
                    USING HINT = 'grant it USAGE, or call pgw_pq_announce_ddl() (pgwitness '
                                 'announce) for the table';
            END LOOP;
        ELSE
            FOR _r IN
                WITH d AS (SELECT * FROM pg_event_trigger_dropped_objects()),
                own AS (
                    SELECT o.schema_name AS s, o.object_name AS t
                      FROM d o
                     WHERE o.object_type IN ('table', 'foreign table')
                       AND (EXISTS (SELECT FROM d g
                                     WHERE g.object_type = 'trigger'
                                       AND g.address_names[1] = o.schema_name
                                       AND g.address_names[2] = o.object_name
                                       AND g.address_names[3] = 'pgwitness_insert')
                            OR (has_table_privilege('stream_tables', 'SELECT')
                                AND EXISTS (SELECT FROM stream_tables st WHERE st.relid = o.objid)))
                ),
                above AS (
                    SELECT DISTINCT substring(g.address_names[3] FROM '_([0-9]+)$')::oid AS relid
                      FROM d g
                     WHERE g.object_type = 'trigger'
                       AND g.address_names[3] ~ '^pgwitness_(insert|stream_truncate)_[0-9]+$'
                )
                SELECT own.s, own.t FROM own
                UNION
                SELECT n.nspname::text, c.relname::text
                  FROM above a JOIN pg_class c ON c.oid = a.relid
                  JOIN pg_namespace n ON n.oid = c.relnamespace
                ORDER BY 1, 2
            LOOP
                BEGIN
                    PERFORM announce_ddl(_r.s, _r.t);
                EXCEPTION WHEN OTHERS THEN
                    RAISE WARNING 'pgwitness: the drop of %.% was not announced: %', _r.s, _r.t,
                        SQLERRM
                        USING HINT = 'call pgw_pq_announce_ddl() (pgwitness announce) for it';
                END;
            END LOOP;
        END IF;
        RETURN;
    END IF;
    FOR _r IN
        SELECT c.oid AS relid, n.nspname::text AS s, c.relname::text AS t,
               bool_or(x.command_tag IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO',
                                         'CREATE FOREIGN TABLE')) AS created
          FROM pg_event_trigger_ddl_commands() x
         CROSS JOIN LATERAL (
               SELECT CASE
                      WHEN x.classid = 'pg_class'::regclass THEN
                           coalesce((SELECT i.indrelid FROM pg_index i
                                      WHERE i.indexrelid = x.objid), x.objid)
                      WHEN x.classid = 'pg_constraint'::regclass THEN
                           (SELECT co.conrelid FROM pg_constraint co WHERE co.oid = x.objid)
                      END AS relid) o
          JOIN pg_class c ON c.oid = o.relid AND c.relkind IN ('r', 'p', 'f')
                          AND c.relpersistence <> 't'
          JOIN pg_namespace n ON n.oid = c.relnamespace
         GROUP BY c.oid, n.nspname, c.relname
         ORDER BY n.nspname, c.relname
    LOOP
        -- Without USAGE on this schema nothing of it can be called: warn
        -- only for a table with a pgwitness trigger or in a publication
        -- (itself or an ancestor; the catalog says), skip the rest.
        IF NOT _usage THEN
            IF EXISTS (WITH RECURSIVE up(relid) AS (
                           SELECT _r.relid
                           UNION
                           SELECT i.inhparent FROM pg_inherits i JOIN up ON i.inhrelid = up.relid)
                       SELECT FROM up
                        WHERE EXISTS (SELECT FROM pg_trigger t WHERE t.tgrelid = up.relid
                                         AND t.tgname LIKE 'pgwitness\_%')
                           OR EXISTS (SELECT FROM pg_publication_rel pr
                                       WHERE pr.prrelid = up.relid)) THEN
                RAISE WARNING 'pgwitness: the definition change of %.% was not announced: '
                              'role % has no USAGE on the pgwitness schema', _r.s, _r.t,
                              current_user
                    USING HINT = 'grant it USAGE, or call pgw_pq_announce_ddl() (pgwitness '
                                 'announce) for the table';
            END IF;
            CONTINUE;
        END IF;
        BEGIN
            PERFORM watch_descendant(_r.relid::regclass);
            IF EXISTS (SELECT FROM pg_inherits i WHERE i.inhparent = _r.relid) THEN
                PERFORM watch_below(_r.relid::regclass, _r.relid::regclass);
            END IF;
            PERFORM publish_child(_r.relid::regclass);
            IF _r.created OR EXISTS (SELECT FROM ddl_targets(_r.relid::regclass)) THEN
                PERFORM announce_ddl(_r.s, _r.t);
            END IF;
            -- Triggers that still name a watched table no longer above
            -- this one (NO INHERIT): its rows left that table's results.
            PERFORM announce_ddl(n.nspname::text, c.relname::text)
               FROM (SELECT DISTINCT substring(t.tgname FROM '_([0-9]+)$')::oid AS w
                       FROM pg_trigger t
                      WHERE t.tgrelid = _r.relid
                        AND t.tgname ~ '^pgwitness_(insert|update|delete|truncate|stream_truncate)_[0-9]+$') x
               JOIN pg_class c ON c.oid = x.w
               JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE NOT EXISTS (WITH RECURSIVE up(relid) AS (
                                    SELECT i.inhparent FROM pg_inherits i
                                     WHERE i.inhrelid = _r.relid
                                    UNION
                                    SELECT i.inhparent FROM pg_inherits i
                                      JOIN up ON i.inhrelid = up.relid)
                                SELECT FROM up WHERE up.relid = x.w);
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgwitness: the definition change of %.% was not announced: %',
                _r.s, _r.t, SQLERRM
                USING HINT = 'call pgw_pq_announce_ddl() (pgwitness announce) for it';
        END;
    END LOOP;
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'pgwitness: a definition change was not announced: %', SQLERRM
        USING HINT = 'call pgw_pq_announce_ddl() (pgwitness announce) for the tables it changed';
END
$fn$;

COMMENT ON FUNCTION :"schema".announce_ddl(text, text, text[]) IS
    'pgwitness: announces a table''s definition change to both write sources (migration_005.sql)';
COMMENT ON FUNCTION :"schema".on_ddl_event() IS
    'pgwitness: the function of the ddl_command_end and sql_drop event triggers '
    '(pgw_pq_install_ddl_trigger)';
