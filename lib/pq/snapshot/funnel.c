/*
 * lib/pq/snapshot/funnel.c — the audited drop funnel (pgw_pq_drop_table).
 *
 * Sequence (documented in pgwitness-pq.h):
 *   [BEGIN;] read statement_timeout, lock_timeout, client_min_messages
 *     (drop_settings.sql)
 *   SAVEPOINT pgwitness_lock; LOCK TABLE ... ACCESS EXCLUSIVE under the
 *     caller's timeouts (the lock DROP TABLE would wait for; a missing
 *     table: ROLLBACK TO, go on; another failure: the drop fails too)
 *   SAVEPOINT pgwitness_snapshot; SET LOCAL timeouts; LOCK TABLE ... ACCESS
 *     EXCLUSIVE (already held); capture; store; RELEASE  — or on any failure
 *     ROLLBACK TO SAVEPOINT pgwitness_snapshot; RELEASE
 *   restore the timeouts; does the table exist? (drop_prepare.sql)
 *   DROP TABLE IF EXISTS ...; SAVEPOINT pgwitness_audit; INSERT audit
 *     (drop_audit.sql); RELEASE (or ROLLBACK TO on failure)
 *   [restore client_min_messages | COMMIT]
 * Everything the drop itself needs is prepared before the snapshot starts,
 * so that no failure inside the snapshot (allocation included) can stop
 * the drop.
 *
 * The statements that name the table (LOCK TABLE, DROP TABLE) are built
 * here: an identifier cannot be a parameter. So are the one-line SAVEPOINT,
 * SET LOCAL and set_config steps; the rest is in lib/pq/sql/drop_*.sql.
 * SPDX-License-Identifier: MIT
 */
#include "pq_snapshot.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool env_disables(void)
{
    const char *v = getenv("PGWITNESS_SNAPSHOTS");
    if (!v)
        return false;
    static const char *const off[] = {"0", "off", "false"};
    for (size_t k = 0; k < sizeof off / sizeof off[0]; k++) {
        size_t i = 0;
        while (off[k][i] && tolower((unsigned char)v[i]) == off[k][i])
            i++;
        if (!off[k][i] && !v[i])
            return true;
    }
    return false;
}

static int check_options(const pgw_pq_drop_options *o, pgw_error *err)
{
    if (o->version != PGW_PQ_DROP_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "drop options version %u is not %u (use PGW_PQ_DROP_OPTIONS_INIT)",
                          o->version, (unsigned)PGW_PQ_DROP_OPTIONS_VERSION);
    if (o->snapshots < PGW_PQ_SNAPSHOTS_ENV || o->snapshots > PGW_PQ_SNAPSHOTS_ON)
        return pgwi_error(err, PGW_EINVAL, "drop options: snapshots must be -1, 0 or 1");
    if (o->statement_timeout_ms < 1 || o->lock_timeout_ms < 1)
        return pgwi_error(err, PGW_EINVAL,
                          "drop options: statement_timeout_ms and lock_timeout_ms must be "
                          "at least 1");
    if (o->pgw_schema && !o->pgw_schema[0])
        return pgwi_error(err, PGW_EINVAL, "drop options: the pgwitness schema name is empty");
    return PGW_OK;
}

/* Records why there is no snapshot. */
static void snapshot_failed(pgw_pq_drop_result *res, const pgw_error *e, const char *prefix)
{
    res->snapshot_taken = false;
    res->snapshot_id = 0;
    res->snapshot_status = e->code;
    char msg[PGW_ERROR_MESSAGE_SIZE * 2];
    snprintf(msg, sizeof msg, "%s%s", prefix, e->message);
    pgwi_copy_cut(res->snapshot_error, sizeof res->snapshot_error, msg);
    memcpy(res->snapshot_sqlstate, e->sqlstate, sizeof res->snapshot_sqlstate);
}

/* The statements that name the table, quoted: made before anything runs. */
typedef struct drop_sql {
    char *qtable; /* "schema"."table" */
    char *lock;   /* LOCK TABLE ... IN ACCESS EXCLUSIVE MODE */
    char *drop;   /* DROP TABLE IF EXISTS ...; SAVEPOINT pgwitness_audit */
    char *audit;  /* drop_audit.sql in the library schema */
} drop_sql;

static void drop_sql_free(drop_sql *s)
{
    pgwi_free(s->qtable);
    pgwi_free(s->lock);
    pgwi_free(s->drop);
    pgwi_free(s->audit);
}

static int drop_sql_make(drop_sql *s, PGconn *conn, const char *schema, const char *table,
                         const char *pgw_schema, pgw_error *err)
{
    memset(s, 0, sizeof *s);
    int rc;
    if ((rc = pgwi_pq_ident(&s->qtable, conn, schema, table, err)) < 0)
        return rc;
    if ((rc = pgwi_pq_sql(&s->audit, conn, pgwi_sql_drop_audit, pgw_schema, err)) < 0)
        return rc;
    size_t len = strlen(s->qtable) + 64;
    if (!(s->lock = pgwi_malloc(len)) || !(s->drop = pgwi_malloc(len)))
        return pgwi_enomem(err);
    snprintf(s->lock, len, "LOCK TABLE %s IN ACCESS EXCLUSIVE MODE", s->qtable);
    snprintf(s->drop, len, "DROP TABLE IF EXISTS %s; SAVEPOINT pgwitness_audit", s->qtable);
    return PGW_OK;
}

/* Opens our own transaction when `own`, and reads the session settings the
 * drop changes and gives back (drop_settings.sql): old[0] the caller's
 * statement_timeout, old[1] its lock_timeout, old[2] client_min_messages. */
static int read_settings(char old[3][64], PGconn *conn, bool own, pgw_error *err)
{
    static const char what[] = "starting the drop";
    /* BEGIN goes in the same round trip as the read (simple query
     * protocol: pgwi_pq_run runs both and hands back the last result). */
    const char *sql = pgwi_sql_drop_settings;
    char *begin = NULL;
    if (own) {
        size_t len = strlen(pgwi_sql_drop_settings) + sizeof "BEGIN;\n";
        if (!(begin = pgwi_malloc(len)))
            return pgwi_enomem(err);
        snprintf(begin, len, "BEGIN;\n%s", pgwi_sql_drop_settings);
        sql = begin;
    }
    PGresult *r = NULL;
    int rc = pgwi_pq_run(conn, sql, &r, what, err);
    pgwi_free(begin);
    if (rc < 0)
        return rc;
    for (int i = 0; i < 3; i++)
        pgwi_copy_cut(old[i], sizeof old[i], PQgetvalue(r, 0, i));
    PQclear(r);
    return PGW_OK;
}

/* The drop's own lock first, waiting as DROP TABLE would (under the
 * caller's statement_timeout and lock_timeout): a reader holding the table
 * then delays the drop instead of costing its snapshot, whose short
 * timeouts only bound the capture and store. A missing table is no
 * failure: there is nothing to wait for, and the snapshot says so. */
static int lock_for_drop(PGconn *conn, const drop_sql *s, pgw_error *err)
{
    static const char what[] = "locking the table to drop";
    int rc;
    if ((rc = pgwi_pq_run(conn, "SAVEPOINT pgwitness_lock", NULL, what, err)) < 0)
        return rc;
    pgw_error le;
    pgw_error_clear(&le);
    if ((rc = pgwi_pq_run(conn, s->lock, NULL, what, &le)) < 0) {
        if (!pgwi_pq_missing_relation(&le)) {
            /* DROP TABLE would fail the same way: nothing is dropped. */
            if (err)
                *err = le;
            return rc;
        }
        return pgwi_pq_run(conn,
                           "ROLLBACK TO SAVEPOINT pgwitness_lock; "
                           "RELEASE SAVEPOINT pgwitness_lock",
                           NULL, what, err);
    }
    return pgwi_pq_run(conn, "RELEASE SAVEPOINT pgwitness_lock", NULL, what, err);
}

/* Captures and stores the snapshot, inside the caller's savepoint, under
 * the drop options' timeouts. Returns PGW_OK with the stored id and the
 * table's OID, or the failure (the savepoint is then rolled back). */
static int take_snapshot(int64_t *id, uint32_t *oid, PGconn *conn, const drop_sql *s,
                         const char *schema, const char *table, const char *reason,
                         const pgw_pq_drop_options *o, pgw_error *e)
{
    char sql[1024 + 2 * 256];
    int n = snprintf(sql, sizeof sql,
                     "SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d; %s",
                     o->statement_timeout_ms, o->lock_timeout_ms, s->lock);
    if (n < 0 || (size_t)n >= sizeof sql)
        return pgwi_error(e, PGW_EINVAL, "table name too long");
    int rc;
    if ((rc = pgwi_pq_run(conn, sql, NULL, "locking the table for its snapshot", e)) < 0) {
        if (pgwi_pq_missing_relation(e))
            return pgwi_error(e, PGW_ENOTFOUND, "no table %.100s.%.100s (already dropped?)",
                              schema, table);
        return rc;
    }
    pgw_pq_capture_options co = PGW_PQ_CAPTURE_OPTIONS_INIT;
    co.snapshot = o->snapshot;
    co.reason = reason;
    co.resource = o->resource;
    pgw_snapshot *snap = NULL;
    if ((rc = pgw_pq_capture(&snap, conn, schema, table, &co, e)) < 0)
        return rc;
    *oid = pgw_snapshot_table_oid(snap);
    const pgw_snapshot *one = snap;
    rc = pgwi_pq_store_many(conn, o->pgw_schema, &one, 1, id, e);
    pgw_snapshot_free(snap);
    return rc;
}

/* The snapshot half under its savepoint: res receives the snapshot, or why
 * there is none (only the snapshot is then undone; the caller's work is
 * intact), and *oid the table's OID from the snapshot (0 without one).
 * Fails only when the savepoint itself does. */
static int snapshot_step(pgw_pq_drop_result *res, uint32_t *oid, PGconn *conn,
                         const drop_sql *s, const char *schema, const char *table,
                         const char *reason, const pgw_pq_drop_options *o, pgw_error *err)
{
    int rc;
    if ((rc = pgwi_pq_run(conn, "SAVEPOINT pgwitness_snapshot", NULL, "starting the snapshot",
                          err)) < 0)
        return rc;
    pgw_error se;
    pgw_error_clear(&se);
    int64_t id = 0;
    if ((rc = take_snapshot(&id, oid, conn, s, schema, table, reason, o, &se)) < 0 ||
        (rc = pgwi_pq_run(conn, "RELEASE SAVEPOINT pgwitness_snapshot", NULL,
                          "keeping the snapshot", &se)) < 0) {
        snapshot_failed(res, &se, "snapshot failed: ");
        *oid = 0;
        return pgwi_pq_run(conn,
                           "ROLLBACK TO SAVEPOINT pgwitness_snapshot; "
                           "RELEASE SAVEPOINT pgwitness_snapshot",
                           NULL, "undoing the failed snapshot", err);
    }
    res->snapshot_taken = true;
    res->snapshot_id = id;
    res->snapshot_status = PGW_OK;
    return PGW_OK;
}

/* Gives the drop the caller's timeouts back, quiets the IF EXISTS notice,
 * and learns whether there is a table to drop (res->dropped, and *oid when
 * the snapshot did not give it). */
static int prepare_drop(pgw_pq_drop_result *res, uint32_t *oid, PGconn *conn,
                        const drop_sql *s, char old[3][64], pgw_error *err)
{
    const char *params[3] = {old[0], old[1], s->qtable};
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn, pgwi_sql_drop_prepare, 3, params, "preparing the drop",
                           err)) < 0)
        return rc;
    res->dropped = !PQgetisnull(r, 0, 3);
    if (res->dropped && !*oid)
        *oid = (uint32_t)strtoull(PQgetvalue(r, 0, 3), NULL, 10);
    PQclear(r);
    return PGW_OK;
}

/* The audit row, under the savepoint the drop statement opened: a missing
 * or refusing audit table must not undo the drop (res->audit_error then
 * says why there is no row). Fails only when the savepoint does. */
static int write_audit(pgw_pq_drop_result *res, PGconn *conn, const drop_sql *s,
                       const char *schema, const char *table, const char *reason,
                       uint32_t oid, const pgw_pq_drop_options *o, pgw_error *err)
{
    char oid_s[16], id_s[24];
    snprintf(oid_s, sizeof oid_s, "%" PRIu32, oid);
    snprintf(id_s, sizeof id_s, "%" PRId64, res->snapshot_id);
    const char *params[10] = {
        schema,
        table,
        oid ? oid_s : NULL,
        o->resource,
        reason,
        res->dropped ? "t" : "f",
        res->snapshot_taken ? id_s : NULL,
        res->snapshot_taken ? NULL : res->snapshot_error,
        res->snapshot_sqlstate[0] ? res->snapshot_sqlstate : NULL,
        pgwi_pq_schema(o->pgw_schema),
    };
    pgw_error ae;
    PGresult *r;
    if (pgwi_pq_exec(&r, conn, s->audit, 10, params, "writing the audit row", &ae) < 0) {
        if (pgwi_pq_missing_relation(&ae))
            pgwi_pq_not_installed(&ae, o->pgw_schema);
        pgwi_copy_cut(res->audit_error, sizeof res->audit_error, ae.message);
        return pgwi_pq_run(conn,
                           "ROLLBACK TO SAVEPOINT pgwitness_audit; "
                           "RELEASE SAVEPOINT pgwitness_audit",
                           NULL, "undoing the failed audit row", err);
    }
    res->audit_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return pgwi_pq_run(conn, "RELEASE SAVEPOINT pgwitness_audit", NULL, "keeping the audit row",
                       err);
}

int pgw_pq_drop_table(pgw_pq_drop_result *out, PGconn *conn, const char *schema,
                      const char *table, const char *reason, const pgw_pq_drop_options *opts,
                      pgw_error *err)
{
    int rc;
    if ((rc = PGWI_CHECK_NONNULL(err, "pq_drop_table", conn, schema, table, reason)) < 0)
        return rc;
    if (!schema[0] || !table[0] || !reason[0])
        return pgwi_error(err, PGW_EINVAL, "pq_drop_table: empty schema, table or reason");
    pgw_pq_drop_options defaults = PGW_PQ_DROP_OPTIONS_INIT;
    const pgw_pq_drop_options *o = opts ? opts : &defaults;
    if ((rc = check_options(o, err)) < 0 || (rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    bool own = PQtransactionStatus(conn) == PQTRANS_IDLE;
    bool want_snapshot = o->snapshots == PGW_PQ_SNAPSHOTS_ON ||
                         (o->snapshots == PGW_PQ_SNAPSHOTS_ENV && !env_disables());
    pgw_pq_drop_result res;
    memset(&res, 0, sizeof res);
    uint32_t oid = 0;
    char old[3][64];
    drop_sql s;

    /* Everything the drop path needs, before anything runs; then the
     * session state to restore. */
    if ((rc = drop_sql_make(&s, conn, schema, table, o->pgw_schema, err)) < 0 ||
        (rc = read_settings(old, conn, own, err)) < 0)
        goto done;
    if (want_snapshot) {
        if ((rc = lock_for_drop(conn, &s, err)) < 0 ||
            (rc = snapshot_step(&res, &oid, conn, &s, schema, table, reason, o, err)) < 0)
            goto done;
    } else {
        pgw_error off;
        pgwi_error(&off, PGW_ESTATE, "snapshots are switched off (PGWITNESS_SNAPSHOTS or "
                                     "options)");
        snapshot_failed(&res, &off, "");
    }

    if ((rc = prepare_drop(&res, &oid, conn, &s, old, err)) < 0 ||
        (rc = pgwi_pq_run(conn, s.drop, NULL, "dropping the table", err)) < 0 ||
        (rc = write_audit(&res, conn, &s, schema, table, reason, oid, o, err)) < 0)
        goto done;
    if (own) {
        if ((rc = pgwi_pq_run(conn, "COMMIT", NULL, "committing the drop", err)) < 0)
            goto done;
    } else {
        const char *params[1] = {old[2]};
        PGresult *r;
        if ((rc = pgwi_pq_exec(&r, conn, "SELECT set_config('client_min_messages', $1, true)", 1,
                               params, "restoring client_min_messages", err)) < 0)
            goto done;
        PQclear(r);
    }
    rc = PGW_OK;
    if (out)
        *out = res;

done:
    /* On failure our own transaction goes; the caller's is left as the
     * failure left it (aborted when the server raised an error). */
    if (rc < 0 && own && PQtransactionStatus(conn) != PQTRANS_IDLE)
        PQclear(PQexec(conn, "ROLLBACK"));
    drop_sql_free(&s);
    return rc;
}
