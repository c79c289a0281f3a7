/*
 * examples/pgwitness/cmd_inval.c — the invalidation commands: decide
 * (explain a verdict without a database) and watch.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* What each reason means, for people. */
static const char *explain(pgw_reason r)
{
    switch (r) {
    case PGW_REASON_SCOPE_DISJOINT:
        return "the write is in another project, tenant or database";
    case PGW_REASON_TABLE_NOT_READ:
        return "the subscription does not read the written table";
    case PGW_REASON_COLUMNS_DISJOINT:
        return "only columns the subscription neither reads, filters nor sorts on changed";
    case PGW_REASON_ROWS_DISJOINT:
        return "the changed rows are not in the result and cannot enter, leave or move it";
    case PGW_REASON_VALUES_DISJOINT:
        return "the rows match the equality filters neither before nor after the write";
    case PGW_REASON_SCOPE_RESET:
        return "the whole scope was reset (e.g. the listener reconnected)";
    case PGW_REASON_UNDECLARED:
        return "the subscription declared no dependencies: every write in its scope refreshes it";
    case PGW_REASON_TRUNCATE:
        return "the table was truncated";
    case PGW_REASON_WRITE_UNKNOWN:
        return "the write could not be described (e.g. an undecodable notification)";
    case PGW_REASON_IDS_UNKNOWN:
        return "the changed rows are unknown or too many to list";
    case PGW_REASON_COLUMNS_UNKNOWN:
        return "the changed columns are unknown or too many to list";
    case PGW_REASON_ROW_IN_RESULT:
        return "a changed row is in the subscription's result";
    case PGW_REASON_RESULT_UNKNOWN:
        return "read columns changed and the result's rows are not known";
    case PGW_REASON_FILTER_COLUMN_CHANGED:
        return "a filtered column changed: a row may enter or leave the result";
    case PGW_REASON_SORT_COLUMN_CHANGED:
        return "a sort column changed: a row may move within or into the window";
    case PGW_REASON_INSERT_MAY_ENTER:
        return "an inserted row may enter the result";
    case PGW_REASON_DELETE_IN_WINDOW:
        return "a deleted row may be in or before the window, shifting the page";
    }
    return "";
}

/* Decides one (deps, write) pair given as JSON texts. */
static int decide_texts(pgw_verdict *out, const char *deps_json, size_t deps_len,
                        const char *write_json, size_t write_len, char *what, size_t what_size,
                        pgw_error *err)
{
    pgw_deps *d = NULL;
    pgw_write *w = NULL;
    int rc = pgw_deps_from_json(&d, deps_json, deps_len, err);
    if (rc != PGW_OK) {
        snprintf(what, what_size, "deps");
        return rc;
    }
    rc = pgw_write_from_json(&w, write_json, write_len, err);
    if (rc != PGW_OK) {
        snprintf(what, what_size, "write");
        pgw_deps_free(d);
        return rc;
    }
    rc = pgw_decide(out, d, w, err);
    pgw_write_free(w);
    pgw_deps_free(d);
    return rc;
}

/* --batch: JSON lines {"deps": ..., "write": ...} on stdin — or, with
 * --deps FILE, write sets (what `pgwitness watch --json` prints) decided
 * against that one subscription — one verdict line out for each; a line
 * that cannot be decided gives an error line {"error": "...", "line": N}
 * so output stays aligned with input. */
static int decide_batch(cli *c, const char *deps_text)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0, bad = 0;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        json_error_t je;
        /* JSON text holds no NUL byte; jansson would only say the input
         * ended early. */
        const char *nul = memchr(line, '\0', (size_t)len);
        json_t *o = nul ? NULL : json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &je);
        const char *problem = NULL;
        char detail[PGW_ERROR_MESSAGE_SIZE + 64];
        json_t *deps = o && !deps_text ? json_object_get(o, "deps") : NULL;
        json_t *write = o && !deps_text ? json_object_get(o, "write") : o;
        if (nul) {
            snprintf(detail, sizeof detail, "not JSON: the line contains a NUL byte (byte %zu)",
                     (size_t)(nul - line) + 1);
            problem = detail;
        } else if (!o) {
            snprintf(detail, sizeof detail, "not JSON: %s", je.text);
            problem = detail;
        } else if (!deps_text &&
                   (!json_is_object(o) || !deps || !write || json_object_size(o) != 2)) {
            problem = json_is_object(o) && json_object_get(o, "op")
                          ? "expected {\"deps\": ..., \"write\": ...}: this line is a "
                            "write set alone (pgwitness watch --json): give the subscription "
                            "with --deps FILE"
                          : "expected {\"deps\": ..., \"write\": ...}";
        }
        pgw_verdict v;
        if (!problem) {
            char *dt = deps_text ? NULL : json_dumps(deps, JSON_COMPACT);
            char *wt = json_dumps(write, JSON_COMPACT);
            const char *dtext = deps_text ? deps_text : dt;
            pgw_error err;
            char what[16];
            int rc = dtext && wt ? decide_texts(&v, dtext, strlen(dtext), wt, strlen(wt), what,
                                                sizeof what, &err)
                                 : PGW_ENOMEM;
            if (rc != PGW_OK) {
                snprintf(detail, sizeof detail, "%s: %s", rc == PGW_ENOMEM ? "memory" : what,
                         rc == PGW_ENOMEM ? "out of memory" : err.message);
                problem = detail;
            }
            free(dt);
            free(wt);
        }
        json_decref(o);
        if (problem) {
            bad++;
            json_t *e = json_pack("{s:s, s:i}", "error", problem, "line", (json_int_t)lineno);
            char *t = e ? json_dumps(e, JSON_COMPACT) : NULL;
            printf("%s\n", t ? t : "{\"error\": \"out of memory\"}");
            free(t);
            json_decref(e);
        } else {
            char *t = NULL;
            if (pgw_verdict_to_json(&t, NULL, &v, NULL) == PGW_OK)
                printf("%s\n", t);
            pgw_free(t);
        }
        /* Output that cannot be written (a full disk) ends the run; main
         * says why (ex_finish_stdout). */
        if (!ex_flush(stdout)) {
            free(line);
            return 1;
        }
    }
    free(line);
    if (bad)
        fprintf(stderr, "%s decide: %lu of %lu %s could not be decided\n", c->prog, bad, lineno,
                ex_plural(lineno, "line", "lines"));
    return bad ? 1 : 0;
}

int cmd_decide(cli *c, int argc, char **argv)
{
    const char *deps_file = NULL, *write_file = NULL;
    bool batch = false;
    const cli_opt opts[] = {{"json", 0, false, NULL, &c->json},
                            {"deps", 0, true, &deps_file, NULL},
                            {"write", 0, true, &write_file, NULL},
                            {"batch", 0, false, NULL, &batch}};
    const char *pos[1];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 0, &n_pos))
        return EXIT_USAGE;
    /* An empty value (--deps=) names no file: a usage error, as a missing one is. */
    if (deps_file && !deps_file[0])
        return cli_usage(c, "option --deps needs a value");
    if (write_file && !write_file[0])
        return cli_usage(c, "option --write needs a value");
    if (batch) {
        if (write_file)
            return cli_usage(c, "--batch reads the writes from stdin: no --write");
        if (deps_file && strcmp(deps_file, "-") == 0)
            return cli_usage(c, "--batch reads stdin: --deps must be a file");
        char *dt = NULL;
        if (deps_file) {
            /* Checked once, up front: a bad subscription is not a bad line. */
            size_t dl = 0;
            pgw_deps *d = NULL;
            pgw_error err;
            if (!(dt = cli_read_file(c, deps_file, PGW_INVAL_JSON_MAX_BYTES, &dl)))
                return 1;
            if (pgw_deps_from_json(&d, dt, dl, &err) != PGW_OK) {
                free(dt);
                return cli_fail(c, "%s: %s", deps_file, err.message);
            }
            pgw_deps_free(d);
        }
        int rc = decide_batch(c, dt);
        free(dt);
        return rc;
    }
    if (!deps_file || !write_file)
        return cli_usage(c, "give --deps FILE and --write FILE (or --batch)");
    if (strcmp(deps_file, "-") == 0 && strcmp(write_file, "-") == 0)
        return cli_usage(c, "only one of --deps and --write can be - (standard input)");
    size_t dl = 0, wl = 0;
    char *dt = cli_read_file(c, deps_file, PGW_INVAL_JSON_MAX_BYTES, &dl);
    if (!dt)
        return 1;
    char *wt = cli_read_file(c, write_file, PGW_INVAL_JSON_MAX_BYTES, &wl);
    if (!wt) {
        free(dt);
        return 1;
    }
    pgw_verdict v;
    pgw_error err;
    char what[16];
    int rc = decide_texts(&v, dt, dl, wt, wl, what, sizeof what, &err);
    free(dt);
    free(wt);
    if (rc != PGW_OK)
        return cli_fail(c, "%s: %s", strcmp(what, "deps") == 0 ? deps_file : write_file,
                        err.message);
    if (c->json) {
        char *t = NULL;
        if (pgw_verdict_to_json(&t, NULL, &v, &err) != PGW_OK)
            return cli_fail_err(c, PGW_ENOMEM, &err);
        printf("%s\n", t);
        pgw_free(t);
    } else {
        printf("%s (%s): %s\n", v.refresh ? "refresh" : "skip", pgw_reason_name(v.reason),
               explain(v.reason));
    }
    return 0;
}
