-- Stores snapshots: parallel arrays, one element per snapshot, in one
-- statement (the baseline pass stores a whole batch at once). Returns the
-- new ids in input order.
WITH input AS (
    SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::oid[], $5::text[],
                         $6::text[], $7::text[], $8::boolean[], $9::bigint[], $10::int[],
                         $11::jsonb[])
           WITH ORDINALITY AS u(captured_at, schema_name, table_name, table_oid,
                                resource_identity, reason, schema_hash, stats_available,
                                row_estimate, column_count, snapshot, ord)
), stored AS (
    INSERT INTO :"schema".snapshots (captured_at, schema_name, table_name, table_oid,
                                     resource_identity, reason, schema_hash, stats_available,
                                     row_estimate, column_count, snapshot, extra)
    SELECT captured_at, schema_name, table_name, table_oid, resource_identity, reason,
           schema_hash, stats_available, row_estimate, column_count, snapshot,
           snapshot -> 'extra'
    FROM input ORDER BY ord
    RETURNING id
)
SELECT id FROM stored ORDER BY id
