/*
 * lib/pq/baseline.c — the baseline pass: snapshot live tables that have no
 * snapshot of their current OID yet, in batches (lib/pq/sql/
 * baseline_candidates.sql, capture.sql, store_batch.sql).
 * SPDX-License-Identifier: MIT
 */
#include "pq_internal.h"

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

int pgw_pq_baseline(pgw_pq_baseline_result *out, PGconn *conn,
                    const pgw_pq_baseline_options *opts, pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_baseline: conn is NULL");
    pgw_pq_baseline_options defaults = PGW_PQ_BASELINE_OPTIONS_INIT;
    const pgw_pq_baseline_options *o = opts ? opts : &defaults;
    int rc = check_options(o, err);
    if (rc == PGW_OK)
        rc = pgw_pq_check(NULL, conn, err);
    if (rc != PGW_OK)
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
    char *sql = pgwi_pq_sql(conn, pgwi_sql_baseline_candidates, o->pgw_schema, e);
    if (!sql)
        return e->code;
    PGresult *cand = pgwi_pq_exec(conn, sql, 4, params, "finding baseline candidates", e);
    pgwi_free(sql);
    if (!cand)
        return pgwi_pq_missing_relation(e) ? pgwi_pq_not_installed(err, o->pgw_schema) : e->code;
    size_t total = (size_t)PQntuples(cand);
    pgw_pq_baseline_result result = {0, 0, 0, 0};
    result.backlog = total ? (size_t)strtoull(PQgetvalue(cand, 0, 1), NULL, 10) : 0;

    pgw_pq_capture_options co = PGW_PQ_CAPTURE_OPTIONS_INIT;
    co.snapshot = o->snapshot;
    co.reason = PGW_REASON_BASELINE;
    co.extra = "{\"alive\": true}";
    batch b = {NULL, 0, o->batch < total ? o->batch : total};
    char *oids = NULL;
    if (total) {
        b.snaps = pgwi_calloc(b.cap, sizeof *b.snaps);
        oids = pgwi_malloc(b.cap * 12 + 3); /* "{" + up to 10 digits and "," each + "}" */
        if (!b.snaps || !oids) {
            rc = pgwi_enomem(err);
            goto done;
        }
    }
    for (size_t start = 0; start < total; start += b.cap) {
        size_t end = start + b.cap < total ? start + b.cap : total;
        char *p = oids;
        *p++ = '{';
        for (size_t i = start; i < end; i++) {
            const char *v = PQgetvalue(cand, (int)i, 0);
            size_t len = strlen(v);
            if (len > 10) {
                rc = pgwi_error(err, PGW_EPG, "baseline: unexpected OID \"%.20s\"", v);
                goto done;
            }
            memcpy(p, v, len);
            p += len;
            *p++ = i + 1 < end ? ',' : '}';
        }
        *p = '\0';
        /* Each batch is its own transaction: what is stored stays stored
         * when a later batch fails. */
        rc = pgwi_pq_capture_oids(conn, oids, &co, collect, &b, e);
        if (rc == PGW_OK && b.n)
            rc = pgwi_pq_store_many(conn, o->pgw_schema, (const pgw_snapshot *const *)b.snaps,
                                    b.n, NULL, e);
        if (rc != PGW_OK)
            goto done;
        result.captured += b.n;
        result.vanished += (end - start) - b.n; /* dropped since the candidate query */
        batch_clear(&b);
        if (o->progress)
            o->progress(end, total, o->userdata);
    }
    result.remaining = result.backlog - result.captured - result.vanished;
done:
    batch_clear(&b);
    pgwi_free(b.snaps);
    pgwi_free(oids);
    PQclear(cand);
    if (rc == PGW_OK && out)
        *out = result;
    return rc;
}
