-- The drop funnel (pgw_pq_drop_table), after the snapshot and before DROP
-- TABLE IF EXISTS: gives the drop the caller's statement_timeout and
-- lock_timeout back (read by drop_settings.sql), quiets the notice IF
-- EXISTS gives for a missing table, each for the rest of the transaction
-- only, and learns whether there is a table to drop.
--   $1 text  the caller's statement_timeout   $2 text  its lock_timeout
--   $3 text  the table, quoted and qualified ("schema"."table")
-- One row; its fourth column is the table's OID, NULL when there is no
-- such table.
SELECT set_config('statement_timeout', $1, true),
       set_config('lock_timeout', $2, true),
       set_config('client_min_messages', 'warning', true),
       to_regclass($3)::oid::int8
