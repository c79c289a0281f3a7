/*
 * lib/pq/inval/watch.c — pgw_pq_watch_table and pgw_pq_unwatch_table: the
 * statement triggers of query invalidation (lib/pq/sql/watch.sql,
 * unwatch.sql; the trigger function is lib/pq/sql/migration_002.sql).
 *
 * Sequence: [BEGIN | SAVEPOINT pgwitness_watch]; the table's watch lock
 * (watch_lock.sql: concurrent watch/unwatch calls of one table run one
 * after the other); read the table and the DDL (one parameterised query);
 * run the DDL; put the triggers in the firing mode asked and read the
 * settings that bear on writers (watch_mode.sql); [COMMIT | RELEASE] — or on
 * any failure [ROLLBACK | ROLLBACK TO + RELEASE], so nothing is changed and
 * a caller's transaction stays usable.
 * SPDX-License-Identifier: MIT
 */
#include "pq_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest channel name: NAMEDATALEN - 1 (PostgreSQL identifiers). */
#define CHANNEL_MAX 63

int pgwi_pq_check_channel(const char *channel, pgw_error *err)
{
    size_t n = strlen(channel);
    if (n == 0 || n > CHANNEL_MAX)
        return pgwi_error(err, PGW_EINVAL, "channel name must be 1..%d bytes, not %zu",
                          CHANNEL_MAX, n);
    if (!pgwi_utf8_valid(channel, n))
        return pgwi_error(err, PGW_EINVAL, "channel name is not valid UTF-8");
    return PGW_OK;
}

static int unit_begin(PGconn *conn, bool *own, pgw_error *err)
{
    return pgwi_pq_unit_begin(conn, own, "pgwitness_watch", "starting the trigger change", err);
}

static int unit_end(PGconn *conn, bool own, int rc, pgw_error *err)
{
    return pgwi_pq_unit_end(conn, own, rc, "pgwitness_watch", "committing the trigger change",
                            err);
}

static int check_options(const pgw_pq_watch_options *o, pgw_error *err)
{
    if (o->version < 1 || o->version > PGW_PQ_WATCH_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "watch options version %u is not 1 to %u (use "
                          "PGW_PQ_WATCH_OPTIONS_INIT)",
                          o->version, (unsigned)PGW_PQ_WATCH_OPTIONS_VERSION);
    if (o->version >= 2 && o->result && o->result->version != PGW_PQ_WATCH_RESULT_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "watch options: result version %u is not %u (use "
                          "PGW_PQ_WATCH_RESULT_INIT)",
                          o->result->version, (unsigned)PGW_PQ_WATCH_RESULT_VERSION);
    if (o->pgw_schema) {
        int rc;
        if ((rc = pgwi_pq_check_name("watch options: the pgwitness schema name", o->pgw_schema,
                             err)) < 0)
            return rc;
    }
    if (o->channel) {
        int rc;
        if ((rc = pgwi_pq_check_channel(o->channel, err)) < 0)
            return rc;
    }
    if (o->n_value_columns > PGW_PQ_MAX_VALUE_COLUMNS)
        return pgwi_error(err, PGW_EINVAL, "watch options: %zu value columns exceed %d",
                          o->n_value_columns, PGW_PQ_MAX_VALUE_COLUMNS);
    if (o->n_value_columns && !o->value_columns)
        return pgwi_error(err, PGW_EINVAL,
                          "watch options: value_columns is NULL with %zu entries",
                          o->n_value_columns);
    for (size_t i = 0; i < o->n_value_columns; i++) {
        char what[64];
        snprintf(what, sizeof what, "watch options: value column %zu", i);
        int rc;
        if ((rc = pgwi_pq_check_name(what, o->value_columns[i], err)) < 0)
            return rc;
    }
    return PGW_OK;
}

/* The table's watch lock, until the end of the transaction (none when
 * there is no such table: the read that follows says so). */
static int watch_lock(PGconn *conn, const char *schema, const char *table, pgw_error *err)
{
    const char *params[2] = {schema, table};
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn, pgwi_sql_watch_lock, 2, params,
                           "waiting for the table's watch lock", err)) < 0)
        return rc;
    PQclear(r);
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* the triggers below a watched table (migration_004.sql)              */

int pgwi_pq_has_function(bool *out, PGconn *conn, const char *pgw_schema, const char *signature,
                         pgw_error *err)
{
    const char *params[2] = {pgw_schema, signature};
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn,
                           "SELECT to_regprocedure(format('%I.%s', $1::text, $2::text)) IS NOT NULL",
                           2, params, "looking for a pgwitness function", err)) < 0)
        return rc;
    *out = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    return PGW_OK;
}

/* Runs `fn`(relid) — <schema>.watch_below, which makes the triggers of
 * the table's partitions and inheritance children what its watch (both
 * sources) says, and takes no lock where they already are — and adds the
 * number of relations it changed to *changed. */
int pgwi_pq_watch_below(int *changed, PGconn *conn, const char *fn, const char *relid,
                        pgw_error *err)
{
    size_t len = strlen(fn) + 32;
    char *sql = pgwi_malloc(len);
    if (!sql)
        return pgwi_enomem(err);
    snprintf(sql, len, "SELECT %s($1::oid::regclass)", fn);
    const char *params[1] = {relid};
    PGresult *r;
    int rc = pgwi_pq_exec(&r, conn, sql, 1, params,
                          "installing the triggers of the table's partitions and children", err);
    pgwi_free(sql);
    if (rc < 0)
        return rc;
    if (changed)
        *changed += atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return PGW_OK;
}

/* After the watched table's own triggers: its descendants' (watch.sql's
 * row `r`). A table with descendants needs migration 4. */
static int watch_table_below(PGconn *conn, PGresult *r, const char *schema, const char *table,
                             const char *pgw_schema, pgw_error *err)
{
    enum { RELKIND = 0, RELID = 5, BELOW_INSTALLED = 7, HAS_BELOW = 8 };
    bool need = strcmp(PQgetvalue(r, 0, RELKIND), "p") == 0 ||
                strcmp(PQgetvalue(r, 0, HAS_BELOW), "t") == 0;
    if (strcmp(PQgetvalue(r, 0, BELOW_INSTALLED), "t") != 0) {
        if (!need)
            return PGW_OK;
        return pgwi_error(err, PGW_ENOTFOUND,
                          "%.100s.%.100s has partitions or inheritance children, whose writes "
                          "need triggers of their own, and schema \"%.100s\" is older than "
                          "pgwitness schema version 4 (no watch_below()): run pgw_pq_install() "
                          "to upgrade it",
                          schema, table, pgw_schema);
    }
    char *fn = NULL;
    int rc;
    if ((rc = pgwi_pq_ident(&fn, conn, pgw_schema, "watch_below", err)) < 0)
        return rc;
    rc = pgwi_pq_watch_below(NULL, conn, fn, PQgetvalue(r, 0, RELID), err);
    pgwi_free(fn);
    return rc;
}

/* Last: the watch remembered in <schema>.trigger_watches (sync_watch(),
 * migration 5), as the event triggers remember it when they are installed,
 * so that the table dropped and made again without its triggers is a gap
 * (remembered_gaps(): pgw_pq_watch_gaps(), a listener's GAP at connect)
 * also when they are not. A schema older than version 5 has no memory of
 * watches: nothing to do. */
static int remember_watch(PGconn *conn, const char *relid, const char *pgw_schema,
                          pgw_error *err)
{
    bool installed;
    int rc;
    if ((rc = pgwi_pq_has_function(&installed, conn, pgw_schema, "sync_watch(oid)", err)) < 0 ||
        !installed)
        return rc;
    char *fn = NULL, *sql = NULL;
    if ((rc = pgwi_pq_ident(&fn, conn, pgw_schema, "sync_watch", err)) < 0)
        return rc;
    size_t len = strlen(fn) + 32;
    if (!(sql = pgwi_malloc(len))) {
        pgwi_free(fn);
        return pgwi_enomem(err);
    }
    snprintf(sql, len, "SELECT %s($1::oid)", fn);
    const char *params[1] = {relid};
    PGresult *r = NULL;
    if ((rc = pgwi_pq_exec(&r, conn, sql, 1, params, "remembering the watch", err)) >= 0)
        PQclear(r);
    pgwi_free(sql);
    pgwi_free(fn);
    return rc;
}

int pgw_pq_watch_gaps(pgw_pq_watch_gap **out, size_t *n_out, PGconn *conn,
                      const char *pgw_schema, pgw_error *err)
{
    if (pgwi_check_nonnull(err, "pq_watch_gaps", "out, n_out, conn",
                           (const void *const[]){out, n_out, conn}, 3) < 0)
        return PGW_EINVAL;
    const char *schema = pgwi_pq_schema(pgw_schema);
    int rc;
    if ((rc = pgwi_pq_check_name("pq_watch_gaps: the pgwitness schema name", schema, err)) < 0 ||
        (rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    bool installed;
    if ((rc = pgwi_pq_has_function(&installed, conn, schema, "watch_gaps()", err)) < 0)
        return rc;
    if (!installed)
        return pgwi_error(err, PGW_ENOTFOUND,
                          "schema \"%.100s\" has no watch_gaps() (pgwitness schema version 4): "
                          "run pgw_pq_install() to install or upgrade it",
                          schema);
    char *fn = NULL, *sql = NULL;
    if ((rc = pgwi_pq_ident(&fn, conn, schema, "watch_gaps", err)) < 0)
        return rc;
    size_t len = strlen(fn) + 96;
    if ((sql = pgwi_malloc(len)))
        snprintf(sql, len,
                 "SELECT schema_name, table_name, watched_schema, watched_table, source FROM %s()",
                 fn);
    pgwi_free(fn);
    if (!sql)
        return pgwi_enomem(err);
    PGresult *r;
    rc = pgwi_pq_exec(&r, conn, sql, 0, NULL, "listing the watch's gaps", err);
    pgwi_free(sql);
    if (rc < 0)
        return rc;
    size_t n = (size_t)PQntuples(r);
    pgw_pq_watch_gap *a = n ? pgwi_calloc(n, sizeof *a) : NULL;
    if (n && !a) {
        PQclear(r);
        return pgwi_enomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        int row = (int)i;
        pgwi_copy_cut(a[i].schema, sizeof a[i].schema, PQgetvalue(r, row, 0));
        pgwi_copy_cut(a[i].table, sizeof a[i].table, PQgetvalue(r, row, 1));
        pgwi_copy_cut(a[i].watched_schema, sizeof a[i].watched_schema, PQgetvalue(r, row, 2));
        pgwi_copy_cut(a[i].watched_table, sizeof a[i].watched_table, PQgetvalue(r, row, 3));
        pgwi_copy_cut(a[i].source, sizeof a[i].source, PQgetvalue(r, row, 4));
    }
    PQclear(r);
    *out = a;
    *n_out = n;
    return PGW_OK;
}

/* After the triggers are created (or found current): puts them in the
 * firing mode asked (watch_mode.sql; ENABLE ALWAYS or plain ENABLE), and
 * fills *res (when given) with the warnings about the server. Version 1
 * options ask for plain ENABLE and have no result. */
static int watch_mode(PGconn *conn, const char *schema, const char *table,
                      const pgw_pq_watch_options *o, pgw_pq_watch_result *res, pgw_error *err)
{
    bool always = o->version >= 2 && o->enable_always;
    const char *params[3] = {schema, table, always ? "A" : "O"};
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn, pgwi_sql_watch_mode, 3, params,
                           "reading the triggers' firing mode", err)) < 0)
        return rc;
    if (PQgetvalue(r, 0, 0)[0] &&
        (rc = pgwi_pq_run(conn, PQgetvalue(r, 0, 0), NULL,
                          always ? "enabling the triggers ALWAYS" : "enabling the triggers",
                          err)) < 0) {
        PQclear(r);
        return rc;
    }
    if (res) {
        int mpt = atoi(PQgetvalue(r, 0, 1));
        res->max_prepared_transactions = mpt;
        res->warnings = 0;
        res->message[0] = '\0';
        if (mpt > 0) {
            res->warnings |= PGW_PQ_WATCH_WARN_PREPARED_TRANSACTIONS;
            snprintf(res->message, sizeof res->message,
                     "max_prepared_transactions is %d: writers of watched tables cannot use "
                     "PREPARE TRANSACTION (a NOTIFY cannot be prepared); watch them with the "
                     "stream for two-phase commit",
                     mpt);
        }
    }
    PQclear(r);
    return PGW_OK;
}

int pgw_pq_watch_table(PGconn *conn, const char *schema, const char *table,
                       const pgw_pq_watch_options *opts, pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_watch_table: conn is NULL");
    int rc;
    if ((rc = pgwi_pq_check_name("pq_watch_table: schema", schema, err)) < 0)
        return rc;
    if ((rc = pgwi_pq_check_name("pq_watch_table: table", table, err)) < 0)
        return rc;
    pgw_pq_watch_options defaults = PGW_PQ_WATCH_OPTIONS_INIT;
    const pgw_pq_watch_options *o = opts ? opts : &defaults;
    if ((rc = check_options(o, err)) < 0)
        return rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    const char *pgw_schema = pgwi_pq_schema(o->pgw_schema);
    char *args = NULL;
    if ((rc = pgwi_pq_text_array(&args, o->channel ? o->channel : PGW_PQ_DEFAULT_CHANNEL,
                                 o->value_columns, o->n_value_columns, err)) < 0)
        return rc;
    bool own;
    if ((rc = unit_begin(conn, &own, err)) < 0) {
        pgwi_free(args);
        return rc;
    }
    if ((rc = watch_lock(conn, schema, table, err)) < 0) {
        pgwi_free(args);
        return unit_end(conn, own, rc, err);
    }
    /* Filled only on success (a caller's out-struct is untouched else). */
    pgw_pq_watch_result res;
    pgw_pq_watch_result *want = o->version >= 2 ? o->result : NULL;
    const char *params[4] = {schema, table, pgw_schema, args};
    PGresult *r;
    rc = pgwi_pq_exec(&r, conn, pgwi_sql_watch, 4, params, "reading the table to watch", err);
    pgwi_free(args);
    if (rc < 0)
        return unit_end(conn, own, rc, err);
    if (PQntuples(r) == 0) {
        rc = pgwi_error(err, PGW_ENOTFOUND, "no table %.100s.%.100s", schema, table);
    } else if (strcmp(PQgetvalue(r, 0, 1), "t") == 0) {
        rc = pgwi_error(err, PGW_EINVAL,
                        "%.100s.%.100s is a partition of %.200s: watch %.200s, whose watch "
                        "covers every partition below it",
                        schema, table, PQgetvalue(r, 0, 6), PQgetvalue(r, 0, 6));
    } else if (strcmp(PQgetvalue(r, 0, 0), "r") != 0 && strcmp(PQgetvalue(r, 0, 0), "p") != 0) {
        const char *k = PQgetvalue(r, 0, 0);
        rc = pgwi_error(err, PGW_EINVAL,
                        "%.100s.%.100s is %s: only tables (ordinary or partitioned) can be "
                        "watched",
                        schema, table,
                        strcmp(k, "v") == 0   ? "a view"
                        : strcmp(k, "m") == 0 ? "a materialized view"
                        : strcmp(k, "f") == 0 ? "a foreign table"
                                              : "not a table");
    } else if (strcmp(PQgetvalue(r, 0, 2), "t") != 0) {
        rc = pgwi_error(err, PGW_ENOTFOUND,
                        "schema \"%.100s\" has no pgwitness trigger function "
                        "(notify_statement): run pgw_pq_install() to install or upgrade it",
                        pgw_schema);
    } else if (!PQgetisnull(r, 0, 4)) {
        rc = pgwi_error(err, PGW_EEXISTS,
                        "%.100s.%.100s has a trigger %.300s that pgwitness did not create: "
                        "rename or drop it to watch the table",
                        schema, table, PQgetvalue(r, 0, 4));
    } else if (PQgetvalue(r, 0, 3)[0] && /* empty: the triggers are already these */
               (rc = pgwi_pq_run(conn, PQgetvalue(r, 0, 3), NULL,
                                 "creating the statement triggers", err)) < 0) {
        /* rc set */
    } else if ((rc = watch_mode(conn, schema, table, o, want ? &res : NULL, err)) < 0) {
        /* rc set */
    } else {
        /* After the mode: the descendants' triggers take the table's. */
        if ((rc = watch_table_below(conn, r, schema, table, pgw_schema, err)) >= 0)
            rc = remember_watch(conn, PQgetvalue(r, 0, 5), pgw_schema, err);
    }
    PQclear(r);
    if (rc < 0)
        return unit_end(conn, own, rc, err);
    if ((rc = unit_end(conn, own, rc, err)) < 0)
        return rc;
    if (want) {
        res.version = want->version;
        *want = res;
    }
    return PGW_OK;
}

int pgw_pq_unwatch_table(bool *out, PGconn *conn, const char *schema, const char *table,
                         pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_unwatch_table: conn is NULL");
    int rc;
    if ((rc = pgwi_pq_check_name("pq_unwatch_table: schema", schema, err)) < 0)
        return rc;
    if ((rc = pgwi_pq_check_name("pq_unwatch_table: table", table, err)) < 0)
        return rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    bool own, dropped = false;
    if ((rc = unit_begin(conn, &own, err)) < 0)
        return rc;
    if ((rc = watch_lock(conn, schema, table, err)) < 0)
        return unit_end(conn, own, rc, err);
    const char *params[2] = {schema, table};
    PGresult *r;
    if ((rc = pgwi_pq_exec(&r, conn, pgwi_sql_unwatch, 2, params, "reading the watched table",
                           err)) < 0)
        return unit_end(conn, own, rc, err);
    if (PQntuples(r) == 0) {
        rc = pgwi_error(err, PGW_ENOTFOUND, "no table %.100s.%.100s", schema, table);
    } else {
        int below = 0;
        if (PQgetvalue(r, 0, 0)[0])
            dropped = true;
        if (dropped && (rc = pgwi_pq_run(conn, PQgetvalue(r, 0, 0), NULL,
                                         "dropping the statement triggers", err)) < 0) {
            /* rc set */
        } else if (PQgetvalue(r, 0, 2)[0] && /* the triggers of its descendants */
                   (rc = pgwi_pq_watch_below(&below, conn, PQgetvalue(r, 0, 2),
                                             PQgetvalue(r, 0, 1), err)) >= 0 && below > 0) {
            dropped = true;
        }
    }
    PQclear(r);
    if ((rc = unit_end(conn, own, rc, err)) < 0)
        return rc;
    if (out)
        *out = dropped;
    return PGW_OK;
}
