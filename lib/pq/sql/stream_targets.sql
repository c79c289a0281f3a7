-- The tables a stream reports, read after stream_config.sql on the
-- replication connection (simple query protocol; pgwitness substitutes
-- :'publication' as a literal, the placeholder :values_join by a
-- subquery on <schema>.stream_tables when stream_config.sql found it
-- readable, else by '{}'::text[], and :remembered_gaps by the stream's
-- rows of <schema>.remembered_gaps() when stream_config.sql found it
-- callable, else by an empty set). One row per relation whose writes the
-- publication sends, per table it is reported as (kind 't'), and one per
-- problem (kind 'g'):
--   kind, relid, target_schema, target_table, key_columns (the target's
--   primary key, in key order), value_columns, message, depth (how far
--   below its target the relation is: 0 for itself), full_rows (the old
--   tuples the server sends for it are full rows: REPLICA IDENTITY FULL on
--   it and on every partition under it, pgw_pgoutput_set_full_rows()),
--   att_names, att_types, att_typmods (the relation's columns as a
--   Relation message would send them now (read for depth 0): attnum > 0, not dropped, not
--   generated, in attnum order; pgw_pgoutput_expect_relation(), so that a
--   DDL before its first change is seen; NULL for problems)
-- A published table is its own target; its partitions and inheritance
-- children are reported as it (a child published in its own right gets
-- both). Problems: a published table without a primary key (its IDs are
-- unknown), an inheritance child of a published table that is not
-- published itself (its writes are not sent), a partition of a
-- partitioned table published via its root without pgwitness's TRUNCATE
-- trigger, or with it not ENABLE ALWAYS (migration_004.sql: its TRUNCATE is
-- not sent, or not in every role), a table watched for the stream that
-- was dropped and made again outside the publication (remembered_gaps(),
-- migration_005.sql: the event triggers could not publish it again), a
-- publication that does not
-- publish every operation, or publishes the partitions of a partitioned
-- table under their own names.
-- By hand: psql "dbname=... replication=database" -v publication=pgwitness
--   -v values_join="'{}'::text[]" \
--   -v remembered_gaps="(SELECT 0::oid relid, ''::text schema_name, ''::text table_name, ''::text message WHERE false)" \
--   -f lib/pq/sql/stream_targets.sql
WITH RECURSIVE
raw AS (
    SELECT c.oid, c.relispartition
      FROM pg_catalog.pg_publication_tables pt
      JOIN pg_catalog.pg_namespace n ON n.nspname = pt.schemaname
      JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename
     WHERE pt.pubname = :'publication'
),
-- A partition is listed when the publication does not publish via the
-- root: it is reported as its partitioned root all the same.
published AS (
    SELECT DISTINCT CASE WHEN r.relispartition THEN pg_catalog.pg_partition_root(r.oid)
                         ELSE r.oid END AS relid
      FROM raw r
),
keyed AS (
    SELECT p.relid, n.nspname, c.relname, c.relkind,
           ARRAY(SELECT a.attname::text
                   FROM pg_catalog.pg_index x
                   CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
                   JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
                  WHERE x.indrelid = p.relid AND x.indisprimary
                  ORDER BY k.ord) AS key_columns,
           :values_join AS value_columns
      FROM published p
      JOIN pg_catalog.pg_class c ON c.oid = p.relid
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
),
tree(top, relid, depth) AS (
    SELECT relid, relid, 0 FROM keyed
    UNION ALL
    SELECT t.top, i.inhrelid, t.depth + 1
      FROM pg_catalog.pg_inherits i JOIN tree t ON i.inhparent = t.relid
)
SELECT * FROM (
SELECT 't' AS kind, t.relid, k.nspname AS target_schema, k.relname AS target_table,
       k.key_columns, k.value_columns, '' AS message, t.depth,
       NOT EXISTS (SELECT FROM pg_catalog.pg_partition_tree(t.relid) pt
                     JOIN pg_catalog.pg_class l ON l.oid = pt.relid
                    WHERE pt.isleaf AND l.relreplident <> 'f') AS full_rows,
       ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = t.relid AND a.attnum > 0 AND NOT a.attisdropped
                AND a.attgenerated = '' ORDER BY a.attnum) AS att_names,
       ARRAY(SELECT a.atttypid FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = t.relid AND a.attnum > 0 AND NOT a.attisdropped
                AND a.attgenerated = '' ORDER BY a.attnum) AS att_types,
       ARRAY(SELECT a.atttypmod FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = t.relid AND a.attnum > 0 AND NOT a.attisdropped
                AND a.attgenerated = '' ORDER BY a.attnum) AS att_typmods
  FROM tree t JOIN keyed k ON k.relid = t.top
UNION ALL
SELECT 'g', k.relid, k.nspname, k.relname, '{}', '{}',
       format('%I.%I has no primary key: the stream reports its writes with unknown row IDs '
              '(add a primary key)', k.nspname, k.relname), 0, false, NULL, NULL, NULL
  FROM keyed k WHERE cardinality(k.key_columns) = 0
UNION ALL
SELECT 'g', c.oid, k.nspname, k.relname, '{}', '{}',
       format('%I.%I inherits from %I.%I but is not in publication %I, so its writes are not '
              'sent: watch %I.%I again (pgw_pq_stream_watch_table) to add it',
              cn.nspname, c.relname, k.nspname, k.relname, :'publication', k.nspname, k.relname),
       t.depth, false, NULL, NULL, NULL
  FROM tree t
  JOIN keyed k ON k.relid = t.top
  JOIN pg_catalog.pg_class c ON c.oid = t.relid
  JOIN pg_catalog.pg_namespace cn ON cn.oid = c.relnamespace
 WHERE t.depth > 0 AND NOT c.relispartition
   AND NOT EXISTS (SELECT FROM raw r WHERE r.oid = c.oid)
UNION ALL
SELECT 'g', c.oid, k.nspname, k.relname, '{}', '{}',
       CASE WHEN tg.mode IS NULL THEN
       format('%I.%I is a partition of %I.%I without pgwitness''s TRUNCATE trigger, so '
              'TRUNCATE %I.%I is not sent (a publication via the partition root does not '
              'publish it): watch %I.%I again (pgw_pq_stream_watch_table) to add it',
              cn.nspname, c.relname, k.nspname, k.relname, cn.nspname, c.relname,
              k.nspname, k.relname)
       ELSE
       format('%I.%I is a partition of %I.%I whose pgwitness TRUNCATE trigger is %s, so '
              'TRUNCATE %I.%I is not sent %s(a publication via the partition root does not '
              'publish it): watch %I.%I again (pgw_pq_stream_watch_table) to make it '
              'ENABLE ALWAYS',
              cn.nspname, c.relname, k.nspname, k.relname,
              CASE tg.mode WHEN 'D' THEN 'disabled' ELSE 'not ENABLE ALWAYS' END,
              cn.nspname, c.relname,
              CASE tg.mode WHEN 'D' THEN ''
                           WHEN 'R' THEN 'outside session_replication_role = replica '
                           ELSE 'under session_replication_role = replica ' END,
              k.nspname, k.relname)
       END,
       t.depth, false, NULL, NULL, NULL
  FROM tree t
  JOIN keyed k ON k.relid = t.top
  JOIN pg_catalog.pg_class c ON c.oid = t.relid
  JOIN pg_catalog.pg_namespace cn ON cn.oid = c.relnamespace
  -- its TRUNCATE trigger's firing mode (migration_004.sql: ENABLE ALWAYS)
  LEFT JOIN LATERAL (
       SELECT tg.tgenabled::text AS mode
         FROM pg_catalog.pg_trigger tg
         JOIN pg_catalog.pg_proc fp ON fp.oid = tg.tgfoid
        WHERE tg.tgrelid = c.oid
          AND tg.tgname = 'pgwitness_stream_truncate_' || k.relid
          AND fp.proname = 'notify_statement') tg ON true
 WHERE t.depth > 0 AND c.relispartition AND k.relkind = 'p'
   AND EXISTS (SELECT FROM pg_catalog.pg_publication p
                WHERE p.pubname = :'publication' AND p.pubviaroot)
   AND tg.mode IS DISTINCT FROM 'A'
UNION ALL
SELECT 'g', g.relid, g.schema_name, g.table_name, '{}', '{}', g.message, 0, false, NULL, NULL, NULL
  FROM :remembered_gaps g
UNION ALL
SELECT 'g', 0, '', '', '{}', '{}',
       format('publication %I does not publish every operation: ALTER PUBLICATION %I SET '
              '(publish = ''insert, update, delete, truncate'')', p.pubname, p.pubname), 0, false, NULL, NULL, NULL
  FROM pg_catalog.pg_publication p
 WHERE p.pubname = :'publication'
   AND NOT (p.pubinsert AND p.pubupdate AND p.pubdelete AND p.pubtruncate)
UNION ALL
SELECT 'g', k.relid, k.nspname, k.relname, '{}', '{}',
       format('publication %I publishes the partitions of %I.%I under their own names, so '
              'partitions attached later are not reported as it: ALTER PUBLICATION %I SET '
              '(publish_via_partition_root = true)', :'publication', k.nspname, k.relname,
              :'publication'), 0, false, NULL, NULL, NULL
  FROM keyed k
 WHERE k.relkind = 'p' AND NOT EXISTS (SELECT FROM pg_catalog.pg_publication p
                                       WHERE p.pubname = :'publication' AND p.pubviaroot)
) rows
-- Targets first, each relation's in order from its topmost watched table
-- down (a child's parent before itself), then the problems.
ORDER BY kind DESC, relid, depth DESC, target_schema, target_table, message
