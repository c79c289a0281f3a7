-- Catalog-only capture: names, types, order and pg_stats profiles of one or
-- more tables, in one parameterised query. It never reads the tables
-- themselves (pg_stat_user_tables.seq_scan does not move; tests prove it).
--   $1 oid[]  the tables, by OID; or NULL to look one up by name:
--   $2 text   schema name  (when $1 is NULL)
--   $3 text   table name   (when $1 is NULL)
-- pg_stats only shows rows the role may read (column SELECT privilege, no
-- active row-level security), so such columns come back without a profile
-- rather than as an error. Partitioned parents use the inherited = true
-- statistics. pg_stats is read once per table (the OFFSET 0 keeps the
-- planner from expanding the view over the whole catalog). The value lists
-- come back as the array literals PostgreSQL prints (anyarray::text, the
-- text ::text::text[] would parse); the adapter parses them (lib/pq/
-- pg_array.c) and the core applies the bounds - casting each list to
-- text[] on the server doubled the cost of the query. `print_settings` lets the caller check the settings
-- that change how values print (DateStyle, IntervalStyle,
-- extra_float_digits, bytea_output). By hand:
--   PREPARE capture(oid[], text, text) AS <this query>;
--   EXECUTE capture(NULL, 'public', 'penguins');
WITH t AS (
    SELECT c.oid, n.nspname, c.relname, c.relkind, c.reltuples
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'm', 'f')
      AND c.oid = ANY (coalesce($1::oid[], ARRAY(
              SELECT c2.oid FROM pg_catalog.pg_class c2
              JOIN pg_catalog.pg_namespace n2 ON n2.oid = c2.relnamespace
              WHERE n2.nspname = $2::text AND c2.relname = $3::text)))
), st AS (
    SELECT t.oid AS relid, s.attname, s.null_frac, s.n_distinct, s.avg_width, s.correlation,
           s.most_common_vals::text AS mcv,
           s.most_common_freqs::text AS freqs,
           s.histogram_bounds::text AS hist
    FROM t
    CROSS JOIN LATERAL (
        SELECT * FROM pg_catalog.pg_stats s
        WHERE s.schemaname = t.nspname AND s.tablename = t.relname
          AND s.inherited = (t.relkind = 'p')
        OFFSET 0) s
)
SELECT t.oid::int8                                      AS table_oid,
       t.nspname                                        AS schema_name,
       t.relname                                        AS table_name,
       t.reltuples::float8                              AS reltuples,
       (extract(epoch FROM clock_timestamp()) * 1000000)::int8 AS captured_at,
       a.attnum                                         AS attnum,
       a.attname                                        AS column_name,
       format_type(a.atttypid, a.atttypmod)             AS column_type,
       st.attname IS NOT NULL                           AS has_stats,
       st.null_frac, st.n_distinct, st.avg_width, st.correlation,
       st.mcv, st.freqs, st.hist,
       concat_ws('|', current_setting('DateStyle'), current_setting('IntervalStyle'),
                 current_setting('extra_float_digits'), current_setting('bytea_output'))
                                                        AS print_settings
FROM t
LEFT JOIN pg_catalog.pg_attribute a
       ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN st ON st.relid = t.oid AND st.attname = a.attname
ORDER BY t.oid, a.attnum
