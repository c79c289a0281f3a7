-- pgwitness migration 2: the statement trigger function of query
-- invalidation (docs/wire.md, "What the statement trigger sends").
-- Applied by pgw_pq_install; by hand (after migration_001.sql):
--   psql -v schema=pgwitness -f lib/pq/sql/migration_002.sql
--
-- One function serves every watched table. pgw_pq_watch_table() attaches it
-- as four AFTER ... FOR EACH STATEMENT triggers (lib/pq/sql/watch.sql):
--   INSERT    REFERENCING NEW TABLE AS pgw_new
--   UPDATE    REFERENCING OLD TABLE AS pgw_old NEW TABLE AS pgw_new
--   DELETE    REFERENCING OLD TABLE AS pgw_old
--   TRUNCATE  (no transition table)
-- The per-table configuration travels in the trigger arguments, so writers
-- need no privilege on this schema:
--   TG_ARGV[0]    the NOTIFY channel
--   TG_ARGV[1]    what the table's primary key was when it was watched:
--                 the OID of its index (as text) for a one-column key of a
--                 built-in type whose JSON text is its output text (the
--                 integer types, numeric, float4/8, text, varchar, bpchar,
--                 name, uuid, oid, or a domain over one of them); '0' for
--                 a table without a primary key; '' otherwise
--   TG_ARGV[2]    that key column's name
--   TG_ARGV[3]    the same name as pg_get_indexdef(index, 1, false)
--                 prints it (quoted when it must be)
--   TG_ARGV[4..]  the columns whose old/new values the payload carries
-- Triggers with fewer than four arguments (made by hand) are served by the
-- general path below, without value columns.
--
-- The same function serves the triggers on a watched table's descendants
-- (its partitions at every level, its inheritance children at every
-- level; watch_below() in migration_004.sql). A statement that names a
-- descendant fires the descendant's statement triggers, never the
-- watched table's (PostgreSQL documentation, CREATE TRIGGER, "Notes"), so
-- each descendant has its own, and they report the write as a write to the
-- watched table: its schema and name, its primary key. Their arguments:
--   TG_ARGV[0]    the NOTIFY channel ('' for 'm' below)
--   TG_ARGV[1]    '' (the general path: the key is the watched table's)
--   TG_ARGV[2]    the watched table's OID, as text
--   TG_ARGV[3]    't': the triggers have transition tables, as above;
--                 'n': they have none (a foreign table, which PostgreSQL
--                 does not give transition tables): every statement sends
--                 the table-level form;
--                 'm': a TRUNCATE trigger for the stream (pgw_pq_stream_
--                 watch_table): the truncate form goes out as a
--                 transactional logical message, prefix 'pgwitness'
--                 (pg_logical_emit_message), not as a notification, since
--                 a publication via the partition root does not publish
--                 the TRUNCATE of a partition
--   TG_ARGV[4..]  the value columns, as above
-- At each statement the function checks that the watched table still is
-- an ancestor of the trigger's table (pg_inherits); when it is not (the
-- descendant was detached, or NO INHERIT), or no longer exists, the
-- statement sends nothing: its rows are not the watched table's rows. The
-- watched table's current schema and name are read then, so a rename is
-- followed. Rows are read as the descendant's rows: the watched table's
-- columns have the same names there (an inheritance child may add
-- columns, which appear among an UPDATE's changed columns).
--
-- What it sends, once per statement: pg_notify(channel, payload) with the
-- payload of docs/wire.md, version 1, compact, keys in the canonical order
-- (pgw_payload_encode() writes the same bytes for the same write set).
--
--  * Rows are read as JSON (to_json of the row: every column's text as its
--    output function prints it, under fixed settings, so nothing depends on
--    the writer's session: DateStyle ISO, YMD, IntervalStyle postgres,
--    TimeZone UTC, extra_float_digits 3, bytea_output hex). The fast path
--    needs only extra_float_digits (a SET clause below): the key types it
--    takes print the same under any setting, and comparing texts for
--    equality does not depend on the others (each prints distinct values
--    distinctly); the general path pins them all for its own duration.
--    Every statement of this function is static SQL, planned once per
--    trigger and cached by PL/pgSQL.
--  * Row IDs: the primary key of each changed row, as the key columns'
--    output text (what libpq hands a client; composite keys as arrays, in
--    key order). The JSON text of a value is its output text for numbers,
--    strings, uuid, enums and most types; booleans and date/time types are
--    converted back (t/f, and the ISO output of the value). A key of
--    another type (arrays, composites, json, a type with its own cast to
--    json) has no reliable text: IDs are unknown.
--  * The primary key is never taken on trust: key and column changes after
--    pgw_pq_watch_table() are followed. The fast path (below) uses the key
--    of TG_ARGV[1..3] only when the relation cache and the system caches
--    confirm it at each call: pg_get_replica_identity_index() of the table
--    is that index (under the default replica identity, the primary key: so
--    the key is still there; an index's columns and their types never
--    change, a column changing type gets a new index, a new OID), and
--    pg_get_indexdef() still prints the column's name (it was not renamed).
--    Anything else - a key dropped, replaced or renamed, a REINDEX
--    CONCURRENTLY (a new index OID), another replica identity - takes the
--    general path, which reads the key from the catalog. Watching the table
--    again restores the fast path. (The one assumption: an index OID is not
--    reused for another index of the same table, its replica identity, on a
--    column of the same name but another type - which takes the 32-bit OID
--    counter wrapping around onto it.) A table watched without a key is
--    taken to still have none while pg_get_replica_identity_index() is
--    null: should it get a key while its replica identity is not the
--    default, its IDs stay unknown (conservative) until it is watched again.
--  * UPDATE: old and new rows are paired by key and compared column by
--    column as text (the JSON text of each column, which is exact: floats
--    print all their digits under extra_float_digits = 3, numeric keeps
--    its scale). A pair whose texts are all equal did not change and is
--    not listed: UPDATE t SET x = x lists no row and no column. A key
--    present on one side only is a key change: its ID is
--    listed with a null element on the side where it does not exist,
--    pk_changed is true, and the changed columns are null (unknown) - the
--    transition tables do not say which old row became which new one.
--    Otherwise the changed columns are those whose text differs in any
--    listed pair.
--  * Values of the configured columns (TG_ARGV[4..]) that exist, with the
--    same text rules as keys; a configured column of a type without
--    reliable text is left out (unknown).
--  * A table without a primary key sends unknown IDs (and, for UPDATE,
--    unknown columns: rows cannot be paired).
--  * More than 500 IDs or 100 columns: null with the truncation flag.
--    Then the byte budget - fewer than 8000 bytes in the database encoding,
--    and in UTF-8 when that differs: leave out old/new, then the IDs, then
--    the columns (the table-level form).
--  * A statement that touched no row sends nothing; TRUNCATE sends the
--    truncate form.
--  * It never raises: any error while describing the statement is caught
--    and the table-level form is sent instead, and if even that fails,
--    nothing (the writer's transaction goes on). query_canceled is not
--    caught by WHEN OTHERS, by PostgreSQL's design: a statement timeout
--    still cancels the statement. A full notification queue fails the
--    writer's commit, after this function has returned (docs/wire.md).
--
-- Cost. The function runs while the writer holds the locks of the rows it
-- changed, once per statement; what costs is executor start-up (each SQL
-- query, each subquery, each set-returning function) and, once per
-- transaction, the preparation of each PL/pgSQL expression. So the usual
-- statement - one row, a one-column key, no value columns - takes a fast
-- path of one query (the row, or the old and new rows, as JSON text) and a
-- few expressions: the key check above (two cache look-ups, no catalog
-- query), the ID, and for UPDATE the changed columns found by splitting the
-- two JSON texts into their columns (exact when no value is an array or an
-- object and no string ends with a comma: both are checked, json_each()
-- compares otherwise). Everything else - several rows, no confirmed key,
-- value columns, a key change, a payload of 2000 bytes or more - takes the
-- general path, which reads the primary key from the catalog and handles
-- every case. A statement of several rows leaves the fast path through
-- SELECT ... INTO STRICT (too_many_rows), one that touched no row through
-- no_data_found: raising costs only there.
-- Sources: PostgreSQL documentation, CREATE TRIGGER ("REFERENCING"),
-- PL/pgSQL "Triggers on Data Changes" (transition tables), NOTIFY (payload
-- shorter than 8000 bytes), "JSON Functions and Operators" (to_json:
-- "if the data type ... has a cast to json, the cast function is used"),
-- "System Information Functions" (pg_get_replica_identity_index,
-- pg_get_indexdef), ALTER TABLE (REPLICA IDENTITY).
CREATE OR REPLACE FUNCTION :"schema".notify_statement()
RETURNS trigger
LANGUAGE plpgsql
-- STABLE: PL/pgSQL then runs all the function's queries on the
-- statement's snapshot instead of taking one per query (a third of the
-- cost of a one-row call). The function reads only the transition tables
-- and the catalog; its side effects, pg_notify() and the general path's
-- set_config(), are function calls that read-only execution allows.
STABLE
-- SET: what every path needs (each SET clause costs at every call; the
-- general path pins the other print settings itself, see there).
SET search_path = pg_catalog, pg_temp
SET extra_float_digits = 3
AS $fn$
DECLARE
    -- (No initial values: each would be an expression to evaluate at every
    -- call. The general path declares its own variables.)
    _head     text;
    _payload  text;
    _general  boolean;  -- true: the fast path cannot describe the statement
    _failed   boolean;  -- true: describing it failed, send the table-level form
    _ot       text;     -- fast path: the old row as JSON text
    _nt       text;     --            the new row as JSON text
    _op       text[];   --            their columns, 'name":value' each
    _np       text[];
    _key      text;     --            the key's text
    _cols     text[];   --            the changed columns, as JSON strings
    _x        text;
BEGIN
    _head := '{"version":1,"schema":' || to_json(TG_TABLE_SCHEMA::text)::text
            || ',"table":' || to_json(TG_TABLE_NAME::text)::text
            || ',"op":"' || lower(TG_OP) || '"';

    -- The fast path (see "Cost" above). pg_notify() returns void: its
    -- value is assigned as text (empty) rather than PERFORMed, which would
    -- cost a query.
    IF TG_NARGS = 4 AND TG_ARGV[1] <> '' AND TG_OP <> 'TRUNCATE' THEN
        BEGIN
            IF TG_ARGV[1] = '0' THEN
                -- Watched without a primary key: unknown IDs and columns,
                -- if any row was touched.
                IF pg_get_replica_identity_index(TG_RELID) IS NOT NULL THEN
                    _general := true;  -- a key (or another replica identity)
                ELSE
                    IF TG_OP = 'INSERT' THEN
                        PERFORM FROM pgw_new LIMIT 1;
                    ELSE
                        PERFORM FROM pgw_old LIMIT 1;
                    END IF;
                    IF FOUND THEN
                        _x := pg_notify(TG_ARGV[0], _head
                            || ',"ids":null,"ids_truncated":false,"columns":null,'
                               '"columns_truncated":false,"pk_changed":false}')::text;
                    END IF;
                    RETURN NULL;
                END IF;
            ELSIF pg_get_replica_identity_index(TG_RELID) IS DISTINCT FROM TG_ARGV[1]::oid
                  OR pg_get_indexdef(TG_ARGV[1]::oid, 1, false) IS DISTINCT FROM TG_ARGV[3] THEN
                _general := true;  -- not the key it was: read the catalog
            ELSIF TG_OP = 'UPDATE' THEN
                -- STRICT: several rows raise too_many_rows, none
                -- no_data_found (the cross product of one old and one new
                -- row is one row).
                SELECT to_json(o.*)::text, to_json(n.*)::text INTO STRICT _ot, _nt
                  FROM pgw_old o, pgw_new n;
                _key := _ot::json ->> TG_ARGV[2];
                IF _key IS NULL OR _key IS DISTINCT FROM _nt::json ->> TG_ARGV[2] THEN
                    _general := true;  -- the key changed
                ELSIF _ot = _nt THEN
                    -- every column's text is equal: nothing changed
                    _payload := _head || ',"ids":[],"ids_truncated":false,"columns":[],'
                                '"columns_truncated":false,"pk_changed":false}';
                ELSE
                    -- The changed columns. to_json() writes {"name":value,...}
                    -- with every quote inside a string escaped, so when no
                    -- value is an array or an object (no '":[' or '":{',
                    -- json values may start with blanks) and no string ends
                    -- with a comma (no ',"' followed by ',', ':' or '}'),
                    -- ',"' occurs only between two columns.
                    IF _ot !~ '":\s*[[{]|,"[,:}]' AND _nt !~ '":\s*[[{]|,"[,:}]' THEN
                        _op := string_to_array(substr(_ot, 3, length(_ot) - 3), ',"');
                        _np := string_to_array(substr(_nt, 3, length(_nt) - 3), ',"');
                        IF cardinality(_op) = cardinality(_np) THEN
                            _cols := '{}';
                            FOR _f IN 1..cardinality(_np) LOOP
                                CONTINUE WHEN _op[_f] = _np[_f];
                                -- the name as JSON writes it, when it needs
                                -- no escape (a name with one: json_each())
                                _x := split_part(_np[_f], '":', 1);
                                IF strpos(_x, '\') > 0 THEN
                                    _cols := NULL;
                                    EXIT;
                                END IF;
                                _cols := _cols || ('"' || _x || '"');
                            END LOOP;
                        END IF;
                    END IF;
                    IF _cols IS NULL THEN
                        _cols := ARRAY(SELECT to_json(z.k)::text
                                         FROM ROWS FROM (json_each(_ot::json), json_each(_nt::json))
                                              AS z(k, v, k2, v2)
                                        WHERE z.v::text IS DISTINCT FROM z.v2::text);
                    END IF;
                    IF cardinality(_cols) <= 100 THEN
                        _payload := _head || ',"ids":[' || to_json(_key)::text
                                    || '],"ids_truncated":false,"columns":['
                                    || array_to_string(_cols, ',')
                                    || '],"columns_truncated":false,"pk_changed":false}';
                    END IF;
                END IF;
            ELSE
                IF TG_OP = 'INSERT' THEN
                    SELECT to_json(t.*) ->> TG_ARGV[2] INTO STRICT _key FROM pgw_new t;
                ELSE
                    SELECT to_json(t.*) ->> TG_ARGV[2] INTO STRICT _key FROM pgw_old t;
                END IF;
                _payload := _head || ',"ids":[' || to_json(_key)::text
                            || '],"ids_truncated":false,"columns":null,'
                               '"columns_truncated":false,"pk_changed":false}';
            END IF;
            IF _payload IS NOT NULL AND octet_length(_payload) < 2000 THEN
                _x := pg_notify(TG_ARGV[0], _payload)::text;
                RETURN NULL;
            END IF;
            _general := true;
        EXCEPTION
            WHEN no_data_found THEN
                RETURN NULL;  -- the statement touched no row
            WHEN OTHERS THEN
                -- several rows (too_many_rows), or anything else: the
                -- general path describes it, or fails the same way
                _general := true;
        END;
    ELSE
        _general := true;
    END IF;

    -- The general path: any statement, the key read from the catalog.
    IF _general THEN
        -- A descendant's trigger (see above): the watched table, if it
        -- still is an ancestor, in the head; else nothing to send.
        IF TG_NARGS >= 4 AND TG_ARGV[1] = '' AND TG_ARGV[2] <> '' THEN
            BEGIN
                WITH RECURSIVE up(relid) AS (
                    SELECT i.inhparent FROM pg_inherits i WHERE i.inhrelid = TG_RELID
                    UNION
                    SELECT i.inhparent FROM pg_inherits i JOIN up ON i.inhrelid = up.relid
                )
                SELECT '{"version":1,"schema":' || to_json(n.nspname::text)::text
                       || ',"table":' || to_json(c.relname::text)::text
                       || ',"op":"' || lower(TG_OP) || '"'
                  INTO _head
                  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE c.oid = TG_ARGV[2]::oid AND c.oid IN (SELECT up.relid FROM up);
                IF NOT FOUND THEN
                    RETURN NULL;  -- no longer below the watched table
                END IF;
            EXCEPTION WHEN OTHERS THEN
                RETURN NULL;  -- an argument that is not an OID: made by hand
            END;
            IF TG_ARGV[3] = 'm' THEN
                -- the stream's TRUNCATE trigger
                BEGIN
                    PERFORM pg_logical_emit_message(true, 'pgwitness', _head
                        || ',"ids":null,"ids_truncated":false,"columns":null,'
                           '"columns_truncated":false,"pk_changed":false}');
                EXCEPTION WHEN OTHERS THEN
                    NULL;  -- e.g. wal_level is not logical: no stream to tell
                END;
                RETURN NULL;
            ELSIF TG_ARGV[3] = 'n' AND TG_OP <> 'TRUNCATE' THEN
                _failed := true;  -- no transition tables: the table-level form
                _general := false;
            END IF;
        END IF;
    END IF;
    IF _general THEN
        DECLARE
            -- the relation whose primary key and value columns name the
            -- rows: the watched table, for a descendant's trigger
            _krel     oid := CASE WHEN TG_NARGS >= 4 AND TG_ARGV[1] = '' AND TG_ARGV[2] <> ''
                                  THEN TG_ARGV[2]::oid ELSE TG_RELID END;
            _knames   text[];   -- key columns, in key order
            _kkinds   "char"[]; -- per key column: how its JSON text becomes its output text
            _vnames   text[];   -- configured value columns that exist, in column order
            _vkinds   "char"[];
            _ik       int2[];   -- key column numbers, in key order (0-based array)
            _typs     oid[];
            _vtyps    oid[];
            _vk_names text[];
            _typ      oid;
            _kind     "char";
            _n_keys   int;
            _n_old    bigint := 0;
            _n_new    bigint := 0;
            _n_chg    bigint := 0;
            _pk_chg   boolean := false;
            _cols     text[];   -- changed columns as JSON strings; NULL: unknown
            _ojs      json[];   -- the changed rows (at most 501), in key order:
            _njs      json[];   -- old and new version, NULL where absent
            _oj       json;
            _nj       json;
            _okey     text;
            _nkey     text;
            _same     boolean;
            _j        json;
            _x        text;
            _part     text;
            _ids      text[] := '{}';
            _olds     text[] := '{}';
            _news     text[] := '{}';
            _ids_part text;
            _ids_tr   boolean := false;
            _col_part text := 'null';
            _col_tr   boolean := false;
            _vals     text := '';
            _gucs     text[];   -- the writer's print settings, put back at the end
        BEGIN
            IF TG_OP = 'TRUNCATE' THEN
                _x := pg_notify(TG_ARGV[0], _head
                    || ',"ids":null,"ids_truncated":false,"columns":null,'
                       '"columns_truncated":false,"pk_changed":false}')::text;
                RETURN NULL;
            END IF;
            -- The print settings of the text forms, and the planner settings
            -- of the catalog queries, for the duration of this block only:
            -- set_config(..., true) inside this block's subtransaction, the
            -- writer's values put back below (and by the subtransaction's
            -- rollback should anything fail). The fast path needs none of
            -- them, and a SET clause would cost at every call.
            _gucs := ARRAY[current_setting('DateStyle'), current_setting('IntervalStyle'),
                           current_setting('TimeZone'), current_setting('bytea_output'),
                           current_setting('plan_cache_mode'), current_setting('enable_seqscan')];
            PERFORM set_config('DateStyle', 'ISO, YMD', true),
                    set_config('IntervalStyle', 'postgres', true),
                    set_config('TimeZone', 'UTC', true),
                    set_config('bytea_output', 'hex', true),
                    set_config('plan_cache_mode', 'force_generic_plan', true),
                    set_config('enable_seqscan', 'off', true);
            _payload := NULL;
            <<describe>>
            BEGIN
                -- How many rows, and the first one (all there is, usually).
                IF TG_OP = 'UPDATE' THEN
                    -- (with the columns whose text differs, should this pair be all)
                    SELECT (SELECT count(*) FROM pgw_old), s.oj, s.nj, s.oj::text = s.nj::text,
                           CASE WHEN s.oj::text = s.nj::text THEN '{}'
                                ELSE (SELECT coalesce(array_agg(to_json(z.k)::text), '{}')
                                        FROM ROWS FROM (json_each(s.oj), json_each(s.nj))
                                             AS z(k, v, k2, v2)
                                       WHERE z.v::text IS DISTINCT FROM z.v2::text) END
                      INTO _n_old, _oj, _nj, _same, _cols
                      FROM (SELECT to_json(o.*) AS oj, to_json(n.*) AS nj
                              FROM pgw_old o, pgw_new n LIMIT 1) s;
                    _n_new := _n_old;
                ELSIF TG_OP = 'INSERT' THEN
                    SELECT (SELECT count(*) FROM pgw_new), to_json(n.*) INTO _n_new, _nj
                      FROM pgw_new n LIMIT 1;
                ELSE
                    SELECT (SELECT count(*) FROM pgw_old), to_json(o.*) INTO _n_old, _oj
                      FROM pgw_old o LIMIT 1;
                END IF;
                IF coalesce(_n_old, 0) = 0 AND coalesce(_n_new, 0) = 0 THEN
                    EXIT describe;  -- the statement touched no row: nothing to send
                END IF;
                _n_old := coalesce(_n_old, 0);
                _n_new := coalesce(_n_new, 0);

                -- The primary key and the configured value columns, from the
                -- catalog, by index look-ups (small queries: plan start-up is most
                -- of their cost). Kinds: 'n' the JSON text is the output text;
                -- 'b' boolean; 'd' date, 't' timestamp, 'z' timestamptz, 'h' time,
                -- 'y' timetz (converted back); NULL: no reliable text. A domain has
                -- its base type's kind.
                -- The usual case costs one query: a one-column key of a common
                -- type and no value columns (PL/pgSQL statements are not free).
                SELECT i.indkey::int2[], i.indnkeyatts, a.attname::text, a.atttypid,
                       CASE a.atttypid
                         WHEN 'int4'::regtype THEN 'n' WHEN 'int8'::regtype THEN 'n'
                         WHEN 'text'::regtype THEN 'n' WHEN 'uuid'::regtype THEN 'n'
                         WHEN 'varchar'::regtype THEN 'n' WHEN 'bool'::regtype THEN 'b' END
                  INTO _ik, _n_keys, _x, _typ, _kind
                  FROM pg_index i
                  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                 WHERE i.indrelid = _krel AND i.indisprimary;
                IF _n_keys = 1 AND _kind IS NOT NULL AND TG_NARGS <= 4 THEN
                    _knames := ARRAY[_x];
                    _kkinds := ARRAY[_kind];
                    _n_keys := 1;
                ELSE
                    IF _ik IS NOT NULL THEN
                        _knames := ARRAY[_x];
                        _typs := ARRAY[_typ];
                        FOR _f IN 1.._n_keys - 1 LOOP
                            SELECT a.attname::text, a.atttypid INTO _x, _typ
                              FROM pg_attribute a WHERE a.attrelid = _krel AND a.attnum = _ik[_f];
                            _knames := _knames || _x;
                            _typs := _typs || _typ;
                        END LOOP;
                    END IF;
                    _n_keys := coalesce(cardinality(_knames), 0);
                    IF TG_NARGS > 4 THEN
                        SELECT array_agg(a.attname::text ORDER BY a.attnum),
                               array_agg(a.atttypid ORDER BY a.attnum)
                          INTO _vnames, _vtyps
                          FROM pg_attribute a
                         WHERE a.attrelid = _krel AND a.attname = ANY (TG_ARGV[4:TG_NARGS])
                           AND a.attnum > 0 AND NOT a.attisdropped;
                    END IF;
                    FOR _f IN 1.._n_keys + coalesce(cardinality(_vtyps), 0) LOOP
                        _typ := CASE WHEN _f <= _n_keys THEN _typs[_f] ELSE _vtyps[_f - _n_keys] END;
                        SELECT CASE WHEN t.typtype = 'e' THEN
                                 CASE WHEN EXISTS (SELECT FROM pg_cast ca
                                                    WHERE ca.castsource = t.oid
                                                      AND ca.casttarget = 'json'::regtype)
                                      THEN NULL ELSE 'n' END ELSE
                                 CASE CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
                                   WHEN 'bool'::regtype THEN 'b'
                                   WHEN 'date'::regtype THEN 'd'
                                   WHEN 'timestamp'::regtype THEN 't'
                                   WHEN 'timestamptz'::regtype THEN 'z'
                                   WHEN 'time'::regtype THEN 'h'
                                   WHEN 'timetz'::regtype THEN 'y'
                                   WHEN 'int2'::regtype THEN 'n'
                                   WHEN 'int4'::regtype THEN 'n'
                                   WHEN 'int8'::regtype THEN 'n'
                                   WHEN 'oid'::regtype THEN 'n'
                                   WHEN 'numeric'::regtype THEN 'n'
                                   WHEN 'float4'::regtype THEN 'n'
                                   WHEN 'float8'::regtype THEN 'n'
                                   WHEN 'text'::regtype THEN 'n'
                                   WHEN 'varchar'::regtype THEN 'n'
                                   WHEN 'bpchar'::regtype THEN 'n'
                                   WHEN 'name'::regtype THEN 'n'
                                   WHEN '"char"'::regtype THEN 'n'
                                   WHEN 'uuid'::regtype THEN 'n'
                                   WHEN 'bytea'::regtype THEN 'n'
                                   WHEN 'interval'::regtype THEN 'n'
                                   WHEN 'inet'::regtype THEN 'n'
                                   WHEN 'cidr'::regtype THEN 'n'
                                   WHEN 'macaddr'::regtype THEN 'n'
                                 END END
                          INTO _kind FROM pg_type t WHERE t.oid = _typ;
                        IF _f <= _n_keys THEN
                            _kkinds := _kkinds || _kind;
                        ELSIF _kind IS NOT NULL THEN
                            _vk_names := _vk_names || _vnames[_f - _n_keys];
                            _vkinds := _vkinds || _kind;
                        END IF;
                    END LOOP;
                    _vnames := _vk_names;
                END IF;

                IF _n_keys = 0 THEN
                    -- No primary key: rows cannot be named nor paired.
                    _n_chg := -1;
                    _cols := NULL;
                ELSIF _n_old <= 1 AND _n_new <= 1 THEN
                    -- One row (the common case), read above, without the set
                    -- machinery below.
                    IF TG_OP <> 'UPDATE' THEN
                        _n_chg := 1;
                        _ojs := ARRAY[_oj];
                        _njs := ARRAY[_nj];
                    ELSE
                        IF _n_keys = 1 THEN
                            _okey := (_oj -> _knames[1])::text;
                            _nkey := (_nj -> _knames[1])::text;
                        ELSE
                            _okey := (SELECT string_agg((_oj -> k)::text, ',' ORDER BY i)
                                        FROM unnest(_knames) WITH ORDINALITY AS u(k, i));
                            _nkey := (SELECT string_agg((_nj -> k)::text, ',' ORDER BY i)
                                        FROM unnest(_knames) WITH ORDINALITY AS u(k, i));
                        END IF;
                        IF _okey = _nkey THEN
                            IF NOT _same THEN  -- identical texts: nothing changed
                                _n_chg := 1;
                                _ojs := ARRAY[_oj];
                                _njs := ARRAY[_nj];
                            END IF;
                        ELSE
                            _pk_chg := true;
                            _n_chg := 2;
                            IF _okey COLLATE "C" < _nkey THEN
                                _ojs := ARRAY[_oj, NULL];
                                _njs := ARRAY[NULL, _nj];
                            ELSE
                                _ojs := ARRAY[NULL, _oj];
                                _njs := ARRAY[_nj, NULL];
                            END IF;
                        END IF;
                    END IF;
                ELSIF TG_OP = 'UPDATE' THEN
                    WITH o AS (
                        SELECT s.j,
                               CASE WHEN _n_keys = 1 THEN (s.j -> _knames[1])::text
                                    ELSE (SELECT string_agg((s.j -> k)::text, ',' ORDER BY i)
                                            FROM unnest(_knames) WITH ORDINALITY AS u(k, i)) END AS pk
                          FROM (SELECT to_json(t.*) AS j FROM pgw_old t) s
                    ), n AS (
                        SELECT s.j,
                               CASE WHEN _n_keys = 1 THEN (s.j -> _knames[1])::text
                                    ELSE (SELECT string_agg((s.j -> k)::text, ',' ORDER BY i)
                                            FROM unnest(_knames) WITH ORDINALITY AS u(k, i)) END AS pk
                          FROM (SELECT to_json(t.*) AS j FROM pgw_new t) s
                    ), c AS (
                        SELECT o.j AS oj, n.j AS nj, o.pk IS NULL OR n.pk IS NULL AS rekeyed,
                               coalesce(o.pk, n.pk) AS pk
                          FROM o FULL JOIN n ON o.pk = n.pk
                         WHERE o.pk IS NULL OR n.pk IS NULL OR o.j::text <> n.j::text
                    )
                    SELECT count(*), coalesce(bool_or(c.rekeyed), false),
                           (array_agg(c.oj ORDER BY c.pk COLLATE "C"))[1:501],
                           (array_agg(c.nj ORDER BY c.pk COLLATE "C"))[1:501],
                           (SELECT coalesce(array_agg(to_json(d.k)::text ORDER BY d.i), '{}')
                              FROM (SELECT z.i, min(z.k) AS k
                                      FROM c c2 CROSS JOIN LATERAL
                                           ROWS FROM (json_each(c2.oj), json_each(c2.nj)) WITH ORDINALITY
                                           AS z(k, v, k2, v2, i)
                                     WHERE NOT c2.rekeyed AND z.v::text IS DISTINCT FROM z.v2::text
                                     GROUP BY z.i) d)
                      INTO _n_chg, _pk_chg, _ojs, _njs, _cols
                      FROM c;
                ELSIF TG_OP = 'INSERT' THEN
                    -- Every inserted row is a changed row.
                    SELECT count(*), (array_agg(c.j ORDER BY c.pk COLLATE "C"))[1:501]
                      INTO _n_chg, _njs
                      FROM (SELECT s.j,
                                   CASE WHEN _n_keys = 1 THEN (s.j -> _knames[1])::text
                                        ELSE (SELECT string_agg((s.j -> k)::text, ',' ORDER BY i)
                                                FROM unnest(_knames) WITH ORDINALITY AS u(k, i)) END AS pk
                              FROM (SELECT to_json(t.*) AS j FROM pgw_new t) s) c;
                ELSE
                    -- Every deleted row is a changed row.
                    SELECT count(*), (array_agg(c.j ORDER BY c.pk COLLATE "C"))[1:501]
                      INTO _n_chg, _ojs
                      FROM (SELECT s.j,
                                   CASE WHEN _n_keys = 1 THEN (s.j -> _knames[1])::text
                                        ELSE (SELECT string_agg((s.j -> k)::text, ',' ORDER BY i)
                                                FROM unnest(_knames) WITH ORDINALITY AS u(k, i)) END AS pk
                              FROM (SELECT to_json(t.*) AS j FROM pgw_old t) s) c;
                END IF;

                -- Row IDs (at most 500) and the values of configured columns.
                IF _n_chg < 0 OR array_position(_kkinds, NULL) IS NOT NULL THEN
                    _ids_part := 'null';  -- unknown
                ELSIF _n_chg > 500 THEN
                    _ids_part := 'null';
                    _ids_tr := true;
                ELSIF _n_chg = 1 AND _n_keys = 1 AND _kkinds[1] = 'n' AND _vnames IS NULL THEN
                    -- one row, the usual key, no values
                    _ids_part := '[' || to_json(coalesce(_ojs[1], _njs[1]) ->> _knames[1])::text || ']';
                ELSE
                    FOR _r IN 1.._n_chg LOOP
                        FOR _side IN 0..2 LOOP
                            -- side 0: the ID (from whichever version exists);
                            -- 1: the old values; 2: the new values
                            IF _side = 0 AND _n_keys = 1 AND _kkinds[1] = 'n' THEN
                                -- the usual key, quickly
                                _ids := _ids || to_json(coalesce(_ojs[_r], _njs[_r]) ->> _knames[1])::text;
                                CONTINUE;
                            END IF;
                            CONTINUE WHEN _side > 0 AND (_vnames IS NULL
                                OR (_side = 1 AND TG_OP = 'INSERT') OR (_side = 2 AND TG_OP = 'DELETE'));
                            _j := CASE _side WHEN 0 THEN coalesce(_ojs[_r], _njs[_r])
                                           WHEN 1 THEN _ojs[_r] ELSE _njs[_r] END;
                            IF _j IS NULL THEN
                                _part := 'null';
                            ELSE
                                _part := NULL;
                                FOR _f IN 1..CASE WHEN _side = 0 THEN _n_keys ELSE cardinality(_vnames) END LOOP
                                    _x := _j ->> CASE WHEN _side = 0 THEN _knames[_f] ELSE _vnames[_f] END;
                                    _x := CASE CASE WHEN _side = 0 THEN _kkinds[_f] ELSE _vkinds[_f] END
                                         WHEN 'n' THEN _x
                                         WHEN 'b' THEN CASE _x WHEN 'true' THEN 't' WHEN 'false' THEN 'f'
                                                       ELSE _x END
                                         WHEN 'd' THEN _x::date::text
                                         WHEN 't' THEN _x::timestamp::text
                                         WHEN 'z' THEN _x::timestamptz::text
                                         WHEN 'h' THEN _x::time::text
                                         WHEN 'y' THEN _x::timetz::text
                                         END;
                                    _x := coalesce(to_json(_x)::text, 'null');
                                    IF _side > 0 THEN
                                        _x := to_json(_vnames[_f])::text || ':' || _x;
                                    END IF;
                                    _part := CASE WHEN _part IS NULL THEN _x ELSE _part || ',' || _x END;
                                END LOOP;
                                IF _side > 0 THEN
                                    _part := '{' || coalesce(_part, '') || '}';
                                ELSIF _n_keys > 1 THEN
                                    _part := '[' || _part || ']';
                                END IF;
                            END IF;
                            CASE _side
                                WHEN 0 THEN _ids := _ids || _part;
                                WHEN 1 THEN _olds := _olds || _part;
                                ELSE _news := _news || _part;
                            END CASE;
                        END LOOP;
                    END LOOP;
                    _ids_part := '[' || array_to_string(_ids, ',') || ']';
                    IF _vnames IS NOT NULL AND _n_chg > 0 THEN
                        _vals := CASE WHEN TG_OP = 'INSERT' THEN ''
                                     ELSE ',"old":[' || array_to_string(_olds, ',') || ']' END
                             || CASE WHEN TG_OP = 'DELETE' THEN ''
                                     ELSE ',"new":[' || array_to_string(_news, ',') || ']' END;
                    END IF;
                END IF;
                -- The changed columns of an UPDATE (at most 100).
                IF TG_OP = 'UPDATE' AND _cols IS NOT NULL AND NOT _pk_chg THEN
                    IF cardinality(_cols) > 100 THEN
                        _col_tr := true;
                    ELSE
                        _col_part := '[' || array_to_string(_cols, ',') || ']';
                    END IF;
                END IF;

                -- The payload; when it might not fit, the byte budget, rung by rung
                -- (docs/wire.md "Byte budget"). Under 2000 bytes it fits whatever
                -- the encoding: no character takes more than 4 bytes in UTF-8.
                _payload := _head || ',"ids":' || _ids_part || ',"ids_truncated":' || _ids_tr::text
                            || ',"columns":' || _col_part || ',"columns_truncated":' || _col_tr::text
                            || _vals || ',"pk_changed":' || _pk_chg::text || '}';
                IF octet_length(_payload) >= 2000 THEN
                    FOR _rung IN 0..3 LOOP
                        IF _rung >= 1 THEN
                            _vals := '';
                        END IF;
                        IF _rung >= 2 AND _ids_part <> 'null' THEN
                            _ids_part := 'null';
                            _ids_tr := true;
                        END IF;
                        IF _rung >= 3 AND _col_part <> 'null' THEN
                            _col_part := 'null';
                            _col_tr := true;
                        END IF;
                        _payload := _head || ',"ids":' || _ids_part || ',"ids_truncated":'
                                    || _ids_tr::text || ',"columns":' || _col_part
                                    || ',"columns_truncated":' || _col_tr::text || _vals
                                    || ',"pk_changed":' || _pk_chg::text || '}';
                        EXIT WHEN octet_length(_payload) < 8000
                                  AND (current_setting('server_encoding') = 'UTF8'
                                       OR octet_length(convert_to(_payload, 'UTF8')) < 8000);
                    END LOOP;
                END IF;
            END describe;
            PERFORM set_config('DateStyle', _gucs[1], true),
                    set_config('IntervalStyle', _gucs[2], true),
                    set_config('TimeZone', _gucs[3], true),
                    set_config('bytea_output', _gucs[4], true),
                    set_config('plan_cache_mode', _gucs[5], true),
                    set_config('enable_seqscan', _gucs[6], true);
            IF _payload IS NOT NULL THEN
                _x := pg_notify(TG_ARGV[0], _payload)::text;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            _failed := true;
        END;
    END IF;
    IF _failed THEN
        -- Whatever went wrong, the listener still learns that the table was
        -- written: the table-level form (every reader of the table
        -- refreshes). Should even that fail, nothing is sent rather than
        -- failing the writer.
        BEGIN
            _x := pg_notify(TG_ARGV[0], _head || CASE WHEN TG_OP = 'TRUNCATE'
                THEN ',"ids":null,"ids_truncated":false,"columns":null,'
                     '"columns_truncated":false,"pk_changed":false}'
                ELSE ',"ids":null,"ids_truncated":true,"columns":null,'
                     '"columns_truncated":true,"pk_changed":false}' END)::text;
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
    END IF;
    RETURN NULL;
END
$fn$;

COMMENT ON FUNCTION :"schema".notify_statement() IS
    'pgwitness statement trigger: sends the write set of each statement with pg_notify '
    '(docs/wire.md); attached by pgw_pq_watch_table';
