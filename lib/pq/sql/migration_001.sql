-- pgwitness migration 1: schema snapshots and the drop audit.
-- Applied by pgw_pq_install; by hand (after install.sql):
--   psql -v schema=pgwitness -f lib/pq/sql/migration_001.sql

-- One row per snapshot: the snapshot JSON (docs/formats.md) plus indexed
-- columns for look-ups by table, resource, OID and time.
CREATE TABLE :"schema".snapshots (
    id                bigserial PRIMARY KEY,
    captured_at       timestamptz NOT NULL,
    schema_name       text NOT NULL,
    table_name        text NOT NULL,
    table_oid         oid NOT NULL,
    -- Plain text naming the upstream resource. Deliberately no foreign key:
    -- the snapshot must outlive whatever it names.
    resource_identity text,
    reason            text NOT NULL,
    schema_hash       text NOT NULL CHECK (schema_hash ~ '^[0-9a-f]{16}$'),
    stats_available   boolean NOT NULL,
    row_estimate      bigint,  -- null: never analysed (reltuples = -1), never 0
    column_count      integer NOT NULL,
    snapshot          jsonb NOT NULL,
    extra             jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX snapshots_by_table ON :"schema".snapshots (schema_name, table_name, captured_at DESC);
CREATE INDEX snapshots_by_resource ON :"schema".snapshots (resource_identity, captured_at DESC);
CREATE INDEX snapshots_by_oid ON :"schema".snapshots (table_oid);
CREATE INDEX snapshots_by_time ON :"schema".snapshots (captured_at);
-- Snapshot documents are compressed with lz4 where the server has it
-- (PostgreSQL 14+ built --with-lz4): several times cheaper to write than
-- the default pglz, which matters for the baseline pass.
SELECT set_config('pgwitness.snapshots_table', quote_ident(:'schema') || '.snapshots', true);
DO $lz4$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 AND EXISTS (
           SELECT 1 FROM pg_catalog.pg_settings
           WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        EXECUTE 'ALTER TABLE ' || current_setting('pgwitness.snapshots_table')
                || ' ALTER COLUMN snapshot SET COMPRESSION lz4';
    END IF;
END
$lz4$;

COMMENT ON TABLE :"schema".snapshots IS
    'pgwitness schema snapshots: what a table looked like before it was dropped';

-- One row per drop that went through the funnel (pgw_pq_drop_table),
-- whether or not its snapshot could be taken.
CREATE TABLE :"schema".drop_audit (
    id                bigserial PRIMARY KEY,
    dropped_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    schema_name       text NOT NULL,
    table_name        text NOT NULL,
    table_oid         oid,
    resource_identity text,
    reason            text NOT NULL,
    dropped           boolean NOT NULL,  -- false: the table was already gone
    snapshot_id       bigint,            -- no foreign key: prune may remove it
    capture_error     text,              -- why there is no snapshot
    capture_sqlstate  text
);
CREATE INDEX drop_audit_by_table ON :"schema".drop_audit (schema_name, table_name, dropped_at DESC);
COMMENT ON TABLE :"schema".drop_audit IS
    'pgwitness drop funnel audit: every drop, with its snapshot or the reason it has none';
