/*
 * lib/pq/inval/stream_watch.c — what the stream needs set up on an ordinary
 * connection: pgw_pq_stream_watch_table and _unwatch_table (the
 * publication, lib/pq/sql/stream_watch.sql and stream_unwatch.sql; the value
 * columns in <schema>.stream_tables, migration_003.sql), pgw_pq_slots and
 * pgw_pq_drop_slot (slots.sql).
 *
 * Watch sequence: [BEGIN | SAVEPOINT pgwitness_stream_watch]; LOCK TABLE
 * ... IN SHARE UPDATE EXCLUSIVE MODE (the lock ALTER PUBLICATION takes: no
 * key or replica identity can change under the checks that follow); read
 * the table, its tree and the DDL; refuse what could fail a writer; run
 * the DDL; record the value columns (forgetting the rows of dropped tables
 * of its name); emit the logical messages that make
 * running streams read the configuration again (and, when inheritance
 * children were added, refresh the table wide); [COMMIT | RELEASE] — or
 * on any failure undo it all.
 * SPDX-License-Identifier: MIT
 */
#include "pq_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_array.h"

#define SAVEPOINT "pgwitness_stream_watch"

static int check_options(const pgw_pq_stream_watch_options *o, const char *fn, bool values,
                         pgw_error *err)
{
    if (o->version != PGW_PQ_STREAM_WATCH_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "%s: stream watch options version %u is not %u (use "
                          "PGW_PQ_STREAM_WATCH_OPTIONS_INIT)",
                          fn, o->version, (unsigned)PGW_PQ_STREAM_WATCH_OPTIONS_VERSION);
    int rc;
    char what[96];
    if (o->pgw_schema) {
        snprintf(what, sizeof what, "%s: the pgwitness schema name", fn);
        if ((rc = pgwi_pq_check_name(what, o->pgw_schema, err)) < 0)
            return rc;
    }
    if (o->publication) {
        snprintf(what, sizeof what, "%s: the publication name", fn);
        if ((rc = pgwi_pq_check_name(what, o->publication, err)) < 0)
            return rc;
        if (strlen(o->publication) > 63)
            return pgwi_error(err, PGW_EINVAL, "%s: the publication name is over 63 bytes", fn);
    }
    if (!values)
        return PGW_OK;
    if (o->n_value_columns > PGW_PQ_MAX_VALUE_COLUMNS)
        return pgwi_error(err, PGW_EINVAL, "%s: %zu value columns exceed %d", fn,
                          o->n_value_columns, PGW_PQ_MAX_VALUE_COLUMNS);
    if (o->n_value_columns && !o->value_columns)
        return pgwi_error(err, PGW_EINVAL, "%s: value_columns is NULL with %zu entries", fn,
                          o->n_value_columns);
    for (size_t i = 0; i < o->n_value_columns; i++) {
        snprintf(what, sizeof what, "%s: value column %zu", fn, i);
        if ((rc = pgwi_pq_check_name(what, o->value_columns[i], err)) < 0)
            return rc;
    }
    return PGW_OK;
}

static int check_args(PGconn *conn, const char *schema, const char *table, const char *fn,
                      pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "%s: conn is NULL", fn);
    char what[96];
    int rc;
    snprintf(what, sizeof what, "%s: schema", fn);
    if ((rc = pgwi_pq_check_name(what, schema, err)) < 0)
        return rc;
    snprintf(what, sizeof what, "%s: table", fn);
    if ((rc = pgwi_pq_check_name(what, table, err)) < 0)
        return rc;
    return pgw_pq_check(NULL, conn, err);
}

/* LOCK TABLE schema.table IN mode MODE; a missing table is PGW_ENOTFOUND. */
static int lock_table(PGconn *conn, const char *schema, const char *table, const char *mode,
                      pgw_error *err)
{
    char *q = NULL;
    int rc;
    if ((rc = pgwi_pq_ident(&q, conn, schema, table, err)) < 0)
        return rc;
    size_t len = strlen(q) + 64;
    char *sql = pgwi_malloc(len);
    if (!sql) {
        pgwi_free(q);
        return pgwi_enomem(err);
    }
    snprintf(sql, len, "LOCK TABLE %s IN %s MODE", q, mode);
    pgwi_free(q);
    pgw_error le;
    pgw_error_clear(&le);
    rc = pgwi_pq_run(conn, sql, NULL, "locking the table", &le);
    pgwi_free(sql);
    if (rc < 0) {
        if (pgwi_pq_missing_relation(&le))
            return pgwi_error(err, PGW_ENOTFOUND, "no table %.100s.%.100s", schema, table);
        if (err)
            *err = le;
    }
    return rc;
}

/* The logical messages of a watch, in its transaction: "pgwitness.config"
 * (running streams read the configuration again at its commit), and, when
 * `refresh`, a table-level payload (docs/wire.md) for the table, which
 * every stream reports as a table-wide write set. */
static int announce(PGconn *conn, const char *schema, const char *table, bool refresh,
                    pgw_error *err)
{
    PGresult *r;
    int rc;
    if (refresh) {
        pgw_write *w = NULL;
        char *payload = NULL;
        static const pgw_scope none = {NULL, NULL, NULL};
        if ((rc = pgw_write_new(&w, &none, schema, table, PGW_OP_UPDATE, err)) < 0)
            return rc;
        rc = pgw_payload_encode(&payload, NULL, w, NULL, err);
        pgw_write_free(w);
        if (rc < 0)
            return rc;
        const char *params[2] = {PGW_PGOUTPUT_MESSAGE_PREFIX, payload};
        rc = pgwi_pq_exec(&r, conn, "SELECT pg_catalog.pg_logical_emit_message(true, $1, $2)", 2,
                          params, "announcing the table to running streams", err);
        pgw_free(payload);
        if (rc < 0)
            return rc;
        PQclear(r);
    }
    const char *params[1] = {PGW_PGOUTPUT_MESSAGE_PREFIX ".config"};
    if ((rc = pgwi_pq_exec(&r, conn, "SELECT pg_catalog.pg_logical_emit_message(true, $1, '')",
                           1, params, "announcing the change to running streams", err)) < 0)
        return rc;
    PQclear(r);
    return PGW_OK;
}

/* Records the value columns (ENOTFOUND when the schema is not installed);
 * *changed (when non-NULL) tells whether the record changed. A record
 * forgets, too, the publication's rows of dropped tables (relid no longer
 * in pg_class) of the table's name: no stream reads them (their OIDs are
 * published no longer), they would make no GAP now that the name is
 * watched, and, kept, the next table made under the name would find
 * several to adopt (adopt_stream(), migration_005.sql). Streams read
 * nothing of that, so it does not count as a change. */
static int record_values(bool *changed, PGconn *conn, const char *pgw_schema,
                         const char *publication, const char *relid,
                         const pgw_pq_stream_watch_options *o, bool drop, pgw_error *err)
{
    char *tbl = NULL, *shape = NULL, *vals = NULL, *sql = NULL;
    int rc;
    if ((rc = pgwi_pq_ident(&tbl, conn, pgw_schema, "stream_tables", err)) < 0 ||
        (rc = pgwi_pq_ident(&shape, conn, pgw_schema, "stream_shape", err)) < 0)
        goto done;
    if (!drop && (rc = pgwi_pq_text_array(&vals, NULL, o->value_columns, o->n_value_columns,
                                          err)) < 0)
        goto done;
    size_t len = strlen(tbl) * 2 + strlen(shape) + 1000;
    if (!(sql = pgwi_malloc(len))) {
        rc = pgwi_enomem(err);
        goto done;
    }
    if (drop)
        snprintf(sql, len, "DELETE FROM %s WHERE publication = $1 AND relid = $2::oid", tbl);
    else
        snprintf(sql, len,
                 "WITH sh AS (SELECT * FROM %s($2::oid)), "
                 "forgotten AS (DELETE FROM %s AS o USING sh "
                 "WHERE o.publication = $1 AND (o.schema_name, o.table_name) = "
                 "(sh.schema_name, sh.table_name) AND NOT EXISTS (SELECT FROM "
                 "pg_catalog.pg_class x WHERE x.oid = o.relid)) "
                 "INSERT INTO %s AS st (publication, relid, value_columns, schema_name, "
                 "table_name, key_columns, full_rows) SELECT $1, $2::oid, $3::text[], "
                 "sh.schema_name, sh.table_name, sh.key_columns, sh.full_rows FROM sh "
                 "ON CONFLICT (publication, relid) DO "
                 "UPDATE SET value_columns = EXCLUDED.value_columns, watched_at = now(), "
                 "schema_name = EXCLUDED.schema_name, table_name = EXCLUDED.table_name, "
                 "key_columns = EXCLUDED.key_columns, full_rows = EXCLUDED.full_rows "
                 "WHERE (st.value_columns, st.schema_name, st.table_name, st.key_columns, "
                 "st.full_rows) IS DISTINCT FROM (EXCLUDED.value_columns, "
                 "EXCLUDED.schema_name, EXCLUDED.table_name, EXCLUDED.key_columns, "
                 "EXCLUDED.full_rows)",
                 shape, tbl, tbl);
    const char *params[3] = {publication, relid, vals};
    PGresult *r;
    pgw_error re;
    pgw_error_clear(&re);
    if ((rc = pgwi_pq_exec(&r, conn, sql, drop ? 2 : 3, params,
                           "recording the table's value columns", &re)) < 0) {
        if (pgwi_pq_missing_relation(&re) || strcmp(re.sqlstate, "42883") == 0 ||
            strcmp(re.sqlstate, "42703") == 0) /* older than version 6 */
            rc = pgwi_pq_not_installed(&re, pgw_schema);
        if (err)
            *err = re;
        goto done;
    }
    if (changed)
        *changed = strcmp(PQcmdTuples(r), "0") != 0;
    PQclear(r);
done:
    pgwi_free(tbl);
    pgwi_free(shape);
    pgwi_free(vals);
    pgwi_free(sql);
    return rc;
}

/* The TRUNCATE triggers of a partitioned table's partitions (a
 * publication via the root does not publish the TRUNCATE of a partition):
 * <pgw_schema>.watch_below(relid) makes them what stream_tables now says
 * (migration_004.sql). `need`: the table is partitioned and watched, so a
 * schema without watch_below() (older than version 4) is an error; else
 * there is nothing to do without it. */
static int stream_watch_below(PGconn *conn, const char *pgw_schema, const char *relid, bool need,
                              const char *schema, const char *table, pgw_error *err)
{
    bool installed;
    int rc;
    if ((rc = pgwi_pq_has_function(&installed, conn, pgw_schema,
                                   "watch_below(regclass, regclass)", err)) < 0)
        return rc;
    if (!installed)
        return need ? pgwi_error(err, PGW_ENOTFOUND,
                                 "%.100s.%.100s is partitioned: the TRUNCATE of a partition "
                                 "needs a trigger, and schema \"%.100s\" is older than "
                                 "pgwitness schema version 4 (no watch_below()): run "
                                 "pgw_pq_install() to upgrade it",
                                 schema, table, pgw_schema)
                    : PGW_OK;
    char *fn = NULL;
    if ((rc = pgwi_pq_ident(&fn, conn, pgw_schema, "watch_below", err)) < 0)
        return rc;
    rc = pgwi_pq_watch_below(NULL, conn, fn, relid, err);
    pgwi_free(fn);
    return rc;
}

static const char *kind_name(const char *k)
{
    return strcmp(k, "v") == 0   ? "a view"
           : strcmp(k, "m") == 0 ? "a materialized view"
           : strcmp(k, "f") == 0 ? "a foreign table"
           : strcmp(k, "S") == 0 ? "a sequence"
                                 : "not a table";
}

/* Runs the checks and the DDL, the transaction being open and the table
 * locked. */
static int watch_in_unit(PGconn *conn, const char *schema, const char *table,
                         const char *publication, const char *pgw_schema,
                         const pgw_pq_stream_watch_options *o, pgw_error *err)
{
    const char *params[3] = {schema, table, publication};
    PGresult *r;
    bool changed = false;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn, pgwi_sql_stream_watch, 3, params,
                           "reading the table to publish", err)) < 0)
        return rc;
    enum { RELID, RELKIND, ISPART, ROOT, KEY, BADID, WAL, PUBPROB, DDL, ADDED };
    if (PQntuples(r) == 0) {
        rc = pgwi_error(err, PGW_ENOTFOUND, "no table %.100s.%.100s", schema, table);
        goto done;
    }
    const char *kind = PQgetvalue(r, 0, RELKIND);
    if (strcmp(PQgetvalue(r, 0, WAL), "logical") != 0) {
        rc = pgwi_error(err, PGW_ESTATE,
                        "the server's wal_level is %.20s: the stream needs wal_level = logical "
                        "(set it in postgresql.conf and restart the server)",
                        PQgetvalue(r, 0, WAL));
    } else if (strcmp(kind, "r") != 0 && strcmp(kind, "p") != 0) {
        rc = pgwi_error(err, PGW_EINVAL, "%.100s.%.100s is %s: only tables can be watched",
                        schema, table, kind_name(kind));
    } else if (strcmp(PQgetvalue(r, 0, ISPART), "t") == 0) {
        rc = pgwi_error(err, PGW_EINVAL,
                        "%.100s.%.100s is a partition: watch its partitioned table %.200s, "
                        "whose writes include it (published via the partition root)",
                        schema, table, PQgetvalue(r, 0, ROOT));
    } else if (strcmp(PQgetvalue(r, 0, KEY), "{}") == 0) {
        rc = pgwi_error(err, PGW_EINVAL,
                        "%.100s.%.100s has no primary key: the stream needs one for row IDs, "
                        "and PostgreSQL fails the UPDATE and DELETE of a published table "
                        "without a replica identity (add a primary key)",
                        schema, table);
    } else if (PQgetvalue(r, 0, BADID)[0]) {
        rc = pgwi_error(err, PGW_EINVAL,
                        "cannot publish %.100s.%.100s without failing writers: %.300s", schema,
                        table, PQgetvalue(r, 0, BADID));
    } else if (PQgetvalue(r, 0, PUBPROB)[0]) {
        rc = pgwi_error(err, PGW_ESTATE, "%.400s", PQgetvalue(r, 0, PUBPROB));
    } else if (PQgetvalue(r, 0, DDL)[0] &&
               (rc = pgwi_pq_run(conn, PQgetvalue(r, 0, DDL), NULL, "publishing the table",
                                 err)) < 0) {
        /* What the role lacks, which the server's message names by the
         * object only: ALTER PUBLICATION ... ADD TABLE needs the
         * publication's owner (and the table's), CREATE PUBLICATION the
         * CREATE privilege on the database (PostgreSQL documentation,
         * ALTER PUBLICATION, CREATE PUBLICATION). */
        if (err && strcmp(err->sqlstate, "42501") == 0) {
            size_t used = strlen(err->message);
            snprintf(err->message + used, sizeof err->message - used,
                     " (publishing needs a role that owns publication %s and the table, or "
                     "CREATE on the database to make the publication: pass a publication "
                     "the role owns (pgw_pq_stream_watch_options.publication, --publication))",
                     publication);
        }
    } else if ((rc = record_values(&changed, conn, pgw_schema, publication,
                                   PQgetvalue(r, 0, RELID), o, false, err)) < 0 ||
               (rc = stream_watch_below(conn, pgw_schema, PQgetvalue(r, 0, RELID),
                                        strcmp(kind, "p") == 0, schema, table, err)) < 0) {
        /* rc set */
    } else if (changed || PQgetvalue(r, 0, DDL)[0]) {
        /* Something changed: running streams read the configuration again
         * (a watch that changes nothing does not make them reconnect). */
        rc = announce(conn, schema, table, atoi(PQgetvalue(r, 0, ADDED)) > 0, err);
    }
done:
    PQclear(r);
    return rc;
}

int pgw_pq_stream_watch_table(PGconn *conn, const char *schema, const char *table,
                              const pgw_pq_stream_watch_options *opts, pgw_error *err)
{
    static const char fn[] = "pq_stream_watch_table";
    pgw_pq_stream_watch_options defaults = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    const pgw_pq_stream_watch_options *o = opts ? opts : &defaults;
    int rc;
    if ((rc = check_args(conn, schema, table, fn, err)) < 0 ||
        (rc = check_options(o, fn, true, err)) < 0)
        return rc;
    if (PQserverVersion(conn) < PGW_PQ_STREAM_MIN_SERVER_VERSION)
        return pgwi_error(err, PGW_EVERSION,
                          "%s: server version %d is older than %d (PostgreSQL 14, whose "
                          "pgoutput sends logical messages)",
                          fn, PQserverVersion(conn), PGW_PQ_STREAM_MIN_SERVER_VERSION);
    const char *publication = o->publication ? o->publication : PGW_PQ_DEFAULT_PUBLICATION;
    const char *pgw_schema = pgwi_pq_schema(o->pgw_schema);
    bool own;
    if ((rc = pgwi_pq_unit_begin(conn, &own, SAVEPOINT, "starting the stream watch", err)) < 0)
        return rc;
    if ((rc = lock_table(conn, schema, table, "SHARE UPDATE EXCLUSIVE", err)) >= 0)
        rc = watch_in_unit(conn, schema, table, publication, pgw_schema, o, err);
    return pgwi_pq_unit_end(conn, own, rc, SAVEPOINT, "committing the stream watch", err);
}

int pgw_pq_stream_unwatch_table(bool *out, PGconn *conn, const char *schema, const char *table,
                                const pgw_pq_stream_watch_options *opts, pgw_error *err)
{
    static const char fn[] = "pq_stream_unwatch_table";
    pgw_pq_stream_watch_options defaults = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    const pgw_pq_stream_watch_options *o = opts ? opts : &defaults;
    int rc;
    if ((rc = check_args(conn, schema, table, fn, err)) < 0 ||
        (rc = check_options(o, fn, false, err)) < 0)
        return rc;
    const char *publication = o->publication ? o->publication : PGW_PQ_DEFAULT_PUBLICATION;
    const char *pgw_schema = pgwi_pq_schema(o->pgw_schema);
    bool own, dropped = false;
    if ((rc = pgwi_pq_unit_begin(conn, &own, SAVEPOINT, "starting the stream unwatch", err)) <
        0)
        return rc;
    PGresult *r = NULL;
    const char *params[3] = {schema, table, publication};
    if ((rc = lock_table(conn, schema, table, "SHARE UPDATE EXCLUSIVE", err)) < 0 ||
        (rc = pgwi_pq_exec(&r, conn, pgwi_sql_stream_unwatch, 3, params,
                           "reading the published table", err)) < 0)
        return pgwi_pq_unit_end(conn, own, rc, SAVEPOINT, "", err);
    if (PQntuples(r) == 0) {
        rc = pgwi_error(err, PGW_ENOTFOUND, "no table %.100s.%.100s", schema, table);
    } else if (PQgetvalue(r, 0, 1)[0]) {
        dropped = true;
        if ((rc = pgwi_pq_run(conn, PQgetvalue(r, 0, 1), NULL, "unpublishing the table", err)) >=
                0 &&
            (rc = record_values(NULL, conn, pgw_schema, publication, PQgetvalue(r, 0, 0), o,
                                true, err)) >= 0 &&
            (rc = stream_watch_below(conn, pgw_schema, PQgetvalue(r, 0, 0), false, schema, table,
                                     err)) >= 0)
            rc = announce(conn, schema, table, false, err);
    }
    PQclear(r);
    if ((rc = pgwi_pq_unit_end(conn, own, rc, SAVEPOINT, "committing the stream unwatch", err)) <
        0)
        return rc;
    if (out)
        *out = dropped;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* slots                                                               */

/* Whether <schema>.<table> exists and the role may use it so. */
static int can_use(bool *out, PGconn *conn, const char *pgw_schema, const char *table,
                   const char *privilege, pgw_error *err)
{
    const char *params[3] = {pgw_schema, table, privilege};
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn,
                           "SELECT coalesce(has_table_privilege(to_regclass(format('%I.%I', $1::text, "
                           "$2::text)), $3::text), false)",
                           3, params, "reading the library schema", err)) < 0)
        return rc;
    *out = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    return PGW_OK;
}

static uint64_t lsn_of(const char *text)
{
    uint64_t v = 0;
    if (text[0])
        pgw_lsn_parse(&v, text, NULL);
    return v;
}

int pgw_pq_slots(pgw_pq_slot_info **out, size_t *n_out, PGconn *conn, const char *pgw_schema,
                 pgw_error *err)
{
    if (pgwi_check_nonnull(err, "pq_slots", "out, n_out, conn",
                           (const void *const[]){out, n_out, conn}, 3) < 0)
        return PGW_EINVAL;
    const char *schema = pgwi_pq_schema(pgw_schema);
    bool registry;
    int rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0 ||
        (rc = can_use(&registry, conn, schema, "slots", "SELECT", err)) < 0)
        return rc;
    char *reg = NULL, *sql = NULL;
    if (registry) {
        char *tbl = NULL;
        if ((rc = pgwi_pq_ident(&tbl, conn, schema, "slots", err)) < 0)
            return rc;
        size_t len = strlen(tbl) + 96;
        reg = pgwi_malloc(len);
        if (reg)
            snprintf(reg, len, "EXISTS (SELECT FROM %s r WHERE r.slot_name = s.slot_name)", tbl);
        pgwi_free(tbl);
        if (!reg)
            return pgwi_enomem(err);
    }
    rc = pgwi_pq_replace(&sql, pgwi_sql_slots, ":registered", reg ? reg : "false", err);
    pgwi_free(reg);
    if (rc < 0)
        return rc;
    PGresult *r;
    rc = pgwi_pq_exec(&r, conn, sql, 0, NULL, "listing the replication slots", err);
    pgwi_free(sql);
    if (rc < 0)
        return rc;
    size_t n = (size_t)PQntuples(r);
    pgw_pq_slot_info *a = n ? pgwi_calloc(n, sizeof *a) : NULL;
    if (n && !a) {
        PQclear(r);
        return pgwi_enomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        int row = (int)i;
        pgw_pq_slot_info *s = &a[i];
        pgwi_copy_cut(s->name, sizeof s->name, PQgetvalue(r, row, 0));
        pgwi_copy_cut(s->database, sizeof s->database, PQgetvalue(r, row, 1));
        pgwi_copy_cut(s->plugin, sizeof s->plugin, PQgetvalue(r, row, 2));
        s->temporary = strcmp(PQgetvalue(r, row, 3), "t") == 0;
        s->active = strcmp(PQgetvalue(r, row, 4), "t") == 0;
        s->active_pid = atoi(PQgetvalue(r, row, 5));
        s->pgwitness = strcmp(PQgetvalue(r, row, 6), "t") == 0;
        s->restart_lsn = lsn_of(PQgetvalue(r, row, 7));
        s->confirmed_lsn = lsn_of(PQgetvalue(r, row, 8));
        s->retained_bytes = strtoll(PQgetvalue(r, row, 9), NULL, 10);
        s->lag_bytes = strtoll(PQgetvalue(r, row, 10), NULL, 10);
        pgwi_copy_cut(s->wal_status, sizeof s->wal_status, PQgetvalue(r, row, 11));
        s->safe_wal_size = strtoll(PQgetvalue(r, row, 12), NULL, 10);
    }
    PQclear(r);
    *out = a;
    *n_out = n;
    return PGW_OK;
}

int pgw_pq_drop_slot(PGconn *conn, const char *slot, const char *pgw_schema, pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_drop_slot: conn is NULL");
    int rc;
    if ((rc = pgwi_pq_check_name("pq_drop_slot: slot", slot, err)) < 0 ||
        (rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    if (PQtransactionStatus(conn) != PQTRANS_IDLE)
        return pgwi_error(err, PGW_ESTATE,
                          "pq_drop_slot: inside a transaction (a slot is dropped outside one)");
    const char *params[1] = {slot};
    PGresult *r;
    pgw_error de;
    pgw_error_clear(&de);
    if ((rc = pgwi_pq_exec(&r, conn, "SELECT pg_catalog.pg_drop_replication_slot($1)", 1, params,
                           "dropping the replication slot", &de)) < 0) {
        /* undefined_object: no such slot; object_in_use: a walsender
         * streams from it. The server's message says which. */
        if (strcmp(de.sqlstate, "42704") == 0)
            rc = de.code = PGW_ENOTFOUND;
        else if (strcmp(de.sqlstate, "55006") == 0)
            rc = de.code = PGW_ESTATE;
        if (err)
            *err = de;
        return rc;
    }
    PQclear(r);
    bool registry;
    const char *schema = pgwi_pq_schema(pgw_schema);
    if ((rc = can_use(&registry, conn, schema, "slots", "DELETE", err)) < 0 || !registry)
        return rc < 0 ? rc : PGW_OK;
    char *tbl = NULL, *sql = NULL;
    if ((rc = pgwi_pq_ident(&tbl, conn, schema, "slots", err)) < 0)
        return rc;
    size_t len = strlen(tbl) + 64;
    if (!(sql = pgwi_malloc(len))) {
        pgwi_free(tbl);
        return pgwi_enomem(err);
    }
    snprintf(sql, len, "DELETE FROM %s WHERE slot_name = $1", tbl);
    pgwi_free(tbl);
    rc = pgwi_pq_exec(&r, conn, sql, 1, params, "forgetting the slot", err);
    pgwi_free(sql);
    if (rc < 0)
        return rc;
    PQclear(r);
    return PGW_OK;
}
