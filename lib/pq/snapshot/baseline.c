/*
 * lib/pq/snapshot/baseline.c — the baseline pass: snapshot live tables that have no
 * snapshot of their current OID yet, in batches (lib/pq/sql/
 * baseline_candidates.sql, capture.sql, store_batch.sql).
 *
 * With libpq's pipeline mode (PostgreSQL documentation 34.5 "Pipeline
 * Mode") the batches overlap: while the client turns batch k into
 * snapshots and encodes them, the server stores batch k-1 and runs the
 * catalog query for batch k+1, whose rows the client reads as they arrive.
 * Each statement is followed by a sync, so each is its own transaction:
 * what is stored stays stored when a later batch fails. No large message
 * is ever sent while the server still has unread output, so the two sides
 * cannot block each other.
 * SPDX-License-Identifier: MIT
 */
#include "pq_snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct batch {
    pgw_snapshot **snaps;
    size_t n, cap;
} batch;

static int collect(uint32_t oid, pgw_snapshot *snap, void *userdata, pgw_error *err)
{
    (void)oid;
    batch *b = userdata;
    if (b->n == b->cap) {
        pgw_snapshot_free(snap);
        return pgwi_error(err, PGW_EPG, "baseline: the catalog returned more tables than asked");
    }
    b->snaps[b->n++] = snap;
    return PGW_OK;
}

static void batch_clear(batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        pgw_snapshot_free(b->snaps[i]);
    b->n = 0;
}

static int check_options(const pgw_pq_baseline_options *o, pgw_error *err)
{
    if (o->version != PGW_PQ_BASELINE_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "baseline options version %u is not %u (use "
                          "PGW_PQ_BASELINE_OPTIONS_INIT)",
                          o->version, (unsigned)PGW_PQ_BASELINE_OPTIONS_VERSION);
    if (o->limit == 0 || o->limit > 10000000)
        return pgwi_error(err, PGW_EINVAL, "baseline options: limit must be 1..10000000");
    if (o->batch == 0 || o->batch > 10000)
        return pgwi_error(err, PGW_EINVAL, "baseline options: batch must be 1..10000");
    if (o->pgw_schema && !o->pgw_schema[0])
        return pgwi_error(err, PGW_EINVAL, "baseline options: the pgwitness schema name is empty");
    return PGW_OK;
}

/* The OID array literal of candidates [start, end). */
static int oid_literal(char *buf, const PGresult *cand, size_t start, size_t end, pgw_error *err)
{
    char *p = buf;
    *p++ = '{';
    for (size_t i = start; i < end; i++) {
        const char *v = PQgetvalue(cand, (int)i, 0);
        size_t len = strlen(v);
        if (len > 10)
            return pgwi_error(err, PGW_EPG, "baseline: unexpected OID \"%.20s\"", v);
        memcpy(p, v, len);
        p += len;
        *p++ = i + 1 < end ? ',' : '}';
    }
    *p = '\0';
    return PGW_OK;
}

/* Pipeline plumbing: the next result of the current statement, then the
 * end of its results and its sync. */
static PGresult *next_result(PGconn *conn)
{
    PGresult *r = PQgetResult(conn);
    /* After a statement's results libpq returns NULL once; skip it and the
     * sync marker to reach the next statement's result. */
    while (r == NULL || PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
        if (r == NULL && PQstatus(conn) == CONNECTION_BAD)
            return NULL;
        PQclear(r);
        r = PQgetResult(conn);
    }
    return r;
}

static void pump(void *arg)
{
    PQconsumeInput((PGconn *)arg);
}

typedef struct run {
    PGconn *conn;
    const pgw_pq_baseline_options *o;
    const PGresult *cand;
    size_t total, size;     /* candidates, batch size */
    char *oids;             /* literal buffer */
    batch b;
    pgw_pq_capture_options co;
    pgw_pq_baseline_result *res;
} run;

static size_t batch_end(const run *r, size_t start)
{
    return start + r->size < r->total ? start + r->size : r->total;
}

/* Turns a capture result into a prepared store message. */
static int process(run *r, PGresult *cap, size_t start, pgwi_pq_store_msg *msg, bool pipelined,
                   pgw_error *err)
{
    int rc;
    if ((rc = pgwi_pq_capture_rows(cap, &r->co, collect, &r->b, pipelined ? pump : NULL,
                                   r->conn, err)) < 0)
        return rc;
    if (r->b.n && (rc = pgwi_pq_store_prepare(msg, r->conn, r->o->pgw_schema,
                                              (const pgw_snapshot *const *)r->b.snaps, r->b.n,
                                              err)) < 0)
        return rc;
    size_t asked = batch_end(r, start) - start;
    r->res->captured += r->b.n;
    r->res->vanished += asked - r->b.n; /* dropped since the candidate query */
    return PGW_OK;
}

static int run_sequential(run *r, pgw_error *err)
{
    pgwi_pq_store_msg msg = {0};
    int rc = PGW_OK;
    for (size_t start = 0; start < r->total; start += r->size) {
        size_t end = batch_end(r, start);
        if ((rc = oid_literal(r->oids, r->cand, start, end, err)) < 0)
            goto done;
        if ((rc = pgwi_pq_capture_send(r->conn, r->oids, err)) < 0)
            goto done;
        PGresult *cap = PQgetResult(r->conn), *extra;
        while ((extra = PQgetResult(r->conn)) != NULL) /* there is one result */
            PQclear(extra);
        if (!cap || PQresultStatus(cap) != PGRES_TUPLES_OK) {
            rc = pgwi_pq_result_error(err, r->conn, cap, "capturing from the catalog");
            PQclear(cap);
            goto done;
        }
        rc = process(r, cap, start, &msg, false, err);
        PQclear(cap);
        if (rc < 0)
            goto done;
        if (r->b.n) {
            PGresult *st = PQexecParams(r->conn, msg.sql, 12, NULL, msg.params, NULL, NULL, 0);
            rc = pgwi_pq_store_result(st, r->conn, r->o->pgw_schema, r->b.n, NULL, err);
            PQclear(st);
            if (rc < 0)
                goto done;
        }
        pgwi_pq_store_msg_free(&msg);
        batch_clear(&r->b);
        if (r->o->progress)
            r->o->progress(end, r->total, r->o->userdata);
    }
done:
    pgwi_pq_store_msg_free(&msg);
    batch_clear(&r->b);
    return rc;
}

#ifdef LIBPQ_HAS_PIPELINING
/* Queues the catalog query of the batch that starts at start, and a sync. */
static int queue_capture(run *r, size_t start, pgw_error *err)
{
    int rc;
    if ((rc = oid_literal(r->oids, r->cand, start, batch_end(r, start), err)) < 0)
        return rc;
    if ((rc = pgwi_pq_capture_send(r->conn, r->oids, err)) < 0)
        return rc;
    if (!PQpipelineSync(r->conn))
        return pgwi_pq_conn_error(err, r->conn, "syncing the pipeline");
    return PGW_OK;
}

/* Reads a catalog query's rows into *out (PQclear). */
static int read_capture(PGresult **out, PGconn *conn, pgw_error *err)
{
    PGresult *cap = next_result(conn);
    if (!cap || PQresultStatus(cap) != PGRES_TUPLES_OK) {
        int rc = pgwi_pq_result_error(err, conn, cap, "capturing from the catalog");
        PQclear(cap);
        return rc;
    }
    *out = cap;
    return PGW_OK;
}

/* Reads the result of the store of n snapshots in flight, whose batch
 * ends at end, and reports the progress. */
static int read_store(run *r, size_t n, size_t end, pgw_error *err)
{
    PGresult *st = next_result(r->conn);
    int rc = pgwi_pq_store_result(st, r->conn, r->o->pgw_schema, n, NULL, err);
    PQclear(st);
    if (rc < 0)
        return rc;
    if (r->o->progress)
        r->o->progress(end, r->total, r->o->userdata);
    return PGW_OK;
}

/* One iteration k holds batch k's catalog rows (read in full) while the
 * store of batch k-1 may still run on the server:
 *   a. queue the catalog query of batch k+1;
 *   b. build and encode batch k, reading ahead on the connection between
 *      tables (the server runs store k-1, then catalog k+1);
 *   c. read store k-1's result, then catalog k+1's rows in full;
 *   d. queue the store of batch k (a large message: the server has no
 *      unread output now, so neither side can block the other).
 * Results arrive in the order statements were sent, which is the order
 * they are read here. */
static int run_pipelined(run *r, pgw_error *err)
{
    PGconn *conn = r->conn;
    if (!PQenterPipelineMode(conn))
        return run_sequential(r, err);
    size_t nbatches = (r->total + r->size - 1) / r->size;
    size_t pending_n = 0, pending_end = 0; /* the store in flight */
    bool pending = false;
    PGresult *cap = NULL;
    pgwi_pq_store_msg msg = {0};
    int rc;
    if ((rc = queue_capture(r, 0, err)) < 0)
        goto done;
    if ((rc = read_capture(&cap, conn, err)) < 0)
        goto done;
    for (size_t k = 0; k < nbatches; k++) {
        size_t start = k * r->size, end = batch_end(r, start);
        bool more = k + 1 < nbatches;
        /* a */
        if (more && (rc = queue_capture(r, end, err)) < 0)
            goto done;
        /* b */
        rc = process(r, cap, start, &msg, true, err);
        PQclear(cap);
        cap = NULL;
        if (rc < 0)
            goto done;
        /* c */
        if (pending) {
            pending = false;
            if ((rc = read_store(r, pending_n, pending_end, err)) < 0)
                goto done;
        }
        if (more && (rc = read_capture(&cap, conn, err)) < 0)
            goto done;
        /* d */
        if (r->b.n) {
            if ((rc = pgwi_pq_store_send(conn, &msg, err)) < 0)
                goto done;
            if (!PQpipelineSync(conn)) {
                rc = pgwi_pq_conn_error(err, conn, "syncing the pipeline");
                goto done;
            }
            pending = true;
            pending_n = r->b.n;
            pending_end = end;
        } else if (r->o->progress) {
            r->o->progress(end, r->total, r->o->userdata);
        }
        pgwi_pq_store_msg_free(&msg);
        batch_clear(&r->b);
    }
    if (pending)
        rc = read_store(r, pending_n, pending_end, err);
done:
    pgwi_pq_store_msg_free(&msg);
    batch_clear(&r->b);
    PQclear(cap);
    /* Drain what a failure left queued, then leave pipeline mode. */
    while (PQpipelineStatus(conn) != PQ_PIPELINE_OFF && !PQexitPipelineMode(conn)) {
        PGresult *x = PQgetResult(conn);
        if (x) {
            PQclear(x);
        } else if (PQstatus(conn) == CONNECTION_BAD) {
            break;
        }
    }
    return rc;
}
#endif

/* Runs every batch with the session's print settings fixed for the
 * capture (and restored after). */
static int run_batches(run *r, pgw_error *err)
{
    char saved[4][64];
    bool changed = false;
    int rc;
    if ((rc = pgwi_pq_print_settings_fix(r->conn, saved, &changed, err)) < 0)
        goto done;
#ifdef LIBPQ_HAS_PIPELINING
    rc = run_pipelined(r, err);
#else
    rc = run_sequential(r, err);
#endif
done:
    if (changed)
        pgwi_pq_print_settings_restore(r->conn, saved);
    return rc;
}

int pgw_pq_baseline(pgw_pq_baseline_result *out, PGconn *conn,
                    const pgw_pq_baseline_options *opts, pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_baseline: conn is NULL");
    pgw_pq_baseline_options defaults = PGW_PQ_BASELINE_OPTIONS_INIT;
    const pgw_pq_baseline_options *o = opts ? opts : &defaults;
    int rc;
    if ((rc = check_options(o, err)) < 0)
        return rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    if (PQtransactionStatus(conn) != PQTRANS_IDLE)
        return pgwi_error(err, PGW_ESTATE,
                          "pq_baseline commits batch by batch: call it outside a transaction");
    pgw_error local;
    pgw_error *e = err ? err : &local;

    /* The candidates for this run, oldest OID first. */
    char limit_s[24];
    snprintf(limit_s, sizeof limit_s, "%zu", o->limit);
    const char *params[4] = {o->schema_pattern ? o->schema_pattern : "%",
                             o->table_pattern ? o->table_pattern : "%", limit_s,
                             pgwi_pq_schema(o->pgw_schema)};
    char *sql = NULL;
    if ((rc = pgwi_pq_sql(&sql, conn, pgwi_sql_baseline_candidates, o->pgw_schema, err)) < 0)
        return rc;
    PGresult *cand;
    rc = pgwi_pq_exec(&cand, conn, sql, 4, params, "finding baseline candidates", e);
    pgwi_free(sql);
    if (rc < 0)
        return pgwi_pq_missing_relation(e) ? pgwi_pq_not_installed(err, o->pgw_schema) : rc;
    pgw_pq_baseline_result result = {0, 0, 0, 0};
    run r;
    memset(&r, 0, sizeof r);
    r.conn = conn;
    r.o = o;
    r.cand = cand;
    r.res = &result;
    r.total = (size_t)PQntuples(cand);
    r.size = o->batch < r.total ? o->batch : r.total;
    result.backlog = r.total ? (size_t)strtoull(PQgetvalue(cand, 0, 1), NULL, 10) : 0;
    r.co = (pgw_pq_capture_options)PGW_PQ_CAPTURE_OPTIONS_INIT;
    r.co.snapshot = o->snapshot;
    r.co.reason = PGW_REASON_BASELINE;
    r.co.extra = "{\"alive\": true}";
    if (r.total) {
        r.b.cap = r.size;
        r.b.snaps = pgwi_calloc(r.b.cap, sizeof *r.b.snaps);
        r.oids = pgwi_malloc(r.size * 12 + 3); /* "{", up to 10 digits and "," each, "}" */
        rc = r.b.snaps && r.oids ? run_batches(&r, err) : pgwi_enomem(err);
    }
    result.remaining = result.backlog - result.captured - result.vanished;
    batch_clear(&r.b);
    pgwi_free(r.b.snaps);
    pgwi_free(r.oids);
    PQclear(cand);
    if (rc < 0)
        return rc;
    if (out)
        *out = result;
    return PGW_OK;
}
