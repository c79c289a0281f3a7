-- pgwitness migration 8: a DDL never leaves a table published for the
-- stream without a usable replica identity. Applied by pgw_pq_install,
-- after migration 5 again (its functions changed: on_ddl_event() and
-- announce_ddl() call keep_replica_identity(), new). By hand (after
-- migration_007.sql):
--   psql -v schema=pgwitness -f lib/pq/sql/migration_005.sql
--   psql -v schema=pgwitness -f lib/pq/sql/migration_008.sql
--
-- PostgreSQL fails every UPDATE and DELETE of a published table that has
-- no usable replica identity ("cannot update table ... because it does
-- not have a replica identity and publishes updates"; documentation,
-- "Logical Replication", "Publication", and ALTER TABLE, REPLICA
-- IDENTITY). A watch refuses such a table (stream_watch.sql), but a DDL
-- after it can make one: ALTER TABLE ... DROP CONSTRAINT of its primary
-- key, DROP INDEX of its REPLICA IDENTITY USING INDEX index, ALTER TABLE
-- ... REPLICA IDENTITY NOTHING, a partition created or attached without a
-- key below a root that has none. From then on every writer's UPDATE and
-- DELETE of it fails. keep_replica_identity() gives such a table REPLICA
-- IDENTITY FULL (what a table without a key needs to be published), with
-- a WARNING to the role that ran the DDL, so that writers never fail.

-- The tables at or below `rels` (every table stream_tables lists, when
-- NULL), and their partitions and inheritance children, that hold rows
-- (relkind 'r'), are published with updates or deletes by a publication
-- a stream watches tables of (stream_tables.publication; its partitions
-- through their partitioned ancestor), and have no usable replica
-- identity: NOTHING, DEFAULT without a primary key, or USING INDEX
-- without its index. One row per such table: its name, its replica
-- identity as ALTER TABLE spells it, and the publications (", ").
-- SECURITY DEFINER, since the event triggers run as the role doing the
-- DDL, which may not read stream_tables; as safe as sync_stream(): it
-- reads the catalog and changes nothing.
CREATE OR REPLACE FUNCTION :"schema".identity_gaps(rels oid[])
RETURNS TABLE (relid oid, schema_name text, table_name text, replica_identity text,
               publications text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, :"schema", pg_temp
SET plan_cache_mode = force_generic_plan
AS $fn$
BEGIN
    -- (PL/pgSQL, not SQL, and one generic plan: planned once per session,
    -- not at each call; the event triggers call it at DDL of watched
    -- tables, and its planning costs more than its run)
    IF rels IS NULL THEN
        rels := ARRAY(SELECT DISTINCT st.relid FROM stream_tables st);
    END IF;
    RETURN QUERY
    WITH RECURSIVE tree(relid) AS (
        SELECT r FROM unnest(rels) r
        UNION
        SELECT i.inhrelid FROM pg_inherits i JOIN tree t ON i.inhparent = t.relid
    ),
    bad AS (
        SELECT c.oid, c.relnamespace, c.relname, c.relreplident, c.relispartition
          FROM (SELECT DISTINCT t.relid FROM tree t) t
          JOIN pg_class c ON c.oid = t.relid AND c.relkind = 'r'
         WHERE NOT (c.relreplident = 'f'
                    OR (c.relreplident = 'd'
                        AND EXISTS (SELECT FROM pg_index x
                                     WHERE x.indrelid = c.oid AND x.indisprimary))
                    OR (c.relreplident = 'i'
                        AND EXISTS (SELECT FROM pg_index x
                                     WHERE x.indrelid = c.oid AND x.indisreplident)))
    )
    SELECT b.oid, n.nspname::text, b.relname::text,
           CASE b.relreplident WHEN 'n' THEN 'NOTHING' WHEN 'i' THEN 'USING INDEX'
                               ELSE 'DEFAULT' END,
           string_agg(DISTINCT p.pubname::text, ', ' ORDER BY p.pubname::text)
      FROM bad b
      JOIN pg_namespace n ON n.oid = b.relnamespace
      CROSS JOIN LATERAL (SELECT b.oid AS relid
                          UNION ALL
                          SELECT a.relid FROM pg_partition_ancestors(b.oid) a
                           WHERE b.relispartition) up
      JOIN pg_publication_rel pr ON pr.prrelid = up.relid
      JOIN pg_publication p ON p.oid = pr.prpubid
     WHERE (p.pubupdate OR p.pubdelete)
       AND p.pubname IN (SELECT st.publication FROM stream_tables st)
     GROUP BY b.oid, n.nspname, b.relname, b.relreplident
     ORDER BY 2, 3;
END
$fn$;

-- Gives each table of identity_gaps(rels) REPLICA IDENTITY FULL, as the
-- role running it (SECURITY INVOKER: a table's owner may; a definer's
-- rights would let any role alter any table), with a WARNING naming the
-- table, what its replica identity was and the publications; then
-- running streams read their configuration again (sync_stream(): its old
-- tuples are full rows now). A role that may not alter the table (not a
-- member of its owner's role) gets a WARNING with the ALTER TABLE to run,
-- and the table stays as it is. The ALTER runs with
-- pgwitness.watch_below on, so the event trigger it fires does nothing.
-- Returns how many tables it altered.
CREATE OR REPLACE FUNCTION :"schema".keep_replica_identity(rels oid[])
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, :"schema", pg_temp
SET plan_cache_mode = force_generic_plan
AS $fn$
DECLARE
    _g record;
    _n integer := 0;
    _guard text := coalesce(current_setting('pgwitness.watch_below', true), '');
BEGIN
    -- (most DDL: tables that hold rows, have no descendants and keep a
    -- usable replica identity; nothing more to read)
    IF rels IS NOT NULL AND NOT EXISTS (
           SELECT FROM unnest(rels) r(relid)
             LEFT JOIN pg_class c ON c.oid = r.relid
            WHERE c.relkind IS DISTINCT FROM 'r'
               OR EXISTS (SELECT FROM pg_inherits i WHERE i.inhparent = r.relid)
               OR NOT (c.relreplident = 'f'
                       OR (c.relreplident = 'd'
                           AND EXISTS (SELECT FROM pg_index x
                                        WHERE x.indrelid = c.oid AND x.indisprimary))
                       OR (c.relreplident = 'i'
                           AND EXISTS (SELECT FROM pg_index x
                                        WHERE x.indrelid = c.oid AND x.indisreplident)))) THEN
        RETURN 0;
    END IF;
    FOR _g IN SELECT g.*, pg_has_role(c.relowner, 'USAGE') AS owner,
                     EXISTS (SELECT FROM pg_index x
                              WHERE x.indrelid = c.oid AND x.indisprimary) AS has_key
                FROM identity_gaps(rels) g JOIN pg_class c ON c.oid = g.relid
    LOOP
        IF NOT _g.owner THEN
            RAISE WARNING 'pgwitness: %.% has no usable replica identity (REPLICA IDENTITY %) '
                          'and is published for the stream (publication %), so PostgreSQL '
                          'fails its writers'' UPDATE and DELETE; role % does not own it',
                          _g.schema_name, _g.table_name, _g.replica_identity,
                          _g.publications, current_user
                USING HINT = format('its owner runs ALTER TABLE %I.%I REPLICA IDENTITY FULL '
                                    '(or gives it a primary key)', _g.schema_name,
                                    _g.table_name);
            CONTINUE;
        END IF;
        PERFORM set_config('pgwitness.watch_below', 'on', true);
        EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY FULL', _g.schema_name,
                       _g.table_name);
        PERFORM set_config('pgwitness.watch_below', _guard, true);
        _n := _n + 1;
        RAISE WARNING 'pgwitness: %.% was left without a usable replica identity (REPLICA '
                      'IDENTITY %) while published for the stream (publication %), which '
                      'would fail its writers'' UPDATE and DELETE: it is REPLICA IDENTITY '
                      'FULL now', _g.schema_name, _g.table_name, _g.replica_identity,
                      _g.publications
            USING HINT = format('%s ALTER TABLE %I.%I REPLICA IDENTITY DEFAULT); to leave '
                                'it without one, unwatch it first (pgwitness unwatch '
                                '--source=wal)',
                                CASE WHEN _g.has_key
                                     THEN 'its primary key can be its replica identity ('
                                     ELSE 'give it a primary key (then' END,
                                _g.schema_name, _g.table_name);
        PERFORM sync_stream(_g.relid);
    END LOOP;
    RETURN _n;
END
$fn$;

COMMENT ON FUNCTION :"schema".identity_gaps(oid[]) IS
    'pgwitness: tables published for the stream without a usable replica identity '
    '(migration_008.sql)';
COMMENT ON FUNCTION :"schema".keep_replica_identity(oid[]) IS
    'pgwitness: gives the tables of identity_gaps() REPLICA IDENTITY FULL, with a WARNING '
    '(migration_008.sql)';
