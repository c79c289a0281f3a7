-- The gaps of a triggers tenant that listen_gaps.sql does not see, read
-- with it (UNION ALL) when listen_gap_schemas.sql found the schema's
-- remembered_gaps() callable: the tables watched on that channel that were
-- dropped and made again without their triggers (by a role without USAGE
-- on this schema, or while the DDL event triggers were not installed).
-- Parameter: $1 text, the channel. Columns as listen_gaps.sql's, the
-- watched table being the table itself. By hand:
--   PREPARE rgaps(text) AS <this query, with :"schema">;
--   EXECUTE rgaps('pgwitness');
SELECT g.schema_name, g.table_name, g.schema_name AS watched_schema,
       g.table_name AS watched_table, g.message
  FROM :"schema".remembered_gaps() g
 WHERE g.source = 'triggers' AND g.channel = $1::text
 ORDER BY g.schema_name, g.table_name
