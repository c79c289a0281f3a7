/*
 * examples/ingest/ingest.c — see ingest.h.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "excommon.h"

#define MAX_COLUMNS 1600 /* PostgreSQL's limit for a table */

static int fail(pgw_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(pgw_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->path[0] = err->sqlstate[0] = '\0';
    }
    return code;
}

static int fail_pg(pgw_error *err, PGresult *r, PGconn *c, const char *what)
{
    if (err) {
        const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
        char conn_msg[256];
        snprintf(conn_msg, sizeof conn_msg, "%s", PQerrorMessage(c));
        conn_msg[strcspn(conn_msg, "\n")] = '\0';
        err->code = PGW_EPG;
        snprintf(err->message, sizeof err->message, "%s: %s", what, msg ? msg : conn_msg);
        snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state ? state : "");
        err->path[0] = '\0';
    }
    PQclear(r);
    return PGW_EPG;
}

/* Splits the header line (RFC 4180 quoting) into names[]; returns the
 * count, or 0 with `why` filled for a malformed header. Names point into
 * `line`, rewritten. */
static size_t parse_header(char *line, char **names, char *why, size_t why_size)
{
    size_t n = 0;
    char *p = line;
    for (;;) {
        if (n == MAX_COLUMNS) {
            snprintf(why, why_size, "has more than %d columns (PostgreSQL's limit)",
                     MAX_COLUMNS);
            return 0;
        }
        char *start = p, *o = p;
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '\0' || *p == '\n' || *p == '\r') {
                    snprintf(why, why_size, "has an unterminated quote in column %zu", n + 1);
                    return 0;
                }
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
        if (end == '\0' || end == '\r' || end == '\n')
            return n;
        snprintf(why, why_size, "has text after the closing quote of column %zu", n);
        return 0;
    }
}

/* The header's names must make a table: not empty, not longer than
 * PostgreSQL keeps (it would truncate them, and two could become one),
 * each once. Returns PGW_OK or fills err. */
static int check_names(char **names, size_t n, const char *file, pgw_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!names[i][0])
            return fail(err, PGW_EPARSE, "%s: column %zu of the header has an empty name", file,
                        i + 1);
        if (strlen(names[i]) > EX_MAX_NAME_BYTES)
            return fail(err, PGW_EPARSE,
                        "%s: the name of column %zu of the header is %zu bytes, longer than "
                        "PostgreSQL's limit of %d",
                        file, i + 1, strlen(names[i]), EX_MAX_NAME_BYTES);
        for (size_t k = 0; k < i; k++)
            if (strcmp(names[k], names[i]) == 0)
                return fail(err, PGW_EPARSE,
                            "%s: the header names column \"%s\" twice (columns %zu and %zu)",
                            file, names[i], k + 1, i + 1);
    }
    return PGW_OK;
}

/* A growing string; `failed` records a name that could not be quoted. */
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

/* Appends `name` as a quoted identifier; false (err filled) when libpq
 * cannot quote it (e.g. not valid in the client encoding). */
static bool sb_ident(sbuf *b, PGconn *c, const char *name, pgw_error *err)
{
    char *q = PQescapeIdentifier(c, name, strlen(name));
    if (!q) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", PQerrorMessage(c));
        msg[strcspn(msg, "\n")] = '\0';
        fail(err, PGW_EINVAL, "cannot quote the name \"%s\": %s", name, msg);
        return false;
    }
    sb_add(b, q);
    PQfreemem(q);
    return true;
}

static PGresult *run(PGconn *c, const char *sql, int n, const char *const *params)
{
    return PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
}

static bool ok(PGresult *r)
{
    return r && (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
}

/* Runs a statement that returns nothing of interest. */
static int exec(PGconn *c, const char *sql, const char *what, pgw_error *err)
{
    PGresult *r = PQexec(c, sql);
    if (!ok(r))
        return fail_pg(err, r, c, what);
    PQclear(r);
    return PGW_OK;
}

/*
 * The same header loaded into an existing table whose types refuse a
 * value: finds the first column whose cast fails, for a message that
 * names it. Runs inside the (failed, rolled back to its savepoint)
 * transaction; each probe under its own savepoint.
 */
static bool find_misfit(PGconn *c, char **qnames, char **types, size_t n, size_t *col,
                        char *msg, size_t msg_size)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(types[i], "text") == 0)
            continue;
        sbuf q = {0};
        sb_add(&q, "SELECT count(nullif(");
        sb_add(&q, qnames[i]);
        sb_add(&q, ", '')::");
        sb_add(&q, types[i]);
        sb_add(&q, ") FROM pgw_ingest_stage");
        PQclear(PQexec(c, "SAVEPOINT pgw_ingest_probe"));
        PGresult *r = PQexec(c, q.p);
        free(q.p);
        bool bad = !ok(r);
        if (bad) {
            const char *m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
            snprintf(msg, msg_size, "%s", m ? m : "the cast fails");
        }
        PQclear(r);
        PQclear(PQexec(c, "ROLLBACK TO SAVEPOINT pgw_ingest_probe"));
        if (bad) {
            *col = i;
            return true;
        }
    }
    return false;
}

int ingest_csv(ingest_result *out, PGconn *conn, const char *csv_path, const char *schema,
               const char *table, const char *resource, const char *pgw_schema,
               pgw_error *err)
{
    const char *problem;
    if (!conn || !csv_path || !schema || !table)
        return fail(err, PGW_EINVAL, "ingest: NULL argument");
    if ((problem = ex_name_problem(schema)) != NULL)
        return fail(err, PGW_EINVAL, "the schema name %s", problem);
    if ((problem = ex_name_problem(table)) != NULL)
        return fail(err, PGW_EINVAL, "the table name %s", problem);
    if (pgw_schema && (problem = ex_name_problem(pgw_schema)) != NULL)
        return fail(err, PGW_EINVAL, "the pgwitness schema name %s", problem);

    size_t len = 0;
    char why[256];
    char *data = ex_read_file(csv_path, 0, &len, why, sizeof why);
    if (!data)
        return fail(err, PGW_ENOTFOUND, "cannot read %s: %s", csv_path, why);
    if (len == 0) {
        free(data);
        return fail(err, PGW_EPARSE, "%s is empty: its first line must be the CSV header",
                    csv_path);
    }
    char *nl = memchr(data, '\n', len);
    size_t header_len = nl ? (size_t)(nl - data) : len;
    if (memchr(data, '\0', header_len)) {
        free(data);
        return fail(err, PGW_EPARSE, "%s: the header (first line) contains a NUL byte",
                    csv_path);
    }
    if (!ex_utf8_valid(data, header_len)) {
        free(data);
        return fail(err, PGW_EPARSE, "%s: the header (first line) is not valid UTF-8",
                    csv_path);
    }
    char *header = strndup(data, header_len);
    char **names = calloc(MAX_COLUMNS, sizeof *names);
    char **old_types = calloc(MAX_COLUMNS, sizeof *old_types);
    char **qnames = calloc(MAX_COLUMNS, sizeof *qnames); /* quoted once, reused */
    if (!header || !names || !old_types || !qnames)
        abort();
    ingest_result res;
    memset(&res, 0, sizeof res);
    int rc = PGW_OK;
    sbuf qname = {0}, st = {0}, inf = {0}, create = {0}, fill = {0}, an = {0};
    PGresult *r = NULL, *cols = NULL;

    res.columns = parse_header(header, names, why, sizeof why);
    if (res.columns == 0) {
        rc = fail(err, PGW_EPARSE, "%s: the header (first line) %s", csv_path, why);
        goto done;
    }
    if ((rc = check_names(names, res.columns, csv_path, err)) != PGW_OK)
        goto done;

    /* Every statement is built before the transaction starts. */
    if (!sb_ident(&qname, conn, schema, err)) {
        rc = PGW_EINVAL;
        goto done;
    }
    sb_add(&qname, ".");
    if (!sb_ident(&qname, conn, table, err)) {
        rc = PGW_EINVAL;
        goto done;
    }
    /* Stage every field as text, then infer and cast. */
    sb_add(&st, "CREATE TEMP TABLE pgw_ingest_stage (");
    sb_add(&inf, "SELECT ");
    for (size_t i = 0; i < res.columns; i++) {
        sbuf q = {0};
        if (!sb_ident(&q, conn, names[i], err)) {
            free(q.p);
            rc = PGW_EINVAL;
            goto done;
        }
        qnames[i] = q.p;
        sb_add(&st, i ? ", " : "");
        sb_add(&st, q.p);
        sb_add(&st, " text");
        /* integer: whole numbers within bigint; numeric: decimals; else text */
        const char *parts[] = {
            i ? ", " : "", "CASE WHEN bool_and(nullif(", q.p, ", '') IS NULL OR ", q.p,
            " ~ '^-?[0-9]{1,18}$') THEN 'integer' WHEN bool_and(nullif(", q.p,
            ", '') IS NULL OR ", q.p,
            " ~ '^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$') THEN 'numeric' ELSE 'text' END"};
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
            sb_add(&inf, parts[k]);
    }
    sb_add(&st, ") ON COMMIT DROP");
    sb_add(&inf, " FROM pgw_ingest_stage");

    if ((rc = exec(conn, "BEGIN", "BEGIN", err)) != PGW_OK)
        goto done;

    /* Does the table exist, and with which columns and types? */
    const char *p1[1] = {qname.p};
    r = run(conn, "SELECT c.relkind IN ('r', 'p') FROM pg_class c WHERE c.oid = to_regclass($1)",
            1, p1);
    if (!ok(r)) {
        rc = fail_pg(err, r, conn, "checking the table");
        r = NULL;
        goto rollback;
    }
    res.existed = PQntuples(r) == 1;
    if (res.existed && strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
        rc = fail(err, PGW_EINVAL, "%s.%s exists but is not a table", schema, table);
        goto rollback;
    }
    PQclear(r);
    r = NULL;
    cols = run(conn,
               "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
               "WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped "
               "ORDER BY a.attnum",
               1, p1);
    if (!ok(cols)) {
        rc = fail_pg(err, cols, conn, "reading the current columns");
        cols = NULL;
        goto rollback;
    }
    res.old_columns = (size_t)PQntuples(cols);
    bool same = res.existed && res.old_columns == res.columns;
    for (size_t i = 0; same && i < res.columns; i++) {
        same = strcmp(PQgetvalue(cols, (int)i, 0), names[i]) == 0;
        old_types[i] = PQgetvalue(cols, (int)i, 1);
    }

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
    bool fresh = !res.existed || res.recreated;

    if ((rc = exec(conn, st.p, "creating the staging table", err)) != PGW_OK)
        goto rollback;
    r = PQexec(conn, "COPY pgw_ingest_stage FROM STDIN WITH (FORMAT csv, HEADER true, NULL 'NA')");
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        rc = fail_pg(err, r, conn, "starting COPY");
        r = NULL;
        goto rollback;
    }
    PQclear(r);
    r = NULL;
    /* In pieces: PQputCopyData takes an int length. */
    for (size_t off = 0; off < len;) {
        size_t piece = len - off < (1u << 20) ? len - off : (1u << 20);
        if (PQputCopyData(conn, data + off, (int)piece) != 1) {
            rc = fail_pg(err, NULL, conn, "sending the CSV");
            goto rollback;
        }
        off += piece;
    }
    if (PQputCopyEnd(conn, NULL) != 1) {
        rc = fail_pg(err, NULL, conn, "sending the CSV");
        goto rollback;
    }
    r = PQgetResult(conn);
    if (!ok(r)) {
        char what[300];
        snprintf(what, sizeof what, "loading %s", csv_path);
        rc = fail_pg(err, r, conn, what);
        r = NULL;
        while ((r = PQgetResult(conn)) != NULL)
            PQclear(r);
        goto rollback;
    }
    res.rows = (size_t)strtoull(PQcmdTuples(r), NULL, 10);
    PQclear(r);
    while ((r = PQgetResult(conn)) != NULL)
        PQclear(r);

    /* Type inference (one pass over the staged values) for a new table;
     * an existing table with the same header keeps its types. */
    char **types = old_types;
    PGresult *inferred = NULL;
    if (fresh) {
        inferred = PQexec(conn, inf.p);
        if (!ok(inferred)) {
            rc = fail_pg(err, inferred, conn, "inferring types");
            goto rollback;
        }
        types = calloc(res.columns, sizeof *types);
        if (!types)
            abort();
        /* An all-NULL column is text: nothing says otherwise. */
        for (size_t i = 0; i < res.columns; i++)
            types[i] = PQgetisnull(inferred, 0, (int)i) ? "text"
                                                        : PQgetvalue(inferred, 0, (int)i);
        sb_add(&create, "CREATE TABLE ");
        sb_add(&create, qname.p);
        sb_add(&create, " (");
    } else {
        sb_add(&create, "TRUNCATE ");
        sb_add(&create, qname.p);
    }
    sb_add(&fill, "INSERT INTO ");
    sb_add(&fill, qname.p);
    sb_add(&fill, " SELECT ");
    for (size_t i = 0; i < res.columns; i++) {
        if (fresh) {
            sb_add(&create, i ? ", " : "");
            sb_add(&create, qnames[i]);
            sb_add(&create, " ");
            sb_add(&create, types[i]);
        }
        /* The cast to the column's type, new or existing: a text
         * expression is not assignable to a numeric column. */
        sb_add(&fill, i ? ", nullif(" : "nullif(");
        sb_add(&fill, qnames[i]);
        sb_add(&fill, ", '')::");
        sb_add(&fill, types[i]);
        if (strlen(res.types) + strlen(types[i]) + 2 < sizeof res.types) {
            strcat(res.types, i ? "," : "");
            strcat(res.types, types[i]);
        }
    }
    if (fresh)
        sb_add(&create, ")");
    sb_add(&fill, " FROM pgw_ingest_stage");
    rc = exec(conn, create.p, fresh ? "creating the table" : "emptying the table", err);
    if (rc == PGW_OK && !fresh)
        rc = exec(conn, "SAVEPOINT pgw_ingest_fill", "SAVEPOINT", err);
    if (rc == PGW_OK) {
        r = PQexec(conn, fill.p);
        if (!ok(r)) {
            size_t col;
            char msg[256];
            if (!fresh) {
                PQclear(PQexec(conn, "ROLLBACK TO SAVEPOINT pgw_ingest_fill"));
                if (find_misfit(conn, qnames, types, res.columns, &col, msg, sizeof msg)) {
                    PQclear(r);
                    rc = fail(err, PGW_EINVAL,
                              "%s: column \"%s\" of %s.%s is %s, and a value of this file no "
                              "longer fits it (%s); nothing was changed",
                              csv_path, names[col], schema, table, types[col], msg);
                    r = NULL;
                }
            }
            if (r)
                rc = fail_pg(err, r, conn, "filling the table");
            r = NULL;
        } else {
            PQclear(r);
            r = NULL;
        }
    }
    if (types != old_types)
        free(types);
    PQclear(inferred);
    if (rc != PGW_OK)
        goto rollback;
    if ((rc = exec(conn, "COMMIT", "COMMIT", err)) != PGW_OK)
        goto done;
    /* ANALYZE after the commit so that pg_stats describes the new table. */
    sb_add(&an, "ANALYZE ");
    sb_add(&an, qname.p);
    if ((rc = exec(conn, an.p, "ANALYZE", err)) != PGW_OK)
        goto done;
    if (out)
        *out = res;
    goto done;
rollback:
    PQclear(PQexec(conn, "ROLLBACK"));
done:
    PQclear(r);
    PQclear(cols);
    free(qname.p);
    free(st.p);
    free(inf.p);
    free(create.p);
    free(fill.p);
    free(an.p);
    free(old_types);
    for (size_t i = 0; i < MAX_COLUMNS && qnames[i]; i++)
        free(qnames[i]);
    free(qnames);
    free(names);
    free(header);
    free(data);
    return rc;
}
