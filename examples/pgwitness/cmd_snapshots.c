/*
 * examples/pgwitness/cmd_snapshots.c — the snapshot commands: install,
 * snapshot, baseline, drop, history, diff, report, prune.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <jansson.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Options every command accepts after its name. */

/* Strict: digits only, no sign or junk, no overflow, within [min, max]. */
static bool parse_size(const char *s, size_t *out, size_t min, size_t max)
{
    unsigned long long v;
    if (!ex_parse_ull(s, min, max, &v))
        return false;
    *out = (size_t)v;
    return true;
}

/* The library's bounds for the text a snapshot records. */
#define MAX_REASON_BYTES 200
#define MAX_RESOURCE_BYTES 4096

/* A table argument as the CLI takes it: parts quoted when they hold a
 * dot or start with a quote. */
static void table_arg_text(char *out, size_t size, const char *schema, const char *table)
{
    size_t n = 0;
    for (int part = 0; part < 2; part++) {
        const char *name = part ? table : schema;
        bool quote = strchr(name, '.') || name[0] == '"';
        if (part && n + 1 < size)
            out[n++] = '.';
        if (quote && n + 1 < size)
            out[n++] = '"';
        for (const char *p = name; *p; p++) {
            if (*p == '"' && quote && n + 1 < size)
                out[n++] = '"';
            if (n + 1 < size)
                out[n++] = *p;
        }
        if (quote && n + 1 < size)
            out[n++] = '"';
    }
    out[n] = '\0';
}

/* "no table X" with the real rule about names, and a table whose name
 * differs only in case when there is one. */
static int no_such_table(cli *c, PGconn *conn, const char *schema, const char *table)
{
    const char *params[2] = {schema, table};
    PGresult *r = PQexecParams(conn,
                               "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n "
                               "ON n.oid = c.relnamespace WHERE lower(n.nspname) = lower($1) "
                               "AND lower(c.relname) = lower($2) AND c.relkind IN ('r', 'p') "
                               "ORDER BY 1, 2 LIMIT 1",
                               2, NULL, params, NULL, NULL, 0);
    char hint[600] = "";
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        char name[560];
        table_arg_text(name, sizeof name, PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1));
        snprintf(hint, sizeof hint, ": did you mean %s?", name);
    }
    PQclear(r);
    return cli_fail(c,
                    "no table %s.%s in this database (names are taken as written, nothing is "
                    "lowercased%s)",
                    schema, table, hint);
}

static int print_json_doc(char *json)
{
    fputs(json, stdout);
    fputc('\n', stdout);
    pgw_free(json);
    return 0;
}

/* ------------------------------------------------------------------ */
/* install                                                             */

int cmd_install(cli *c, int argc, char **argv)
{
    const cli_opt opts[] = {COMMON_OPTS(c), SCHEMA_OPT(c)};
    const char *pos[1];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 0, &n_pos))
        return EXIT_USAGE;
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    int before = 0, after = 0;
    pgw_error err;
    int rc = pgw_pq_schema_version(&before, conn, c->pgw_schema, &err);
    if (rc == PGW_OK)
        rc = pgw_pq_install(&after, conn, c->pgw_schema, &err);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    const char *schema = c->pgw_schema ? c->pgw_schema : PGW_PQ_DEFAULT_SCHEMA;
    char q[300];
    const char *quoted = ex_text(cli_ident(q, sizeof q, schema));
    if (c->json) {
        return cli_print_json(c, json_pack("{s:s, s:i, s:i}", "schema", schema, "version_before",
                                           before, "version", after));
    } else if (before == after) {
        printf("pgwitness schema %s is up to date (version %d)\n", quoted, after);
    } else if (before == 0) {
        printf("installed pgwitness schema %s (version %d)\n", quoted, after);
    } else {
        printf("upgraded pgwitness schema %s from version %d to %d\n", quoted, before, after);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* snapshot                                                            */

/* One line per column: name, type, and a short profile. */
static void print_snapshot(const pgw_snapshot *s)
{
    int64_t rows;
    char when[32];
    cli_time(when, pgw_snapshot_captured_at(s));
    printf("%s.%s (oid %" PRIu32 ") at %s UTC, reason %s\n", ex_text(pgw_snapshot_schema(s)),
           ex_text(pgw_snapshot_table(s)), pgw_snapshot_table_oid(s), when,
           ex_text(pgw_snapshot_reason(s)));
    size_t ncol = pgw_snapshot_column_count(s);
    if (pgw_snapshot_row_estimate(s, &rows))
        printf("  %zu %s, about %" PRId64 " %s, ", ncol, ex_plural(ncol, "column", "columns"),
               rows, ex_plural((unsigned long long)rows, "row", "rows"));
    else
        printf("  %zu %s, never analysed (no row estimate), ", ncol,
               ex_plural(ncol, "column", "columns"));
    printf("schema hash %s%s\n", pgw_snapshot_schema_hash(s),
           pgw_snapshot_stats_available(s) ? "" : ", no statistics");
    if (pgw_snapshot_resource(s))
        printf("  resource %s\n", ex_text(pgw_snapshot_resource(s)));
    if (pgw_snapshot_profiles_omitted(s))
        printf("  (too many columns: value profiles omitted)\n");
    printf("  %3s  %-24s %-26s %6s %9s  %s\n", "#", "column", "type", "nulls", "distinct",
           "most common values / range");
    for (size_t i = 0; i < pgw_snapshot_column_count(s); i++) {
        const pgw_column *col = pgw_snapshot_column(s, i);
        printf("  %3" PRIu32 "  %-24s %-26s", col->position, ex_text(col->name),
               ex_text(col->type));
        const pgw_profile *p = col->profile;
        if (!p) {
            printf(" %6s %9s\n", "-", "-");
            continue;
        }
        char distinct[24];
        if (p->n_distinct < 0)
            snprintf(distinct, sizeof distinct, "%.0f%%", -p->n_distinct * 100);
        else if (p->n_distinct > 0)
            snprintf(distinct, sizeof distinct, "%.0f", p->n_distinct);
        else
            snprintf(distinct, sizeof distinct, "?");
        printf(" %5.1f%% %9s  ", p->null_frac * 100, distinct);
        if (p->n_most_common) {
            for (size_t k = 0; k < p->n_most_common && k < 3; k++)
                printf("%s%s (%.0f%%)", k ? ", " : "", ex_text(p->most_common_vals[k]),
                       p->most_common_freqs[k] * 100);
            if (p->n_most_common > 3)
                printf(", ...");
        } else if (p->n_histogram_bounds >= 2) {
            printf("%s .. %s", ex_text(p->histogram_bounds[0]),
                   ex_text(p->histogram_bounds[p->n_histogram_bounds - 1]));
        }
        printf("\n");
    }
}

int cmd_snapshot(cli *c, int argc, char **argv)
{
    const char *reason = NULL, *resource = NULL, *file = NULL;
    bool store = false;
    const cli_opt opts[] = {COMMON_OPTS(c),
                            SCHEMA_OPT(c),
                            {"reason", 0, true, &reason, NULL},
                            {"resource", 0, true, &resource, NULL},
                            {"store", 0, false, NULL, &store},
                            {"output", 'o', true, &file, NULL}};
    const char *pos[1];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 1, &n_pos))
        return EXIT_USAGE;
    if (n_pos != 1)
        return cli_usage(c, "which table? (pgwitness snapshot TABLE)");
    char schema[256], table[256];
    if (!cli_table_arg(c, pos[0], schema, sizeof schema, table, sizeof table))
        return EXIT_USAGE;
    if ((reason && !cli_check_text(c, "--reason", reason, MAX_REASON_BYTES)) ||
        (resource && !cli_check_text(c, "--resource", resource, MAX_RESOURCE_BYTES)))
        return EXIT_USAGE;
    if (file && !file[0])
        return cli_usage(c, "--output: the file name is empty");
    if (file && strcmp(file, "-") == 0) {
        /* -o -: the document on standard output, as --json prints it. */
        file = NULL;
        c->json = true;
    }
    struct stat fst;
    if (file && stat(file, &fst) == 0 && S_ISDIR(fst.st_mode))
        return cli_usage(c, "--output: %s is a directory (give the name of a file)", file);
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    pgw_pq_capture_options co = PGW_PQ_CAPTURE_OPTIONS_INIT;
    co.reason = reason;
    co.resource = resource;
    pgw_snapshot *s = NULL;
    pgw_error err;
    int rc = pgw_pq_capture(&s, conn, schema, table, &co, &err);
    if (rc == PGW_ENOTFOUND)
        return no_such_table(c, conn, schema, table);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    char *json = NULL;
    rc = pgw_snapshot_to_json(&json, NULL, s, PGW_JSON_PRETTY, &err);
    if (rc != PGW_OK) {
        pgw_snapshot_free(s);
        return cli_fail_err(c, rc, &err);
    }
    /* All or nothing: the file is written aside first, the snapshot stored,
     * then the file put in place; a failure before that leaves neither. */
    ex_file out = {0};
    char *doc = NULL, why[256];
    if (file) {
        size_t len = strlen(json);
        doc = malloc(len + 2);
        if (!doc) {
            pgw_free(json);
            pgw_snapshot_free(s);
            return cli_fail(c, "out of memory");
        }
        memcpy(doc, json, len);
        memcpy(doc + len, "\n", 2);
        if (!ex_file_prepare(&out, file, doc, len + 1, why, sizeof why)) {
            free(doc);
            pgw_free(json);
            pgw_snapshot_free(s);
            return cli_fail(c, "cannot write %s: %s", file, why);
        }
    }
    int64_t id = 0;
    if (store && (rc = pgw_pq_store(&id, conn, c->pgw_schema, s, &err)) != PGW_OK) {
        ex_file_abort(&out);
        free(doc);
        pgw_free(json);
        pgw_snapshot_free(s);
        return cli_fail_err(c, rc, &err);
    }
    if (file) {
        bool wrote = ex_file_commit(&out, why, sizeof why);
        free(doc);
        if (!wrote) {
            pgw_free(json);
            pgw_snapshot_free(s);
            if (store)
                return cli_fail(c, "cannot write %s: %s (the snapshot was stored as snapshot "
                                   "%" PRId64 ")",
                                file, why, id);
            return cli_fail(c, "cannot write %s: %s", file, why);
        }
    }
    if (c->json) {
        printf("%s\n", json);
    } else {
        print_snapshot(s);
        if (store)
            printf("stored as snapshot %" PRId64 "\n", id);
        if (file)
            printf("written to %s\n", ex_text(file));
    }
    pgw_free(json);
    pgw_snapshot_free(s);
    /* Output that cannot be written after the store: the one error line
     * says what was done all the same. */
    if (store && !ex_flush_stdout(why, sizeof why))
        return cli_fail(c, "writing standard output: %s (the snapshot was stored as snapshot "
                           "%" PRId64 "%s%s)",
                        why, id, file ? " and written to " : "", file ? file : "");
    if (store && c->json)
        fprintf(stderr, "stored as snapshot %" PRId64 "\n", id);
    return 0;
}

/* ------------------------------------------------------------------ */
/* baseline                                                            */

typedef struct progress_state {
    bool tty;
} progress_state;

static void on_progress(size_t done, size_t total, void *ud)
{
    progress_state *p = ud;
    if (p->tty) {
        int width = 30, fill = total ? (int)((double)done / (double)total * width) : width;
        fprintf(stderr, "\r[%.*s%*s] %zu/%zu tables", fill, "##############################",
                width - fill, "", done, total);
        if (done == total)
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "baseline: %zu/%zu tables\n", done, total);
    }
    fflush(stderr);
}

/* A LIKE pattern of names: UTF-8, of a sane length (names have at most 63
 * bytes; % repeated matches no more), and not ending in LIKE's escape
 * character, which PostgreSQL refuses. Reports a usage error. */
#define MAX_PATTERN_BYTES 1024
static bool check_pattern(const cli *c, const char *option, const char *pattern)
{
    if (!cli_check_text(c, option, pattern, MAX_PATTERN_BYTES))
        return false;
    size_t len = strlen(pattern), backslashes = 0;
    while (backslashes < len && pattern[len - 1 - backslashes] == '\\')
        backslashes++;
    if (backslashes % 2) {
        cli_usage(c, "%s ends with LIKE's escape character \\ (write \\\\ for a backslash)",
                  option);
        return false;
    }
    return true;
}

int cmd_baseline(cli *c, int argc, char **argv)
{
    const char *schema_pattern = NULL, *table_pattern = NULL, *limit_s = NULL, *batch_s = NULL;
    const cli_opt opts[] = {COMMON_OPTS(c),
                            {"schema", 0, true, &schema_pattern, NULL},
                            {"table", 0, true, &table_pattern, NULL},
                            {"limit", 0, true, &limit_s, NULL},
                            {"batch", 0, true, &batch_s, NULL}};
    const char *pos[1];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 0, &n_pos))
        return EXIT_USAGE;
    pgw_pq_baseline_options o = PGW_PQ_BASELINE_OPTIONS_INIT;
    if (limit_s && !parse_size(limit_s, &o.limit, 1, 10000000))
        return cli_usage(c, "--limit takes a number of tables from 1 to 10000000, not '%s'",
                         limit_s);
    if (batch_s && !parse_size(batch_s, &o.batch, 1, 10000))
        return cli_usage(c, "--batch takes a number from 1 to 10000, not '%s'", batch_s);
    if (schema_pattern && !schema_pattern[0])
        return cli_usage(c, "--schema PATTERN is empty (it is a LIKE pattern of schemas here; "
                            "pgwitness's own schema is --pgw-schema)");
    if (table_pattern && !table_pattern[0])
        return cli_usage(c, "--table PATTERN is empty");
    if ((schema_pattern && !check_pattern(c, "--schema PATTERN", schema_pattern)) ||
        (table_pattern && !check_pattern(c, "--table PATTERN", table_pattern)))
        return EXIT_USAGE;
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    progress_state ps = {isatty(STDERR_FILENO) == 1};
    o.pgw_schema = c->pgw_schema;
    o.schema_pattern = schema_pattern;
    o.table_pattern = table_pattern;
    o.progress = c->json ? NULL : on_progress;
    o.userdata = &ps;
    pgw_pq_baseline_result r;
    pgw_error err;
    int rc = pgw_pq_baseline(&r, conn, &o, &err);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    if (c->json)
        return cli_print_json(c, json_pack("{s:I, s:I, s:I, s:I}", "backlog",
                                           (json_int_t)r.backlog, "captured",
                                           (json_int_t)r.captured, "vanished",
                                           (json_int_t)r.vanished, "remaining",
                                           (json_int_t)r.remaining));
    if (r.backlog == 0) {
        printf("baseline: every table already has a snapshot of its current OID\n");
        return 0;
    }
    printf("baseline: captured %zu of %zu %s without a snapshot", r.captured, r.backlog,
           ex_plural(r.backlog, "table", "tables"));
    if (r.vanished)
        printf(" (%zu dropped meanwhile)", r.vanished);
    if (r.remaining)
        printf("; %zu remain: run again to continue\n", r.remaining);
    else
        printf("; none remain\n");
    return 0;
}

/* ------------------------------------------------------------------ */
/* drop                                                                */

int cmd_drop(cli *c, int argc, char **argv)
{
    const char *reason = NULL, *resource = NULL;
    bool no_snapshot = false;
    const cli_opt opts[] = {COMMON_OPTS(c),
                            SCHEMA_OPT(c),
                            {"reason", 0, true, &reason, NULL},
                            {"resource", 0, true, &resource, NULL},
                            {"no-snapshot", 0, false, NULL, &no_snapshot}};
    const char *pos[1];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 1, &n_pos))
        return EXIT_USAGE;
    if (n_pos != 1)
        return cli_usage(c, "which table? (pgwitness drop TABLE --reason REASON)");
    if (!reason)
        return cli_usage(c, "--reason is required (schema_mismatch_recreate, "
                            "retain_raw_versions, raw_orphan_cleanup, empty_raw_bloat, manual, "
                            "or your own word)");
    /* Checked here: the funnel never lets a failed snapshot stop a drop,
     * so a reason the snapshot refuses would drop the table unrecorded. */
    if (!cli_check_text(c, "--reason", reason, MAX_REASON_BYTES) ||
        (resource && !cli_check_text(c, "--resource", resource, MAX_RESOURCE_BYTES)))
        return EXIT_USAGE;
    char schema[256], table[256];
    if (!cli_table_arg(c, pos[0], schema, sizeof schema, table, sizeof table))
        return EXIT_USAGE;
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    pgw_pq_drop_options o = PGW_PQ_DROP_OPTIONS_INIT;
    o.pgw_schema = c->pgw_schema;
    o.resource = resource;
    if (no_snapshot)
        o.snapshots = PGW_PQ_SNAPSHOTS_OFF;
    pgw_pq_drop_result r;
    pgw_error err;
    /* The funnel drops the table even when its snapshot cannot be stored
     * (a host's drop must not fail for pgwitness's sake); an operator who
     * names a schema that is not installed (a typo) would lose the
     * evidence the command exists to keep, so that is refused first. */
    int version = 0;
    int rc = pgw_pq_schema_version(&version, conn, c->pgw_schema, &err);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    if (version == 0 && !no_snapshot) {
        pgw_error_clear(&err);
        err.code = PGW_ENOTFOUND;
        snprintf(err.message, sizeof err.message,
                 "pgwitness is not installed in schema \"%.100s\": run pgw_pq_install() "
                 "first, or give --no-snapshot to drop the table without a snapshot; nothing "
                 "was dropped",
                 c->pgw_schema ? c->pgw_schema : PGW_PQ_DEFAULT_SCHEMA);
        return cli_fail_err(c, PGW_ENOTFOUND, &err);
    }
    rc = pgw_pq_drop_table(&r, conn, schema, table, reason, &o, &err);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    /* The funnel is idempotent: a missing table is not an error to it (the
     * attempt is audited), but the operator should not miss it. */
    if (!r.dropped)
        fprintf(stderr, "%s drop: warning: there is no table %s.%s: nothing was dropped\n",
                c->prog, ex_text(schema), ex_text(table));
    if (c->json)
        return cli_print_json(
            c, json_pack("{s:s, s:s, s:b, s:b, s:o, s:s?, s:o, s:s?}", "schema", schema, "table",
                         table, "dropped", r.dropped, "snapshot_taken", r.snapshot_taken,
                         "snapshot_id",
                         r.snapshot_taken ? json_integer(r.snapshot_id) : json_null(),
                         "snapshot_error", r.snapshot_taken ? NULL : r.snapshot_error,
                         "audit_id", r.audit_id ? json_integer(r.audit_id) : json_null(),
                         "audit_error", r.audit_id ? NULL : r.audit_error));
    if (!r.dropped)
        printf("no table %s.%s existed: nothing was dropped, no snapshot taken\n",
               ex_text(schema), ex_text(table));
    else if (r.snapshot_taken)
        printf("dropped %s.%s; snapshot %" PRId64 " taken first\n", ex_text(schema),
               ex_text(table), r.snapshot_id);
    else
        printf("dropped %s.%s; no snapshot: %s\n", ex_text(schema), ex_text(table),
               ex_text(r.snapshot_error));
    if (r.audit_id)
        printf("audit row %" PRId64 "%s\n", r.audit_id,
               r.dropped ? "" : " records the attempt");
    else
        printf("no audit row: %s\n", ex_text(r.audit_error));
    return 0;
}

/* ------------------------------------------------------------------ */
/* history                                                             */

/* Stored snapshots a load left out because they do not decode (a newer
 * format, a row edited by hand): a warning line each on stderr, so that one
 * bad row does not hide every other (pgw_pq_filter.skip_undecodable). */
static void warn_skipped(const cli *c, const pgw_pq_snapshot_set *set)
{
    size_t n = pgw_pq_snapshot_set_skipped_count(set);
    for (size_t i = 0; i < n && i < 5; i++) {
        const char *reason = NULL;
        int64_t id = pgw_pq_snapshot_set_skipped(set, i, &reason);
        /* The library's reason, without its own "stored snapshot N does
         * not decode: " when it starts so (the line says that already). */
        char prefix[64];
        snprintf(prefix, sizeof prefix, "stored snapshot %" PRId64 " does not decode: ", id);
        if (reason && strncmp(reason, prefix, strlen(prefix)) == 0)
            reason += strlen(prefix);
        fprintf(stderr, "%s %s: warning: stored snapshot %" PRId64 " left out: %s\n", c->prog,
                c->command, id, ex_text(reason));
    }
    if (n > 5)
        fprintf(stderr, "%s %s: warning: left out %zu more stored snapshots that do not decode\n",
                c->prog, c->command, n - 5);
}

int cmd_history(cli *c, int argc, char **argv)
{
    const char *resource = NULL, *limit_s = NULL;
    const cli_opt opts[] = {COMMON_OPTS(c), SCHEMA_OPT(c),
                            {"resource", 0, true, &resource, NULL},
                            {"limit", 0, true, &limit_s, NULL}};
    const char *pos[1];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 1, &n_pos))
        return EXIT_USAGE;
    if ((n_pos == 1) == (resource != NULL))
        return cli_usage(c, "give a TABLE or --resource ID (one of them)");
    if (resource && !cli_check_text(c, "--resource", resource, MAX_RESOURCE_BYTES))
        return EXIT_USAGE;
    pgw_pq_filter f = PGW_PQ_FILTER_INIT;
    f.newest_first = true;
    f.skip_undecodable = true;
    if (limit_s && !parse_size(limit_s, &f.limit, 1, 2147483647))
        return cli_usage(c, "--limit takes a number from 1 to 2147483647, not '%s'", limit_s);
    char schema[256], table[256];
    if (n_pos == 1) {
        if (!cli_table_arg(c, pos[0], schema, sizeof schema, table, sizeof table))
            return EXIT_USAGE;
        f.schema = schema;
        f.table = table;
    } else {
        f.resource = resource;
    }
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    pgw_pq_snapshot_set *set = NULL;
    pgw_error err;
    int rc = pgw_pq_load(&set, conn, c->pgw_schema, &f, &err);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    warn_skipped(c, set);
    size_t n = pgw_pq_snapshot_set_count(set);
    if (c->json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n; i++) {
            const pgw_snapshot *s = pgw_pq_snapshot_set_get(set, i);
            char ts[PGW_TIMESTAMP_SIZE];
            int64_t rows;
            bool has_rows = pgw_snapshot_row_estimate(s, &rows);
            pgw_timestamp_format(ts, pgw_snapshot_captured_at(s));
            json_array_append_new(
                arr, json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s?, s:I, s:o}", "id",
                               (json_int_t)pgw_pq_snapshot_set_id(set, i), "captured_at", ts,
                               "schema", pgw_snapshot_schema(s), "table", pgw_snapshot_table(s),
                               "reason", pgw_snapshot_reason(s), "schema_hash",
                               pgw_snapshot_schema_hash(s), "resource_identity",
                               pgw_snapshot_resource(s), "columns",
                               (json_int_t)pgw_snapshot_column_count(s), "row_estimate",
                               has_rows ? json_integer(rows) : json_null()));
        }
        pgw_pq_snapshot_set_free(set);
        return cli_print_json(c, arr);
    }
    if (n == 0) {
        printf("no stored snapshots of %s%s%s\n", resource ? "resource " : "",
               ex_text(resource ? resource : pos[0]),
               resource ? "" : " (see pgwitness baseline)");
        pgw_pq_snapshot_set_free(set);
        return 0;
    }
    printf("%zu snapshot%s of %s %s, newest first\n", n, n == 1 ? "" : "s",
           resource ? "resource" : "table", ex_text(resource ? resource : pos[0]));
    printf("%6s  %-19s  %-25s %-16s %5s %10s  %s\n", "id", "captured (UTC)", "reason",
           "schema hash", "cols", "rows", "table");
    for (size_t i = 0; i < n; i++) {
        const pgw_snapshot *s = pgw_pq_snapshot_set_get(set, i);
        char when[32], rows_s[24] = "-";
        int64_t rows;
        cli_time(when, pgw_snapshot_captured_at(s));
        if (pgw_snapshot_row_estimate(s, &rows))
            snprintf(rows_s, sizeof rows_s, "%" PRId64, rows);
        printf("%6" PRId64 "  %-19s  %-25s %-16s %5zu %10s  %s.%s\n",
               pgw_pq_snapshot_set_id(set, i), when, ex_text(pgw_snapshot_reason(s)),
               pgw_snapshot_schema_hash(s), pgw_snapshot_column_count(s), rows_s,
               ex_text(pgw_snapshot_schema(s)), ex_text(pgw_snapshot_table(s)));
    }
    pgw_pq_snapshot_set_free(set);
    return 0;
}

/* ------------------------------------------------------------------ */
/* diff                                                                */

static const char *anomaly_words(unsigned a, char *buf, size_t size)
{
    buf[0] = '\0';
    static const struct {
        unsigned flag;
        const char *word;
    } w[] = {{PGW_ANOMALY_BOM, "byte-order mark"},
             {PGW_ANOMALY_LEADING_SPACE, "leading space"},
             {PGW_ANOMALY_TRAILING_SPACE, "trailing space"},
             {PGW_ANOMALY_CONTROL, "control character"}};
    for (size_t i = 0; i < N(w); i++)
        if (a & w[i].flag)
            snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? ", " : "",
                     w[i].word);
    return buf;
}

/* Prints a name so that invisible characters show: a BOM as <BOM>,
 * control characters escaped (ex_text). */
static void print_name(const char *s)
{
    static const char bom[] = "\xEF\xBB\xBF";
    for (;;) {
        const char *b = strstr(s, bom);
        size_t n = b ? (size_t)(b - s) : strlen(s);
        char *part = strndup(s, n);
        fputs(part ? ex_text(part) : "?", stdout);
        free(part);
        if (!b)
            return;
        fputs("<BOM>", stdout);
        s = b + 3;
    }
}

/* What a rename's evidence says, in words: a name without value evidence
 * says whether the values differ or were never sampled. */
static const char *evidence_words(const pgw_rename *r)
{
    if (r->evidence == PGW_EVIDENCE_BOTH)
        return "values and name";
    if (r->evidence == PGW_EVIDENCE_VALUES)
        return "values";
    return r->parts.score >= 0 && r->parts.values < 0 ? "name (no sampled values)"
                                                      : "name (values differ)";
}

/* A part, or "-" when it was not computed. */
static void print_part(const char *label, double v, const char *sep)
{
    if (v < 0)
        printf("%s -%s", label, sep);
    else
        printf("%s %.2f%s", label, v, sep);
}

/* The parts of a rename's combined score, on their own line; nothing when
 * they were not recorded. */
static void print_parts(const pgw_rename_parts *p)
{
    if (p->score < 0)
        return;
    printf("      ");
    print_part("name", p->name, ", ");
    print_part("values", p->values, " (");
    print_part("profile", p->profile, ", ");
    print_part("shape", p->shape, "), ");
    print_part("type", p->type, ", ");
    print_part("position", p->position, ", ");
    print_part("contrast", p->contrast, "\n");
}

static void print_diff(const pgw_diff *d, const char *label_a, const char *label_b)
{
    const pgw_diff_side *f = pgw_diff_from(d), *t = pgw_diff_to(d);
    char wf[32], wt[32];
    cli_time(wf, f->captured_at);
    cli_time(wt, t->captured_at);
    printf("from %s.%s  %s  hash %s  (%s)\n", ex_text(f->schema), ex_text(f->table), wf,
           ex_text(f->schema_hash), ex_text(label_a));
    printf("  to %s.%s  %s  hash %s  (%s)\n", ex_text(t->schema), ex_text(t->table), wt,
           ex_text(t->schema_hash), ex_text(label_b));
    /* schema_changed compares the two stored schema hashes (which leave out
     * metadata columns, and are kept as written): say just that. */
    printf("class %s; schema_hash %s", pgw_change_class_name(pgw_diff_class(d)),
           pgw_diff_schema_changed(d) ? "changed" : "unchanged");
    if (f->has_row_estimate && t->has_row_estimate)
        printf("; rows %" PRId64 " -> %" PRId64, f->row_estimate, t->row_estimate);
    printf("\n");
    size_t n = pgw_diff_renamed_count(d);
    printf("\nrenamed (%zu)\n", n);
    for (size_t i = 0; i < n; i++) {
        const pgw_rename *r = pgw_diff_renamed(d, i);
        printf("  ");
        print_name(r->from);
        printf("  ->  ");
        print_name(r->to);
        printf("   score %.2f, evidence %s%s\n", r->score, evidence_words(r),
               strcmp(r->from_type, r->to_type) ? "; type changed too" : "");
        print_parts(&r->parts);
    }
    n = pgw_diff_removed_count(d);
    printf("\nremoved (%zu)\n", n);
    for (size_t i = 0; i < n; i++) {
        printf("  ");
        print_name(pgw_diff_removed(d, i)->column);
        printf("  %s\n", ex_text(pgw_diff_removed(d, i)->type));
    }
    n = pgw_diff_added_count(d);
    printf("\nadded (%zu)\n", n);
    for (size_t i = 0; i < n; i++) {
        printf("  ");
        print_name(pgw_diff_added(d, i)->column);
        printf("  %s  (position %" PRIu32 ")\n", ex_text(pgw_diff_added(d, i)->type),
               pgw_diff_added(d, i)->position);
    }
    n = pgw_diff_type_changed_count(d);
    printf("\nretyped (%zu)\n", n);
    for (size_t i = 0; i < n; i++) {
        const pgw_type_change *tc = pgw_diff_type_changed(d, i);
        printf("  ");
        print_name(tc->column);
        printf("  %s -> %s\n", ex_text(tc->from), ex_text(tc->to));
    }
    printf("\nreordered: %s\n", pgw_diff_reordered(d) ? "yes (kept columns changed order)" : "no");
    n = pgw_diff_profile_changed_count(d);
    printf("\nvalues changed form under the same name (%zu)\n", n);
    for (size_t i = 0; i < n; i++) {
        printf("  ");
        print_name(pgw_diff_profile_changed(d, i)->column);
        printf("  similarity %.2f\n", pgw_diff_profile_changed(d, i)->score);
    }
    n = pgw_diff_name_anomaly_count(d);
    printf("\nname anomalies (%zu)\n", n);
    for (size_t i = 0; i < n; i++) {
        const pgw_name_anomaly_report *a = pgw_diff_name_anomaly(d, i);
        char words[128];
        printf("  ");
        print_name(a->column);
        printf("  (%s): %s\n", a->in_to ? "to" : "from",
               anomaly_words(a->anomalies, words, sizeof words));
    }
}

/* An argument meant as a file: a path, or a name with an extension; not a
 * number such as 1.5 (a mistyped id). */
static bool looks_like_file(const char *arg)
{
    char *end;
    (void)strtod(arg, &end);
    if (end != arg && *end == '\0')
        return false;
    return strchr(arg, '/') || strchr(arg, '.') || strcmp(arg, "-") == 0;
}

/* A JSON object with the top-level keys only a diff document has
 * (docs/formats.md, "Diff JSON"). */
static bool is_diff_document(const char *text, size_t len)
{
    static const char *const keys[] = {"from", "to", "renamed_candidates", "added", "removed"};
    json_t *v = json_loadb(text, len, 0, NULL);
    bool yes = json_is_object(v);
    for (size_t i = 0; yes && i < sizeof keys / sizeof keys[0]; i++)
        yes = json_object_get(v, keys[i]) != NULL;
    json_decref(v);
    return yes;
}

/* A snapshot from a file, a stored id, or NULL with the error reported. */
static pgw_snapshot *load_one(cli *c, const char *arg, char *label, size_t label_size, int *rc)
{
    struct stat st;
    pgw_error err;
    size_t id;
    bool is_id = parse_size(arg, &id, 1, INT64_MAX);
    int stat_rc = stat(arg, &st), stat_errno = errno;
    if (stat_rc == 0 || !is_id) {
        /* A file: an existing one, or what is not an id. */
        if (stat_rc != 0 && !looks_like_file(arg) && stat_errno == ENOENT) {
            *rc = cli_usage(c, "'%s' is neither a snapshot file (there is no such file) nor a "
                               "stored snapshot id",
                            arg);
            return NULL;
        }
        size_t len = 0;
        char *text = cli_read_file(c, arg, PGW_SNAPSHOT_JSON_MAX_BYTES, &len);
        if (!text) {
            *rc = 1;
            return NULL;
        }
        pgw_snapshot *s = NULL;
        int r = pgw_snapshot_from_json(&s, text, len, NULL, &err);
        bool diff_doc = r != PGW_OK && is_diff_document(text, len);
        free(text);
        if (diff_doc) {
            *rc = cli_fail(c, "%s is a diff document, not a snapshot (diff takes two snapshot "
                              "files or ids)",
                           cli_file_name(arg));
            return NULL;
        }
        if (r != PGW_OK) {
            *rc = cli_fail(c, "%s is not a pgwitness snapshot: %s", arg, err.message);
            return NULL;
        }
        snprintf(label, label_size, "file %s", arg);
        return s;
    }
    PGconn *conn = cli_connect(c);
    if (!conn) {
        *rc = 1;
        return NULL;
    }
    pgw_pq_filter f = PGW_PQ_FILTER_INIT;
    f.id = (int64_t)id;
    pgw_pq_snapshot_set *set = NULL;
    int r = pgw_pq_load(&set, conn, c->pgw_schema, &f, &err);
    if (r != PGW_OK) {
        *rc = cli_fail_err(c, r, &err);
        return NULL;
    }
    if (pgw_pq_snapshot_set_count(set) == 0) {
        pgw_pq_snapshot_set_free(set);
        *rc = cli_fail(c, "no stored snapshot with id %zu (see pgwitness history)", id);
        return NULL;
    }
    /* Re-decode a copy that outlives the set. */
    char *json = NULL;
    pgw_snapshot *s = NULL;
    r = pgw_snapshot_to_json(&json, NULL, pgw_pq_snapshot_set_get(set, 0), 0, &err);
    if (r == PGW_OK)
        r = pgw_snapshot_from_json(&s, json, strlen(json), NULL, &err);
    pgw_free(json);
    pgw_pq_snapshot_set_free(set);
    if (r != PGW_OK) {
        *rc = cli_fail_err(c, r, &err);
        return NULL;
    }
    snprintf(label, label_size, "snapshot %zu", id);
    return s;
}

int cmd_diff(cli *c, int argc, char **argv)
{
    const char *threshold_s = NULL;
    const cli_opt opts[] = {COMMON_OPTS(c), SCHEMA_OPT(c),
                            {"threshold", 0, true, &threshold_s, NULL}};
    const char *pos[2];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 2, &n_pos))
        return EXIT_USAGE;
    if (n_pos == 0)
        return cli_usage(c, "give two snapshots (files or ids) or one TABLE");
    pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
    if (threshold_s && !ex_parse_double(threshold_s, 0, 1, &o.rename_threshold))
        return cli_usage(c, "--threshold takes a number from 0 to 1, not '%s'", threshold_s);
    if (n_pos == 1) {
        /* One argument is a TABLE; a file or an id alone is half a diff. */
        struct stat st;
        size_t id;
        size_t len = strlen(pos[0]);
        const char *what = stat(pos[0], &st) == 0                             ? "a file"
                           : len > 5 && strcmp(pos[0] + len - 5, ".json") == 0 ? "a file name"
                           : parse_size(pos[0], &id, 1, INT64_MAX) ? "a snapshot id"
                                                                    : NULL;
        if (what)
            return cli_usage(c, "diff needs two snapshots: '%s' is %s, give the other one too "
                                "(pgwitness diff A B); one argument alone is a TABLE",
                             pos[0], what);
    }
    pgw_snapshot *a = NULL, *b = NULL;
    char la[300], lb[300];
    int rc = 0;
    if (n_pos == 2) {
        a = load_one(c, pos[0], la, sizeof la, &rc);
        if (a)
            b = load_one(c, pos[1], lb, sizeof lb, &rc);
    } else {
        char schema[256], table[256];
        if (!cli_table_arg(c, pos[0], schema, sizeof schema, table, sizeof table))
            return EXIT_USAGE;
        PGconn *conn = cli_connect(c);
        if (!conn)
            return 1;
        pgw_pq_filter f = PGW_PQ_FILTER_INIT;
        f.schema = schema;
        f.table = table;
        f.newest_first = true;
        f.limit = 2;
        pgw_pq_snapshot_set *set = NULL;
        pgw_error err;
        int r = pgw_pq_load(&set, conn, c->pgw_schema, &f, &err);
        if (r == PGW_EPARSE || r == PGW_EVERSION) { /* a stored document does not decode */
            char buf[CLI_ERR_MESSAGE_SIZE], at[sizeof err.path + 8] = "";
            const char *msg = cli_err_message(c, r, &err, buf, sizeof buf);
            if (err.path[0] && !strstr(msg, err.path))
                snprintf(at, sizeof at, " (at %s)", err.path);
            return cli_fail(c, "%s%s; to compare two others: pgwitness diff ID ID "
                               "(pgwitness history %s lists them)",
                            msg, at, pos[0]);
        }
        if (r != PGW_OK)
            return cli_fail_err(c, r, &err);
        if (pgw_pq_snapshot_set_count(set) < 2) {
            size_t have = pgw_pq_snapshot_set_count(set);
            pgw_pq_snapshot_set_free(set);
            return cli_fail(c, "%s.%s has %zu stored snapshot%s; a diff needs two (see "
                               "pgwitness history %s)",
                            schema, table, have, have == 1 ? "" : "s", pos[0]);
        }
        pgw_diff *d = NULL;
        const pgw_snapshot *older = pgw_pq_snapshot_set_get(set, 1),
                           *newer = pgw_pq_snapshot_set_get(set, 0);
        r = pgw_diff_snapshots(&d, older, newer, &o, &err);
        if (r == PGW_OK) {
            if (c->json) {
                char *json = NULL;
                r = pgw_diff_to_json(&json, NULL, d, PGW_JSON_PRETTY, &err);
                if (r == PGW_OK)
                    print_json_doc(json);
            } else {
                snprintf(la, sizeof la, "snapshot %" PRId64, pgw_pq_snapshot_set_id(set, 1));
                snprintf(lb, sizeof lb, "snapshot %" PRId64, pgw_pq_snapshot_set_id(set, 0));
                print_diff(d, la, lb);
            }
        }
        pgw_diff_free(d);
        pgw_pq_snapshot_set_free(set);
        return r == PGW_OK ? 0 : cli_fail_err(c, r, &err);
    }
    if (!a || !b) {
        pgw_snapshot_free(a);
        return rc ? rc : 1;
    }
    /* Older first: the other way round, every rename reads backwards (the
     * diff is still made as asked, for a caller who means it). */
    if (pgw_snapshot_captured_at(a) > pgw_snapshot_captured_at(b))
        fprintf(stderr,
                "%s %s: warning: %s was captured after %s; the diff reads from the first to "
                "the second (older first: pgwitness diff %s %s)\n",
                c->prog, c->command, la, lb, pos[1], pos[0]);
    pgw_diff *d = NULL;
    pgw_error err;
    int r = pgw_diff_snapshots(&d, a, b, &o, &err);
    if (r == PGW_OK) {
        if (c->json) {
            char *json = NULL;
            r = pgw_diff_to_json(&json, NULL, d, PGW_JSON_PRETTY, &err);
            if (r == PGW_OK)
                print_json_doc(json);
        } else {
            print_diff(d, la, lb);
        }
    }
    pgw_diff_free(d);
    pgw_snapshot_free(a);
    pgw_snapshot_free(b);
    return r == PGW_OK ? 0 : cli_fail_err(c, r, &err);
}

/* ------------------------------------------------------------------ */
/* report                                                              */

static void print_report(const pgw_drift *d)
{
    size_t pairs = pgw_drift_pairs(d);
    size_t nres = pgw_drift_resource_count(d);
    printf("drift report: %zu snapshot%s of %zu resource%s, %zu consecutive pair%s, %zu changed "
           "shape (%.0f%%)\n",
           pgw_drift_snapshots(d), pgw_drift_snapshots(d) == 1 ? "" : "s", nres,
           nres == 1 ? "" : "s", pairs, pairs == 1 ? "" : "s",
           pgw_drift_changed_pairs(d), pgw_drift_rate(d) * 100);
    printf("classes:");
    bool any = false;
    for (int k = 0; k < PGW_CHANGE_CLASS_COUNT; k++) {
        size_t n = pgw_drift_class_count(d, (pgw_change_class)k);
        if (n) {
            printf("%s %s %zu", any ? "," : "", pgw_change_class_name((pgw_change_class)k), n);
            any = true;
        }
    }
    printf("%s\n", any ? "" : " none");
    if (pgw_drift_profile_changed_pairs(d))
        printf("pairs where values changed form under the same name: %zu\n",
               pgw_drift_profile_changed_pairs(d));
    for (size_t i = 0; i < pgw_drift_resource_count(d); i++) {
        const pgw_drift_resource *r = pgw_drift_resource_at(d, i);
        char first[32], last[32];
        cli_time(first, r->first);
        cli_time(last, r->last);
        printf("\n%s: %zu snapshot%s from %s to %s, %zu of %zu pair%s changed\n",
               ex_text(r->resource),
               r->snapshots, r->snapshots == 1 ? "" : "s", first, last, r->changed_pairs,
               r->pairs, r->pairs == 1 ? "" : "s");
        for (size_t k = 0; k < r->n_steps; k++) {
            const pgw_diff *df = r->steps[k].diff;
            char when[32];
            cli_time(when, pgw_diff_to(df)->captured_at);
            printf("  %s  %s  %s.%s -> %s.%s\n", when, pgw_change_class_name(r->steps[k].change),
                   ex_text(pgw_diff_from(df)->schema), ex_text(pgw_diff_from(df)->table),
                   ex_text(pgw_diff_to(df)->schema), ex_text(pgw_diff_to(df)->table));
            for (size_t j = 0; j < pgw_diff_renamed_count(df); j++) {
                const pgw_rename *rn = pgw_diff_renamed(df, j);
                printf("      %-9s", j ? "" : "renamed");
                print_name(rn->from);
                printf(" -> ");
                print_name(rn->to);
                printf("  (%.2f, %s)\n", rn->score, evidence_words(rn));
            }
            for (int which = 0; which < 2; which++) {
                size_t cnt = which ? pgw_diff_removed_count(df) : pgw_diff_added_count(df);
                if (!cnt)
                    continue;
                printf("      %-9s", which ? "removed" : "added");
                for (size_t j = 0; j < cnt; j++) {
                    printf("%s", j ? ", " : "");
                    print_name(which ? pgw_diff_removed(df, j)->column
                                     : pgw_diff_added(df, j)->column);
                }
                printf("\n");
            }
            for (size_t j = 0; j < pgw_diff_type_changed_count(df); j++) {
                const pgw_type_change *tc = pgw_diff_type_changed(df, j);
                printf("      %-9s", j ? "" : "retyped");
                print_name(tc->column);
                printf(" %s -> %s\n", ex_text(tc->from), ex_text(tc->to));
            }
            if (pgw_diff_reordered(df))
                printf("      reordered (the kept columns changed order)\n");
            for (size_t j = 0; j < pgw_diff_profile_changed_count(df); j++) {
                printf("      values of ");
                print_name(pgw_diff_profile_changed(df, j)->column);
                printf(" changed form under the same name (similarity %.2f)\n",
                       pgw_diff_profile_changed(df, j)->score);
            }
        }
    }
}

int cmd_report(cli *c, int argc, char **argv)
{
    const char *since = NULL, *resource = NULL;
    const cli_opt opts[] = {COMMON_OPTS(c), SCHEMA_OPT(c), {"since", 0, true, &since, NULL},
                            {"resource", 0, true, &resource, NULL}};
    const char *pos[1];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 0, &n_pos))
        return EXIT_USAGE;
    pgw_pq_filter f = PGW_PQ_FILTER_INIT;
    pgw_error err;
    if (since) {
        if (pgw_timestamp_parse(&f.since, since, &err) != PGW_OK)
            return cli_usage(c, "--since: %s", err.message);
        f.has_since = true;
    }
    if (resource && !cli_check_text(c, "--resource", resource, MAX_RESOURCE_BYTES))
        return EXIT_USAGE;
    f.resource = resource;
    f.skip_undecodable = true;
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    pgw_pq_snapshot_set *set = NULL;
    int rc = pgw_pq_load(&set, conn, c->pgw_schema, &f, &err);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    warn_skipped(c, set);
    pgw_drift *d = NULL;
    rc = pgw_drift_report(&d, pgw_pq_snapshot_set_all(set), pgw_pq_snapshot_set_count(set), NULL,
                          &err);
    if (rc == PGW_OK) {
        if (c->json) {
            char *json = NULL;
            rc = pgw_drift_to_json(&json, NULL, d, PGW_JSON_PRETTY, &err);
            if (rc == PGW_OK)
                print_json_doc(json);
        } else {
            print_report(d);
        }
    }
    pgw_drift_free(d);
    pgw_pq_snapshot_set_free(set);
    return rc == PGW_OK ? 0 : cli_fail_err(c, rc, &err);
}

/* ------------------------------------------------------------------ */
/* prune                                                               */

int cmd_prune(cli *c, int argc, char **argv)
{
    const char *keep_s = NULL;
    const cli_opt opts[] = {COMMON_OPTS(c), SCHEMA_OPT(c), {"keep", 0, true, &keep_s, NULL}};
    const char *pos[1];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 0, &n_pos))
        return EXIT_USAGE;
    size_t keep;
    if (!keep_s)
        return cli_usage(c, "--keep N is required (snapshots to keep per resource)");
    if (!parse_size(keep_s, &keep, 1, 2147483647))
        return cli_usage(c, "--keep takes a positive number, not '%s'", keep_s);
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    pgw_pq_prune_result r;
    pgw_error err;
    int rc = pgw_pq_prune(&r, conn, c->pgw_schema, keep, &err);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    if (c->json)
        return cli_print_json(c, json_pack("{s:I, s:I, s:I}", "removed", (json_int_t)r.removed,
                                           "resources", (json_int_t)r.resources, "kept",
                                           (json_int_t)r.kept));
    printf("pruned %zu snapshot%s from %zu resource%s; %zu kept (the newest %zu per "
               "resource and both sides of every change)\n",
               r.removed, r.removed == 1 ? "" : "s", r.resources, r.resources == 1 ? "" : "s",
               r.kept, keep);
    return 0;
}
