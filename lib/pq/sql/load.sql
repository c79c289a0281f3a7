-- Loads stored snapshots. Every filter is optional (NULL: no filter):
--   $1 bigint id   $2 text schema + $3 text table   $4 text resource
--   $5 oid table   $6 int8 since (usec since the epoch, inclusive)
--   $7 int8 until (usec, exclusive)   $8 bool newest first   $9 bigint limit
SELECT id, snapshot::text
FROM :"schema".snapshots
WHERE ($1::bigint IS NULL OR id = $1::bigint)
  AND ($2::text IS NULL OR (schema_name = $2::text AND table_name = $3::text))
  AND ($4::text IS NULL OR resource_identity = $4::text)
  AND ($5::oid IS NULL OR table_oid = $5::oid)
  AND ($6::int8 IS NULL OR captured_at >= 'epoch'::timestamptz + $6::int8 * interval '1 microsecond')
  AND ($7::int8 IS NULL OR captured_at < 'epoch'::timestamptz + $7::int8 * interval '1 microsecond')
ORDER BY CASE WHEN $8::bool THEN captured_at END DESC,
         CASE WHEN $8::bool THEN id END DESC,
         captured_at, id
LIMIT $9::bigint
