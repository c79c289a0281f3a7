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

/* The snapshot half, inside its savepoint. Returns PGW_OK with the stored
 * id, or the failure (the savepoint is then rolled back by the caller). */
static int take_snapshot(int64_t *id, PGconn *conn, const char *qtable, const char *schema,
                         const char *table, const char *reason, const pgw_pq_drop_options *o,
                         uint32_t *oid, pgw_error *e)
{
    char sql[1024 + 2 * 256];
    int n = snprintf(sql, sizeof sql,
                     "SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d; "
                     "LOCK TABLE %s IN ACCESS EXCLUSIVE MODE",
                     o->statement_timeout_ms, o->lock_timeout_ms, qtable);
    if (n < 0 || (size_t)n >= sizeof sql)
        return pgwi_error(e, PGW_EINVAL, "table name too long");
    int rc = pgwi_pq_run(conn, sql, NULL, "locking the table for its snapshot", e);
    if (rc != PGW_OK) {
        if (strcmp(e->sqlstate, "42P01") == 0 || strcmp(e->sqlstate, "3F000") == 0)
            return pgwi_error(e, PGW_ENOTFOUND, "no table %.100s.%.100s (already dropped?)",
                              schema, table);
        return rc;
    }
    pgw_pq_capture_options co = PGW_PQ_CAPTURE_OPTIONS_INIT;
    co.snapshot = o->snapshot;
    co.reason = reason;
    co.resource = o->resource;
    pgw_snapshot *snap = NULL;
    rc = pgw_pq_capture(&snap, conn, schema, table, &co, e);
    if (rc != PGW_OK)
        return rc;
    *oid = pgw_snapshot_table_oid(snap);
    const pgw_snapshot *one = snap;
    rc = pgwi_pq_store_many(conn, o->pgw_schema, &one, 1, id, e);
    pgw_snapshot_free(snap);
    return rc;
}

int pgw_pq_drop_table(pgw_pq_drop_result *out, PGconn *conn, const char *schema,
                      const char *table, const char *reason, const pgw_pq_drop_options *opts,
                      pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "pq_drop_table", conn, schema, table, reason) != PGW_OK)
        return PGW_EINVAL;
    if (!schema[0] || !table[0] || !reason[0])
        return pgwi_error(err, PGW_EINVAL, "pq_drop_table: empty schema, table or reason");
    pgw_pq_drop_options defaults = PGW_PQ_DROP_OPTIONS_INIT;
    const pgw_pq_drop_options *o = opts ? opts : &defaults;
    int rc = check_options(o, err);
    if (rc == PGW_OK)
        rc = pgw_pq_check(NULL, conn, err);
    if (rc != PGW_OK)
        return rc;
    pgw_error local;
    pgw_error *e = err ? err : &local;
    bool own = PQtransactionStatus(conn) == PQTRANS_IDLE;
    bool want_snapshot = o->snapshots == PGW_PQ_SNAPSHOTS_ON ||
                         (o->snapshots == PGW_PQ_SNAPSHOTS_ENV && !env_disables());

    /* Everything the drop path needs, before anything runs. */
    pgw_pq_drop_result res;
    memset(&res, 0, sizeof res);
    char *qtable = pgwi_pq_ident(conn, schema, table, e);
    char *audit_sql = qtable ? pgwi_pq_sql(conn, pgwi_sql_drop_audit, o->pgw_schema, e) : NULL;
    char *drop_sql = NULL, *lock_sql = NULL;
    if (audit_sql) {
        size_t len = strlen(qtable) + 64;
        drop_sql = pgwi_malloc(len);
        lock_sql = pgwi_malloc(len);
        if (drop_sql && lock_sql) {
            snprintf(drop_sql, len, "DROP TABLE IF EXISTS %s; SAVEPOINT pgwitness_audit", qtable);
            snprintf(lock_sql, len, "LOCK TABLE %s IN ACCESS EXCLUSIVE MODE", qtable);
        } else {
            pgwi_free(drop_sql);
            drop_sql = NULL;
            pgwi_enomem(e);
        }
    }
    if (!drop_sql) {
        pgwi_free(qtable);
        pgwi_free(audit_sql);
        pgwi_free(lock_sql);
        return e->code;
    }

    /* Session state to restore. */
    PGresult *settings = NULL;
    rc = own ? pgwi_pq_run(conn, "BEGIN", NULL, "starting the drop", e) : PGW_OK;
    if (rc == PGW_OK)
        rc = pgwi_pq_run(conn, pgwi_sql_drop_settings, &settings, "starting the drop", e);
    if (rc != PGW_OK)
        goto fail;
    char old_stmt[64], old_lock[64], old_cmm[64];
    pgwi_copy_cut(old_stmt, sizeof old_stmt, PQgetvalue(settings, 0, 0));
    pgwi_copy_cut(old_lock, sizeof old_lock, PQgetvalue(settings, 0, 1));
    pgwi_copy_cut(old_cmm, sizeof old_cmm, PQgetvalue(settings, 0, 2));
    PQclear(settings);

    uint32_t oid = 0;
    if (want_snapshot) {
        /* The drop's own lock first, waiting as DROP TABLE would (under the
         * caller's statement_timeout and lock_timeout): a reader holding
         * the table then delays the drop instead of costing its snapshot,
         * whose short timeouts below only bound the capture and store. */
        rc = pgwi_pq_run(conn, "SAVEPOINT pgwitness_lock", NULL, "locking the table to drop", e);
        if (rc != PGW_OK)
            goto fail;
        pgw_error le;
        pgw_error_clear(&le);
        if (pgwi_pq_run(conn, lock_sql, NULL, "locking the table to drop", &le) == PGW_OK) {
            rc = pgwi_pq_run(conn, "RELEASE SAVEPOINT pgwitness_lock", NULL,
                             "locking the table to drop", e);
        } else if (strcmp(le.sqlstate, "42P01") == 0 || strcmp(le.sqlstate, "3F000") == 0) {
            /* No such table: nothing to wait for; the snapshot says so. */
            rc = pgwi_pq_run(conn,
                             "ROLLBACK TO SAVEPOINT pgwitness_lock; "
                             "RELEASE SAVEPOINT pgwitness_lock",
                             NULL, "locking the table to drop", e);
        } else {
            /* DROP TABLE would fail the same way: nothing is dropped. */
            *e = le;
            rc = le.code;
        }
        if (rc != PGW_OK)
            goto fail;
        rc = pgwi_pq_run(conn, "SAVEPOINT pgwitness_snapshot", NULL, "starting the snapshot", e);
        if (rc != PGW_OK)
            goto fail;
        pgw_error se;
        pgw_error_clear(&se);
        int64_t id = 0;
        int src = take_snapshot(&id, conn, qtable, schema, table, reason, o, &oid, &se);
        if (src == PGW_OK &&
            pgwi_pq_run(conn, "RELEASE SAVEPOINT pgwitness_snapshot", NULL,
                        "keeping the snapshot", &se) == PGW_OK) {
            res.snapshot_taken = true;
            res.snapshot_id = id;
            res.snapshot_status = PGW_OK;
        } else {
            snapshot_failed(&res, &se, "snapshot failed: ");
            oid = 0;
            /* Only the snapshot is undone; the caller's work is intact. */
            rc = pgwi_pq_run(conn,
                             "ROLLBACK TO SAVEPOINT pgwitness_snapshot; "
                             "RELEASE SAVEPOINT pgwitness_snapshot",
                             NULL, "undoing the failed snapshot", e);
            if (rc != PGW_OK)
                goto fail;
        }
    } else {
        pgw_error off;
        pgwi_error(&off, PGW_ESTATE, "snapshots are switched off (PGWITNESS_SNAPSHOTS or "
                                     "options)");
        snapshot_failed(&res, &off, "");
    }

    /* Restore the caller's timeouts, quiet the IF EXISTS notice, and learn
     * whether there is a table to drop. */
    {
        const char *params[3] = {old_stmt, old_lock, qtable};
        PGresult *r = pgwi_pq_exec(conn, pgwi_sql_drop_prepare, 3, params, "preparing the drop", e);
        if (!r) {
            rc = e->code;
            goto fail;
        }
        res.dropped = !PQgetisnull(r, 0, 3);
        if (res.dropped && !oid)
            oid = (uint32_t)strtoull(PQgetvalue(r, 0, 3), NULL, 10);
        PQclear(r);
    }
    rc = pgwi_pq_run(conn, drop_sql, NULL, "dropping the table", e);
    if (rc != PGW_OK)
        goto fail;

    /* The audit row, under its own savepoint: a missing or refusing audit
     * table must not undo the drop. */
    {
        char oid_s[16], id_s[24];
        snprintf(oid_s, sizeof oid_s, "%" PRIu32, oid);
        snprintf(id_s, sizeof id_s, "%" PRId64, res.snapshot_id);
        const char *params[10] = {
            schema,
            table,
            oid ? oid_s : NULL,
            o->resource,
            reason,
            res.dropped ? "t" : "f",
            res.snapshot_taken ? id_s : NULL,
            res.snapshot_taken ? NULL : res.snapshot_error,
            res.snapshot_sqlstate[0] ? res.snapshot_sqlstate : NULL,
            pgwi_pq_schema(o->pgw_schema),
        };
        pgw_error ae;
        PGresult *r = pgwi_pq_exec(conn, audit_sql, 10, params, "writing the audit row", &ae);
        if (r) {
            res.audit_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
            PQclear(r);
            rc = pgwi_pq_run(conn, "RELEASE SAVEPOINT pgwitness_audit", NULL,
                             "keeping the audit row", e);
        } else {
            if (pgwi_pq_missing_relation(&ae))
                pgwi_pq_not_installed(&ae, o->pgw_schema);
            pgwi_copy_cut(res.audit_error, sizeof res.audit_error, ae.message);
            rc = pgwi_pq_run(conn,
                             "ROLLBACK TO SAVEPOINT pgwitness_audit; "
                             "RELEASE SAVEPOINT pgwitness_audit",
                             NULL, "undoing the failed audit row", e);
        }
        if (rc != PGW_OK)
            goto fail;
    }
    if (own) {
        rc = pgwi_pq_run(conn, "COMMIT", NULL, "committing the drop", e);
    } else {
        const char *params[1] = {old_cmm};
        PGresult *r = pgwi_pq_exec(conn, "SELECT set_config('client_min_messages', $1, true)", 1,
                                   params, "restoring client_min_messages", e);
        rc = r ? PGW_OK : e->code;
        PQclear(r);
    }
    if (rc != PGW_OK)
        goto fail;
    pgwi_free(qtable);
    pgwi_free(audit_sql);
    pgwi_free(drop_sql);
    pgwi_free(lock_sql);
    if (out)
        *out = res;
    return PGW_OK;

fail:
    /* Our own transaction goes; the caller's is left as the failure left
     * it (aborted when the server raised an error). */
    if (own && PQtransactionStatus(conn) != PQTRANS_IDLE)
        PQclear(PQexec(conn, "ROLLBACK"));
    pgwi_free(qtable);
    pgwi_free(audit_sql);
    pgwi_free(drop_sql);
    pgwi_free(lock_sql);
    return rc;
}
