-- Stores snapshots: parallel arrays, one element per snapshot, in one
-- statement (the baseline pass stores a whole batch at once). Returns the
-- new ids in input order. The ids are drawn from the sequence up front, so
-- the statement needs INSERT on the table and USAGE on its sequence, but
-- not SELECT (INSERT ... RETURNING would).
--   $1..$11 the columns, as arrays   $12 text  pgwitness's schema name
-- (input is referenced twice and calls a volatile function, so it is
-- evaluated once, in order.)
WITH input AS (
    SELECT nextval(pg_get_serial_sequence(format('%I.snapshots', $12::text), 'id')) AS id, u.*
    FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::oid[], $5::text[],
                         $6::text[], $7::text[], $8::boolean[], $9::bigint[], $10::int[],
                         $11::jsonb[])
           WITH ORDINALITY AS u(captured_at, schema_name, table_name, table_oid,
                                resource_identity, reason, schema_hash, stats_available,
                                row_estimate, column_count, snapshot, ord)
), stored AS (
    INSERT INTO :"schema".snapshots (id, captured_at, schema_name, table_name, table_oid,
                                     resource_identity, reason, schema_hash, stats_available,
                                     row_estimate, column_count, snapshot, extra)
    SELECT id, captured_at, schema_name, table_name, table_oid, resource_identity, reason,
           schema_hash, stats_available, row_estimate, column_count, snapshot,
           snapshot -> 'extra'
    FROM input
)
SELECT id FROM input ORDER BY ord
