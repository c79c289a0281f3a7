/*
 * tests/bench/bench_stream.c — writer throughput with each write source
 * (issue 15): pgbench TPS with no source, with the stream (logical
 * decoding, pgoutput) under REPLICA IDENTITY DEFAULT and under FULL on the
 * written tables, and with the statement triggers, in one run, same
 * settings, interleaved rounds (A B C D A B C D ...), against the server
 * in the PG* environment (tests/bench/run-pg starts one).
 *
 * pgbench -i -s 10, a warm-up round with no source (not counted), then
 * ROUNDS times the four sources, each a
 * `pgbench -n -c 4 -j 2 -T SECONDS` (TPC-B-like: per transaction three
 * UPDATEs and one INSERT). pgbench_history has no primary key, which the
 * stream needs for row IDs (and DEFAULT needs for a replica identity): the
 * set-up gives it one (hid, an identity column pgbench's INSERT leaves to
 * its default), for every source alike.
 *
 * Sources, switched between rounds (outside the timed part):
 *   no source       nothing watched, REPLICA IDENTITY DEFAULT
 *   stream DEFAULT  the four tables in the publication
 *                   (pgw_pq_stream_watch_table), REPLICA IDENTITY DEFAULT
 *   stream FULL     the same with REPLICA IDENTITY FULL: the writers log
 *                   every old row in full
 *   triggers        the four tables watched by the statement triggers
 *                   (pgw_pq_watch_table), REPLICA IDENTITY DEFAULT
 * During a source's round its tenant is consumed as a host would: a
 * listener with that one tenant (a stream tenant on a temporary slot,
 * confirming every second; or the triggers' LISTEN tenant) runs on a
 * thread of its own in this process and feeds an index holding one
 * subscription per table, whose dirty runners it takes and acknowledges.
 * After pgbench ends the round waits until the source has delivered
 * everything (the stream: until it has received the WAL up to where the
 * writers got, pg_current_wal_insert_lsn(); printed as "caught up after");
 * then the tenant is removed and its walsender gone, which drops the
 * temporary slot, so no round's WAL is kept for the next one. Every round
 * starts with a CHECKPOINT.
 *
 * Prints every round's TPS and its ratio to that round's no source, the
 * medians per source with their ratios to no source, and the median of
 * each source's per-round ratios (steadier when the load of a shared
 * machine drifts between rounds). On Linux each round also says where the CPU went, per
 * transaction: the backends that served pgbench (what the postmaster
 * reaped, less the source's own process), the source's server process
 * (the walsender, or the LISTEN backend), the listener (this process) and
 * pgbench (/proc/<pid>/stat, getrusage; 10 ms resolution per round). The
 * machine's cores are shared by all of them: the walsender decodes on the
 * same cores the writers use.
 *
 * PGW_BENCH_SECONDS and PGW_BENCH_ROUNDS override the defaults (8 s, 3
 * rounds). A program of its own rather than more rounds of bench-triggers:
 * the stream needs what would change the workload bench-triggers has
 * always measured (a primary key on pgbench_history, replica identities,
 * a publication, a slot per round), and bench-triggers' rounds (none, the
 * triggers, only pg_notify, the floor of any PL/pgSQL statement trigger)
 * keep their meaning and their length; the triggers run here too, so the
 * two sources compare in one run.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_listen.h"
#include "bench_pq.h"
#include "bench_util.h"
#include "pgwitness/pgwitness-pq.h"

#define DB "pgw_bench_stream"
#define MAX_ROUNDS 20

static const char *const TABLES[] = {"pgbench_accounts", "pgbench_tellers", "pgbench_branches",
                                     "pgbench_history"};

typedef enum source { NONE, STREAM_DEFAULT, STREAM_FULL, TRIGGERS, N_SOURCES } source;

static const char *const SOURCE_NAME[N_SOURCES] = {"no source", "stream DEFAULT", "stream FULL",
                                                   "triggers"};

static const pgw_scope SCOPE = {"b", "t", DB};

/* Puts the tables in the state a source needs, from any other. */
static void set_source(PGconn *c, source s)
{
    pgw_error err;
    for (int i = 0; i < 4; i++) {
        char sql[256];
        if (pgw_pq_unwatch_table(NULL, c, "public", TABLES[i], &err) != PGW_OK) {
            fprintf(stderr, "bench-stream: unwatch %s: %s\n", TABLES[i], err.message);
            exit(1);
        }
        bench_stream_unwatch(c, "public", TABLES[i]);
        snprintf(sql, sizeof sql, "ALTER TABLE %s REPLICA IDENTITY %s", TABLES[i],
                 s == STREAM_FULL ? "FULL" : "DEFAULT");
        bench_exec(c, sql);
        int rc = PGW_OK;
        if (s == TRIGGERS)
            rc = pgw_pq_watch_table(c, "public", TABLES[i], NULL, &err);
        else if (s == STREAM_DEFAULT || s == STREAM_FULL)
            rc = pgw_pq_stream_watch_table(c, "public", TABLES[i], NULL, &err);
        if (rc != PGW_OK) {
            fprintf(stderr, "bench-stream: watch %s: %s\n", TABLES[i], err.message);
            exit(1);
        }
    }
}

/* Where a round's CPU went, in seconds. */
typedef struct cpu {
    double server, source, listener, client;
} cpu;

typedef struct round {
    double tps;
    long tx;
    cpu used;
    /* the stream's rounds */
    double catch_up_ms;
    pgw_pq_stream_stats st;
    char slot[64];
} round;

typedef struct bench {
    PGconn *c;
    long postmaster;
    pgw_pq_listener *l;
    pgw_index *idx;
    char log[128];
    int seconds;
} bench;

static int slots_of_db(PGconn *c)
{
    char v[32];
    return atoi(bench_value(c,
                            "SELECT count(*) FROM pg_replication_slots "
                            "WHERE database = current_database()",
                            v, sizeof v));
}

static round run_round(bench *b, source s)
{
    round r;
    memset(&r, 0, sizeof r);
    bench_exec(b->c, "CHECKPOINT");
    pgw_pq_tenant_id t = 0;
    long backend = 0;
    if (s != NONE) {
        pgw_pq_stream_options so = PGW_PQ_STREAM_OPTIONS_INIT;
        so.status_interval_ms = 1000;
        t = bench_tenant_open(b->l, b->idx, s == TRIGGERS ? BENCH_TRIGGERS : BENCH_STREAM,
                              &SCOPE, "dbname=" DB, &so);
        backend = bench_tenant_backend(b->l, t);
    }
    double server0 = bench_proc_cpu(b->postmaster, true),
           source0 = bench_proc_cpu(backend, false), self0 = bench_rusage_cpu(RUSAGE_SELF),
           client0 = bench_rusage_cpu(RUSAGE_CHILDREN);
    bench_consumer cons;
    if (s != NONE)
        bench_consumer_start(&cons, b->l, b->idx, t, s != TRIGGERS);

    char secs[16];
    snprintf(secs, sizeof secs, "%d", b->seconds);
    char *args[] = {(char *)bench_pgbench_path(), "-n", "-c", "4", "-j", "2", "-T", secs,
                    (char *)DB, NULL};
    if (!bench_wait(bench_spawn(args, b->log))) {
        fprintf(stderr, "bench-stream: pgbench failed, see %s\n", b->log);
        exit(1);
    }
    double source_cpu = 0, source_life = 0;
    if (s != NONE) {
        uint64_t waited = bench_consumer_sync(&cons, bench_wal_insert_lsn(b->c));
        r.catch_up_ms = (double)waited / 1e6;
        bench_consumer_stop(&cons);
        bench_wait_backends_gone(b->c, "pgbench");
        source_life = bench_proc_cpu(backend, false);
        source_cpu = source_life - source0;
        if (s != TRIGGERS) {
            pgw_pq_listener_stream_stats(&r.st, b->l, t, NULL);
            snprintf(r.slot, sizeof r.slot, "%s", r.st.slot);
        }
        if (!bench_tenant_close(b->l, t, backend)) {
            fprintf(stderr, "bench-stream: the source's server process %ld did not end\n",
                    backend);
            exit(1);
        }
        for (int i = 0; i < 500 && slots_of_db(b->c) > 0; i++)
            bench_sleep_ms(10);
        if (slots_of_db(b->c) > 0) {
            fprintf(stderr, "bench-stream: a replication slot outlived its round\n");
            exit(1);
        }
    }
    if (s == NONE)
        bench_wait_backends_gone(b->c, "pgbench");
    r.tps = bench_pgbench_tps(b->log, &r.tx);
    r.used.source = source_cpu;
    /* The source's process was reaped during the round: its CPU, over its
     * whole life (its set-up too), is in the postmaster's children's now. */
    r.used.server = bench_proc_cpu(b->postmaster, true) - server0 - source_life;
    r.used.listener = bench_rusage_cpu(RUSAGE_SELF) - self0;
    r.used.client = bench_rusage_cpu(RUSAGE_CHILDREN) - client0;
    return r;
}

static void print_round(const bench *b, source s, const round *r, double base)
{
    printf("  %-15s %5.0f tps", SOURCE_NAME[s], r->tps);
    if (s != NONE)
        printf(" (%.2f)", r->tps / base);
    if (r->tx > 0 && b->postmaster > 0) {
        double k = 1e6 / (double)r->tx;
        printf(" [CPU per transaction: server %.0f us", r->used.server * k);
        if (s != NONE)
            printf(", %s %.0f us, listener %.0f us", s == TRIGGERS ? "LISTEN backend" : "walsender",
                   r->used.source * k, r->used.listener * k);
        printf(", pgbench %.0f us]", r->used.client * k);
    }
    printf("\n");
    if (s == STREAM_DEFAULT || s == STREAM_FULL)
        printf("  %15s %ld pgbench transactions; the stream decoded %llu transactions, %llu "
               "messages, %llu write sets, sent %llu status updates; caught up %.0f ms after "
               "pgbench ended; slot %s dropped\n",
               "", r->tx, (unsigned long long)r->st.transactions,
               (unsigned long long)r->st.messages, (unsigned long long)r->st.writes,
               (unsigned long long)r->st.status_updates, r->catch_up_ms, r->slot);
}

int main(void)
{
    const char *secs_env = getenv("PGW_BENCH_SECONDS");
    const char *rounds_env = getenv("PGW_BENCH_ROUNDS");
    bench b;
    memset(&b, 0, sizeof b);
    b.seconds = secs_env ? atoi(secs_env) : 8;
    int rounds = rounds_env ? atoi(rounds_env) : 3;
    if (b.seconds < 1 || rounds < 1 || rounds > MAX_ROUNDS)
        return 2;
    PGconn *admin = PQconnectdb("dbname=postgres options=-cclient_min_messages=warning");
    if (PQstatus(admin) != CONNECTION_OK) {
        fprintf(stderr, "bench-stream: no server (run tests/bench/run-pg): %s",
                PQerrorMessage(admin));
        return 1;
    }
    char wal_level[32];
    if (strcmp(bench_value(admin, "SHOW wal_level", wal_level, sizeof wal_level), "logical")) {
        printf("bench-stream: wal_level is %s, the stream needs logical: skipped\n", wal_level);
        PQfinish(admin);
        return 0;
    }
    bench_exec(admin, "DROP DATABASE IF EXISTS " DB " WITH (FORCE)");
    bench_exec(admin, "CREATE DATABASE " DB);
    snprintf(b.log, sizeof b.log, "/tmp/pgw-bench-stream-%ld.log", (long)getpid());
    {
        char *args[] = {(char *)bench_pgbench_path(), "-i", "-q", "-s", "10", (char *)DB, NULL};
        if (!bench_wait(bench_spawn(args, b.log))) {
            fprintf(stderr, "bench-stream: pgbench -i failed, see %s\n", b.log);
            return 1;
        }
    }
    b.c = PQconnectdb("dbname=" DB " options=-cclient_min_messages=warning");
    pgw_error err;
    if (PQstatus(b.c) != CONNECTION_OK || pgw_pq_install(NULL, b.c, NULL, &err) != PGW_OK) {
        fprintf(stderr, "bench-stream: install: %s\n",
                PQstatus(b.c) != CONNECTION_OK ? PQerrorMessage(b.c) : err.message);
        return 1;
    }
    bench_exec(b.c, "ALTER TABLE pgbench_history "
                    "ADD COLUMN hid bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
    b.postmaster = bench_parent_pid(PQbackendPID(b.c));

    pgw_index_new(&b.idx, NULL, NULL);
    bench_subscribe_tables(b.idx, DB, TABLES, 4);
    b.l = bench_listener_new(b.idx, NULL, NULL);

    printf("pgbench TPC-B-like, scale 10, 4 clients, 2 threads, %d s per round, %d rounds of "
           "each source, interleaved; each source's tenant is consumed on a thread of this "
           "process (the stream: a temporary slot, dropped after its round)\n",
           b.seconds, rounds);
    {
        /* The first pgbench after the set-up runs on cold caches: not
         * counted. */
        set_source(b.c, NONE);
        round w = run_round(&b, NONE);
        printf("warm-up (not counted): no source %.0f tps\n", w.tps);
    }
    double tps[N_SOURCES][MAX_ROUNDS];
    for (int k = 0; k < rounds; k++) {
        printf("round %d:\n", k + 1);
        for (source s = NONE; s < N_SOURCES; s++) {
            set_source(b.c, s);
            round r = run_round(&b, s);
            tps[s][k] = r.tps;
            print_round(&b, s, &r, tps[NONE][k]);
            fflush(stdout);
        }
    }
    set_source(b.c, NONE);
    /* The load of a shared machine drifts between rounds: each round's
     * ratio compares sources that ran seconds apart. */
    double ratio[N_SOURCES][MAX_ROUNDS];
    for (source s = STREAM_DEFAULT; s < N_SOURCES; s++)
        for (int k = 0; k < rounds; k++)
            ratio[s][k] = tps[s][k] / tps[NONE][k];
    double med[N_SOURCES]; /* sorts tps[s] */
    for (source s = NONE; s < N_SOURCES; s++)
        med[s] = bench_median(tps[s], (size_t)rounds);
    printf("median: no source %.0f tps; stream DEFAULT %.0f tps, ratio %.2f (target >= 0.90); "
           "stream FULL %.0f tps, ratio %.2f (target >= 0.85); triggers %.0f tps, ratio %.2f\n",
           med[NONE], med[STREAM_DEFAULT], med[STREAM_DEFAULT] / med[NONE], med[STREAM_FULL],
           med[STREAM_FULL] / med[NONE], med[TRIGGERS], med[TRIGGERS] / med[NONE]);
    printf("median of the rounds' own ratios: stream DEFAULT %.2f, stream FULL %.2f, triggers "
           "%.2f\n",
           bench_median(ratio[STREAM_DEFAULT], (size_t)rounds),
           bench_median(ratio[STREAM_FULL], (size_t)rounds),
           bench_median(ratio[TRIGGERS], (size_t)rounds));
    unlink(b.log);
    pgw_pq_listener_free(b.l);
    pgw_index_free(b.idx);
    PQfinish(b.c);
    bench_exec(admin, "DROP DATABASE IF EXISTS " DB " WITH (FORCE)");
    PQfinish(admin);
    return 0;
}
