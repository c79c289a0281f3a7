-- What pgw_pq_stream_watch_table needs to know about one table before it
-- publishes it, and the DDL that does (run after locking the table, in the
-- same transaction). Parameters:
--   $1 text  the table's schema      $2 text  the table's name
--   $3 text  the publication
-- One row, or none when there is no such table:
--   relid, relkind, relispartition   the table
--   root            for a partition: its partitioned root, qualified
--   key_columns     its primary key's columns, in key order (none: '{}')
--   bad_identity    '' or, for the first relation of its tree (the table,
--                   its partitions, its inheritance children) that has no
--                   usable replica identity, what to do: PostgreSQL fails
--                   a published table's UPDATE and DELETE without one
--                   (documentation, "Logical Replication", "Publication")
--   wal_level       current_setting('wal_level')
--   pub_problem     '' or what an existing publication lacks (it must
--                   publish insert, update, delete and truncate, and a
--                   partitioned table via its root)
--   ddl             the statements to run, separated by semicolons: the
--                   publication when missing, then ADD TABLE for the table
--                   and each inheritance child not yet published (ONLY:
--                   each once; a partitioned table brings its partitions)
--   added_children  how many inheritance children the DDL adds while the
--                   table itself was published already (their writes were
--                   not published before)
-- By hand:
--   PREPARE sw(text, text, text) AS <this query>;
--   EXECUTE sw('public', 'tasks', 'pgwitness');
WITH RECURSIVE
tbl AS (
    SELECT c.oid, c.relkind, c.relispartition
      FROM pg_catalog.pg_class c
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1::text AND c.relname = $2::text
),
tree(relid, depth) AS (
    SELECT oid, 0 FROM tbl
    UNION ALL
    SELECT i.inhrelid, t.depth + 1
      FROM pg_catalog.pg_inherits i JOIN tree t ON i.inhparent = t.relid
),
members AS (
    SELECT c.oid, c.relkind, c.relreplident, c.relname, n.nspname, t.depth,
           EXISTS (SELECT FROM pg_catalog.pg_publication_rel pr
                     JOIN pg_catalog.pg_publication p ON p.oid = pr.prpubid
                    WHERE p.pubname = $3::text AND pr.prrelid = c.oid) AS published,
           c.relkind = 'p'                                   -- holds no rows itself
           OR c.relreplident = 'f'
           OR (c.relreplident = 'd' AND EXISTS (SELECT FROM pg_catalog.pg_index x
                                                WHERE x.indrelid = c.oid AND x.indisprimary))
           OR (c.relreplident = 'i' AND EXISTS (SELECT FROM pg_catalog.pg_index x
                                                WHERE x.indrelid = c.oid AND x.indisreplident))
               AS identity_ok
      FROM tree t
      JOIN pg_catalog.pg_class c ON c.oid = t.relid
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
),
pub AS (
    SELECT p.* FROM pg_catalog.pg_publication p WHERE p.pubname = $3::text
)
SELECT tbl.oid AS relid,
       tbl.relkind::text AS relkind,
       tbl.relispartition,
       CASE WHEN tbl.relispartition THEN
       coalesce((SELECT format('%I.%I', rn.nspname, rc.relname)
                   FROM pg_catalog.pg_partition_ancestors(tbl.oid) a(relid)
                   JOIN pg_catalog.pg_class rc ON rc.oid = a.relid
                   JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
                  WHERE NOT rc.relispartition
                  LIMIT 1), '') ELSE '' END AS root,
       coalesce(ARRAY(SELECT a.attname::text
                        FROM pg_catalog.pg_index x
                        CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
                        JOIN pg_catalog.pg_attribute a
                          ON a.attrelid = x.indrelid AND a.attnum = k.attnum
                       WHERE x.indrelid = tbl.oid AND x.indisprimary
                       ORDER BY k.ord), '{}') AS key_columns,
       coalesce((SELECT format('%I.%I has no usable replica identity (REPLICA IDENTITY %s%s): '
                               'add a primary key, or run ALTER TABLE %I.%I REPLICA IDENTITY FULL',
                               m.nspname, m.relname,
                               CASE m.relreplident WHEN 'n' THEN 'NOTHING' WHEN 'i' THEN 'USING INDEX'
                                                   ELSE 'DEFAULT' END,
                               CASE m.relreplident WHEN 'd' THEN ' without a primary key'
                                                   WHEN 'i' THEN ' without its index' ELSE '' END,
                               m.nspname, m.relname)
                   FROM members m WHERE NOT m.identity_ok
                  ORDER BY m.depth, m.nspname, m.relname LIMIT 1), '') AS bad_identity,
       current_setting('wal_level') AS wal_level,
       coalesce((SELECT concat_ws('; ',
                        CASE WHEN NOT (pub.pubinsert AND pub.pubupdate AND pub.pubdelete
                                       AND pub.pubtruncate)
                             THEN format('publication %I does not publish every operation: '
                                         'ALTER PUBLICATION %I SET (publish = ''insert, update, '
                                         'delete, truncate'')', pub.pubname, pub.pubname) END,
                        CASE WHEN tbl.relkind = 'p' AND NOT pub.pubviaroot
                             THEN format('publication %I publishes partitions under their own '
                                         'names: ALTER PUBLICATION %I SET '
                                         '(publish_via_partition_root = true)',
                                         pub.pubname, pub.pubname) END)
                   FROM pub), '') AS pub_problem,
       array_to_string(
           CASE WHEN NOT EXISTS (SELECT FROM pub)
                THEN ARRAY[format('CREATE PUBLICATION %I WITH (publish = ''insert, update, '
                                  'delete, truncate'', publish_via_partition_root = true)', $3::text)]
                ELSE '{}'::text[] END
           || CASE WHEN coalesce((SELECT puballtables FROM pub), false) THEN '{}'::text[]
                   ELSE ARRAY(SELECT format('ALTER PUBLICATION %I ADD TABLE %s%I.%I', $3::text,
                                            CASE WHEN m.relkind = 'p' THEN '' ELSE 'ONLY ' END,
                                            m.nspname, m.relname)
                                FROM members m
                               WHERE NOT m.published
                                 AND (m.depth = 0 OR m.relkind <> 'p')
                                 -- partitions come with their partitioned root
                                 AND NOT EXISTS (SELECT FROM pg_catalog.pg_class pc
                                                  WHERE pc.oid = m.oid AND pc.relispartition)
                               ORDER BY m.depth, m.nspname, m.relname) END, '; ') AS ddl,
       (SELECT count(*) FROM members m
         WHERE m.depth > 0 AND NOT m.published AND m.relkind <> 'p'
           AND EXISTS (SELECT FROM members s WHERE s.depth = 0 AND s.published)
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_class pc
                            WHERE pc.oid = m.oid AND pc.relispartition))::int AS added_children
  FROM tbl
