-- The drop funnel's audit row (pgw_pq_drop_table): one row per drop, written
-- after DROP TABLE IF EXISTS under its own savepoint (an audit table that is
-- missing or refuses the row does not undo the drop). The id is drawn from
-- the sequence up front, so the statement needs INSERT on the table and
-- USAGE on its sequence, but not SELECT (INSERT ... RETURNING would); the
-- INSERT runs although nothing reads it, as every data-modifying WITH does.
--   $1 text     the table's schema       $2 text     its name
--   $3 oid      its OID (NULL: there was no such table)
--   $4 text     resource identity (NULL: none)   $5 text  reason
--   $6 boolean  whether a table was dropped
--   $7 bigint   the snapshot's id (NULL: none was taken)
--   $8 text     why there is no snapshot    $9 text  that failure's SQLSTATE
--   $10 text    pgwitness's schema name
-- Returns the new row's id.
WITH n AS (
    SELECT nextval(pg_get_serial_sequence(format('%I.drop_audit', $10::text), 'id')) AS id
), ins AS (
    INSERT INTO :"schema".drop_audit (id, schema_name, table_name, table_oid,
                                      resource_identity, reason, dropped, snapshot_id,
                                      capture_error, capture_sqlstate)
    SELECT id, $1, $2, $3::oid, $4, $5, $6::boolean, $7::bigint, $8, $9
    FROM n
)
SELECT id FROM n
