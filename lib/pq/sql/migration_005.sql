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

-- Whether the stream reports `rel` under its own name: it is watched for
-- the stream (stream_tables), or it is in a publication a stream watches
-- tables of (an inheritance child published in its own right, by
-- publish_child() or by hand: stream_targets.sql makes it its own target
-- as well as its parent's). NULL when the role may not read stream_tables.
CREATE OR REPLACE FUNCTION :"schema".stream_published(rel regclass)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
BEGIN
    IF NOT has_table_privilege('stream_tables', 'SELECT') THEN
        RETURN NULL;
    END IF;
    RETURN EXISTS (SELECT FROM stream_tables st WHERE st.relid = rel)
        OR EXISTS (SELECT FROM pg_publication_rel pr
                     JOIN pg_publication p ON p.oid = pr.prpubid
                    WHERE pr.prrelid = rel
                      AND p.pubname IN (SELECT st.publication FROM stream_tables st));
END
$fn$;

-- What a running stream read of watched table `rel` when it connected,
-- and reports its writes with (stream_targets.sql): its name, its primary
-- key's columns in key order, and whether the old tuples of it and of every
-- partition below it are full rows (REPLICA IDENTITY FULL). No row when
-- rel does not exist. stream_tables keeps these (key_columns, full_rows)
-- so that sync_stream() can tell when they change.
CREATE OR REPLACE FUNCTION :"schema".stream_shape(rel oid)
RETURNS TABLE (schema_name text, table_name text, key_columns text[], full_rows boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
SELECT n.nspname::text, c.relname::text,
       ARRAY(SELECT a.attname::text
               FROM pg_index x
               CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
              WHERE x.indrelid = c.oid AND x.indisprimary
              ORDER BY k.ord),
       NOT EXISTS (SELECT FROM pg_partition_tree(c.oid) pt
                     JOIN pg_class l ON l.oid = pt.relid
                    WHERE pt.isleaf AND l.relreplident <> 'f')
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.oid = rel
$fn$;

-- Makes the stream_tables rows of `rel` and of each of its ancestors what
-- stream_shape() says now. When one changed (a watched table renamed or
-- moved, its primary key changed, a replica identity below it changed),
-- the targets running streams read are stale: they read their
-- configuration again at the commit ("pgwitness.config"), so that later
-- writes are reported under the table's new name and with its new key.
-- SECURITY DEFINER for the same reason as sync_watch(), and as safe: it
-- copies only the catalog. Returns whether a row changed.
CREATE OR REPLACE FUNCTION :"schema".sync_stream(rel oid)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _n int;
BEGIN
    WITH RECURSIVE up(relid) AS (
        SELECT rel
        UNION
        SELECT i.inhparent FROM pg_inherits i JOIN up ON i.inhrelid = up.relid
    )
    UPDATE stream_tables st
       SET schema_name = sh.schema_name, table_name = sh.table_name,
           key_columns = sh.key_columns, full_rows = sh.full_rows
      FROM up CROSS JOIN LATERAL stream_shape(up.relid) sh
     WHERE st.relid = up.relid
       AND (st.schema_name, st.table_name, st.key_columns, st.full_rows)
           IS DISTINCT FROM (sh.schema_name, sh.table_name, sh.key_columns, sh.full_rows);
    GET DIAGNOSTICS _n = ROW_COUNT;
    IF _n > 0 AND current_setting('wal_level') = 'logical' THEN
        PERFORM pg_logical_emit_message(true, 'pgwitness.config', '');
    END IF;
    RETURN _n > 0;
END
$fn$;

-- The watched tables a change of `rel` changes: rel itself and each of its
-- ancestors (partitioned tables, inheritance parents) that is watched by
-- the triggers (trigger_channel: the channel of its pgwitness_insert) or
-- reported under its own name by the stream (streamed, stream_published();
-- NULL when the role may not read stream_tables).
CREATE OR REPLACE FUNCTION :"schema".ddl_targets(rel regclass)
RETURNS TABLE (relid oid, schema_name text, table_name text, trigger_channel text,
               streamed boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
BEGIN
    -- PL/pgSQL, not SQL: a SQL function with SET is planned at every call,
    -- and every DDL the event trigger sees calls this (tests/bench/bench-ddl)
    RETURN QUERY
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
                  stream_published(c.oid::regclass) AS streamed) w
     WHERE w.channel IS NOT NULL OR w.streamed
     ORDER BY n.nspname, c.relname;
END
$fn$;

-- Announces that the definition of rel_schema.rel_name changed. When that
-- relation exists and it, or an ancestor of it, is watched (ddl_targets),
-- the payload names each such watched table, on its triggers' channel and
-- on `channels`; otherwise (a dropped table, or one not watched) it names
-- rel_schema.rel_name, on `channels` (NULL or empty: 'pgwitness', the
-- default channel). The logical message goes out for each named table
-- when wal_level is logical. `notify` false sends no notification to a
-- table named by name (the event trigger's for a table only the stream
-- watched: a NOTIFY would keep the DDL's transaction from PREPARE
-- TRANSACTION for nothing). Returns what it sent: one row per
-- notification (channel) and per logical message (channel NULL).
CREATE OR REPLACE FUNCTION :"schema".announce_ddl(rel_schema text, rel_name text,
                                                 channels text[] DEFAULT NULL,
                                                 notify boolean DEFAULT true)
RETURNS TABLE (watched_schema text, watched_table text, channel text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _rel regclass := to_regclass(format('%I.%I', rel_schema, rel_name));
    _t record;
    _payload text;
    _found boolean := false;
BEGIN
    -- (a definition change may make running streams' targets stale; the
    -- DDL event trigger syncs each relation itself, through sync_watch())
    -- (a DDL that left it, or a table below it, published for the stream
    -- without a usable replica identity would fail its writers' UPDATE
    -- and DELETE: REPLICA IDENTITY FULL, with a WARNING; migration 8)
    IF _rel IS NOT NULL THEN
        BEGIN
            PERFORM keep_replica_identity(ARRAY[_rel::oid]);
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgwitness: the replica identity of %.% was not checked: %',
                rel_schema, rel_name, SQLERRM
                USING HINT = 'a table published without a usable replica identity fails its '
                             'writers'' UPDATE and DELETE: give it a primary key or REPLICA '
                             'IDENTITY FULL';
        END;
    END IF;
    -- Called by hand (not by the event trigger, which does this itself):
    -- what the event trigger would have done at the DDL. The descendants
    -- of `rel` made, attached or made children since the watch get the
    -- triggers of every watched table above them (watch_descendant() for
    -- rel and the tables above it, watch_below() for those below it;
    -- firing modes as they are), and inheritance children join the
    -- stream's publications (publish_child()). A failure (a role that may
    -- not create the triggers) is a WARNING: the announcement still goes
    -- out, and pgw_pq_watch_gaps() lists what stays uncovered.
    IF _rel IS NOT NULL
       AND coalesce(current_setting('pgwitness.in_ddl_event', true), '') <> 'on' THEN
        BEGIN
            PERFORM set_config('pgwitness.keep_firing_modes', 'on', true);
            PERFORM watch_descendant(_rel);
            IF EXISTS (SELECT FROM pg_inherits i WHERE i.inhparent = _rel) THEN
                PERFORM watch_below(_rel, _rel);
            END IF;
            PERFORM set_config('pgwitness.keep_firing_modes', '', true);
            PERFORM publish_child(d.relid::regclass)
               FROM (WITH RECURSIVE down(relid) AS (
                         SELECT _rel::oid
                         UNION
                         SELECT i.inhrelid FROM pg_inherits i JOIN down ON i.inhparent = down.relid)
                     SELECT down.relid FROM down) d;
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgwitness: the partitions and inheritance children of %.% were not '
                          'given their triggers: %', rel_schema, rel_name, SQLERRM
                USING HINT = 'watch the table again (pgw_pq_watch_table, pgwitness watch); '
                             'pgw_pq_watch_gaps lists what is not covered';
        END;
        PERFORM sync_stream(_rel);
    END IF;
    FOR _t IN
        SELECT d.schema_name AS s, d.table_name AS t, d.trigger_channel AS ch, true AS target
          FROM ddl_targets(_rel) d WHERE _rel IS NOT NULL
        UNION ALL
        -- (last: named by name only when no target came before)
        SELECT rel_schema, rel_name,
               CASE WHEN notify AND coalesce(cardinality(channels), 0) = 0 THEN 'pgwitness' END,
               false
        ORDER BY 4 DESC, 1, 2
    LOOP
        CONTINUE WHEN NOT _t.target AND _found;
        _found := true;
        _payload := format('{"version":1,"schema":%s,"table":%s,"op":"ddl"}',
                           to_json(_t.s)::text, to_json(_t.t)::text);
        FOR channel IN
            SELECT DISTINCT u.c
              FROM unnest(_t.ch || CASE WHEN notify OR _t.ch IS NOT NULL
                                        THEN coalesce(channels, '{}') END) u(c)
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

-- What the DDL event trigger remembers of each table watched by the
-- triggers: its name, OID, channel, value columns and firing mode, as its
-- pgwitness_insert trigger says (sync_watch() copies them from the
-- catalog whenever pgwitness's triggers are made, changed or dropped, and
-- pgw_pq_install_ddl_trigger for the watches made before it). When such a
-- table is dropped its row stays, marked dropped_at, so that
--   * the drop is announced on the table's own channel (the catalog no
--     longer holds it at sql_drop),
--   * a table made again under that name is watched again, as it was
--     (rewatch()), and announced: the drop and make-again of an ingest
--     pipeline leaves its readers' subscriptions refreshed and the new
--     table watched, and
--   * a RENAME announces the old name too.
-- Readable by every role (pg_trigger, world-readable, holds the same);
-- written only through sync_watch(), which copies the catalog.
CREATE TABLE IF NOT EXISTS :"schema".trigger_watches (
    schema_name   text NOT NULL,
    table_name    text NOT NULL,
    relid         oid NOT NULL,
    channel       text NOT NULL,
    value_columns text[] NOT NULL DEFAULT '{}',
    enable_always boolean NOT NULL DEFAULT false,
    dropped_at    timestamptz,
    PRIMARY KEY (schema_name, table_name)
);
COMMENT ON TABLE :"schema".trigger_watches IS
    'pgwitness: the tables watched by the triggers, as the DDL event trigger last saw them';
GRANT SELECT ON :"schema".trigger_watches TO PUBLIC;

-- Makes what this schema remembers of relation `rel` what the catalog says
-- now: its row of trigger_watches (made or updated when rel has
-- pgwitness's pgwitness_insert trigger, removed when it has none, marked
-- dropped when rel no longer exists) and its stream_tables rows
-- (sync_stream()). SECURITY DEFINER, since the event triggers run as the role doing
-- the DDL, which may not write these tables; safe for any caller, since
-- it copies only the catalog's truth about `rel`. Returns nothing.
CREATE OR REPLACE FUNCTION :"schema".sync_watch(rel oid)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _c record;
BEGIN
    SELECT n.nspname::text AS s, c.relname::text AS t,
           (SELECT trigger_args(tg.tgargs) FROM pg_trigger tg
             WHERE tg.tgrelid = c.oid AND tg.tgname = 'pgwitness_insert'
               AND tg.tgfoid = 'notify_statement()'::regprocedure) AS args,
           (SELECT tg.tgenabled = 'A' FROM pg_trigger tg
             WHERE tg.tgrelid = c.oid AND tg.tgname = 'pgwitness_insert') AS always
      INTO _c
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = rel;
    IF NOT FOUND THEN
        UPDATE trigger_watches SET dropped_at = now() WHERE relid = rel AND dropped_at IS NULL;
        RETURN;
    END IF;
    PERFORM sync_stream(rel);
    IF _c.args IS NULL THEN
        DELETE FROM trigger_watches WHERE relid = rel;
        RETURN;
    END IF;
    DELETE FROM trigger_watches
     WHERE (relid = rel OR (schema_name, table_name) = (_c.s, _c.t))
       AND (schema_name, table_name, relid, channel, value_columns, enable_always, dropped_at)
           IS DISTINCT FROM (_c.s, _c.t, rel, _c.args[1], _c.args[5:], _c.always, NULL);
    INSERT INTO trigger_watches (schema_name, table_name, relid, channel, value_columns,
                                 enable_always)
    VALUES (_c.s, _c.t, rel, _c.args[1], _c.args[5:], _c.always)
    ON CONFLICT DO NOTHING;
END
$fn$;

-- The stream_tables rows of dropped tables whose name `rel` now has, in
-- each publication `rel` is now in (rewatch() added it): one of them per
-- publication, the newest (watched_at, then relid), takes rel's OID, and
-- the others are deleted (all of them when rel has its row there
-- already): several such rows would all take the one OID, which the key
-- (publication, relid) refuses. They are left by drops made while the
-- event triggers were not installed, or by a role without USAGE on this
-- schema, and by versions whose pgw_pq_stream_watch_table kept them.
-- Returns how many rows took rel's OID.
-- SECURITY DEFINER for the same reason as sync_watch(), and as safe: it
-- follows the catalog (the publication must hold rel already).
CREATE OR REPLACE FUNCTION :"schema".adopt_stream(rel oid)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _n int;
BEGIN
    WITH stale AS (
        SELECT st.publication, st.relid,
               row_number() OVER (PARTITION BY st.publication
                                  ORDER BY st.watched_at DESC, st.relid DESC) > 1
               OR EXISTS (SELECT FROM stream_tables o
                           WHERE o.publication = st.publication AND o.relid = rel) AS extra
          FROM stream_tables st,
               pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.oid = rel AND (st.schema_name, st.table_name) = (n.nspname::text, c.relname::text)
           AND NOT EXISTS (SELECT FROM pg_class x WHERE x.oid = st.relid)
           AND EXISTS (SELECT FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
                        WHERE p.pubname = st.publication AND pr.prrelid = rel)
    ), forgotten AS (
        DELETE FROM stream_tables st USING stale s
         WHERE (st.publication, st.relid) = (s.publication, s.relid) AND s.extra
    )
    UPDATE stream_tables st SET relid = rel, watched_at = now(), key_columns = sh.key_columns,
                                full_rows = sh.full_rows
      FROM stale s, stream_shape(rel) sh
     WHERE (st.publication, st.relid) = (s.publication, s.relid) AND NOT s.extra;
    GET DIAGNOSTICS _n = ROW_COUNT;
    RETURN _n;
END
$fn$;

-- The publications a dropped table of `rel`'s name was watched in for the
-- stream (its stream_tables rows, whose OID no longer exists), in name
-- order: where rewatch() publishes `rel` again. SECURITY DEFINER, since
-- the role that made `rel` may not read stream_tables; safe for any
-- caller, since it tells only the publications remembered for that
-- table's own name.
CREATE OR REPLACE FUNCTION :"schema".remembered_publications(rel regclass)
RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
    SELECT DISTINCT st.publication::text
      FROM stream_tables st, pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = rel
       AND (st.schema_name, st.table_name) = (n.nspname::text, c.relname::text)
       AND NOT EXISTS (SELECT FROM pg_class x WHERE x.oid = st.relid)
     ORDER BY 1
$fn$;

-- `rel` was just made (CREATE TABLE ...) under the name of a table that
-- was watched and then dropped: watches it again as that table was. For
-- the triggers (trigger_watches): the four statement triggers with its
-- channel and value columns and firing mode (the key arguments empty:
-- notify_statement() reads the key from the catalog until the table is
-- watched again by pgw_pq_watch_table, which describes it). For the
-- stream (stream_tables): the table joins each publication the dropped
-- one was in, with its value columns, when it has a usable replica
-- identity, and running streams read their configuration again. What
-- cannot be done (the table is no longer a table, or lacks a value
-- column, or a replica identity, or the role may not change the
-- publication) is a WARNING naming what to do, and the rest goes on; a
-- table that could not be published again makes running streams read
-- their configuration again too, which reports it as a GAP
-- (remembered_gaps()). Returns the channels the dropped table's triggers used, '{}' when only
-- the stream watched it, NULL when no watched table had this name.
CREATE OR REPLACE FUNCTION :"schema".rewatch(rel regclass)
RETURNS text[]
LANGUAGE plpgsql
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _c record;
    _w record;
    _out text[];
    _missing text;
    _args text;
    _fn text := (SELECT p.pronamespace::regnamespace::text || '.notify_statement'
                   FROM pg_proc p WHERE p.oid = 'notify_statement()'::regprocedure);
    _outer text := current_setting('pgwitness.watch_below', true);
    _pubs int := 0;
    _unpublished boolean := false;
BEGIN
    SELECT n.nspname::text AS s, c.relname::text AS t, c.relkind, c.relispartition,
           c.relreplident = 'f'
           OR (c.relreplident = 'd' AND EXISTS (
                   SELECT FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))
           OR (c.relreplident = 'i' AND EXISTS (
                   SELECT FROM pg_index i WHERE i.indrelid = c.oid AND i.indisreplident))
               AS identity
      INTO _c
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = rel;
    FOR _w IN SELECT w.* FROM trigger_watches w
               WHERE (w.schema_name, w.table_name) = (_c.s, _c.t)
                 AND NOT EXISTS (SELECT FROM pg_class x WHERE x.oid = w.relid) LOOP
        _out := ARRAY[_w.channel];
        SELECT string_agg(quote_ident(v), ', ') INTO _missing
          FROM unnest(_w.value_columns) v
         WHERE NOT EXISTS (SELECT FROM pg_attribute a
                            WHERE a.attrelid = rel AND a.attname = v AND a.attnum > 0
                              AND NOT a.attisdropped);
        IF _c.relkind NOT IN ('r', 'p') OR _c.relispartition OR _missing IS NOT NULL THEN
            RAISE WARNING 'pgwitness: % was watched (channel %) before it was dropped, and is '
                          'not watched again: %', rel, _w.channel,
                          CASE WHEN _missing IS NOT NULL
                               THEN format('it has no value column %s', _missing)
                               WHEN _c.relispartition THEN 'it is made as a partition'
                               ELSE 'it is not a table' END
                USING HINT = 'watch it (or its partitioned root) again: pgw_pq_watch_table, '
                             'pgwitness watch';
            CONTINUE;
        END IF;
        SELECT string_agg(quote_literal(a), ', ' ORDER BY i) INTO _args
          FROM unnest(ARRAY[_w.channel, '', '', ''] || _w.value_columns)
               WITH ORDINALITY AS u(a, i);
        BEGIN
            PERFORM set_config('pgwitness.watch_below', 'on', true);
            EXECUTE format('CREATE TRIGGER pgwitness_insert AFTER INSERT ON %1$s '
                           'REFERENCING NEW TABLE AS pgw_new '
                           'FOR EACH STATEMENT EXECUTE PROCEDURE %2$s(%3$s);'
                           'CREATE TRIGGER pgwitness_update AFTER UPDATE ON %1$s '
                           'REFERENCING OLD TABLE AS pgw_old NEW TABLE AS pgw_new '
                           'FOR EACH STATEMENT EXECUTE PROCEDURE %2$s(%3$s);'
                           'CREATE TRIGGER pgwitness_delete AFTER DELETE ON %1$s '
                           'REFERENCING OLD TABLE AS pgw_old '
                           'FOR EACH STATEMENT EXECUTE PROCEDURE %2$s(%3$s);'
                           'CREATE TRIGGER pgwitness_truncate AFTER TRUNCATE ON %1$s '
                           'FOR EACH STATEMENT EXECUTE PROCEDURE %2$s(%3$s)', rel, _fn, _args);
            IF _w.enable_always THEN
                EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER pgwitness_insert, '
                               'ENABLE ALWAYS TRIGGER pgwitness_update, '
                               'ENABLE ALWAYS TRIGGER pgwitness_delete, '
                               'ENABLE ALWAYS TRIGGER pgwitness_truncate', rel);
            END IF;
            PERFORM set_config('pgwitness.watch_below', coalesce(_outer, ''), true);
            PERFORM sync_watch(rel);
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgwitness: % was watched (channel %) before it was dropped, and is '
                          'not watched again: %', rel, _w.channel, SQLERRM
                USING HINT = 'watch it again: pgw_pq_watch_table, pgwitness watch';
        END;
    END LOOP;
    FOR _w IN SELECT r.pub FROM remembered_publications(rel) r(pub) LOOP
        _out := coalesce(_out, '{}');
        IF _c.relkind NOT IN ('r', 'p') OR _c.relispartition OR NOT _c.identity THEN
            RAISE WARNING 'pgwitness: % was watched for the stream (publication %) before '
                          'it was dropped, and is not published again: %', rel, _w.pub,
                          CASE WHEN _c.relispartition THEN 'it is made as a partition'
                               WHEN _c.relkind NOT IN ('r', 'p') THEN 'it is not a table'
                               ELSE 'it has no usable replica identity' END
                USING HINT = 'give it a primary key (or REPLICA IDENTITY FULL) and watch '
                             'it again: pgw_pq_stream_watch_table, pgwitness watch '
                             '--source=wal';
            _unpublished := true; -- (running streams report it as a GAP)
            CONTINUE;
        END IF;
        BEGIN
            IF NOT EXISTS (SELECT FROM pg_publication_rel pr
                             JOIN pg_publication p ON p.oid = pr.prpubid
                            WHERE p.pubname = _w.pub AND pr.prrelid = rel) THEN
                EXECUTE format('ALTER PUBLICATION %I ADD TABLE %s%s', _w.pub,
                               CASE WHEN _c.relkind = 'r' THEN 'ONLY ' ELSE '' END, rel);
            END IF;
            _pubs := _pubs + adopt_stream(rel);
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgwitness: % was watched for the stream (publication %) before '
                          'it was dropped, and is not published again: %', rel, _w.pub,
                          SQLERRM
                USING HINT = 'watch it again: pgw_pq_stream_watch_table, pgwitness watch '
                             '--source=wal';
            _unpublished := true;
        END;
    END LOOP;
    IF _pubs > 0 OR (_unpublished AND current_setting('wal_level') = 'logical') THEN
        PERFORM pg_logical_emit_message(true, 'pgwitness.config', '');
    END IF;
    RETURN _out;
END
$fn$;

-- The event triggers' function (pgw_pq_install_ddl_trigger).
-- ON ddl_command_end, for each command on a table (or on an index or
-- constraint of a table) that is watched or lies below a watched table:
-- first the triggers of its descendants (watch_descendant(): a partition
-- created or attached, a child made, after the watch; and watch_below()
-- of the table itself when it is watched, for ATTACH PARTITION, which
-- names the parent), then announce_ddl() of it. Conservative: every such
-- command announces (a refresh is never wrong). A table renamed announces
-- its old name too (on its channel; trigger_watches and stream_tables
-- remember it). A new table (CREATE TABLE, CREATE TABLE AS, SELECT INTO,
-- CREATE FOREIGN TABLE) is announced only when it lies below a watched
-- table or has the name of a watched table that was dropped, which
-- rewatch() watches again as it was; any other new table sends nothing,
-- so that the DDL of tables nobody watches can still be prepared
-- (PREPARE TRANSACTION refuses a transaction that sent a NOTIFY).
-- Temporary tables are left out. pgwitness's own triggers, when made,
-- are remembered (sync_watch()).
-- ON sql_drop: a dropped table that was watched (the dropped objects
-- include its pgwitness_insert trigger, or stream_tables lists it) is
-- announced by name, on the channel trigger_watches remembers (the
-- default one when it has none), and by logical message only when only
-- the stream watched it; it stays remembered, as dropped. A dropped
-- partition or child of a watched table that still exists (its triggers
-- pgwitness_*_<oid of that table>) announces that table: its rows left
-- it. A watch removed (its pgwitness_insert dropped, the table stays) is
-- forgotten.
-- It never fails the DDL: any error is caught and raised as a WARNING
-- (the DDL commits; that announcement is lost), and a role without USAGE
-- on this schema gets a WARNING for watched tables only.
CREATE OR REPLACE FUNCTION :"schema".on_ddl_event()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
DECLARE
    _r record;
    _o record;
    _again text[];
    _payload text;
    _stream_off boolean;
    -- the watched tables this session dropped without USAGE (below)
    _dropped jsonb := coalesce(nullif(current_setting('pgwitness.dropped_watched', true), ''),
                               '[]')::jsonb;
    -- this schema (the event triggers'), and whether the role may use it
    _nsp oid := (SELECT p.pronamespace
                   FROM pg_event_trigger e JOIN pg_proc p ON p.oid = e.evtfoid
                  WHERE e.evtname IN ('pgwitness_ddl_command_end', 'pgwitness_sql_drop')
                  LIMIT 1);
    _schema text := _nsp::regnamespace::text;
    _usage boolean := coalesce(has_schema_privilege(_nsp, 'USAGE'), true);
BEGIN
    -- The DDL of watch_below() (migration 4) and rewatch(), pgwitness's own
    -- triggers: no definition change, and made by it while it runs.
    IF coalesce(current_setting('pgwitness.watch_below', true), '') = 'on' THEN
        RETURN;
    END IF;
    IF TG_EVENT = 'sql_drop' THEN
        IF NOT _usage THEN
            -- Nothing of this schema can be called (see below), nor can
            -- trigger_watches be read: what the catalog still says. The
            -- watched tables dropped (their pgwitness_insert trigger, or a
            -- publication, among the dropped objects), and the watched
            -- tables the rows of a dropped descendant left (its triggers
            -- name them), are announced on the default channel and by
            -- logical message; the names dropped are remembered for the
            -- session (pgwitness.dropped_watched), so that a table made
            -- again under one of them is reported (below).
            FOR _r IN
                WITH d AS (SELECT * FROM pg_event_trigger_dropped_objects()),
                hit AS (
                    SELECT g.address_names[1] AS s, g.address_names[2] AS t,
                           g.object_type = 'trigger' AS triggered, true AS own,
                           CASE WHEN g.object_type = 'publication relation'
                                THEN g.address_args[1] END AS pub
                      FROM d g
                     WHERE (g.object_type = 'trigger' AND g.address_names[3] = 'pgwitness_insert')
                        OR g.object_type = 'publication relation'
                    UNION ALL
                    SELECT n.nspname::text, c.relname::text, true, false, NULL
                      FROM d g
                      JOIN pg_class c
                        ON c.oid = substring(g.address_names[3] FROM '_([0-9]+)$')::oid
                      JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE g.object_type = 'trigger'
                       AND g.address_names[3] ~ '^pgwitness_(insert|stream_truncate)_[0-9]+$'
                )
                SELECT h.s, h.t, bool_or(h.triggered) AS triggered, bool_or(h.own) AS own,
                       string_agg(DISTINCT h.pub, ', ') AS pubs
                  FROM hit h GROUP BY h.s, h.t ORDER BY h.s, h.t
            LOOP
                BEGIN
                    _payload := format('{"version":1,"schema":%s,"table":%s,"op":"ddl"}',
                                       to_json(_r.s)::text, to_json(_r.t)::text);
                    IF _r.triggered THEN
                        PERFORM pg_notify('pgwitness', _payload);
                    END IF;
                    IF current_setting('wal_level') = 'logical' THEN
                        PERFORM pg_logical_emit_message(true, 'pgwitness', _payload);
                    END IF;
                    IF _r.own THEN
                        IF NOT _dropped @> jsonb_build_array(jsonb_build_array(_r.s, _r.t)) THEN
                            _dropped := _dropped || jsonb_build_array(jsonb_build_array(_r.s, _r.t));
                            PERFORM set_config('pgwitness.dropped_watched', _dropped::text,
                                               false);
                        END IF;
                        RAISE WARNING 'pgwitness: %.% was dropped by role %, which has no USAGE '
                                      'on the pgwitness schema: its drop was announced %, and a '
                                      'table made again under its name will not be watched',
                                      _r.s, _r.t, current_user,
                                      CASE WHEN _r.triggered
                                           THEN 'on the default channel (pgwitness) and to '
                                                'the stream only'
                                           ELSE format('to the stream only (it was in '
                                                       'publication %s)', _r.pubs) END
                            USING HINT = format('GRANT USAGE ON SCHEMA %s TO %I (the event '
                                                'triggers then watch a table made again), or '
                                                'watch %I.%I again once it is made',
                                                _schema, current_user, _r.s, _r.t);
                    END IF;
                EXCEPTION WHEN OTHERS THEN
                    RAISE WARNING 'pgwitness: the drop of %.% was not announced: %', _r.s, _r.t,
                        SQLERRM
                        USING HINT = 'call pgw_pq_announce_ddl() (pgwitness announce) for it';
                END;
            END LOOP;
            RETURN;
        END IF;
        FOR _r IN
            WITH d AS (SELECT * FROM pg_event_trigger_dropped_objects()),
            own AS (
                SELECT o.objid, o.schema_name AS s, o.object_name AS t,
                       EXISTS (SELECT FROM d g
                                WHERE g.object_type = 'trigger'
                                  AND g.address_names[1] = o.schema_name
                                  AND g.address_names[2] = o.object_name
                                  AND g.address_names[3] = 'pgwitness_insert') AS triggered,
                       -- (NULL: the role may not read stream_tables; then
                       -- a publication it was in, as the catalog says)
                       coalesce(stream_watched(o.objid::regclass),
                                EXISTS (SELECT FROM d g
                                         WHERE g.object_type = 'publication relation'
                                           AND g.address_names[1] = o.schema_name
                                           AND g.address_names[2] = o.object_name))
                           AS streamed
                  FROM d o
                 WHERE o.object_type IN ('table', 'foreign table')
            ),
            above AS (
                SELECT DISTINCT substring(g.address_names[3] FROM '_([0-9]+)$')::oid AS relid
                  FROM d g
                 WHERE g.object_type = 'trigger'
                   AND g.address_names[3] ~ '^pgwitness_(insert|stream_truncate)_[0-9]+$'
            )
            -- the watched tables dropped: on their own channel (remembered
            -- in trigger_watches; the default one when not), by logical
            -- message only when only the stream watched them
            SELECT own.s, own.t, own.objid,
                   CASE WHEN own.triggered
                        THEN (SELECT ARRAY[w.channel] FROM trigger_watches w
                               WHERE w.relid = own.objid) END AS channels,
                   own.triggered AS notify
              FROM own WHERE own.triggered OR own.streamed
            UNION
            -- the watched tables the rows of a dropped descendant left
            SELECT n.nspname::text, c.relname::text, NULL::oid, NULL::text[], true
              FROM above a JOIN pg_class c ON c.oid = a.relid
              JOIN pg_namespace n ON n.oid = c.relnamespace
            ORDER BY 1, 2
        LOOP
            BEGIN
                PERFORM announce_ddl(_r.s, _r.t, _r.channels, _r.notify);
                IF _r.objid IS NOT NULL THEN
                    PERFORM sync_watch(_r.objid); -- remembered as dropped
                END IF;
            EXCEPTION WHEN OTHERS THEN
                RAISE WARNING 'pgwitness: the drop of %.% was not announced: %', _r.s, _r.t,
                    SQLERRM
                    USING HINT = 'call pgw_pq_announce_ddl() (pgwitness announce) for it';
            END;
        END LOOP;
        -- an index or constraint dropped (a primary key, a REPLICA
        -- IDENTITY USING INDEX index) while its table stays: a table
        -- published for the stream left without a usable replica identity
        -- gets REPLICA IDENTITY FULL (migration 8). A constraint names its
        -- table; an index does not, so DROP INDEX checks every table the
        -- stream watches. The indexes of a table dropped with it (DROP
        -- TABLE, DROP SCHEMA) need nothing.
        _again := ARRAY(SELECT DISTINCT c.oid::text
                          FROM pg_event_trigger_dropped_objects() g
                          JOIN pg_namespace n ON n.nspname = g.address_names[1]
                          JOIN pg_class c ON c.relnamespace = n.oid
                                         AND c.relname = g.address_names[2]
                         WHERE g.object_type = 'table constraint');
        IF EXISTS (SELECT FROM pg_event_trigger_dropped_objects() g
                    WHERE g.object_type = 'index')
           AND NOT EXISTS (SELECT FROM pg_event_trigger_dropped_objects() g
                            WHERE g.object_type IN ('table', 'materialized view')) THEN
            _again := NULL; -- every table
        END IF;
        IF _again IS NULL OR cardinality(_again) > 0 THEN
            BEGIN
                PERFORM keep_replica_identity(_again::oid[]);
            EXCEPTION WHEN OTHERS THEN
                RAISE WARNING 'pgwitness: replica identities were not checked: %', SQLERRM
                    USING HINT = 'a table published without a usable replica identity fails '
                                 'its writers'' UPDATE and DELETE: give it a primary key or '
                                 'REPLICA IDENTITY FULL';
            END;
        END IF;
        -- a watch removed (pgw_pq_unwatch_table: its triggers dropped, the
        -- table stays): forgotten
        BEGIN
            PERFORM sync_watch(c.oid)
               FROM pg_event_trigger_dropped_objects() g
               JOIN pg_namespace n ON n.nspname = g.address_names[1]
               JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = g.address_names[2]
              WHERE g.object_type = 'trigger' AND g.address_names[3] = 'pgwitness_insert';
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgwitness: %', SQLERRM;
        END;
        RETURN;
    END IF;
    -- pgwitness's own triggers made (a watch: pgw_pq_watch_table):
    -- remembered, so that a drop and make-again of the table keeps it
    IF _usage THEN
        BEGIN
            PERFORM sync_watch(tg.tgrelid)
               FROM pg_event_trigger_ddl_commands() x
               JOIN pg_trigger tg ON tg.oid = x.objid
              WHERE x.classid = 'pg_trigger'::regclass AND tg.tgname = 'pgwitness_insert';
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'pgwitness: %', SQLERRM;
        END;
    END IF;
    PERFORM set_config('pgwitness.in_ddl_event', 'on', true);
    FOR _r IN
        SELECT c.oid AS relid, n.nspname::text AS s, c.relname::text AS t,
               bool_or(x.command_tag IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO',
                                         'CREATE FOREIGN TABLE')) AS created,
               bool_or(x.command_tag = 'ALTER TABLE') AS altered
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
            -- a table made again under the name of a watched table this
            -- session dropped (above): not watched again
            IF _r.created AND _dropped @> jsonb_build_array(jsonb_build_array(_r.s, _r.t)) THEN
                _payload := format('{"version":1,"schema":%s,"table":%s,"op":"ddl"}',
                                   to_json(_r.s)::text, to_json(_r.t)::text);
                PERFORM pg_notify('pgwitness', _payload);
                IF current_setting('wal_level') = 'logical' THEN
                    -- running streams read their configuration again,
                    -- which reports the table as a GAP (remembered_gaps())
                    PERFORM pg_logical_emit_message(true, 'pgwitness', _payload);
                    PERFORM pg_logical_emit_message(true, 'pgwitness.config', '');
                END IF;
                RAISE WARNING 'pgwitness: %.% was watched before it was dropped, and is not '
                              'watched again: role % has no USAGE on the pgwitness schema, so '
                              'its writes reach no subscription', _r.s, _r.t, current_user
                    USING HINT = format('GRANT USAGE ON SCHEMA %s TO %I, then watch %I.%I '
                                        'again (pgwitness watch)', _schema, current_user,
                                        _r.s, _r.t);
                CONTINUE;
            END IF;
            IF EXISTS (WITH RECURSIVE up(relid) AS (
                           SELECT _r.relid
                           UNION
                           SELECT i.inhparent FROM pg_inherits i JOIN up ON i.inhrelid = up.relid)
                       SELECT FROM up
                        WHERE EXISTS (SELECT FROM pg_trigger t WHERE t.tgrelid = up.relid
                                         AND t.tgname LIKE 'pgwitness\_%')
                           OR EXISTS (SELECT FROM pg_publication_rel pr
                                       WHERE pr.prrelid = up.relid)) THEN
                IF _r.created THEN
                    RAISE WARNING 'pgwitness: %.% lies below a watched table, but role % has no '
                                  'USAGE on the pgwitness schema: it was not given the '
                                  'triggers that report its writes, and its making was not '
                                  'announced', _r.s, _r.t, current_user
                        USING HINT = 'grant the role USAGE, then watch the table above it '
                                     'again (pgw_pq_watch_gaps lists what is not covered)';
                ELSE
                    RAISE WARNING 'pgwitness: the definition change of %.% was not announced: '
                                  'role % has no USAGE on the pgwitness schema', _r.s, _r.t,
                                  current_user
                        USING HINT = 'grant it USAGE, or have a role with USAGE call '
                                     'pgw_pq_announce_ddl() (pgwitness announce) for the table';
                END IF;
                -- a published table (it, or a partition below it) left
                -- without a usable replica identity: keep_replica_identity()
                -- cannot be called, so say what its writers meet and what
                -- to run (the catalog: any publication of updates or deletes)
                FOR _o IN
                    SELECT n.nspname::text AS s, l.relname::text AS t,
                           CASE l.relreplident WHEN 'n' THEN 'NOTHING' WHEN 'i' THEN 'USING INDEX'
                                               ELSE 'DEFAULT' END AS ident
                      FROM (SELECT _r.relid AS relid
                            UNION
                            SELECT t.relid FROM pg_partition_tree(_r.relid) t) pt
                      JOIN pg_class l ON l.oid = pt.relid AND l.relkind = 'r'
                      JOIN pg_namespace n ON n.oid = l.relnamespace
                     WHERE NOT (l.relreplident = 'f'
                                OR (l.relreplident = 'd'
                                    AND EXISTS (SELECT FROM pg_index x
                                                 WHERE x.indrelid = l.oid AND x.indisprimary))
                                OR (l.relreplident = 'i'
                                    AND EXISTS (SELECT FROM pg_index x
                                                 WHERE x.indrelid = l.oid AND x.indisreplident)))
                       AND EXISTS (SELECT FROM pg_publication_rel pr
                                     JOIN pg_publication p ON p.oid = pr.prpubid
                                    WHERE (p.pubupdate OR p.pubdelete)
                                      AND (pr.prrelid = l.oid
                                           OR pr.prrelid IN (SELECT a.relid
                                                               FROM pg_partition_ancestors(l.oid) a)))
                     ORDER BY 1, 2
                LOOP
                    RAISE WARNING 'pgwitness: %.% is published without a usable replica identity '
                                  '(REPLICA IDENTITY %), so PostgreSQL fails its writers'' UPDATE '
                                  'and DELETE; role % has no USAGE on the pgwitness schema, so it '
                                  'was not made REPLICA IDENTITY FULL', _o.s, _o.t, _o.ident,
                                  current_user
                        USING HINT = format('ALTER TABLE %I.%I REPLICA IDENTITY FULL (or give it '
                                            'a primary key)', _o.s, _o.t);
                END LOOP;
            END IF;
            CONTINUE;
        END IF;
        BEGIN
            _again := NULL;
            IF _r.created THEN
                _again := rewatch(_r.relid::regclass);
                -- a new table below nothing, under no remembered name: no
                -- more to do (most CREATE TABLEs)
                CONTINUE WHEN _again IS NULL
                    AND NOT EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = _r.relid);
            END IF;
            -- (firing modes as they are: a trigger disabled on purpose
            -- stays disabled, below_plan())
            PERFORM set_config('pgwitness.keep_firing_modes', 'on', true);
            PERFORM watch_descendant(_r.relid::regclass);
            IF EXISTS (SELECT FROM pg_inherits i WHERE i.inhparent = _r.relid) THEN
                PERFORM watch_below(_r.relid::regclass, _r.relid::regclass);
            END IF;
            PERFORM set_config('pgwitness.keep_firing_modes', '', true);
            -- a trigger of ours disabled (ALTER TABLE ... DISABLE TRIGGER;
            -- kept so, above): said to the role, and running streams read
            -- their configuration again, which reports it as a GAP (not
            -- at CREATE TRIGGER: a watch makes the stream's ENABLE ALWAYS
            -- by the ALTER TABLE after it)
            IF _r.altered THEN
                _stream_off := false;
                FOR _o IN
                    SELECT t.tgname::text AS tg, t.tgname LIKE 'pgwitness\_stream\_%' AS stream,
                           -- the watched table whose trigger it is (a
                           -- descendant's name that table's OID)
                           coalesce(substring(t.tgname FROM '_([0-9]+)$')::oid::regclass::text,
                                    format('%I.%I', _r.s, _r.t)) AS watched
                      FROM pg_trigger t
                     WHERE t.tgrelid = _r.relid AND t.tgname LIKE 'pgwitness\_%'
                       AND (t.tgenabled = 'D'
                            OR (t.tgenabled <> 'A' AND t.tgname LIKE 'pgwitness\_stream\_%'))
                     ORDER BY 1
                LOOP
                    RAISE WARNING 'pgwitness: trigger % of %.% is disabled, so the writes it '
                                  'reports reach no subscription', _o.tg, _r.s, _r.t
                        USING HINT = format('watch %s again (pgwitness watch %s%s) to enable it; '
                                            'pgw_pq_watch_gaps lists what is not covered',
                                            _o.watched, _o.watched,
                                            CASE WHEN _o.stream THEN ' --source=wal' ELSE '' END);
                    _stream_off := _stream_off OR _o.stream;
                END LOOP;
                IF _stream_off AND current_setting('wal_level') = 'logical' THEN
                    PERFORM pg_logical_emit_message(true, 'pgwitness.config', '');
                END IF;
            END IF;
            PERFORM publish_child(_r.relid::regclass);
            -- a watched table renamed: its old name too (trigger_watches
            -- and stream_tables remember it)
            FOR _o IN
                SELECT w.schema_name AS s, w.table_name AS t, w.channel AS ch
                  FROM trigger_watches w
                 WHERE w.relid = _r.relid AND (w.schema_name, w.table_name) <> (_r.s, _r.t)
            LOOP
                PERFORM announce_ddl(_o.s, _o.t, ARRAY[_o.ch]);
            END LOOP;
            IF stream_watched(_r.relid::regclass) THEN -- NULL: may not read stream_tables
                FOR _o IN
                    SELECT DISTINCT st.schema_name AS s, st.table_name AS t
                      FROM stream_tables st
                     WHERE st.relid = _r.relid AND (st.schema_name, st.table_name) <> (_r.s, _r.t)
                       AND NOT EXISTS (SELECT FROM trigger_watches w
                                        WHERE w.relid = _r.relid
                                          AND (w.schema_name, w.table_name)
                                              = (st.schema_name, st.table_name))
                LOOP
                    PERFORM announce_ddl(_o.s, _o.t, NULL, false);
                END LOOP;
            END IF;
            PERFORM sync_watch(_r.relid);
            IF EXISTS (SELECT FROM ddl_targets(_r.relid::regclass)) THEN
                PERFORM announce_ddl(_r.s, _r.t);
            ELSIF _again IS NOT NULL THEN -- made again, but not watched again
                PERFORM announce_ddl(_r.s, _r.t, _again, cardinality(_again) > 0);
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
    PERFORM set_config('pgwitness.in_ddl_event', '', true);
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'pgwitness: a definition change was not announced: %', SQLERRM
        USING HINT = 'call pgw_pq_announce_ddl() (pgwitness announce) for the tables it changed';
END
$fn$;

COMMENT ON FUNCTION :"schema".announce_ddl(text, text, text[], boolean) IS
    'pgwitness: announces a table''s definition change to both write sources (migration_005.sql)';
COMMENT ON FUNCTION :"schema".on_ddl_event() IS
    'pgwitness: the function of the ddl_command_end and sql_drop event triggers '
    '(pgw_pq_install_ddl_trigger)';

-- Watched tables made again without their watch: a table of the name of
-- one that trigger_watches or stream_tables remembers, whose remembered
-- OID no longer exists (it was dropped), and which is not watched as it
-- was: the triggers (source 'triggers': it has no pgwitness_insert) or
-- the stream (source 'stream': it is not in the publication, nor below a
-- table that is). The event triggers watch such a table again (rewatch());
-- this lists what they could not: made by a role without USAGE on this
-- schema (nothing of it could be called), made while the event triggers
-- were not installed, or made without a value column or a usable replica
-- identity (rewatch() warned the role that made it). One row per table and
-- source: the table, the channel (triggers) or the publication (stream)
-- it was watched on, and one line saying so and what to do, in the shape
-- of the stream's GAP messages (stream_targets.sql). The stream's rows
-- only when the role may read stream_tables. Changes nothing.
CREATE OR REPLACE FUNCTION :"schema".remembered_gaps()
RETURNS TABLE (relid oid, schema_name text, table_name text, source text, channel text,
               publication text, message text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
BEGIN
    RETURN QUERY
    SELECT c.oid, w.schema_name, w.table_name, 'triggers'::text, w.channel, NULL::text,
           format('%I.%I was watched by the triggers (channel %s) before it was dropped, and '
                  'was made again without them, so its writes are not sent: watch %I.%I '
                  'again (pgw_pq_watch_table)', w.schema_name, w.table_name,
                  w.channel, w.schema_name, w.table_name)
      FROM trigger_watches w
      JOIN pg_namespace n ON n.nspname = w.schema_name
      JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = w.table_name
     WHERE NOT EXISTS (SELECT FROM pg_class x WHERE x.oid = w.relid)
       AND NOT EXISTS (SELECT FROM pg_trigger t
                        WHERE t.tgrelid = c.oid AND t.tgname = 'pgwitness_insert'
                          AND t.tgfoid = 'notify_statement()'::regprocedure);
    IF NOT has_table_privilege('stream_tables', 'SELECT') THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT DISTINCT c.oid, st.schema_name, st.table_name, 'stream'::text, NULL::text,
           st.publication::text,
           format('%I.%I was watched for the stream (publication %I) before it was dropped, '
                  'and was made again outside the publication, so its writes are not sent: '
                  '%swatch %I.%I again (pgw_pq_stream_watch_table)', st.schema_name,
                  st.table_name, st.publication,
                  CASE WHEN (SELECT sh.key_columns = '{}' AND c.relreplident <> 'f'
                               FROM stream_shape(c.oid) sh)
                       THEN 'give it a primary key (or REPLICA IDENTITY FULL) and ' ELSE '' END,
                  st.schema_name, st.table_name)
      FROM stream_tables st
      JOIN pg_namespace n ON n.nspname = st.schema_name
      JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = st.table_name
     WHERE NOT EXISTS (SELECT FROM pg_class x WHERE x.oid = st.relid)
       AND NOT EXISTS (WITH RECURSIVE up(relid) AS (
                           SELECT c.oid
                           UNION
                           SELECT i.inhparent FROM pg_inherits i JOIN up ON i.inhrelid = up.relid)
                       SELECT FROM up
                         JOIN pg_publication_rel pr ON pr.prrelid = up.relid
                         JOIN pg_publication p ON p.oid = pr.prpubid
                        WHERE p.pubname = st.publication);
END
$fn$;

-- Descendants of watched tables whose writes are not reported now: a
-- partition attached or created, or an inheritance child made, after its
-- ancestor was watched (nothing runs at that moment to give it triggers).
-- One row per descendant and watched table: the descendant, the watched
-- table, and `source`: 'triggers' (pgw_pq_watch_table), 'stream' (the
-- TRUNCATE trigger of pgw_pq_stream_watch_table) or 'stream, triggers'.
-- Watching the table again, or watch_descendant(), covers them. Then the
-- watched tables made again without their watch (remembered_gaps()): the
-- table is its own "watched table", and `source` says which watch it lacks.
-- Then the watched tables whose own statement triggers are disabled (the
-- table is its own "watched table", source 'triggers'; enable them, or
-- watch it again). Changes nothing. (Moved here from migration 4, which it was in until
-- version 6, for remembered_gaps().)
CREATE OR REPLACE FUNCTION :"schema".watch_gaps()
RETURNS TABLE (relid oid, schema_name text, table_name text, watched_relid oid,
               watched_schema text, watched_table text, source text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, :"schema", pg_temp
AS $fn$
WITH watched AS (
    SELECT t.tgrelid AS relid
      FROM pg_trigger t
     WHERE t.tgname = 'pgwitness_insert' AND t.tgfoid = 'notify_statement()'::regprocedure
    UNION
    -- (through stream_watched(), which reads stream_tables only when the
    -- role may: a role that watches with the triggers may not)
    SELECT c.oid FROM pg_class c
     WHERE c.relkind = 'p' AND coalesce(stream_watched(c.oid::regclass), false)
)
SELECT * FROM (
SELECT p.relid, dn.nspname::text, d.relname::text, w.relid, wn.nspname::text, wc.relname::text,
       p.missing
  FROM watched w
 CROSS JOIN LATERAL below_plan(w.relid::regclass) p
  JOIN pg_class d ON d.oid = p.relid
  JOIN pg_namespace dn ON dn.oid = d.relnamespace
  JOIN pg_class wc ON wc.oid = w.relid
  JOIN pg_namespace wn ON wn.oid = wc.relnamespace
 WHERE p.missing IS NOT NULL
UNION
SELECT g.relid, g.schema_name, g.table_name, g.relid, g.schema_name, g.table_name, g.source
  FROM remembered_gaps() g
UNION
-- a watched table whose own statement triggers are disabled (ALTER TABLE
-- ... DISABLE TRIGGER): its writes are not sent until they are enabled
SELECT c.oid, n.nspname::text, c.relname::text, c.oid, n.nspname::text, c.relname::text,
       'triggers'
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE EXISTS (SELECT FROM pg_trigger t
                WHERE t.tgrelid = c.oid
                  AND t.tgname IN ('pgwitness_insert', 'pgwitness_update', 'pgwitness_delete',
                                   'pgwitness_truncate')
                  AND t.tgfoid = 'notify_statement()'::regprocedure AND t.tgenabled = 'D')
) x
 ORDER BY 5, 6, 2, 3, 7
$fn$;

COMMENT ON FUNCTION :"schema".watch_gaps() IS
    'pgwitness: descendants of watched tables whose writes are not reported, and watched tables '
    'made again without their watch (watch the table again)';
COMMENT ON FUNCTION :"schema".remembered_gaps() IS
    'pgwitness: watched tables dropped and made again without their watch (migration_005.sql)';
COMMENT ON FUNCTION :"schema".sync_stream(oid) IS
    'pgwitness: keeps stream_tables what the catalog says, and tells running streams when their '
    'targets went stale (migration_005.sql)';
