/*
 * examples/ingest/main.c — the `pgwitness-ingest` example collector.
 *
 *   pgwitness-ingest [-d CONNINFO] [--schema NAME] [--pgw-schema NAME]
 *                    --table NAME [--resource ID] FILE.csv
 *
 * Loads FILE.csv into the table (the header decides the columns; NA and
 * empty are NULL; integer/numeric/text inferred), recreating the table
 * through pgwitness's audited drop funnel when the header changed.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest.h"

static void usage(FILE *f)
{
    fputs("usage: pgwitness-ingest [-d CONNINFO] [--schema NAME] [--pgw-schema NAME]\n"
          "                        --table NAME [--resource ID] FILE.csv\n"
          "Loads a CSV file into a table whose columns its header decides; when the\n"
          "header changed, the old table is dropped through pgwitness's audited drop\n"
          "funnel (a snapshot is taken first). Connection: -d or the PG* variables.\n",
          f);
}

int main(int argc, char **argv)
{
    const char *conninfo = "", *schema = "public", *pgw_schema = NULL, *table = NULL,
               *resource = NULL, *file = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "-d") == 0 || strcmp(a, "--dbname") == 0) {
            slot = &conninfo;
        } else if (strcmp(a, "--schema") == 0) {
            slot = &schema;
        } else if (strcmp(a, "--pgw-schema") == 0) {
            slot = &pgw_schema;
        } else if (strcmp(a, "--table") == 0) {
            slot = &table;
        } else if (strcmp(a, "--resource") == 0) {
            slot = &resource;
        } else if (a[0] == '-') {
            fprintf(stderr, "pgwitness-ingest: unknown option %s (see --help)\n", a);
            return 2;
        } else if (!file) {
            file = a;
            continue;
        } else {
            fprintf(stderr, "pgwitness-ingest: one CSV file at a time (got %s and %s)\n", file, a);
            return 2;
        }
        if (++i == argc) {
            fprintf(stderr, "pgwitness-ingest: %s needs a value\n", a);
            return 2;
        }
        *slot = argv[i];
    }
    if (!table || !file) {
        fprintf(stderr, "pgwitness-ingest: --table and a CSV file are required (see --help)\n");
        return 2;
    }
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "pgwitness-ingest: cannot connect: %s", PQerrorMessage(c));
        PQfinish(c);
        return 1;
    }
    ingest_result r;
    pgw_error err;
    int rc = ingest_csv(&r, c, file, schema, table, resource, pgw_schema, &err);
    PQfinish(c);
    if (rc != PGW_OK) {
        fprintf(stderr, "pgwitness-ingest: %s\n", err.message);
        return 1;
    }
    printf("%s.%s: loaded %zu rows, %zu columns (%s)\n", schema, table, r.rows, r.columns, r.types);
    if (r.recreated) {
        printf("  header changed (%zu -> %zu columns): dropped through the funnel, ", r.old_columns,
               r.columns);
        if (r.drop.snapshot_taken)
            printf("snapshot %lld taken\n", (long long)r.drop.snapshot_id);
        else
            printf("no snapshot: %s\n", r.drop.snapshot_error);
    } else if (r.existed) {
        printf("  same header: table emptied and refilled\n");
    } else {
        printf("  new table\n");
    }
    return 0;
}
