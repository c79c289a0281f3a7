-- The statement triggers of one watched table (pgw_pq_watch_table): what
-- the table is (with, for a partition, its root), whether the trigger
-- function and watch_below() (migration_004.sql: the triggers of its
-- partitions and inheritance children, made after these) are installed,
-- whether it has descendants, and the DDL that
-- (re)creates the four triggers, in order (the existing ones are dropped
-- first, so watching again replaces them; trigger names are fixed, see
-- unwatch.sql). When the four triggers already are exactly what the DDL
-- would create -- enabled (plain or ALWAYS: watch_mode.sql, run next, sets
-- which), AFTER ... FOR EACH STATEMENT on their event with
-- their transition tables, no column list or WHEN, calling this schema's
-- notify_statement() with these arguments (channel, key of now, value
-- columns) -- the DDL is empty: watching again changes nothing and takes no
-- lock on the table. Parameters:
--   $1 text    the table's schema      $2 text    the table's name
--   $3 text    the library schema      $4 text[]  the channel, then the
--                                                 value columns
-- The trigger arguments are the channel, what the table's primary key is
-- now (three arguments, read by the function's fast path and checked by it
-- at each call: lib/pq/sql/migration_002.sql, TG_ARGV), then the value
-- columns. The key is described when it has one column of a type whose
-- JSON text is its output text, and this table's replica identity index is
-- that key's index (the default replica identity); a table without a
-- primary key under the default replica identity is '0'; anything else is
-- '' (the function reads the catalog).
-- Triggers of those names that call another function than a
-- notify_statement are not pgwitness's: the first is named in the column
-- foreign_trigger (the watch is refused rather than replacing the owner's trigger).
-- Run after watch_lock.sql, in the same transaction.
-- The DDL comes as one text, statements separated by semicolons. No row:
-- there is no such table. EXECUTE PROCEDURE (not FUNCTION) keeps
-- PostgreSQL 10 working. By hand (psql; then run the ddl column):
--   PREPARE watch(text, text, text, text[]) AS <this query>;
--   EXECUTE watch('public', 'tasks', 'pgwitness', '{pgwitness,status}');
SELECT c.relkind::text AS relkind,
       c.relispartition,
       to_regprocedure(format('%I.notify_statement()', $3::text)) IS NOT NULL AS installed,
       CASE WHEN cur.current THEN '' ELSE
       array_to_string(ARRAY(SELECT format('DROP TRIGGER %I ON %I.%I', t.tgname, $1::text, $2::text)
               FROM pg_catalog.pg_trigger t
              WHERE t.tgrelid = c.oid
                AND t.tgname IN ('pgwitness_insert', 'pgwitness_update', 'pgwitness_delete',
                                 'pgwitness_truncate')
                AND EXISTS (SELECT FROM pg_catalog.pg_proc p
                             WHERE p.oid = t.tgfoid AND p.proname = 'notify_statement')
              ORDER BY t.tgname)
       || ARRAY[
            format('CREATE TRIGGER pgwitness_insert AFTER INSERT ON %I.%I '
                   'REFERENCING NEW TABLE AS pgw_new '
                   'FOR EACH STATEMENT EXECUTE PROCEDURE %I.notify_statement(%s)',
                   $1::text, $2::text, $3::text, a.args),
            format('CREATE TRIGGER pgwitness_update AFTER UPDATE ON %I.%I '
                   'REFERENCING OLD TABLE AS pgw_old NEW TABLE AS pgw_new '
                   'FOR EACH STATEMENT EXECUTE PROCEDURE %I.notify_statement(%s)',
                   $1::text, $2::text, $3::text, a.args),
            format('CREATE TRIGGER pgwitness_delete AFTER DELETE ON %I.%I '
                   'REFERENCING OLD TABLE AS pgw_old '
                   'FOR EACH STATEMENT EXECUTE PROCEDURE %I.notify_statement(%s)',
                   $1::text, $2::text, $3::text, a.args),
            format('CREATE TRIGGER pgwitness_truncate AFTER TRUNCATE ON %I.%I '
                   'FOR EACH STATEMENT EXECUTE PROCEDURE %I.notify_statement(%s)',
                   $1::text, $2::text, $3::text, a.args)], ';' || chr(10)) END AS ddl,
       (SELECT format('%s (it calls %s)', t.tgname, t.tgfoid::regprocedure)
          FROM pg_catalog.pg_trigger t
         WHERE t.tgrelid = c.oid
           AND t.tgname IN ('pgwitness_insert', 'pgwitness_update', 'pgwitness_delete',
                            'pgwitness_truncate')
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_proc p
                            WHERE p.oid = t.tgfoid AND p.proname = 'notify_statement')
         ORDER BY t.tgname LIMIT 1) AS foreign_trigger,
       c.oid AS relid,
       -- for a partition: its partitioned root, qualified
       CASE WHEN c.relispartition THEN
            (SELECT format('%I.%I', rn.nspname, rc.relname)
               FROM pg_catalog.pg_class rc
               JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
              WHERE rc.oid = pg_catalog.pg_partition_root(c.oid)) ELSE '' END AS root,
       -- whether the schema has watch_below() (migration_004.sql), and
       -- whether the table has descendants, which need it
       to_regprocedure(format('%I.watch_below(regclass, regclass)', $3::text)) IS NOT NULL
           AS below_installed,
       EXISTS (SELECT FROM pg_catalog.pg_inherits i WHERE i.inhparent = c.oid) AS has_below
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 CROSS JOIN LATERAL (
       SELECT coalesce(
                (SELECT CASE WHEN i.indnkeyatts = 1
                               AND pg_get_replica_identity_index(c.oid) = i.indexrelid
                               AND CASE WHEN ty.typtype = 'd' THEN ty.typbasetype ELSE ty.oid END
                                   IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype,
                                       'oid'::regtype, 'numeric'::regtype, 'float4'::regtype,
                                       'float8'::regtype, 'text'::regtype, 'varchar'::regtype,
                                       'bpchar'::regtype, 'name'::regtype, 'uuid'::regtype)
                             THEN ARRAY[i.indexrelid::text, at.attname::text,
                                        pg_get_indexdef(i.indexrelid, 1, false)]
                             ELSE ARRAY['', '', ''] END
                   FROM pg_catalog.pg_index i
                   JOIN pg_catalog.pg_attribute at
                     ON at.attrelid = i.indrelid AND at.attnum = i.indkey[0]
                   JOIN pg_catalog.pg_type ty ON ty.oid = at.atttypid
                  WHERE i.indrelid = c.oid AND i.indisprimary),
                CASE WHEN c.relreplident = 'd' THEN ARRAY['0', '', ''] ELSE ARRAY['', '', ''] END)
              AS key) k
 CROSS JOIN LATERAL (
       -- The arguments as the DDL writes them, and as pg_trigger.tgargs
       -- holds them: each in the server's encoding, followed by a zero byte.
       SELECT string_agg(quote_literal(u.arg), ', ' ORDER BY u.i) AS args,
              string_agg(convert_to(u.arg, current_setting('server_encoding'))
                         || '\x00'::bytea, ''::bytea ORDER BY u.i) AS tgargs
         FROM unnest(ARRAY[($4::text[])[1]] || k.key || ($4::text[])[2:])
              WITH ORDINALITY AS u(arg, i)) a
 CROSS JOIN LATERAL (
       -- tgtype: AFTER, FOR EACH STATEMENT, one event (INSERT 4, DELETE 8,
       -- UPDATE 16, TRUNCATE 32; PostgreSQL's catalog/pg_trigger.h).
       SELECT count(*) = 4 AS current
         FROM pg_catalog.pg_trigger t
        WHERE t.tgrelid = c.oid
          AND t.tgenabled IN ('O', 'A') -- enabled: watch_mode.sql sets which
          AND t.tgfoid = to_regprocedure(format('%I.notify_statement()', $3::text))
          AND t.tgargs = a.tgargs
          AND t.tgqual IS NULL
          AND cardinality(t.tgattr::int2[]) = 0
          AND (t.tgname::text, t.tgtype::int, coalesce(t.tgoldtable::text, ''),
               coalesce(t.tgnewtable::text, '')) IN (('pgwitness_insert', 4, '', 'pgw_new'),
                                                     ('pgwitness_update', 16, 'pgw_old', 'pgw_new'),
                                                     ('pgwitness_delete', 8, 'pgw_old', ''),
                                                     ('pgwitness_truncate', 32, '', ''))) cur
 WHERE n.nspname = $1::text AND c.relname = $2::text;
