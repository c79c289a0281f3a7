-- Catalog-only capture: names, types, order and pg_stats profiles of one or
-- more tables, in one parameterised query. It never reads the tables
-- themselves (pg_stat_user_tables.seq_scan does not move; tests prove it).
--   $1 oid[]  the tables, by OID; or NULL to look one up by name:
--   $2 text   schema name  (when $1 is NULL)
--   $3 text   table name   (when $1 is NULL)
-- pg_stats only shows rows the role may read (column SELECT privilege, no
-- active row-level security), so such columns come back without a profile
-- rather than as an error. Partitioned parents use the inherited = true
-- statistics. Each column's pg_stats row comes back as the profile JSON
-- object of docs/formats.md (arrays as JSON, so no array-literal parser is
-- needed; the core applies the bounds). `print_settings` lets the caller check the settings that change
-- how values print (DateStyle, IntervalStyle, extra_float_digits,
-- bytea_output). By hand:
--   PREPARE capture(oid[], text, text) AS <this query>;
--   EXECUTE capture(NULL, 'public', 'penguins');
SELECT c.oid::int8                                      AS table_oid,
       n.nspname                                        AS schema_name,
       c.relname                                        AS table_name,
       c.reltuples::float8                              AS reltuples,
       (extract(epoch FROM clock_timestamp()) * 1000000)::int8 AS captured_at,
       a.attnum                                         AS attnum,
       a.attname                                        AS column_name,
       format_type(a.atttypid, a.atttypmod)             AS column_type,
       CASE WHEN s.attname IS NOT NULL THEN json_build_object(
           'null_frac', s.null_frac,
           'n_distinct', s.n_distinct,
           'avg_width', s.avg_width,
           'most_common_vals', coalesce(to_json(s.most_common_vals::text::text[]), '[]'::json),
           'most_common_freqs', coalesce(to_json(s.most_common_freqs), '[]'::json),
           'histogram_bounds', coalesce(to_json(s.histogram_bounds::text::text[]), '[]'::json),
           'correlation', s.correlation)::text
       END                                              AS profile,
       concat_ws('|', current_setting('DateStyle'), current_setting('IntervalStyle'),
                 current_setting('extra_float_digits'), current_setting('bytea_output'))
                                                        AS print_settings
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_attribute a
       ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_catalog.pg_stats s
       ON s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = a.attname
      AND s.inherited = (c.relkind = 'p')
WHERE c.relkind IN ('r', 'p', 'm', 'f')
  AND (c.oid = ANY ($1::oid[])
       OR ($1::oid[] IS NULL AND n.nspname = $2::text AND c.relname = $3::text))
ORDER BY c.oid, a.attnum
