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

#include "csvread.h"
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

/* A growing string. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_addn(sbuf *b, const char *s, size_t n)
{
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
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_add(sbuf *b, const char *s)
{
    sb_addn(b, s, strlen(s));
}

/* Appends a value in COPY's text format: backslash, tab, newline and
 * carriage return escaped (a value may hold line ends from a quoted
 * field), everything else as it is. */
static void sb_copy_value(sbuf *b, const char *s, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = s[i] == '\\' ? "\\\\"
                          : s[i] == '\t' ? "\\t"
                          : s[i] == '\n' ? "\\n"
                          : s[i] == '\r' ? "\\r"
                                         : NULL;
        if (esc) {
            sb_addn(b, s + from, i - from);
            sb_add(b, esc);
            from = i + 1;
        }
    }
    sb_addn(b, s + from, n - from);
}

/* The file read as pandas.read_csv() reads it by default (csvread.h): the
 * column names, and the rows in COPY's text format for the staging table
 * (tab-separated, \N for a missing value). */
typedef struct csv_file {
    size_t columns;
    char **names; /* csvread_column_names() */
    sbuf rows_copy;
    size_t rows;
    size_t truncated; /* names cut to 63 bytes */
} csv_file;

/* "first line" or "line N": where the header is. */
static const char *header_where(size_t line, char *buf, size_t size)
{
    if (line == 1)
        return "first line";
    snprintf(buf, size, "line %zu", line);
    return buf;
}

/*
 * Reads `data` (the file `file`) into *out, before anything touches the
 * database:
 *   - the first line that is not blank is the header; its fields name the
 *     columns as pandas names them (an empty one "Unnamed: I", a repeat
 *     "name.1"); it must have at most 1600 fields (PostgreSQL's limit); a
 *     name longer than 63 bytes is cut to its first 63 bytes, on a UTF-8
 *     character boundary, as PostgreSQL truncates an identifier (with a
 *     NOTICE; truncate_identifier() in src/backend/parser/scansup.c), and
 *     counted in out->truncated; two names that are the same once cut are
 *     refused, as PostgreSQL would refuse the table ("column specified
 *     more than once");
 *   - every other record is a row: a short row (fewer fields than the
 *     header) gets missing values for the fields it lacks, as pandas gives
 *     NaN; a long row is refused with its line, as pandas refuses it
 *     ("Expected N fields in line L, saw M"), so that no value is dropped
 *     (pandas would take the extra leading fields of the first row as its
 *     index; a table has no place for them);
 *   - a field pandas reads as missing (csvread_is_na: "", NA, NaN, N/A,
 *     NULL, ...) is NULL;
 *   - the text must be UTF-8 (pandas' default encoding) without NUL bytes
 *     (a PostgreSQL text cannot hold one).
 * Returns PGW_OK or PGW_EPARSE with err filled, naming the line.
 */
static int read_csv(csv_file *out, const char *data, size_t len, const char *file,
                    pgw_error *err)
{
    memset(out, 0, sizeof *out);
    if (len == 0)
        return fail(err, PGW_EPARSE, "%s is empty: its first line must be the CSV header", file);
    csvread r;
    csvread_init(&r, data, len);
    char why[256], where[64];
    int rc = PGW_OK, k = csvread_next(&r, why, sizeof why);
    if (k == 0) {
        rc = fail(err, PGW_EPARSE,
                  "%s has only blank lines: its first line that is not blank must be the CSV "
                  "header",
                  file);
        goto done;
    }
    const char *hw = header_where(r.start_line, where, sizeof where);
    if (k < 0) {
        rc = fail(err, PGW_EPARSE, "%s: the header (%s) %s", file, hw, why);
        goto done;
    }
    if (r.fields > MAX_COLUMNS) {
        rc = fail(err, PGW_EPARSE, "%s: the header (%s) has more than %d columns (PostgreSQL's "
                  "limit)", file, hw, MAX_COLUMNS);
        goto done;
    }
    const char *fields[MAX_COLUMNS];
    for (size_t i = 0; i < r.fields; i++) {
        fields[i] = csvread_field(&r, i);
        size_t n = csvread_field_len(&r, i);
        if (memchr(fields[i], '\0', n)) {
            rc = fail(err, PGW_EPARSE, "%s: the header (%s) contains a NUL byte", file, hw);
            goto done;
        }
        if (!ex_utf8_valid(fields[i], n)) {
            rc = fail(err, PGW_EPARSE, "%s: the header (%s) is not valid UTF-8", file, hw);
            goto done;
        }
    }
    out->columns = r.fields;
    out->names = csvread_column_names(fields, r.fields);
    for (size_t i = 0; i < out->columns; i++) {
        char *name = out->names[i];
        size_t n = strlen(name);
        if (n <= EX_MAX_NAME_BYTES)
            continue;
        /* PostgreSQL's pg_mbcliplen(): the longest prefix of whole
         * characters within the limit (the name is valid UTF-8). */
        n = EX_MAX_NAME_BYTES;
        while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
            n--;
        name[n] = '\0';
        out->truncated++;
    }
    if (out->truncated) {
        for (size_t i = 1; i < out->columns; i++)
            for (size_t j = 0; j < i; j++) {
                if (strcmp(out->names[i], out->names[j]) != 0)
                    continue;
                rc = fail(err, PGW_EPARSE,
                          "%s: columns %zu and %zu of the header have the same name once cut "
                          "to PostgreSQL's limit of %d bytes (\"%s\"), as PostgreSQL would "
                          "truncate them",
                          file, j + 1, i + 1, EX_MAX_NAME_BYTES, out->names[i]);
                goto done;
            }
    }
    while ((k = csvread_next(&r, why, sizeof why)) == 1) {
        if (r.fields > out->columns) {
            rc = fail(err, PGW_EPARSE,
                      "%s: line %zu has %zu fields, more than the %zu %s of the header; nothing "
                      "was loaded",
                      file, r.start_line, r.fields, out->columns,
                      ex_plural(out->columns, "column", "columns"));
            goto done;
        }
        for (size_t i = 0; i < out->columns; i++) {
            if (i)
                sb_add(&out->rows_copy, "\t");
            const char *f = i < r.fields ? csvread_field(&r, i) : "";
            size_t n = i < r.fields ? csvread_field_len(&r, i) : 0;
            if (csvread_is_na(f, n)) {
                sb_add(&out->rows_copy, "\\N");
                continue;
            }
            if (memchr(f, '\0', n)) {
                rc = fail(err, PGW_EPARSE,
                          "%s: line %zu contains a NUL byte (column %zu); nothing was loaded",
                          file, r.start_line, i + 1);
                goto done;
            }
            if (!ex_utf8_valid(f, n)) {
                rc = fail(err, PGW_EPARSE,
                          "%s: line %zu is not valid UTF-8 (column %zu); nothing was loaded",
                          file, r.start_line, i + 1);
                goto done;
            }
            sb_copy_value(&out->rows_copy, f, n);
        }
        sb_add(&out->rows_copy, "\n");
        out->rows++;
    }
    if (k < 0)
        rc = fail(err, PGW_EPARSE, "%s: line %zu %s; nothing was loaded", file, r.start_line,
                  why);
done:
    csvread_free(&r);
    return rc;
}

static void csv_file_free(csv_file *f)
{
    csvread_names_free(f->names, f->columns);
    free(f->rows_copy.p);
    memset(f, 0, sizeof *f);
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
        sb_add(&q, "SELECT count(");
        sb_add(&q, qnames[i]);
        sb_add(&q, "::");
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
    csv_file csv;
    int rc = read_csv(&csv, data, len, csv_path, err);
    free(data);
    if (rc != PGW_OK) {
        csv_file_free(&csv);
        return rc;
    }
    char **names = csv.names;
    char **old_types = calloc(MAX_COLUMNS, sizeof *old_types);
    char **qnames = calloc(MAX_COLUMNS, sizeof *qnames); /* quoted once, reused */
    if (!old_types || !qnames)
        abort();
    ingest_result res;
    memset(&res, 0, sizeof res);
    res.columns = csv.columns;
    res.truncated = csv.truncated;
    sbuf qname = {0}, st = {0}, inf = {0}, create = {0}, fill = {0}, an = {0};
    PGresult *r = NULL, *cols = NULL;

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
        /* integer: whole numbers within bigint; numeric: decimals; else
         * text. bool_and() passes over NULLs, and is NULL when every value
         * is: a column without a value (no rows, or all missing, as a
         * trailing "Unnamed: I" column often is) is text, nothing says
         * otherwise. */
        const char *parts[] = {
            i ? ", " : "", "CASE WHEN bool_and(", q.p,
            " ~ '^-?[0-9]{1,18}$') THEN 'integer' WHEN bool_and(", q.p,
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
    /* The rows as read_csv() made them: COPY's text format, \N for NULL. */
    r = PQexec(conn, "COPY pgw_ingest_stage FROM STDIN");
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        rc = fail_pg(err, r, conn, "starting COPY");
        r = NULL;
        goto rollback;
    }
    PQclear(r);
    r = NULL;
    /* In pieces: PQputCopyData takes an int length. */
    const char *copy = csv.rows_copy.p;
    size_t copy_len = csv.rows_copy.len;
    for (size_t off = 0; off < copy_len;) {
        size_t piece = copy_len - off < (1u << 20) ? copy_len - off : (1u << 20);
        if (PQputCopyData(conn, copy + off, (int)piece) != 1) {
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
        for (size_t i = 0; i < res.columns; i++)
            types[i] = PQgetvalue(inferred, 0, (int)i);
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
        sb_add(&fill, i ? ", " : "");
        sb_add(&fill, qnames[i]);
        sb_add(&fill, "::");
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
    csv_file_free(&csv);
    return rc;
}
