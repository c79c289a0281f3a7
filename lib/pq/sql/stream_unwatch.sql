-- What pgw_pq_stream_unwatch_table drops from the publication. Parameters:
--   $1 text  the table's schema      $2 text  the table's name
--   $3 text  the publication
-- One row, or none when there is no such table: relid, and ddl, the
-- ALTER PUBLICATION ... DROP TABLE statements (separated by semicolons)
-- for the table and each inheritance child of it that is published; ''
-- when none is.
-- By hand:
--   PREPARE su(text, text, text) AS <this query>;
--   EXECUTE su('public', 'tasks', 'pgwitness');
WITH RECURSIVE
tbl AS (
    SELECT c.oid
      FROM pg_catalog.pg_class c
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1::text AND c.relname = $2::text
),
tree(relid, depth) AS (
    SELECT oid, 0 FROM tbl
    UNION ALL
    SELECT i.inhrelid, t.depth + 1
      FROM pg_catalog.pg_inherits i JOIN tree t ON i.inhparent = t.relid
)
SELECT tbl.oid AS relid,
       array_to_string(ARRAY(
           SELECT format('ALTER PUBLICATION %I DROP TABLE %s%I.%I', $3::text,
                         CASE WHEN c.relkind = 'p' THEN '' ELSE 'ONLY ' END,
                         n.nspname, c.relname)
             FROM tree t
             JOIN pg_catalog.pg_class c ON c.oid = t.relid
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE EXISTS (SELECT FROM pg_catalog.pg_publication_rel pr
                            JOIN pg_catalog.pg_publication p ON p.oid = pr.prpubid
                           WHERE p.pubname = $3::text AND pr.prrelid = c.oid)
            ORDER BY t.depth DESC, n.nspname, c.relname), '; ') AS ddl
  FROM tbl
