-- The drop funnel (pgw_pq_drop_table), first step: the session settings it
-- changes for the drop and gives back after it -- the caller's
-- statement_timeout and lock_timeout (the snapshot runs under the drop
-- options' own; drop_prepare.sql restores them before the drop itself) and
-- client_min_messages (quieted for DROP TABLE IF EXISTS's notice; given
-- back at the end, or by the COMMIT of the funnel's own transaction).
-- No parameters. One row of three text columns, in that order.
SELECT current_setting('statement_timeout'),
       current_setting('lock_timeout'),
       current_setting('client_min_messages')
