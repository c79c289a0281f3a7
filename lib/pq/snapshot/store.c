/*
 * lib/pq/snapshot/store.c — storing, loading and pruning snapshots in the library's
 * schema (lib/pq/sql/store_batch.sql, load.sql, prune.sql).
 * SPDX-License-Identifier: MIT
 */
#include "pq_snapshot.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* array literals: every value travels as a parameter; a batch of values
 * travels as one array-literal parameter (PostgreSQL documentation 8.15.6
 * "Array Input and Output Syntax": elements double-quoted, with " and \
 * backslash-escaped; an unquoted NULL is SQL NULL). */

typedef struct abuf {
    char *p;
    size_t len, cap;
    bool failed;
} abuf;

static void ab_put(abuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = pgwi_realloc(b->p, cap);
        if (!np) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void ab_elem(abuf *b, const char *s, bool first)
{
    if (!first)
        ab_put(b, ",", 1);
    if (!s) {
        ab_put(b, "NULL", 4);
        return;
    }
    ab_put(b, "\"", 1);
    for (const char *p = s; *p;) {
        size_t run = strcspn(p, "\"\\");
        ab_put(b, p, run);
        p += run;
        if (*p) {
            char esc[2] = {'\\', *p++};
            ab_put(b, esc, 2);
        }
    }
    ab_put(b, "\"", 1);
}

/* ------------------------------------------------------------------ */
/* store                                                               */

enum { S_AT, S_SCHEMA, S_TABLE, S_OID, S_RES, S_REASON, S_HASH, S_STATS, S_ROWS, S_NCOLS,
       S_JSON, N_S };

void pgwi_pq_store_msg_free(pgwi_pq_store_msg *m)
{
    pgwi_free(m->sql);
    for (int k = 0; k < N_S; k++)
        pgwi_free(m->arrays[k]);
    memset(m, 0, sizeof *m);
}

int pgwi_pq_store_prepare(pgwi_pq_store_msg *m, PGconn *conn, const char *pgw_schema,
                          const pgw_snapshot *const *snaps, size_t n, pgw_error *err)
{
    memset(m, 0, sizeof *m);
    abuf arr[N_S];
    memset(arr, 0, sizeof arr);
    int rc;
    for (int k = 0; k < N_S; k++)
        ab_put(&arr[k], "{", 1);
    for (size_t i = 0; i < n; i++) {
        const pgw_snapshot *s = snaps[i];
        char at[PGW_TIMESTAMP_SIZE], oid[16], rows[24], ncols[24];
        char *json = NULL;
        pgw_timestamp_format(at, pgw_snapshot_captured_at(s));
        snprintf(oid, sizeof oid, "%" PRIu32, pgw_snapshot_table_oid(s));
        int64_t r;
        bool has_rows = pgw_snapshot_row_estimate(s, &r);
        snprintf(rows, sizeof rows, "%" PRId64, has_rows ? r : 0);
        snprintf(ncols, sizeof ncols, "%zu", pgw_snapshot_column_count(s));
        if ((rc = pgw_snapshot_to_json(&json, NULL, s, 0, err)) < 0)
            goto fail;
        bool first = i == 0;
        ab_elem(&arr[S_AT], at, first);
        ab_elem(&arr[S_SCHEMA], pgw_snapshot_schema(s), first);
        ab_elem(&arr[S_TABLE], pgw_snapshot_table(s), first);
        ab_elem(&arr[S_OID], oid, first);
        ab_elem(&arr[S_RES], pgw_snapshot_resource(s), first);
        ab_elem(&arr[S_REASON], pgw_snapshot_reason(s), first);
        ab_elem(&arr[S_HASH], pgw_snapshot_schema_hash(s), first);
        ab_elem(&arr[S_STATS], pgw_snapshot_stats_available(s) ? "t" : "f", first);
        ab_elem(&arr[S_ROWS], has_rows ? rows : NULL, first);
        ab_elem(&arr[S_NCOLS], ncols, first);
        ab_elem(&arr[S_JSON], json, first);
        pgw_free(json);
    }
    for (int k = 0; k < N_S; k++) {
        ab_put(&arr[k], "}", 1);
        if (arr[k].failed) {
            rc = pgwi_enomem(err);
            goto fail;
        }
    }
    if ((rc = pgwi_pq_sql(&m->sql, conn, pgwi_sql_store_batch, pgw_schema, err)) < 0)
        goto fail;
    for (int k = 0; k < N_S; k++) {
        m->arrays[k] = arr[k].p;
        m->params[k] = arr[k].p;
    }
    m->params[N_S] = pgwi_pq_schema(pgw_schema);
    return PGW_OK;
fail:
    for (int k = 0; k < N_S; k++)
        pgwi_free(arr[k].p);
    return rc;
}

int pgwi_pq_store_send(PGconn *conn, const pgwi_pq_store_msg *m, pgw_error *err)
{
    if (!PQsendQueryParams(conn, m->sql, N_S + 1, NULL, m->params, NULL, NULL, 0))
        return pgwi_pq_conn_error(err, conn, "sending snapshots");
    return PGW_OK;
}

int pgwi_pq_store_result(PGresult *res, PGconn *conn, const char *pgw_schema, size_t n,
                         int64_t *ids, pgw_error *err)
{
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st != PGRES_TUPLES_OK) {
        /* The SQLSTATE tells "not installed" apart: read it even without err. */
        pgw_error local;
        pgw_error *e = err ? err : &local;
        int rc = pgwi_pq_result_error(e, conn, res, "storing snapshots");
        return pgwi_pq_missing_relation(e) ? pgwi_pq_not_installed(err, pgw_schema) : rc;
    }
    if ((size_t)PQntuples(res) != n)
        return pgwi_error(err, PGW_EPG, "storing snapshots: %d ids for %zu snapshots",
                          PQntuples(res), n);
    for (size_t i = 0; ids && i < n; i++)
        ids[i] = strtoll(PQgetvalue(res, (int)i, 0), NULL, 10);
    return PGW_OK;
}

int pgwi_pq_store_many(PGconn *conn, const char *pgw_schema, const pgw_snapshot *const *snaps,
                       size_t n, int64_t *ids, pgw_error *err)
{
    pgwi_pq_store_msg m;
    int rc;
    if ((rc = pgwi_pq_store_prepare(&m, conn, pgw_schema, snaps, n, err)) < 0)
        return rc;
    PGresult *res = PQexecParams(conn, m.sql, N_S + 1, NULL, m.params, NULL, NULL, 0);
    rc = pgwi_pq_store_result(res, conn, pgw_schema, n, ids, err);
    PQclear(res);
    pgwi_pq_store_msg_free(&m);
    return rc;
}

int pgw_pq_store(int64_t *out, PGconn *conn, const char *pgw_schema, const pgw_snapshot *snap,
                 pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "pq_store", conn, snap) < 0)
        return PGW_EINVAL;
    int rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    int64_t id = 0;
    if ((rc = pgwi_pq_store_many(conn, pgw_schema, &snap, 1, &id, err)) < 0)
        return rc;
    if (out)
        *out = id;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* load                                                                */

struct pgw_pq_snapshot_set {
    size_t n;
    pgw_snapshot **snaps;
    int64_t *ids;
    /* documents left out (skip_undecodable): ids and reasons */
    size_t n_skipped;
    int64_t *skipped_ids;
    char **skipped_reasons;
};

void pgw_pq_snapshot_set_free(pgw_pq_snapshot_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        pgw_snapshot_free(set->snaps[i]);
    for (size_t i = 0; i < set->n_skipped; i++)
        pgwi_free(set->skipped_reasons[i]);
    pgwi_free(set->snaps);
    pgwi_free(set->ids);
    pgwi_free(set->skipped_ids);
    pgwi_free(set->skipped_reasons);
    pgwi_free(set);
}

size_t pgw_pq_snapshot_set_skipped_count(const pgw_pq_snapshot_set *set)
{
    return set ? set->n_skipped : 0;
}

int64_t pgw_pq_snapshot_set_skipped(const pgw_pq_snapshot_set *set, size_t i, const char **reason)
{
    if (!set || i >= set->n_skipped)
        return 0;
    if (reason)
        *reason = set->skipped_reasons[i];
    return set->skipped_ids[i];
}

size_t pgw_pq_snapshot_set_count(const pgw_pq_snapshot_set *set)
{
    return set ? set->n : 0;
}

const pgw_snapshot *pgw_pq_snapshot_set_get(const pgw_pq_snapshot_set *set, size_t i)
{
    return set && i < set->n ? set->snaps[i] : NULL;
}

int64_t pgw_pq_snapshot_set_id(const pgw_pq_snapshot_set *set, size_t i)
{
    return set && i < set->n ? set->ids[i] : 0;
}

const pgw_snapshot *const *pgw_pq_snapshot_set_all(const pgw_pq_snapshot_set *set)
{
    return set && set->n ? (const pgw_snapshot *const *)set->snaps : NULL;
}

/* A stored document that does not decode (code is PGW_EPARSE or
 * PGW_EVERSION, e says why): e now names the document. With skip, it is
 * recorded in the set, the reason with its JSON path as one text
 * ("... (at $.format)", the path left out when the message already names
 * it), and the load goes on (PGW_OK); without, the code is returned. */
static int undecodable(pgw_pq_snapshot_set *set, int64_t id, int code, bool skip, pgw_error *e)
{
    char msg[PGW_ERROR_MESSAGE_SIZE], path[PGW_ERROR_PATH_SIZE];
    memcpy(msg, e->message, sizeof msg);
    memcpy(path, e->path, sizeof path);
    pgwi_error_at(e, code, path, "stored snapshot %" PRId64 " does not decode: %s", id, msg);
    if (!skip)
        return code;
    /* The path once: not again when the decoder's message names it. */
    bool at = path[0] && !strstr(e->message, path);
    size_t len = strlen(e->message) + (at ? 6 + strlen(path) : 0) + 1;
    char *reason = pgwi_malloc(len);
    if (!reason)
        return pgwi_enomem(e);
    snprintf(reason, len, "%s%s%s%s", e->message, at ? " (at " : "", at ? path : "",
             at ? ")" : "");
    set->skipped_ids[set->n_skipped] = id;
    set->skipped_reasons[set->n_skipped++] = reason;
    return PGW_OK;
}

int pgw_pq_load(pgw_pq_snapshot_set **out, PGconn *conn, const char *pgw_schema,
                const pgw_pq_filter *filter, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "pq_load", out, conn) < 0)
        return PGW_EINVAL;
    pgw_pq_filter all = PGW_PQ_FILTER_INIT;
    const pgw_pq_filter *f = filter ? filter : &all;
    if (f->version != 1 && f->version != PGW_PQ_FILTER_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "filter version %u is not 1 or %u (use PGW_PQ_FILTER_INIT)", f->version,
                          (unsigned)PGW_PQ_FILTER_VERSION);
    /* skip_undecodable exists from version 2: a version-1 caller's struct
     * ends before it. */
    bool skip = f->version >= 2 && f->skip_undecodable;
    if ((f->schema == NULL) != (f->table == NULL))
        return pgwi_error(err, PGW_EINVAL, "filter: give both schema and table, or neither");
    int rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    pgw_error local;
    pgw_error *e = err ? err : &local;

    char id[24], oid[16], since[24], until[24], limit[24];
    snprintf(id, sizeof id, "%" PRId64, f->id);
    snprintf(oid, sizeof oid, "%" PRIu32, f->table_oid);
    snprintf(since, sizeof since, "%" PRId64, f->since);
    snprintf(until, sizeof until, "%" PRId64, f->until);
    snprintf(limit, sizeof limit, "%zu", f->limit);
    const char *params[9] = {
        f->id ? id : NULL,
        f->schema,
        f->table,
        f->resource,
        f->table_oid ? oid : NULL,
        f->has_since ? since : NULL,
        f->has_until ? until : NULL,
        f->newest_first ? "t" : "f",
        f->limit ? limit : NULL,
    };
    char *sql = NULL;
    if ((rc = pgwi_pq_sql(&sql, conn, pgwi_sql_load, pgw_schema, err)) < 0)
        return rc;
    PGresult *res;
    rc = pgwi_pq_exec(&res, conn, sql, 9, params, "loading snapshots", e);
    pgwi_free(sql);
    if (rc < 0)
        return pgwi_pq_missing_relation(e) ? pgwi_pq_not_installed(err, pgw_schema) : rc;
    size_t n = (size_t)PQntuples(res);
    pgw_pq_snapshot_set *set = pgwi_calloc(1, sizeof *set);
    if (!set || (n && (!(set->snaps = pgwi_calloc(n, sizeof *set->snaps)) ||
                       !(set->ids = pgwi_calloc(n, sizeof *set->ids)))) ||
        (n && skip && (!(set->skipped_ids = pgwi_calloc(n, sizeof *set->skipped_ids)) ||
                       !(set->skipped_reasons = pgwi_calloc(n, sizeof *set->skipped_reasons))))) {
        rc = pgwi_enomem(err);
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        const char *json = PQgetvalue(res, (int)i, 1);
        int64_t id_i = strtoll(PQgetvalue(res, (int)i, 0), NULL, 10);
        rc = pgw_snapshot_from_json(&set->snaps[set->n], json,
                                    (size_t)PQgetlength(res, (int)i, 1), NULL, e);
        if (rc == PGW_EPARSE || rc == PGW_EVERSION) {
            if ((rc = undecodable(set, id_i, rc, skip, e)) < 0)
                goto fail;
            continue;
        }
        if (rc < 0)
            goto fail;
        set->ids[set->n++] = id_i;
    }
    PQclear(res);
    *out = set;
    return PGW_OK;
fail:
    PQclear(res);
    pgw_pq_snapshot_set_free(set);
    return rc;
}

/* ------------------------------------------------------------------ */
/* prune                                                               */

int pgw_pq_prune(pgw_pq_prune_result *out, PGconn *conn, const char *pgw_schema, size_t keep,
                 pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_prune: conn is NULL");
    if (keep == 0 || keep > INT32_MAX)
        return pgwi_error(err, PGW_EINVAL, "pq_prune: keep must be between 1 and %d", INT32_MAX);
    int rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    pgw_error local;
    pgw_error *e = err ? err : &local;
    char keep_s[24];
    snprintf(keep_s, sizeof keep_s, "%zu", keep);
    const char *params[1] = {keep_s};
    char *sql = NULL;
    if ((rc = pgwi_pq_sql(&sql, conn, pgwi_sql_prune, pgw_schema, err)) < 0)
        return rc;
    PGresult *res;
    rc = pgwi_pq_exec(&res, conn, sql, 1, params, "pruning snapshots", e);
    pgwi_free(sql);
    if (rc < 0)
        return pgwi_pq_missing_relation(e) ? pgwi_pq_not_installed(err, pgw_schema) : rc;
    pgw_pq_prune_result pr;
    pr.removed = (size_t)strtoull(PQgetvalue(res, 0, 0), NULL, 10);
    pr.resources = (size_t)strtoull(PQgetvalue(res, 0, 1), NULL, 10);
    pr.kept = (size_t)strtoull(PQgetvalue(res, 0, 2), NULL, 10);
    PQclear(res);
    if (out)
        *out = pr;
    return PGW_OK;
}
