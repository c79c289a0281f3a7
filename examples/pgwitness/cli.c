/*
 * examples/pgwitness/cli.c — option parsing, errors, connection and small
 * helpers shared by the commands.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int vreport(const cli *c, int code, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s%s%s: ", c->prog, c->command ? " " : "", c->command ? c->command : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
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

int cli_fail_err(const cli *c, int rc, const pgw_error *err)
{
    const char *msg = err && err->message[0] ? err->message : pgw_strerror(rc);
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
    return true;
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
    return conn;
}

void cli_disconnect(cli *c)
{
    PQfinish(c->conn);
    c->conn = NULL;
}

/* Copies one identifier from *p (quoted with "..." and "" escapes, or up to
 * the next '.'), advancing *p. */
static bool ident(const char **p, char *out, size_t size)
{
    const char *s = *p;
    size_t n = 0;
    if (*s == '"') {
        s++;
        for (;;) {
            if (*s == '\0')
                return false;
            if (*s == '"') {
                if (s[1] == '"') {
                    s++;
                } else {
                    s++;
                    break;
                }
            }
            if (n + 1 >= size)
                return false;
            out[n++] = *s++;
        }
    } else {
        while (*s && *s != '.') {
            if (n + 1 >= size)
                return false;
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    *p = s;
    return n > 0;
}

bool cli_table_name(const char *arg, char *schema, size_t ss, char *table, size_t ts)
{
    const char *p = arg;
    char first[256];
    if (!ident(&p, first, sizeof first))
        return false;
    if (*p == '\0') {
        snprintf(schema, ss, "public");
        snprintf(table, ts, "%s", first);
        return strlen(first) < ts;
    }
    if (*p != '.')
        return false;
    p++;
    if (!ident(&p, table, ts) || *p != '\0')
        return false;
    snprintf(schema, ss, "%s", first);
    return strlen(first) < ss;
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
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
                errno = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool failed = ferror(f);
    if (f != stdin)
        fclose(f);
    if (failed) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
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
