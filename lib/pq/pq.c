/*
 * lib/pq/pq.c — connection checks, libpq error translation, identifier
 * quoting, and statement helpers for the adapter.
 * SPDX-License-Identifier: MIT
 */
#include "pq_internal.h"

#include <stdio.h>
#include <string.h>

void pgwi_pq_one_line(char *dst, size_t size, const char *src)
{
    if (!src || !src[0])
        src = "connection lost";
    size_t n = 0;
    while (*src && n + 1 < size) {
        if (*src == '\n' || *src == '\r') {
            while (*src == '\n' || *src == '\r' || *src == '\t' || *src == ' ')
                src++;
            if (!*src)
                break;
            if (n + 3 >= size)
                break;
            dst[n++] = ';';
            dst[n++] = ' ';
            continue;
        }
        dst[n++] = *src == '\t' ? ' ' : *src;
        src++;
    }
    if (((unsigned char)*src & 0xC0) == 0x80) {
        /* Cut inside a multibyte character: drop its copied bytes. */
        while (n > 0 && ((unsigned char)dst[n - 1] & 0xC0) == 0x80)
            n--;
        if (n > 0)
            n--;
    }
    while (n > 0 && dst[n - 1] == ' ')
        n--;
    dst[n] = '\0';
}

int pgwi_pq_conn_error(pgw_error *err, PGconn *conn, const char *what)
{
    if (!err)
        return PGW_ECONN;
    char msg[PGW_ERROR_MESSAGE_SIZE];
    pgwi_pq_one_line(msg, sizeof msg, conn ? PQerrorMessage(conn) : NULL);
    return pgwi_error(err, PGW_ECONN, "%s: %s", what, msg);
}

/* dst = " (<label>: <text as one line>)", or "" when text is empty: the
 * DETAIL and HINT parts of a database error. In parentheses, so that the
 * "; " of a part's own line breaks cannot be taken for the end of it. */
static void labelled(char *dst, size_t size, const char *label, const char *text)
{
    dst[0] = '\0';
    if (!text || !text[0])
        return;
    int n = snprintf(dst, size, " (%s: ", label);
    if (n < 0 || (size_t)n + 2 > size)
        return;
    /* One byte short of the rest, for the parenthesis. */
    pgwi_pq_one_line(dst + n, size - (size_t)n - 1, text);
    if (!dst[n]) { /* only blanks */
        dst[0] = '\0';
        return;
    }
    strcat(dst, ")");
}

int pgwi_pq_result_error(pgw_error *err, PGconn *conn, const PGresult *res, const char *what)
{
    if (!res || PQresultStatus(res) == PGRES_FATAL_ERROR) {
        if (!res || (conn && PQstatus(conn) == CONNECTION_BAD))
            return pgwi_pq_conn_error(err, conn, what);
    }
    if (!err)
        return PGW_EPG;
    const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    char msg[PGW_ERROR_MESSAGE_SIZE];
    char detail[PGW_ERROR_MESSAGE_SIZE] = "", hint[PGW_ERROR_MESSAGE_SIZE] = "";
    if (primary && primary[0]) {
        pgwi_pq_one_line(msg, sizeof msg, primary);
        labelled(detail, sizeof detail, "DETAIL",
                 PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL));
        labelled(hint, sizeof hint, "HINT", PQresultErrorField(res, PG_DIAG_MESSAGE_HINT));
    } else {
        /* No fields (an error libpq made itself): its whole text. */
        const char *text = PQresultErrorMessage(res);
        if ((!text || !text[0]) && conn)
            text = PQerrorMessage(conn);
        pgwi_pq_one_line(msg, sizeof msg, text);
    }
    pgwi_error(err, PGW_EPG, "%s: %s%s%s", what, msg, detail, hint);
    if (state && strlen(state) == 5)
        memcpy(err->sqlstate, state, 6);
    return PGW_EPG;
}

int pgw_pq_check(int *out, PGconn *conn, pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_check: conn is NULL");
    if (PQstatus(conn) != CONNECTION_OK)
        return pgwi_pq_conn_error(err, conn, "connection is not usable");
    switch (PQtransactionStatus(conn)) {
    case PQTRANS_ACTIVE:
        return pgwi_error(err, PGW_ESTATE,
                          "connection is busy: a command is in progress");
    case PQTRANS_INERROR:
        return pgwi_error(err, PGW_ESTATE,
                          "connection is in an aborted transaction: roll it back first");
    case PQTRANS_UNKNOWN:
        return pgwi_pq_conn_error(err, conn, "connection is not usable");
    case PQTRANS_IDLE:
    case PQTRANS_INTRANS:
        break;
    }
    int version = PQserverVersion(conn);
    if (version < PGW_PQ_MIN_SERVER_VERSION)
        return pgwi_error(err, PGW_EVERSION,
                          "server version %d is older than %d (PostgreSQL 10, the first "
                          "with transition tables)",
                          version, PGW_PQ_MIN_SERVER_VERSION);
    if (out)
        *out = version;
    return PGW_OK;
}

const char *pgwi_pq_schema(const char *s)
{
    return s ? s : PGW_PQ_DEFAULT_SCHEMA;
}

int pgwi_pq_ident(char **out, PGconn *conn, const char *schema, const char *name,
                  pgw_error *err)
{
    char *qs = NULL, *qn = PQescapeIdentifier(conn, name, strlen(name));
    if (!qn)
        return pgwi_pq_conn_error(err, conn, "quoting an identifier");
    if (schema && !(qs = PQescapeIdentifier(conn, schema, strlen(schema)))) {
        PQfreemem(qn);
        return pgwi_pq_conn_error(err, conn, "quoting an identifier");
    }
    size_t len = strlen(qn) + (qs ? strlen(qs) + 1 : 0) + 1;
    char *q = pgwi_malloc(len);
    if (q)
        snprintf(q, len, "%s%s%s", qs ? qs : "", qs ? "." : "", qn);
    PQfreemem(qn);
    PQfreemem(qs);
    if (!q)
        return pgwi_enomem(err);
    *out = q;
    return PGW_OK;
}

/* Replaces every `token` in text with `with`; a new string (pgwi_free). */
static char *replace_all(const char *text, const char *token, const char *with)
{
    size_t tlen = strlen(token), wlen = strlen(with), n = 0;
    for (const char *p = strstr(text, token); p; p = strstr(p + tlen, token))
        n++;
    char *out = pgwi_malloc(strlen(text) + n * wlen + 1);
    if (!out)
        return NULL;
    char *o = out;
    const char *p = text;
    for (const char *hit = strstr(p, token); hit; hit = strstr(p, token)) {
        memcpy(o, p, (size_t)(hit - p));
        o += hit - p;
        memcpy(o, with, wlen);
        o += wlen;
        p = hit + tlen;
    }
    strcpy(o, p);
    return out;
}

int pgwi_pq_replace(char **out, const char *text, const char *token, const char *with,
                    pgw_error *err)
{
    char *s = replace_all(text, token, with);
    if (!s)
        return pgwi_enomem(err);
    *out = s;
    return PGW_OK;
}

int pgwi_pq_sqlv(char **out, PGconn *conn, const char *tmpl, const char *const *names,
                 const char *const *values, size_t n, pgw_error *err)
{
    char *sql = pgwi_strdup(tmpl);
    if (!sql)
        return pgwi_enomem(err);
    for (size_t i = 0; i < n; i++) {
        /* psql's variable forms: :"name" an identifier, :'name' a literal. */
        char tok_ident[72], tok_lit[72];
        snprintf(tok_ident, sizeof tok_ident, ":\"%s\"", names[i]);
        snprintf(tok_lit, sizeof tok_lit, ":'%s'", names[i]);
        char *ident = PQescapeIdentifier(conn, values[i], strlen(values[i]));
        char *lit = ident ? PQescapeLiteral(conn, values[i], strlen(values[i])) : NULL;
        char *step = lit ? replace_all(sql, tok_ident, ident) : NULL;
        char *next = step ? replace_all(step, tok_lit, lit) : NULL;
        int quoted = ident && lit;
        PQfreemem(ident);
        PQfreemem(lit);
        pgwi_free(step);
        pgwi_free(sql);
        if (!quoted)
            return pgwi_pq_conn_error(err, conn, "quoting a name");
        if (!next)
            return pgwi_enomem(err);
        sql = next;
    }
    *out = sql;
    return PGW_OK;
}

int pgwi_pq_sql(char **out, PGconn *conn, const char *tmpl, const char *pgw_schema,
                pgw_error *err)
{
    const char *names[1] = {"schema"}, *values[1] = {pgwi_pq_schema(pgw_schema)};
    return pgwi_pq_sqlv(out, conn, tmpl, names, values, 1, err);
}

int pgwi_pq_exec(PGresult **out, PGconn *conn, const char *sql, int nparams,
                 const char *const *params, const char *what, pgw_error *err)
{
    PGresult *r = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        int rc = pgwi_pq_result_error(err, conn, r, what);
        PQclear(r);
        return rc;
    }
    *out = r;
    return PGW_OK;
}

int pgwi_pq_run(PGconn *conn, const char *sql, PGresult **last, const char *what,
                pgw_error *err)
{
    if (last)
        *last = NULL;
    if (!PQsendQuery(conn, sql))
        return pgwi_pq_conn_error(err, conn, what);
    int rc;
    PGresult *r, *keep = NULL;
    while ((r = PQgetResult(conn)) != NULL) {
        ExecStatusType st = PQresultStatus(r);
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
            rc = pgwi_pq_result_error(err, conn, r, what);
            PQclear(r);
            goto fail;
        }
        if (st == PGRES_TUPLES_OK && last) {
            PQclear(keep);
            keep = r;
        } else {
            PQclear(r);
        }
    }
    if (PQstatus(conn) == CONNECTION_BAD) {
        rc = pgwi_pq_conn_error(err, conn, what);
        goto fail;
    }
    if (last)
        *last = keep;
    return PGW_OK;
fail:
    /* Read every result, even after a failure, so the connection is ready
     * for the next command. */
    while ((r = PQgetResult(conn)) != NULL)
        PQclear(r);
    PQclear(keep);
    return rc;
}

bool pgwi_pq_missing_relation(const pgw_error *err)
{
    return err && err->code == PGW_EPG &&
           (strcmp(err->sqlstate, "42P01") == 0 || strcmp(err->sqlstate, "3F000") == 0);
}

int pgwi_pq_not_installed(pgw_error *err, const char *pgw_schema)
{
    char state[6] = "";
    if (err)
        memcpy(state, err->sqlstate, sizeof state);
    pgwi_error(err, PGW_ENOTFOUND,
               "pgwitness is not installed in schema \"%.100s\": run pgw_pq_install() "
               "(or `pgwitness install`) first",
               pgwi_pq_schema(pgw_schema));
    if (err)
        memcpy(err->sqlstate, state, sizeof state);
    return PGW_ENOTFOUND;
}

int pgwi_pq_check_name(const char *what, const char *name, pgw_error *err)
{
    if (!name || !name[0])
        return pgwi_error(err, PGW_EINVAL, "%s is NULL or empty", what);
    if (!pgwi_utf8_valid(name, strlen(name)))
        return pgwi_error(err, PGW_EINVAL, "%s is not valid UTF-8", what);
    return PGW_OK;
}

int pgwi_pq_unit_begin(PGconn *conn, bool *own, const char *savepoint, const char *what,
                       pgw_error *err)
{
    *own = PQtransactionStatus(conn) == PQTRANS_IDLE;
    char sql[96];
    snprintf(sql, sizeof sql, "SAVEPOINT %s", savepoint);
    return pgwi_pq_run(conn, *own ? "BEGIN" : sql, NULL, what, err);
}

int pgwi_pq_unit_end(PGconn *conn, bool own, int rc, const char *savepoint, const char *what,
                     pgw_error *err)
{
    pgw_error ignored;
    char sql[160];
    if (rc < 0)
        goto undo;
    snprintf(sql, sizeof sql, "RELEASE SAVEPOINT %s", savepoint);
    if ((rc = pgwi_pq_run(conn, own ? "COMMIT" : sql, NULL, what, err)) < 0)
        goto undo;
    return PGW_OK;
undo:
    /* Undo; keep the first failure's detail. */
    if (own) {
        if (PQtransactionStatus(conn) != PQTRANS_IDLE)
            pgwi_pq_run(conn, "ROLLBACK", NULL, "rolling back", &ignored);
    } else if (PQstatus(conn) == CONNECTION_OK) {
        snprintf(sql, sizeof sql, "ROLLBACK TO SAVEPOINT %s; RELEASE SAVEPOINT %s", savepoint,
                 savepoint);
        pgwi_pq_run(conn, sql, NULL, "rolling back to the savepoint", &ignored);
    }
    return rc;
}

int pgwi_pq_text_array(char **out, const char *first, const char *const *items, size_t n,
                       pgw_error *err)
{
    size_t len = 3, total = n + (first ? 1 : 0);
    for (size_t i = 0; i < total; i++) {
        const char *s = first ? (i == 0 ? first : items[i - 1]) : items[i];
        len += 3;
        for (const char *p = s; *p; p++)
            len += (*p == '"' || *p == '\\') ? 2 : 1;
    }
    char *lit = pgwi_malloc(len);
    if (!lit)
        return pgwi_enomem(err);
    char *o = lit;
    *o++ = '{';
    for (size_t i = 0; i < total; i++) {
        const char *s = first ? (i == 0 ? first : items[i - 1]) : items[i];
        if (i)
            *o++ = ',';
        *o++ = '"';
        for (const char *p = s; *p; p++) {
            if (*p == '"' || *p == '\\')
                *o++ = '\\';
            *o++ = *p;
        }
        *o++ = '"';
    }
    *o++ = '}';
    *o = '\0';
    *out = lit;
    return PGW_OK;
}
