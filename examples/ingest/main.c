/*
 * examples/ingest/main.c — the `pgwitness-ingest` example collector.
 *
 *   pgwitness-ingest [-d CONNINFO] [--schema NAME] [--pgw-schema NAME]
 *                    --table [SCHEMA.]NAME [--resource ID] FILE.csv
 *
 * Loads FILE.csv into the table, read as pandas.read_csv() reads it by
 * default (the header decides the columns; pandas' missing values, NA,
 * empty and the rest, are NULL; integer/numeric/text inferred), recreating
 * the table through pgwitness's audited drop funnel when the header changed.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "excommon.h"
#include "ingest.h"

static void usage(FILE *f)
{
    fputs("usage: pgwitness-ingest [-d CONNINFO] [--schema NAME] [--pgw-schema NAME]\n"
          "                        --table [SCHEMA.]NAME [--resource ID] FILE.csv\n"
          "Loads a CSV file (UTF-8) into a table whose columns its header decides; the\n"
          "file is read as pandas.read_csv() reads it by default (blank lines skipped,\n"
          "pandas' missing values such as NA, NaN, N/A and empty fields NULL; a name\n"
          "longer than 63 bytes is cut to 63, as PostgreSQL truncates it). When\n"
          "the header changed, the old table is dropped through pgwitness's audited drop\n"
          "funnel (a snapshot is taken first); with the same header it is emptied and\n"
          "refilled. Connection: -d or the PG* variables. Options take their value as\n"
          "`--table NAME` or `--table=NAME`.\n"
          "  --table NAME       the table: `name` (in --schema, default public) or\n"
          "                     `schema.name`; names are taken as written (T1 and t1 are\n"
          "                     two tables); double-quote a name that contains a dot\n"
          "  --schema NAME      the table's schema (default public)\n"
          "  --pgw-schema NAME  pgwitness's own schema (default: $PGWITNESS_SCHEMA when\n"
          "                     set and not empty, as for `pgwitness`; else pgwitness)\n"
          "  --resource ID      the upstream resource, recorded with the snapshot\n"
          "Exit status: 0 loaded, 1 failure (nothing changed, unless what failed is\n"
          "writing the summary to stdout, after the load), 2 usage error.\n",
          f);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line on stderr: the arguments it quotes have their control
 * characters escaped (ex_text). */
static int usage_error(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pgwitness-ingest: %s (see pgwitness-ingest --help)\n", ex_text(msg));
    return 2;
}

static int run(int argc, char **argv)
{
    const char *conninfo = "", *schema_opt = NULL, *pgw_schema = NULL, *table_arg = NULL,
               *resource = NULL, *file = NULL;
    bool only_files = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m = 0;
        if (!only_files && a[0] == '-' && a[1] != '\0') {
            if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                usage(stdout);
                return 0;
            }
            if (strcmp(a, "--") == 0) {
                only_files = true;
                continue;
            }
            static const char *const names[] = {"--dbname", "--schema", "--pgw-schema",
                                                "--table", "--resource"};
            const char **slots[] = {&conninfo, &schema_opt, &pgw_schema, &table_arg, &resource};
            for (size_t k = 0; k < 5 && m == 0; k++) {
                m = ex_opt_value(argc, argv, &i, names[k], k == 0 ? "-d" : NULL, slots[k]);
                if (m < 0)
                    return usage_error("option %s needs a value", names[k]);
            }
            if (m == 0)
                return usage_error("unknown option '%s'", a);
            continue;
        }
        if (file)
            return usage_error("one CSV file at a time (got %s and %s)", file, a);
        file = a;
    }
    if (!table_arg || !file)
        return usage_error("--table and a CSV file are required");
    if (!file[0])
        return usage_error("the file name is empty");
    char schema[256], table[256], why[300];
    bool qualified;
    if (!ex_table_name(table_arg, schema, sizeof schema, table, sizeof table, &qualified, why,
                       sizeof why))
        return usage_error("--table: %s", why);
    if (schema_opt) {
        const char *problem = ex_name_problem(schema_opt);
        if (problem)
            return usage_error("--schema: the name %s", problem);
        if (qualified)
            return usage_error("give the schema once: --schema %s or --table %s, not both",
                               schema_opt, table_arg);
        snprintf(schema, sizeof schema, "%s", schema_opt);
    }
    /* pgwitness's schema as the `pgwitness` CLI takes it: the option, else
     * PGWITNESS_SCHEMA when set and not empty. */
    const char *pgw_schema_from = "--pgw-schema";
    if (!pgw_schema) {
        const char *env = getenv("PGWITNESS_SCHEMA");
        if (env && env[0]) {
            pgw_schema = env;
            pgw_schema_from = "PGWITNESS_SCHEMA";
        }
    }
    if (pgw_schema) {
        const char *problem = ex_name_problem(pgw_schema);
        if (problem)
            return usage_error("%s: the name %s", pgw_schema_from, problem);
    }
    if (resource && (!resource[0] || strlen(resource) > 4096 ||
                     !ex_utf8_valid(resource, strlen(resource))))
        return usage_error("--resource takes non-empty UTF-8 text of at most 4096 bytes");

    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", PQerrorMessage(c));
        msg[strcspn(msg, "\n")] = '\0';
        fprintf(stderr, "pgwitness-ingest: cannot connect to the database: %s\n", ex_text(msg));
        PQfinish(c);
        return 1;
    }
    /* An interrupt cancels the statement in flight: a load waiting for the
     * table's lock must not stay queued for it (holding up the table's
     * readers) or finish after we are gone. */
    ex_cancel_connection(c);
    /* The file is read as UTF-8 (its header is checked to be). */
    PQsetClientEncoding(c, "UTF8");
    PQclear(PQexec(c, "SET client_min_messages = warning"));
    ingest_result r;
    pgw_error err;
    int rc = ingest_csv(&r, c, file, schema, table, resource, pgw_schema, &err);
    ex_cancel_connection(NULL);
    PQfinish(c);
    if (rc != PGW_OK) {
        fprintf(stderr, "pgwitness-ingest: %s\n", ex_text(err.message));
        return 1;
    }
    printf("%s.%s: loaded %zu %s, %zu %s (%s)\n", ex_text(schema), ex_text(table), r.rows,
           ex_plural(r.rows, "row", "rows"), r.columns, ex_plural(r.columns, "column", "columns"),
           r.types);
    if (r.truncated)
        printf("  %zu %s longer than 63 bytes cut to 63, as PostgreSQL truncates them\n",
               r.truncated, ex_plural(r.truncated, "column name", "column names"));
    if (r.recreated) {
        printf("  header changed (%zu -> %zu %s): dropped through the funnel, ", r.old_columns,
               r.columns, ex_plural(r.columns, "column", "columns"));
        if (r.drop.snapshot_taken)
            printf("snapshot %lld taken\n", (long long)r.drop.snapshot_id);
        else
            printf("no snapshot: %s\n", ex_text(r.drop.snapshot_error));
    } else if (r.existed) {
        printf("  same header: table emptied and refilled\n");
    } else {
        printf("  new table\n");
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* A failed write on stdout (a full disk, a closed pipe) is a failure,
     * whatever ran: exit 1 with one line, not death by SIGPIPE. */
    ex_ignore_sigpipe();
    ex_signals_cancel();
    return ex_finish_stdout("pgwitness-ingest", run(argc, argv));
}
