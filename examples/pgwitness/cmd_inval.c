/*
 * examples/pgwitness/cmd_inval.c — the invalidation commands: decide
 * (explain a verdict without a database) and watch.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"


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
        return "the rows' known values keep them out of the result, before and after the write";
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
        return "a deleted row may be in the result, or before its window (shifting the page)";
    case PGW_REASON_DDL:
        return "the table's definition changed (ALTER TABLE...): any row and column may differ";
    case PGW_REASON_CLOCK:
        return "the query reads the clock and its interval passed";
    case PGW_REASON_BEYOND_WINDOW:
        return "the changed rows sort strictly after the last row of the full window";
    case PGW_REASON_BEFORE_WINDOW:
        return "the updated rows stay strictly before the window's first row, and no filtered "
               "column changed";
    case PGW_REASON_WINDOW_EMPTY:
        return "the window holds no row, and the write can add none to it";
    }
    return "";
}

/* Decides a subscription against a write: the JSON form of a write set,
 * or, with `payload`, a notification payload as a statement trigger sends
 * it (docs/wire.md), decoded in the subscription's scope as the listener
 * does. A payload that is not faithful is decided as the listener would
 * (an unknown write to its table, or a scope reset); *fallback then
 * receives its status and `why` the decoder's reason (both only with
 * `payload`). When the write cannot be read, `what` says which it was:
 * "write" or "payload" (else it is ""). */
static int decide_write(pgw_verdict *out, const pgw_deps *d, const char *write_json,
                        size_t write_len, bool payload, int *fallback, char *why,
                        size_t why_size, char *what, size_t what_size, pgw_error *err)
{
    pgw_write *w = NULL;
    int rc;
    snprintf(what, what_size, payload ? "payload" : "write");
    if (payload) {
        pgw_scope sc;
        if ((rc = pgw_deps_scope(&sc, d)) == PGW_OK &&
            (rc = pgw_payload_decode(&w, &sc, write_json, write_len, err)) == PGW_OK) {
            *fallback = pgw_write_fallback_status(w);
            snprintf(why, why_size, "%s", *fallback ? pgw_write_fallback_message(w) : "");
        }
    } else {
        rc = pgw_write_from_json(&w, write_json, write_len, err);
    }
    if (rc == PGW_OK) {
        snprintf(what, what_size, "%s", "");
        rc = pgw_decide(out, d, w, err);
    }
    pgw_write_free(w);
    return rc;
}

/* decide_write() with the subscription as JSON text too: `what` is "deps"
 * when that is what cannot be read. */
static int decide_texts(pgw_verdict *out, const char *deps_json, size_t deps_len,
                        const char *write_json, size_t write_len, bool payload, int *fallback,
                        char *why, size_t why_size, char *what, size_t what_size,
                        pgw_error *err)
{
    pgw_deps *d = NULL;
    int rc = pgw_deps_from_json(&d, deps_json, deps_len, err);
    if (rc != PGW_OK) {
        snprintf(what, what_size, "deps");
        return rc;
    }
    rc = decide_write(out, d, write_json, write_len, payload, fallback, why, why_size, what,
                      what_size, err);
    pgw_deps_free(d);
    return rc;
}

/* How reading one line of --batch input ended. */
typedef enum { LINE_OK, LINE_EOF, LINE_TOO_LONG, LINE_READ_ERROR, LINE_NO_MEMORY } line_status;

/* Reads the next line of `in` into *buf (grown as needed, up to max + 2
 * bytes), without its "\n" and the "\r"s before it, NUL-terminated. A line
 * of more than `max` bytes is read to its end but not kept (LINE_TOO_LONG),
 * so memory stays bounded whatever the input. LINE_READ_ERROR leaves the
 * reason in errno. */
static line_status read_line(FILE *in, char **buf, size_t *cap, size_t *len, size_t max)
{
    size_t n = 0;
    bool any = false, over = false;
    int ch;
    if (*cap == 0) {
        size_t want = max + 2 < 4096 ? max + 2 : 4096;
        if (!(*buf = malloc(want)))
            return LINE_NO_MEMORY;
        *cap = want;
    }
    while ((ch = getc_unlocked(in)) != EOF) {
        any = true;
        if (ch == '\n')
            break;
        if (over)
            continue;
        /* One byte past max is kept: it may be a "\r" before the "\n". */
        if (n == max + 1) {
            over = true;
            continue;
        }
        if (n + 1 == *cap) {
            size_t want = *cap > (max + 2) / 2 ? max + 2 : *cap * 2;
            char *nb = realloc(*buf, want);
            if (!nb)
                return LINE_NO_MEMORY;
            *buf = nb;
            *cap = want;
        }
        (*buf)[n++] = (char)ch;
    }
    if (ferror(in))
        return LINE_READ_ERROR;
    if (!any)
        return LINE_EOF;
    while (n > 0 && (*buf)[n - 1] == '\r')
        n--;
    if (over || n > max)
        return LINE_TOO_LONG;
    (*buf)[n] = '\0';
    *len = n;
    return LINE_OK;
}

/* True when a line holds only JSON whitespace (or nothing). */
static bool blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return false;
    return true;
}

/* What a JSON value is, for messages (the library's words). */
static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "an unknown value";
}

/* jansson's message for a JSON text, in words for this tool's users: its
 * "\u0000 is not allowed without JSON_ALLOW_NUL" names a flag they cannot
 * set. */
static const char *jansson_message(const char *text, char *out, size_t size)
{
    static const char nul[] = "\\u0000 is not allowed without JSON_ALLOW_NUL";
    if (strncmp(text, nul, strlen(nul)) != 0)
        return text;
    snprintf(out, size, "\\u0000 (NUL) is not allowed in strings%s", text + strlen(nul));
    return out;
}

/* What is wrong with a {"deps": ..., "write": ...} line, or NULL. */
static const char *envelope_problem(const json_t *o, char *out, size_t size)
{
    static const char expected[] = "expected {\"deps\": ..., \"write\": ...}";
    if (!json_is_object(o)) {
        snprintf(out, size, "%s, found %s", expected, json_kind(o));
        return out;
    }
    bool deps = json_object_get(o, "deps"), write = json_object_get(o, "write");
    if (!(deps && write) && json_object_get(o, "op")) {
        snprintf(out, size, "%s: this line is a write set alone (pgwitness watch --json): give "
                            "the subscription with --deps FILE",
                 expected);
        return out;
    }
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)o, key, val) {
        if (strcmp(key, "deps") == 0 || strcmp(key, "write") == 0)
            continue;
        /* Keys are UTF-8 (jansson checked it): cut at a character. */
        size_t n = strlen(key);
        if (n > 80)
            for (n = 80; n > 0 && ((unsigned char)key[n] & 0xC0) == 0x80; n--)
                ;
        snprintf(out, size, "%s: unknown key \"%.*s\"%s", expected, (int)n, key,
                 key[n] ? "..." : "");
        return out;
    }
    if (deps && write)
        return NULL;
    snprintf(out, size, "%s: missing %s", expected,
             deps ? "\"write\"" : write ? "\"deps\"" : "\"deps\" and \"write\"");
    return out;
}

/* Prints one line's error line {"error": "...", "line": N}; false when
 * stdout failed. */
static bool print_error_line(const char *problem, unsigned long lineno)
{
    json_t *e = json_pack("{s:s, s:I}", "error", problem, "line", (json_int_t)lineno);
    char *t = e ? json_dumps(e, JSON_COMPACT) : NULL;
    if (t)
        printf("%s\n", t);
    else
        printf("{\"error\":\"out of memory\",\"line\":%lu}\n", lineno);
    free(t);
    json_decref(e);
    /* Output that cannot be written (a full disk) ends the run; main says
     * why (ex_finish_stdout). */
    return ex_flush(stdout);
}

/* Splits an envelope line {"deps": ..., "write": ...} into the JSON text of
 * its two documents (free() both); false with the problem written into
 * `problem`. The envelope is this tool's own format, and its line may be as
 * long as both documents together (more than any decoder takes): it is
 * read here, and the documents it holds are the library's to read. */
static bool split_envelope(char **deps, char **write, const char *line, size_t len,
                           char *problem, size_t problem_size)
{
    /* JSON text holds no NUL byte; jansson would only say the input ended
     * early. */
    const char *nul = memchr(line, '\0', len);
    if (nul) {
        snprintf(problem, problem_size, "not JSON: the line contains a NUL byte (byte %zu)",
                 (size_t)(nul - line) + 1);
        return false;
    }
    json_error_t je;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!o) {
        char text[sizeof je.text + 64];
        snprintf(problem, problem_size, "not JSON: %s",
                 jansson_message(je.text, text, sizeof text));
        return false;
    }
    if (envelope_problem(o, problem, problem_size)) {
        json_decref(o);
        return false;
    }
    /* Scalars too (JSON_ENCODE_ANY): the library says what it expected. */
    *deps = json_dumps(json_object_get(o, "deps"), JSON_COMPACT | JSON_ENCODE_ANY);
    *write = json_dumps(json_object_get(o, "write"), JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(o);
    if (*deps && *write)
        return true;
    free(*deps);
    free(*write);
    snprintf(problem, problem_size, "out of memory");
    return false;
}

/* Decides one non-blank line: with `deps` (--deps FILE) a write set, which
 * the library reads as it is, else an envelope {"deps": ..., "write": ...}.
 * Returns its verdict line (pgw_free()), or NULL with the problem written
 * into `problem`. */
static char *decide_line(const pgw_deps *deps, const char *line, size_t len, char *problem,
                         size_t problem_size)
{
    pgw_verdict v;
    pgw_error err;
    char what[16] = "";
    int rc;
    if (deps) {
        rc = decide_write(&v, deps, line, len, false, NULL, NULL, 0, what, sizeof what, &err);
    } else {
        char *dt, *wt;
        if (!split_envelope(&dt, &wt, line, len, problem, problem_size))
            return NULL;
        rc = decide_texts(&v, dt, strlen(dt), wt, strlen(wt), false, NULL, NULL, 0, what,
                          sizeof what, &err);
        free(dt);
        free(wt);
    }
    char *out = NULL;
    if (rc == PGW_OK)
        rc = pgw_verdict_to_json(&out, NULL, &v, &err);
    if (rc == PGW_ENOMEM)
        snprintf(problem, problem_size, "out of memory");
    else if (rc != PGW_OK)
        snprintf(problem, problem_size, "%s%s%s", what, what[0] ? ": " : "", err.message);
    return rc == PGW_OK ? out : NULL;
}

/* --batch: JSON lines {"deps": ..., "write": ...} on stdin — or, with
 * --deps FILE, write sets (what `pgwitness watch --json` prints) decided
 * against that one subscription — one verdict line out for each; a line
 * that cannot be decided gives an error line {"error": "...", "line": N}
 * so output stays aligned with input. Blank lines (only whitespace) give
 * nothing. A line longer than the documents it may hold is such an error;
 * input that cannot be read (or a line that does not fit in memory) gives
 * an error line for it and ends the run. */
static int decide_batch(cli *c, const pgw_deps *deps)
{
    /* A line holds a write set, or a subscription and a write set. */
    const size_t max = deps ? PGW_INVAL_JSON_MAX_BYTES : 2 * PGW_INVAL_JSON_MAX_BYTES + 64;
    char *line = NULL;
    size_t cap = 0, len = 0;
    unsigned long lineno = 0, lines = 0, bad = 0;
    char problem[PGW_ERROR_MESSAGE_SIZE + 256];
    line_status st;
    while ((st = read_line(stdin, &line, &cap, &len, max)) != LINE_EOF) {
        lineno++;
        if (st == LINE_READ_ERROR || st == LINE_NO_MEMORY) {
            snprintf(problem, sizeof problem, "%s%s",
                     st == LINE_READ_ERROR ? "cannot read standard input: " : "out of memory",
                     st == LINE_READ_ERROR ? strerror(errno) : "");
            /* The memory held goes back before anything is printed. */
            free(line);
            if (!print_error_line(problem, lineno))
                return 1;
            if (bad)
                return cli_fail(c, "line %lu: %s; the lines after it were not decided (%lu "
                                   "earlier %s could not be decided either)",
                                lineno, problem, bad, ex_plural(bad, "line", "lines"));
            return cli_fail(c, "line %lu: %s; the lines after it were not decided", lineno,
                            problem);
        }
        if (st == LINE_OK && blank(line, len))
            continue;
        lines++;
        char *verdict = NULL;
        if (st == LINE_TOO_LONG)
            snprintf(problem, sizeof problem, "the line is longer than %zu bytes", max);
        else
            verdict = decide_line(deps, line, len, problem, sizeof problem);
        bool flushed;
        if (verdict) {
            printf("%s\n", verdict);
            pgw_free(verdict);
            /* Output that cannot be written ends the run (ex_finish_stdout). */
            flushed = ex_flush(stdout);
        } else {
            bad++;
            flushed = print_error_line(problem, lineno);
        }
        if (!flushed) {
            free(line);
            return 1;
        }
    }
    free(line);
    if (bad)
        fprintf(stderr, "%s decide: %lu of %lu %s could not be decided\n", c->prog, bad, lines,
                ex_plural(lines, "line", "lines"));
    return bad ? 1 : 0;
}

int cmd_decide(cli *c, int argc, char **argv)
{
    const char *deps_file = NULL, *write_file = NULL, *payload_file = NULL;
    bool batch = false;
    const cli_opt opts[] = {{"json", 0, false, NULL, &c->json},
                            {"deps", 0, true, &deps_file, NULL},
                            {"write", 0, true, &write_file, NULL},
                            {"payload", 0, true, &payload_file, NULL},
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
    if (payload_file && !payload_file[0])
        return cli_usage(c, "option --payload needs a value");
    if (batch) {
        if (write_file || payload_file)
            return cli_usage(c, "--batch reads the writes from stdin: no --%s",
                             write_file ? "write" : "payload");
        if (deps_file && strcmp(deps_file, "-") == 0)
            return cli_usage(c, "--batch reads stdin: --deps must be a file");
        pgw_deps *d = NULL;
        if (deps_file) {
            /* Read once, up front: a bad subscription is not a bad line. */
            size_t dl = 0;
            pgw_error err;
            char *dt = cli_read_file(c, deps_file, PGW_INVAL_JSON_MAX_BYTES, &dl);
            if (!dt)
                return 1;
            int rc = pgw_deps_from_json(&d, dt, dl, &err);
            free(dt);
            if (rc != PGW_OK)
                return cli_fail(c, "%s: %s", deps_file, err.message);
        }
        int rc = decide_batch(c, d);
        pgw_deps_free(d);
        return rc;
    }
    if (write_file && payload_file)
        return cli_usage(c, "give --write FILE or --payload FILE, not both");
    const char *second = write_file ? write_file : payload_file;
    if (!deps_file || !second)
        return cli_usage(c, "give --deps FILE and --write FILE or --payload FILE (or --batch)");
    if (strcmp(deps_file, "-") == 0 && strcmp(second, "-") == 0)
        return cli_usage(c, "only one of --deps and --%s can be - (standard input)",
                         write_file ? "write" : "payload");
    size_t dl = 0, wl = 0;
    char *dt = cli_read_file(c, deps_file, PGW_INVAL_JSON_MAX_BYTES, &dl);
    if (!dt)
        return 1;
    char *wt = cli_read_file(c, second, PGW_INVAL_JSON_MAX_BYTES, &wl);
    if (!wt) {
        free(dt);
        return 1;
    }
    /* A payload saved to a file usually ends in a newline the trigger never
     * sent; it would count against the byte budget. */
    while (payload_file && wl > 0 && (wt[wl - 1] == '\n' || wt[wl - 1] == '\r'))
        wl--;
    pgw_verdict v;
    pgw_error err;
    char what[16] = "";
    int rc, fallback = PGW_OK;
    char why[PGW_ERROR_MESSAGE_SIZE] = "";
    rc = decide_texts(&v, dt, dl, wt, wl, payload_file != NULL, &fallback, why, sizeof why, what,
                      sizeof what, &err);
    free(dt);
    free(wt);
    if (rc != PGW_OK) {
        return cli_fail(c, "%s: %s",
                        cli_file_name(strcmp(what, "deps") == 0 ? deps_file : second),
                        err.message);
    }
    if (fallback != PGW_OK)
        fprintf(stderr, "%s decide: note: %s is not a faithful payload (%s): decided as the "
                        "listener would, as %s\n",
                c->prog, ex_text(cli_file_name(payload_file)), ex_text(why),
                v.reason == PGW_REASON_SCOPE_RESET ? "a scope reset"
                                                   : "an unknown write to its table");
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
