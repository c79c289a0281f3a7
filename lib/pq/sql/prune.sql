-- Retention: per resource (resource_identity, else schema.table), keep the
-- newest $1 snapshots and every snapshot on either side of a schema change
-- (the pair that shows the change); delete the rest. Returns one row: how
-- many it deleted, from how many resources, and how many are left (the
-- main query sees the table as it was before the DELETE).
WITH ranked AS (
    SELECT id, coalesce(resource_identity, schema_name || '.' || table_name) AS resource,
           schema_hash,
           row_number() OVER w_desc AS newest_rank,
           lag(schema_hash) OVER w_asc AS prev_hash,
           lead(schema_hash) OVER w_asc AS next_hash
    FROM :"schema".snapshots
    WINDOW w_asc AS (PARTITION BY coalesce(resource_identity, schema_name || '.' || table_name)
                     ORDER BY captured_at, id),
           w_desc AS (PARTITION BY coalesce(resource_identity, schema_name || '.' || table_name)
                      ORDER BY captured_at DESC, id DESC)
), doomed AS (
    SELECT id, resource FROM ranked
    WHERE newest_rank > $1::int
      AND (prev_hash IS NULL OR prev_hash = schema_hash)
      AND (next_hash IS NULL OR next_hash = schema_hash)
), deleted AS (
    DELETE FROM :"schema".snapshots s USING doomed d
    WHERE s.id = d.id
    RETURNING s.id, d.resource
)
SELECT (SELECT count(*) FROM deleted) AS removed,
       (SELECT count(DISTINCT resource) FROM deleted) AS resources,
       (SELECT count(*) FROM :"schema".snapshots) - (SELECT count(*) FROM deleted) AS kept
