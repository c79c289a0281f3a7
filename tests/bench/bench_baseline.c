/*
 * tests/bench/bench_baseline.c — the baseline pass (issue 4) against the
 * server in the PG* environment (tests/bench/run-pg starts a throwaway one).
 *
 * Creates 2,000 analysed tables of 20 columns, then measures, in one run
 * and interleaved:
 *   - pgw_pq_baseline: many tables per catalog query, one INSERT per batch;
 *   - a naive capture: per table one query per catalog view (pg_class,
 *     pg_attribute, pg_stats) and one INSERT, as a collector would write it;
 * and prints tables/s for both and their ratio.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pq.h"
#include "bench_util.h"
#include "pgwitness/pgwitness-pq.h"

#define TABLES 2000
#define COLUMNS 20

static void create_tables(PGconn *c)
{
    bench_exec(c, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS bench_bl CASCADE; "
            "CREATE SCHEMA bench_bl");
    char sql[4096];
    for (int t = 0; t < TABLES; t++) {
        int n = snprintf(sql, sizeof sql, "CREATE TABLE bench_bl.t%04d (", t);
        for (int k = 0; k < COLUMNS; k++)
            n += snprintf(sql + n, sizeof sql - (size_t)n, "%sc%02d %s", k ? ", " : "", k,
                          k % 3 == 0 ? "integer" : k % 3 == 1 ? "numeric" : "text");
        n += snprintf(sql + n, sizeof sql - (size_t)n, "); INSERT INTO bench_bl.t%04d SELECT ", t);
        for (int k = 0; k < COLUMNS; k++)
            n += snprintf(sql + n, sizeof sql - (size_t)n, "%s%s", k ? ", " : "",
                          k % 3 == 0   ? "g % 50"
                          : k % 3 == 1 ? "(g * 1.5)::numeric"
                                       : "'v' || (g % 17)");
        snprintf(sql + n, sizeof sql - (size_t)n, " FROM generate_series(1, 100) g");
        bench_exec(c, sql);
        if (t % 500 == 499)
            fprintf(stderr, "  created %d tables\n", t + 1);
    }
    bench_exec(c, "ANALYZE");
}

/* The naive capture: three catalog queries and one INSERT per table. */
static double naive_run(PGconn *c, const char *pgw_schema)
{
    uint64_t t0 = bench_now_ns();
    PGresult *list = PQexec(c, "SELECT c.oid::text, c.relname, c.reltuples::float8 FROM pg_class "
                               "c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE "
                               "n.nspname = 'bench_bl' AND c.relkind = 'r' ORDER BY c.oid");
    int n = PQntuples(list);
    for (int t = 0; t < n; t++) {
        const char *oid = PQgetvalue(list, t, 0), *name = PQgetvalue(list, t, 1);
        const char *p1[1] = {oid};
        PGresult *cls = PQexecParams(c, "SELECT relname, reltuples::float8 FROM pg_class WHERE "
                                        "oid = $1::oid", 1, NULL, p1, NULL, NULL, 0);
        PGresult *att = PQexecParams(c, "SELECT attname, format_type(atttypid, atttypmod) FROM "
                                        "pg_attribute WHERE attrelid = $1::oid AND attnum > 0 "
                                        "AND NOT attisdropped ORDER BY attnum",
                                     1, NULL, p1, NULL, NULL, 0);
        const char *p2[1] = {name};
        PGresult *st = PQexecParams(
            c, "SELECT attname, json_build_object('null_frac', null_frac, 'n_distinct', "
               "n_distinct, 'avg_width', avg_width, 'most_common_vals', "
               "coalesce(to_json(most_common_vals::text::text[]), '[]'), 'most_common_freqs', "
               "coalesce(to_json(most_common_freqs), '[]'), 'histogram_bounds', "
               "coalesce(to_json(histogram_bounds::text::text[]), '[]'), 'correlation', "
               "correlation)::text FROM pg_stats WHERE schemaname = 'bench_bl' AND "
               "tablename = $1 AND NOT inherited",
            1, NULL, p2, NULL, NULL, 0);
        pgw_snapshot_builder *b;
        pgw_snapshot_builder_new(&b, NULL, NULL);
        pgw_snapshot_builder_set_table(b, "bench_bl", PQgetvalue(cls, 0, 0),
                                       (uint32_t)strtoul(oid, NULL, 10), NULL);
        pgw_snapshot_builder_set_captured_at(b, 1764493844000000LL, NULL);
        pgw_snapshot_builder_set_reltuples(b, strtod(PQgetvalue(cls, 0, 1), NULL), NULL);
        pgw_snapshot_builder_set_reason(b, PGW_REASON_BASELINE, NULL);
        for (int a = 0; a < PQntuples(att); a++) {
            const char *profile = NULL;
            for (int s = 0; s < PQntuples(st); s++)
                if (strcmp(PQgetvalue(st, s, 0), PQgetvalue(att, a, 0)) == 0)
                    profile = PQgetvalue(st, s, 1);
            pgw_snapshot_builder_add_column_json(b, PQgetvalue(att, a, 0), PQgetvalue(att, a, 1),
                                                 profile, NULL);
        }
        pgw_snapshot *snap;
        if (pgw_snapshot_builder_finish(&snap, b, NULL) != PGW_OK ||
            pgw_pq_store(NULL, c, pgw_schema, snap, NULL) != PGW_OK) {
            fprintf(stderr, "bench: naive capture failed\n");
            exit(1);
        }
        pgw_snapshot_free(snap);
        pgw_snapshot_builder_free(b);
        PQclear(cls);
        PQclear(att);
        PQclear(st);
    }
    PQclear(list);
    return (double)n / ((double)(bench_now_ns() - t0) / 1e9);
}

static double baseline_run(PGconn *c, const char *pgw_schema, size_t *captured)
{
    pgw_pq_baseline_options o = PGW_PQ_BASELINE_OPTIONS_INIT;
    o.pgw_schema = pgw_schema;
    o.schema_pattern = "bench_bl";
    o.limit = TABLES;
    pgw_pq_baseline_result r;
    pgw_error err;
    uint64_t t0 = bench_now_ns();
    if (pgw_pq_baseline(&r, c, &o, &err) != PGW_OK) {
        fprintf(stderr, "bench: baseline: %s\n", err.message);
        exit(1);
    }
    *captured = r.captured;
    return (double)r.captured / ((double)(bench_now_ns() - t0) / 1e9);
}

int main(void)
{
    PGconn *c = PQconnectdb("");
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "bench-baseline: no server (run tests/bench/run-pg): %s",
                PQerrorMessage(c));
        return 1;
    }
    printf("pgwitness %s — baseline pass benchmark, PostgreSQL %d, %d tables x %d columns\n",
           pgw_version(), PQserverVersion(c), TABLES, COLUMNS);
    fprintf(stderr, "creating tables...\n");
    create_tables(c);
    double best_b = 0, best_n = 0, sum_b = 0, sum_n = 0;
    int rounds = getenv("BENCH_ROUNDS") ? atoi(getenv("BENCH_ROUNDS")) : 3;
    for (int round = 0; round < rounds; round++) {
        bench_exec(c, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS pgw_bench CASCADE; "
                "DROP SCHEMA IF EXISTS pgw_naive CASCADE");
        pgw_pq_install(NULL, c, "pgw_bench", NULL);
        pgw_pq_install(NULL, c, "pgw_naive", NULL);
        size_t captured = 0;
        double b = baseline_run(c, "pgw_bench", &captured);
        double n = naive_run(c, "pgw_naive");
        if (captured != TABLES) {
            fprintf(stderr, "bench: baseline captured %zu of %d\n", captured, TABLES);
            return 1;
        }
        printf("  round %d: baseline %7.0f tables/s   naive %7.0f tables/s   ratio %.1fx\n",
               round + 1, b, n, b / n);
        sum_b += b;
        sum_n += n;
        best_b = b > best_b ? b : best_b;
        best_n = n > best_n ? n : best_n;
    }
    printf("baseline pass:   %7.0f tables/s (mean of %d rounds; source system: 76 tables/s)\n",
           sum_b / rounds, rounds);
    printf("naive capture:   %7.0f tables/s (one query per table per catalog view)\n",
           sum_n / rounds);
    printf("ratio:           %7.1fx\n", sum_b / sum_n);
    bench_exec(c, "SET client_min_messages = warning; DROP SCHEMA bench_bl CASCADE; "
            "DROP SCHEMA pgw_bench CASCADE; DROP SCHEMA pgw_naive CASCADE");
    PQfinish(c);
    return 0;
}
