/*
 * examples/ingest/ingest.c — see ingest.h.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLUMNS 1600

static int fail(pgw_error *err, int code, const char *what, const char *file)
{
    if (err) {
        err->code = code;
        snprintf(err->message, sizeof err->message, "%s: %s", file, what);
        err->path[0] = err->sqlstate[0] = '\0';
    }
    return code;
}

static int fail_pg(pgw_error *err, PGresult *r, PGconn *c, const char *what)
{
    if (err) {
        const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
        err->code = PGW_EPG;
        snprintf(err->message, sizeof err->message, "%s: %s", what,
                 msg ? msg : PQerrorMessage(c));
        snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state ? state : "");
        err->path[0] = '\0';
    }
    PQclear(r);
    return PGW_EPG;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* Splits the header line (RFC 4180 quoting) into names[]; returns the
 * count, 0 on a malformed header. Names point into `line`, rewritten. */
static size_t parse_header(char *line, char **names)
{
    size_t n = 0;
    char *p = line;
    for (;;) {
        if (n == MAX_COLUMNS)
            return 0;
        char *start = p, *o = p;
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '\0')
                    return 0;
                if (*p == '"' && p[1] == '"') {
                    *o++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *o++ = *p++;
                }
            }
        } else {
            while (*p && *p != ',' && *p != '\r' && *p != '\n')
                *o++ = *p++;
        }
        char end = *p;
        *o = '\0';
        names[n++] = start;
        if (end == ',') {
            p++;
            continue;
        }
        return (end == '\0' || end == '\r' || end == '\n') ? n : 0;
    }
}

static char *ident(PGconn *c, const char *s)
{
    return PQescapeIdentifier(c, s, strlen(s));
}

/* Appends to a growing string. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np)
            abort(); /* an example program: out of memory ends it */
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

static PGresult *run(PGconn *c, const char *sql, int n, const char *const *params)
{
    return PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
}

static bool ok(PGresult *r)
{
    return r && (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
}

int ingest_csv(ingest_result *out, PGconn *conn, const char *csv_path, const char *schema,
               const char *table, const char *resource, const char *pgw_schema,
               pgw_error *err)
{
    size_t len = 0;
    char *data = read_file(csv_path, &len);
    if (!data)
        return fail(err, PGW_ENOTFOUND, "cannot read the file", csv_path);
    char *nl = strchr(data, '\n');
    size_t header_len = nl ? (size_t)(nl - data) : len;
    char *header = strndup(data, header_len);
    char **names = calloc(MAX_COLUMNS, sizeof *names);
    ingest_result res;
    memset(&res, 0, sizeof res);
    int rc = PGW_OK;
    sbuf sql = {0};
    char *qtable = NULL, *qschema = NULL;
    PGresult *r = NULL;
    if (!header || !names)
        abort();
    res.columns = parse_header(header, names);
    if (res.columns == 0) {
        rc = fail(err, PGW_EPARSE, "the first line is not a CSV header", csv_path);
        goto done;
    }
    qschema = ident(conn, schema);
    qtable = ident(conn, table);

    r = PQexec(conn, "BEGIN");
    if (!ok(r)) {
        rc = fail_pg(err, r, conn, "BEGIN");
        r = NULL;
        goto done;
    }
    PQclear(r);

    /* Does the table exist, and with which columns? */
    sb_add(&sql, qschema);
    sb_add(&sql, ".");
    sb_add(&sql, qtable);
    const char *p1[1] = {sql.p};
    r = run(conn,
            "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = to_regclass($1) "
            "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
            1, p1);
    if (!ok(r)) {
        rc = fail_pg(err, r, conn, "reading the current columns");
        r = NULL;
        goto rollback;
    }
    char *exists_v = NULL;
    {
        const char *pe[1] = {sql.p};
        PGresult *e = run(conn, "SELECT to_regclass($1) IS NOT NULL", 1, pe);
        if (!ok(e)) {
            rc = fail_pg(err, e, conn, "checking the table");
            goto rollback;
        }
        exists_v = strdup(PQgetvalue(e, 0, 0));
        PQclear(e);
    }
    res.existed = exists_v && strcmp(exists_v, "t") == 0;
    free(exists_v);
    res.old_columns = (size_t)PQntuples(r);
    bool same = res.existed && res.old_columns == res.columns;
    for (size_t i = 0; same && i < res.columns; i++)
        same = strcmp(PQgetvalue(r, (int)i, 0), names[i]) == 0;
    PQclear(r);
    r = NULL;

    if (res.existed && !same) {
        /* The format changed upstream: the old table goes through the
         * funnel, which records what it looked like first. */
        pgw_pq_drop_options o = PGW_PQ_DROP_OPTIONS_INIT;
        o.pgw_schema = pgw_schema;
        o.resource = resource;
        rc = pgw_pq_drop_table(&res.drop, conn, schema, table,
                               PGW_REASON_SCHEMA_MISMATCH_RECREATE, &o, err);
        if (rc != PGW_OK)
            goto rollback;
        res.recreated = true;
    }

    /* Stage every field as text, then infer and cast. */
    sbuf st = {0};
    sb_add(&st, "CREATE TEMP TABLE pgw_ingest_stage (");
    for (size_t i = 0; i < res.columns; i++) {
        char *q = ident(conn, names[i]);
        sb_add(&st, i ? ", " : "");
        sb_add(&st, q);
        sb_add(&st, " text");
        PQfreemem(q);
    }
    sb_add(&st, ") ON COMMIT DROP");
    r = PQexec(conn, st.p);
    free(st.p);
    if (!ok(r)) {
        rc = fail_pg(err, r, conn, "creating the staging table");
        r = NULL;
        goto rollback;
    }
    PQclear(r);
    r = PQexec(conn, "COPY pgw_ingest_stage FROM STDIN WITH (FORMAT csv, HEADER true, NULL 'NA')");
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        rc = fail_pg(err, r, conn, "starting COPY");
        r = NULL;
        goto rollback;
    }
    PQclear(r);
    if (PQputCopyData(conn, data, (int)len) != 1 || PQputCopyEnd(conn, NULL) != 1) {
        rc = fail_pg(err, NULL, conn, "sending the CSV");
        goto rollback;
    }
    r = PQgetResult(conn);
    if (!ok(r)) {
        rc = fail_pg(err, r, conn, "loading the CSV");
        r = NULL;
        while ((r = PQgetResult(conn)) != NULL)
            PQclear(r);
        goto rollback;
    }
    res.rows = (size_t)strtoull(PQcmdTuples(r), NULL, 10);
    PQclear(r);
    while ((r = PQgetResult(conn)) != NULL)
        PQclear(r);

    /* Type inference: one pass over the staged values. */
    sbuf inf = {0};
    sb_add(&inf, "SELECT ");
    for (size_t i = 0; i < res.columns; i++) {
        char *q = ident(conn, names[i]);
        char piece[4096];
        snprintf(piece, sizeof piece,
                 "%sCASE WHEN bool_and(nullif(%s, '') IS NULL OR %s ~ '^-?[0-9]{1,18}$') "
                 "THEN 'integer' WHEN bool_and(nullif(%s, '') IS NULL OR %s ~ "
                 "'^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$') THEN 'numeric' ELSE 'text' END",
                 i ? ", " : "", q, q, q, q);
        sb_add(&inf, piece);
        PQfreemem(q);
    }
    sb_add(&inf, " FROM pgw_ingest_stage");
    r = PQexec(conn, inf.p);
    free(inf.p);
    if (!ok(r)) {
        rc = fail_pg(err, r, conn, "inferring types");
        r = NULL;
        goto rollback;
    }
    sbuf create = {0}, copy = {0};
    if (!res.existed || res.recreated) {
        sb_add(&create, "CREATE TABLE ");
        sb_add(&create, sql.p);
        sb_add(&create, " (");
    } else {
        sb_add(&create, "TRUNCATE ");
        sb_add(&create, sql.p);
    }
    sb_add(&copy, "INSERT INTO ");
    sb_add(&copy, sql.p);
    sb_add(&copy, " SELECT ");
    for (size_t i = 0; i < res.columns; i++) {
        /* An all-NULL column is text: nothing says otherwise. */
        const char *type = PQgetisnull(r, 0, (int)i) ? "text" : PQgetvalue(r, 0, (int)i);
        char *q = ident(conn, names[i]);
        if (!res.existed || res.recreated) {
            sb_add(&create, i ? ", " : "");
            sb_add(&create, q);
            sb_add(&create, " ");
            sb_add(&create, type);
        }
        sb_add(&copy, i ? ", nullif(" : "nullif(");
        sb_add(&copy, q);
        sb_add(&copy, ", '')");
        if (!res.existed || res.recreated) { /* else the existing types apply */
            sb_add(&copy, "::");
            sb_add(&copy, type);
        }
        if (strlen(res.types) + strlen(type) + 2 < sizeof res.types) {
            strcat(res.types, i ? "," : "");
            strcat(res.types, type);
        }
        PQfreemem(q);
    }
    PQclear(r);
    r = NULL;
    if (!res.existed || res.recreated)
        sb_add(&create, ")");
    sb_add(&copy, " FROM pgw_ingest_stage");
    r = PQexec(conn, create.p);
    free(create.p);
    if (!ok(r)) {
        free(copy.p);
        rc = fail_pg(err, r, conn, "creating the table");
        r = NULL;
        goto rollback;
    }
    PQclear(r);
    r = PQexec(conn, copy.p);
    free(copy.p);
    if (!ok(r)) {
        rc = fail_pg(err, r, conn, "filling the table");
        r = NULL;
        goto rollback;
    }
    PQclear(r);
    r = PQexec(conn, "COMMIT");
    if (!ok(r)) {
        rc = fail_pg(err, r, conn, "COMMIT");
        r = NULL;
        goto done;
    }
    PQclear(r);
    r = NULL;
    /* ANALYZE after the commit so that pg_stats describes the new table. */
    sbuf an = {0};
    sb_add(&an, "ANALYZE ");
    sb_add(&an, sql.p);
    r = PQexec(conn, an.p);
    free(an.p);
    if (!ok(r)) {
        rc = fail_pg(err, r, conn, "ANALYZE");
        r = NULL;
        goto done;
    }
    PQclear(r);
    r = NULL;
    if (out)
        *out = res;
    goto done;
rollback:
    PQclear(PQexec(conn, "ROLLBACK"));
done:
    PQclear(r);
    PQfreemem(qtable);
    PQfreemem(qschema);
    free(sql.p);
    free(names);
    free(header);
    free(data);
    return rc;
}
