/*
 * examples/pgwitness/cli.c — option parsing, errors, connection and small
 * helpers shared by the commands.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* One line on stderr, whatever the names and messages in it hold: their
 * control characters are escaped (ex_text). */
static int vreport(const cli *c, int code, const char *fmt, va_list ap)
{
    char small[1024], *msg = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL)
        vsnprintf(msg, (size_t)n + 1, fmt, again);
    va_end(again);
    fprintf(stderr, "%s%s%s: %s\n", c->prog, c->command ? " " : "",
            c->command ? c->command : "", ex_text(msg ? msg : small));
    if (msg != small)
        free(msg);
    return code;
}

int cli_usage(const cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, EXIT_USAGE, fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

int cli_fail(const cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, 1, fmt, ap);
    va_end(ap);
    return 1;
}

/* A name as a shell word: as it is when that is safe, else in single
 * quotes. */
static void shell_word(char *out, size_t size, const char *s)
{
    if (s[0] != '-' && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789_.-") == strlen(s)) {
        snprintf(out, size, "%s", s);
        return;
    }
    size_t n = 0;
    out[n++] = '\'';
    for (const char *p = s; *p && n + 5 < size; p++) {
        if (*p == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *p;
        }
    }
    out[n++] = '\'';
    out[n] = '\0';
}

const char *cli_err_message(const cli *c, int rc, const pgw_error *err, char *rewritten,
                            size_t size)
{
    const char *msg = err && err->message[0] ? err->message : pgw_strerror(rc);
    /* The library says to run pgw_pq_install(); the operator runs this
     * CLI's install, for the schema they asked for. */
    const char *call = strstr(msg, "pgw_pq_install()");
    if (call) {
        const char *rest = call + strlen("pgw_pq_install()");
        const char *also = " (or `pgwitness install`)";
        if (strncmp(rest, also, strlen(also)) == 0)
            rest += strlen(also);
        char word[300] = "";
        if (c->pgw_schema)
            shell_word(word, sizeof word, c->pgw_schema);
        snprintf(rewritten, size, "%.*s`pgwitness %s%s%sinstall`%s", (int)(call - msg), msg,
                 c->pgw_schema ? "--pgw-schema " : "", word, c->pgw_schema ? " " : "", rest);
        msg = rewritten;
    }
    /* The library names the schema in plain double quotes; a quote inside
     * is doubled, as PostgreSQL quotes an identifier. */
    if (c->pgw_schema && strchr(c->pgw_schema, '"')) {
        char plain[300], quoted[300];
        snprintf(plain, sizeof plain, "\"%s\"", c->pgw_schema);
        cli_ident(quoted, sizeof quoted, c->pgw_schema);
        char out[CLI_ERR_MESSAGE_SIZE];
        size_t n = 0;
        for (const char *p = msg; *p && n + 1 < sizeof out;) {
            if (strncmp(p, plain, strlen(plain)) == 0) {
                n += (size_t)snprintf(out + n, sizeof out - n, "%s", quoted);
                p += strlen(plain);
            } else {
                out[n++] = *p++;
            }
        }
        out[n < sizeof out ? n : sizeof out - 1] = '\0';
        snprintf(rewritten, size, "%s", out);
        msg = rewritten;
    }
    return msg;
}

int cli_fail_err(const cli *c, int rc, const pgw_error *err)
{
    char buf[CLI_ERR_MESSAGE_SIZE];
    const char *msg = cli_err_message(c, rc, err, buf, sizeof buf);
    const char *hint = "";
    if (rc == PGW_EPG && err && strcmp(err->sqlstate, "42501") == 0)
        hint = " (the database role lacks a privilege)";
    if (err && err->path[0] && !strstr(msg, err->path))
        return cli_fail(c, "%s (at %s)%s", msg, err->path, hint);
    return cli_fail(c, "%s%s", msg, hint);
}

bool cli_parse(cli *c, int argc, char **argv, const cli_opt *opts, size_t n_opts,
               const char **pos, size_t max_pos, size_t *n_pos)
{
    *n_pos = 0;
    bool only_pos = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || strcmp(a, "-") == 0) {
            if (*n_pos == max_pos) {
                cli_usage(c, "unexpected argument '%s' (see %s %s --help)", a, c->prog,
                          c->command);
                return false;
            }
            pos[(*n_pos)++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = true;
            continue;
        }
        const cli_opt *o = NULL;
        const char *inline_value = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            for (size_t k = 0; k < n_opts && !o; k++)
                if (strlen(opts[k].name) == len && strncmp(opts[k].name, name, len) == 0)
                    o = &opts[k];
            if (eq)
                inline_value = eq + 1;
        } else if (a[2] == '\0') {
            for (size_t k = 0; k < n_opts && !o; k++)
                if (opts[k].short_name && opts[k].short_name == a[1])
                    o = &opts[k];
        }
        if (!o) {
            cli_usage(c, "unknown option '%s' (see %s %s --help)", a, c->prog, c->command);
            return false;
        }
        if (!o->takes_value) {
            if (inline_value) {
                cli_usage(c, "option --%s takes no value", o->name);
                return false;
            }
            *o->flag = true;
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= argc) {
                cli_usage(c, "option --%s needs a value", o->name);
                return false;
            }
            inline_value = argv[++i];
        }
        *o->value = inline_value;
    }
    /* pgwitness's own schema: a name, checked before anything connects. */
    const char *problem = c->pgw_schema ? ex_name_problem(c->pgw_schema) : NULL;
    if (problem) {
        cli_usage(c, "pgwitness's schema name (--pgw-schema, --schema or PGWITNESS_SCHEMA) %s",
                  problem);
        return false;
    }
    return true;
}

void cli_signals_default(void)
{
    ex_signals_cancel();
}

PGconn *cli_connect(cli *c)
{
    if (c->conn)
        return c->conn;
    PGconn *conn = PQconnectdb(c->conninfo ? c->conninfo : "");
    if (PQstatus(conn) != CONNECTION_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", PQerrorMessage(conn));
        msg[strcspn(msg, "\n")] = '\0';
        PQfinish(conn);
        cli_fail(c, "cannot connect to the database: %s (give -d CONNINFO, or set PGHOST, "
                    "PGPORT, PGUSER, PGDATABASE)",
                 msg);
        return NULL;
    }
    /* The server's notices (e.g. "... does not exist, skipping") are not
     * this tool's output. */
    PQclear(PQexec(conn, "SET client_min_messages = warning"));
    c->conn = conn;
    /* From now on an interrupt cancels the query in flight. */
    ex_cancel_connection(conn);
    return conn;
}

void cli_disconnect(cli *c)
{
    ex_cancel_connection(NULL);
    PQfinish(c->conn);
    c->conn = NULL;
}

const char *cli_ident(char *out, size_t size, const char *name)
{
    size_t n = 0;
    if (size < 3) {
        if (size)
            out[0] = '\0';
        return out;
    }
    out[n++] = '"';
    for (const char *p = name; *p && n + 3 < size; p++) {
        if (*p == '"')
            out[n++] = '"';
        out[n++] = *p;
    }
    out[n++] = '"';
    out[n] = '\0';
    return out;
}

bool cli_table_arg(const cli *c, const char *arg, char *schema, size_t ss, char *table,
                   size_t ts)
{
    char why[400];
    if (ex_table_name(arg, schema, ss, table, ts, NULL, why, sizeof why))
        return true;
    cli_usage(c, "'%s' is not a table name: %s", arg, why);
    return false;
}

bool cli_check_text(const cli *c, const char *option, const char *value, size_t max)
{
    size_t len = strlen(value);
    if (len == 0)
        cli_usage(c, "%s is empty", option);
    else if (len > max)
        cli_usage(c, "%s is %zu bytes, more than %zu", option, len, max);
    else if (!ex_utf8_valid(value, len))
        cli_usage(c, "%s is not valid UTF-8", option);
    else
        return true;
    return false;
}

bool cli_check_slot(const cli *c, const char *option, const char *name)
{
    size_t len = strlen(name);
    if (len >= 1 && len <= 63 &&
        strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == len)
        return true;
    cli_usage(c, "%s%s'%s' is not a replication slot name (1 to 63 bytes of a-z, 0-9 and _)",
              option ? option : "", option ? ": " : "", name);
    return false;
}

const char *cli_result_message(char *out, size_t size, const PGresult *r)
{
    /* The server's primary message, without the "ERROR:  " its full text
     * starts with (as pgw_error keeps it); the full text for libpq's own
     * errors, which carry no fields. */
    const char *primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    snprintf(out, size, "%s",
             primary ? primary : r ? PQresultErrorMessage(r) : "out of memory");
    out[strcspn(out, "\n")] = '\0';
    return out;
}

const char *cli_file_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "standard input" : path;
}

char *cli_read_file(const cli *c, const char *path, size_t max, size_t *len)
{
    char why[256];
    char *text = ex_read_file(path, max, len, why, sizeof why);
    if (!text)
        cli_fail(c, "cannot read %s: %s", cli_file_name(path), why);
    return text;
}

void cli_time(char out[32], int64_t usec)
{
    char ts[PGW_TIMESTAMP_SIZE];
    if (pgw_timestamp_format(ts, usec) != PGW_OK) {
        snprintf(out, 32, "?");
        return;
    }
    /* "2026-11-30T09:10:44.123456Z" -> "2026-11-30 09:10:44" */
    ts[10] = ' ';
    ts[19] = '\0';
    snprintf(out, 32, "%s", ts);
}

int cli_print_json(const cli *c, json_t *value)
{
    char *text = value ? json_dumps(value, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(value);
    if (!text)
        return cli_fail(c, "out of memory");
    printf("%s\n", text);
    free(text);
    return 0;
}
