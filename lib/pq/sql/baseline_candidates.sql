-- Baseline pass: live tables that have no snapshot of their current OID
-- yet, oldest (lowest OID) first. System schemas and pgwitness's own schema
-- are never candidates.
--   $1 text  schema LIKE pattern   $2 text  table LIKE pattern
--   $3 int   how many at most      $4 text  pgwitness's own schema name
-- Returns the candidates and, in every row, how many there are in all.
SELECT c.oid::int8 AS table_oid, count(*) OVER () AS backlog
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p')
  AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', $4::text)
  AND n.nspname NOT LIKE 'pg\_%'
  AND n.nspname LIKE $1::text
  AND c.relname LIKE $2::text
  AND NOT EXISTS (SELECT 1 FROM :"schema".snapshots s
                  WHERE s.table_oid = c.oid AND s.table_name = c.relname)
ORDER BY c.oid
LIMIT $3::int
