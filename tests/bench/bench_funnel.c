/*
 * tests/bench/bench_funnel.c — drop funnel latency against a bare DROP
 * TABLE on the same kind of table (issue 4), interleaved in one run against
 * the server in the PG* environment (tests/bench/run-pg starts one).
 * Each drop runs in its own transaction (autocommit for the bare DROP, the
 * funnel's own BEGIN/COMMIT for the funnel).
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

#define PAIRS 200

static void make_table(PGconn *c, const char *name)
{
    char sql[2048];
    int n = snprintf(sql, sizeof sql, "CREATE TABLE %s (", name);
    for (int k = 0; k < 20; k++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, "%sc%02d %s", k ? ", " : "", k,
                      k % 2 ? "text" : "integer");
    n += snprintf(sql + n, sizeof sql - (size_t)n, "); INSERT INTO %s SELECT ", name);
    for (int k = 0; k < 20; k++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, "%s%s", k ? ", " : "",
                      k % 2 ? "'v' || (g % 13)" : "g % 31");
    snprintf(sql + n, sizeof sql - (size_t)n, " FROM generate_series(1, 200) g; ANALYZE %s",
             name);
    bench_exec(c, sql);
}

int main(void)
{
    PGconn *c = PQconnectdb("");
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "bench-funnel: no server (run tests/bench/run-pg): %s", PQerrorMessage(c));
        return 1;
    }
    bench_exec(c, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS pgw_fbench CASCADE");
    if (pgw_pq_install(NULL, c, "pgw_fbench", NULL) != PGW_OK)
        return 1;
    double bare[PAIRS], funnel[PAIRS];
    size_t snapshots = 0;
    for (int i = 0; i < PAIRS; i++) {
        char a[32], b[32], sql[64];
        snprintf(a, sizeof a, "fb_bare_%d", i);
        snprintf(b, sizeof b, "fb_funnel_%d", i);
        make_table(c, a);
        make_table(c, b);
        snprintf(sql, sizeof sql, "DROP TABLE %s", a);
        uint64_t t0 = bench_now_ns();
        bench_exec(c, sql);
        uint64_t t1 = bench_now_ns();
        pgw_pq_drop_options o = PGW_PQ_DROP_OPTIONS_INIT;
        o.pgw_schema = "pgw_fbench";
        pgw_pq_drop_result r;
        pgw_error err;
        if (pgw_pq_drop_table(&r, c, "public", b, PGW_REASON_MANUAL, &o, &err) != PGW_OK) {
            fprintf(stderr, "bench: funnel: %s\n", err.message);
            return 1;
        }
        uint64_t t2 = bench_now_ns();
        snapshots += r.snapshot_taken;
        bare[i] = (double)(t1 - t0) / 1e3;
        funnel[i] = (double)(t2 - t1) / 1e3;
    }
    double mb = bench_median(bare, PAIRS), mf = bench_median(funnel, PAIRS);
    printf("pgwitness %s — drop funnel benchmark, PostgreSQL %d, %d pairs of 20-column tables\n",
           pgw_version(), PQserverVersion(c), PAIRS);
    printf("bare DROP TABLE:  median %8.1f us   p90 %8.1f us\n", mb, bench_percentile(bare, PAIRS, 90));
    printf("drop funnel:      median %8.1f us   p90 %8.1f us   (%zu/%d with snapshot)\n", mf,
           bench_percentile(funnel, PAIRS, 90), snapshots, PAIRS);
    printf("median ratio:     %8.2fx\n", mf / mb);
    bench_exec(c, "SET client_min_messages = warning; DROP SCHEMA pgw_fbench CASCADE");
    PQfinish(c);
    return 0;
}
