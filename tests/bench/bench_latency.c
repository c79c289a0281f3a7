/*
 * tests/bench/bench_latency.c — commit → runner dirty (issues 6 and 15),
 * for the statement triggers and for the stream side by side in one run,
 * against the server in the PG* environment (tests/bench/run-pg).
 *
 * A writer (this program's main thread, its own connection) commits
 * single-row UPDATEs of a watched table at a fixed rate (1,000 per second
 * by default), each an autocommit `UPDATE bench_latency SET v = <k> WHERE
 * id = <k % 100 + 1>`. A listener with one tenant of the source under test
 * (the triggers' LISTEN tenant, or a stream tenant on a temporary slot)
 * runs on a thread of its own (5 ms slices of pgw_pq_listener_run, woken by
 * poll as soon as its socket is readable) and feeds an index holding one
 * subscription per row (id = n, result ID n, value column v), so each
 * write marks exactly one runner.
 *
 * The figure, per write k:
 *   latency = t_dirty - t_commit
 *   t_commit  CLOCK_MONOTONIC read by the writer's thread as soon as its
 *             PQexec() of the UPDATE returned: the server acknowledged the
 *             commit (under synchronous_commit = on, after flushing its
 *             WAL). The commit happened before, so this is the latest
 *             moment it can be said to have committed.
 *   t_dirty   CLOCK_MONOTONIC read by the listener's thread on entering
 *             on_write() for the write set carrying v = k; the listener
 *             calls on_write() right after pgw_index_match() marked the
 *             row's runner dirty (the callback then checks it is in the
 *             dirty queue, and takes it as a host would).
 * Both threads read one clock. t_dirty can precede t_commit (counted as
 * "early"): the listener can be told of the commit before the writer's
 * thread has run again. Also printed: the latency from just before the
 * writer sent the UPDATE, an upper bound that includes executing it; which
 * write had the maximum (a stall of the machine shows as a run of late
 * writes around it); and the writes the writer started over one period
 * late ("late": the writer, not the source, fell behind the rate).
 *
 * Runs, each PGW_BENCH_SECONDS (default 5) at PGW_BENCH_RATE (default 1000)
 * writes/s after 100 ms of writes not counted (the tenant's first writes),
 * the triggers then the stream for each setting:
 *   synchronous_commit = on  for the writer (SET in its session), with the
 *                            server's wal_writer_delay at 10 ms and 200 ms
 *   synchronous_commit = off the same
 * wal_writer_delay is set with ALTER SYSTEM and pg_reload_conf() (10 ms:
 * what the throwaway cluster sets; 200 ms: PostgreSQL's default), and
 * restored at the end (also when the program exits early). It needs a
 * superuser; without one only the server's current setting is measured.
 * Why the settings matter to the stream and not to the triggers is printed
 * with the figures.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_listen.h"
#include "bench_pq.h"
#include "bench_util.h"
#include "pgwitness/pgwitness-pq.h"

#define ROWS 100

static const char *const SOURCE_NAME[] = {"triggers", "stream"};

/* One run's records, shared by the writer and the listener's thread. */
typedef struct run {
    long n;                  /* writes */
    uint64_t *t_sent, *t_acked, *t_marked;
    atomic_long seen;        /* writes whose runner was marked */
    pgw_index *idx;
} run;

static run *g_run; /* the run in progress, for on_write */

/* The write set's new value of v: the write's sequence number. */
static void on_write(pgw_pq_tenant_id t, const pgw_write *w, void *ud)
{
    (void)t;
    (void)ud;
    uint64_t now = bench_now_ns();
    run *r = g_run;
    if (!r)
        return;
    char *json = NULL;
    if (pgw_write_to_json(&json, NULL, w, NULL) != PGW_OK)
        return;
    const char *v = strstr(json, "\"new\":[{\"v\":\"");
    /* Confirm the runner is marked, then take it, as a host would. */
    bool marked = false;
    pgw_dirty d;
    while (pgw_index_pop_dirty(&d, r->idx) == PGW_OK) {
        marked = true;
        pgw_index_ack_unknown(r->idx, d.runner, NULL);
    }
    long k = v ? atol(v + 13) : -1;
    if (k >= 0 && k < r->n) {
        if (marked)
            r->t_marked[k] = now;
        atomic_fetch_add(&r->seen, 1);
    }
    pgw_free(json);
}

static void sleep_until(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

/* ------------------------------------------------------------------ */
/* wal_writer_delay                                                    */

static PGconn *g_admin;
static char g_wwd_orig[32];
static bool g_wwd_in_auto, g_wwd_changed;

/* Sets wal_writer_delay server-wide (NULL: back to what it was) and waits
 * until a new session sees it; false when the server refused. */
static bool set_wal_writer_delay(const char *value)
{
    char sql[128];
    if (value)
        snprintf(sql, sizeof sql, "ALTER SYSTEM SET wal_writer_delay = '%s'", value);
    else if (g_wwd_in_auto)
        snprintf(sql, sizeof sql, "ALTER SYSTEM SET wal_writer_delay = '%s'", g_wwd_orig);
    else
        snprintf(sql, sizeof sql, "ALTER SYSTEM RESET wal_writer_delay");
    PGresult *r = PQexec(g_admin, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        fprintf(stderr, "bench-latency: %s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    if (!ok)
        return false;
    g_wwd_changed = value != NULL;
    bench_exec(g_admin, "SELECT pg_reload_conf()");
    const char *want = value ? value : g_wwd_orig;
    for (int i = 0; i < 500; i++) {
        PGconn *c = PQconnectdb("");
        char now[32] = "";
        if (PQstatus(c) == CONNECTION_OK)
            bench_value(c, "SHOW wal_writer_delay", now, sizeof now);
        PQfinish(c);
        if (strcmp(now, want) == 0) {
            bench_sleep_ms(100); /* the WAL writer's own reload */
            return true;
        }
        bench_sleep_ms(10);
    }
    fprintf(stderr, "bench-latency: wal_writer_delay did not become %s\n", want);
    exit(1);
}

static void restore_wal_writer_delay(void)
{
    if (g_wwd_changed && g_admin && PQstatus(g_admin) == CONNECTION_OK)
        set_wal_writer_delay(NULL);
}

/* ------------------------------------------------------------------ */
/* one run                                                             */

typedef struct figures {
    size_t marked, early;
    long max_at; /* the write of the maximum, counted from the first measured one */
    long late;
    double rate;
    double p50, p90, p99, max;     /* from the commit acknowledgement, ms */
    double s50, s99;               /* from sending the statement, ms */
} figures;

typedef struct bench {
    PGconn *c; /* the writer, also the one that watches */
    const char *db;
    pgw_pq_listener *l;
    pgw_index *idx;
    int rate, seconds;
} bench;

static void set_source(bench *b, bench_source src)
{
    static const char *const vals[] = {"v"};
    pgw_error err;
    if (pgw_pq_unwatch_table(NULL, b->c, "public", "bench_latency", &err) != PGW_OK) {
        fprintf(stderr, "bench-latency: unwatch: %s\n", err.message);
        exit(1);
    }
    bench_stream_unwatch(b->c, "public", "bench_latency");
    int rc;
    if (src == BENCH_TRIGGERS) {
        pgw_pq_watch_options wo = PGW_PQ_WATCH_OPTIONS_INIT;
        wo.value_columns = vals;
        wo.n_value_columns = 1;
        rc = pgw_pq_watch_table(b->c, "public", "bench_latency", &wo, &err);
    } else {
        pgw_pq_stream_watch_options wo = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
        wo.value_columns = vals;
        wo.n_value_columns = 1;
        rc = pgw_pq_stream_watch_table(b->c, "public", "bench_latency", &wo, &err);
    }
    if (rc != PGW_OK) {
        fprintf(stderr, "bench-latency: watch: %s\n", err.message);
        exit(1);
    }
}

static figures run_one(bench *b, bench_source src, const char *sync)
{
    set_source(b, src);
    char sql[128];
    snprintf(sql, sizeof sql, "SET synchronous_commit = %s", sync);
    bench_exec(b->c, sql);
    pgw_scope scope = {"b", "t", b->db};
    char ci[256];
    snprintf(ci, sizeof ci, "dbname=%s", b->db);
    pgw_pq_tenant_id t = bench_tenant_open(b->l, b->idx, src, &scope, ci, NULL);
    long backend = bench_tenant_backend(b->l, t);

    run r;
    memset(&r, 0, sizeof r);
    long warm = b->rate / 10; /* 100 ms of writes, not counted */
    r.n = warm + (long)b->rate * b->seconds;
    r.idx = b->idx;
    r.t_sent = calloc((size_t)r.n, sizeof *r.t_sent);
    r.t_acked = calloc((size_t)r.n, sizeof *r.t_acked);
    r.t_marked = calloc((size_t)r.n, sizeof *r.t_marked);
    atomic_init(&r.seen, 0);
    g_run = &r;
    bench_consumer cons;
    bench_consumer_start(&cons, b->l, NULL, t, src == BENCH_STREAM);

    /* The writer: one autocommit UPDATE every 1/rate s. */
    figures f;
    memset(&f, 0, sizeof f);
    uint64_t period = 1000000000u / (uint64_t)b->rate, start = bench_now_ns() + 20000000u;
    for (long k = 0; k < r.n; k++) {
        uint64_t due = start + (uint64_t)k * period;
        if (bench_now_ns() < due)
            sleep_until(due);
        else if (bench_now_ns() > due + period && k >= warm)
            f.late++;
        snprintf(sql, sizeof sql, "UPDATE bench_latency SET v = %ld WHERE id = %ld", k,
                 k % ROWS + 1);
        r.t_sent[k] = bench_now_ns();
        bench_exec(b->c, sql);
        r.t_acked[k] = bench_now_ns();
    }
    uint64_t wall = bench_now_ns() - start;
    f.rate = (double)r.n / ((double)wall / 1e9);
    uint64_t give_up = bench_now_ns() + 5000000000u;
    while (atomic_load(&r.seen) < r.n && bench_now_ns() < give_up)
        bench_sleep_ms(10);
    bench_consumer_stop(&cons);
    g_run = NULL;
    bench_tenant_close(b->l, t, backend);
    bench_exec(b->c, "RESET synchronous_commit");

    double *from_ack = calloc((size_t)r.n, sizeof(double));
    double *from_sent = calloc((size_t)r.n, sizeof(double));
    for (long k = warm; k < r.n; k++) {
        if (!r.t_marked[k])
            continue;
        from_ack[f.marked] = ((double)r.t_marked[k] - (double)r.t_acked[k]) / 1e6;
        from_sent[f.marked] = ((double)r.t_marked[k] - (double)r.t_sent[k]) / 1e6;
        f.early += from_ack[f.marked] < 0;
        if (from_ack[f.marked] > f.max) {
            f.max = from_ack[f.marked];
            f.max_at = k - warm;
        }
        f.marked++;
    }
    if (f.marked) {
        f.p50 = bench_percentile(from_ack, f.marked, 50);
        f.p90 = bench_percentile(from_ack, f.marked, 90);
        f.p99 = bench_percentile(from_ack, f.marked, 99);
        f.s50 = bench_percentile(from_sent, f.marked, 50);
        f.s99 = bench_percentile(from_sent, f.marked, 99);
    }
    free(from_ack);
    free(from_sent);
    free(r.t_sent);
    free(r.t_acked);
    free(r.t_marked);
    if (f.marked != (size_t)(r.n - warm))
        fprintf(stderr, "bench-latency: %s: only %zu of %ld writes marked a runner\n",
                SOURCE_NAME[src], f.marked, r.n - warm);
    return f;
}

int main(void)
{
    const char *rate_env = getenv("PGW_BENCH_RATE");
    const char *secs_env = getenv("PGW_BENCH_SECONDS");
    bench b;
    memset(&b, 0, sizeof b);
    b.rate = rate_env ? atoi(rate_env) : 1000;
    b.seconds = secs_env ? atoi(secs_env) : 5;
    if (b.rate < 1 || b.rate > 1000000 || b.seconds < 1)
        return 2;
    b.c = PQconnectdb("");
    if (PQstatus(b.c) != CONNECTION_OK) {
        fprintf(stderr, "bench-latency: no server (run tests/bench/run-pg): %s",
                PQerrorMessage(b.c));
        return 1;
    }
    char wal_level[32];
    if (strcmp(bench_value(b.c, "SHOW wal_level", wal_level, sizeof wal_level), "logical")) {
        printf("bench-latency: wal_level is %s, the stream needs logical: skipped\n", wal_level);
        return 0;
    }
    g_admin = PQconnectdb("");
    bench_value(g_admin, "SHOW wal_writer_delay", g_wwd_orig, sizeof g_wwd_orig);
    {
        PGresult *r = PQexec(g_admin, "SELECT count(*) FROM pg_catalog.pg_file_settings "
                                      "WHERE name = 'wal_writer_delay' "
                                      "AND sourcefile LIKE '%postgresql.auto.conf'");
        g_wwd_in_auto =
            PQresultStatus(r) == PGRES_TUPLES_OK && atoi(PQgetvalue(r, 0, 0)) > 0;
        PQclear(r);
    }
    atexit(restore_wal_writer_delay);

    bench_exec(b.c, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS pgwitness CASCADE; "
                    "DROP TABLE IF EXISTS bench_latency; "
                    "CREATE TABLE bench_latency (id int PRIMARY KEY, v bigint, note text); "
                    "INSERT INTO bench_latency SELECT g, -1, 'n' FROM generate_series(1, 100) g");
    pgw_error err;
    if (pgw_pq_install(NULL, b.c, NULL, &err) != PGW_OK) {
        fprintf(stderr, "bench-latency: install: %s\n", err.message);
        return 1;
    }
    b.db = PQdb(b.c);

    /* One subscription per row (row-aware: each write marks one runner). */
    pgw_index_new(&b.idx, NULL, NULL);
    for (int i = 1; i <= ROWS; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"scope\":{\"project\":\"b\",\"tenant\":\"t\",\"database\":\"%s\"},"
                 "\"query\":\"row%d\",\"tables\":[{\"schema\":\"public\",\"table\":"
                 "\"bench_latency\",\"columns\":[\"id\",\"v\"],\"filters\":[{\"column\":\"id\","
                 "\"op\":\"eq\",\"values\":[\"%d\"]}]}],\"result_ids\":[\"%d\"]}",
                 b.db, i, i, i);
        bench_subscribe(b.idx, json);
    }
    b.l = bench_listener_new(b.idx, on_write, NULL);

    printf("commit -> runner dirty: %d single-row UPDATEs per second for %d s per run; "
           "latency = t_dirty - t_commit (t_commit: the writer's clock as soon as its "
           "autocommit UPDATE returned; t_dirty: the listener thread's clock on entering "
           "on_write, right after pgw_index_match marked the row's runner), in ms\n",
           b.rate, b.seconds);
    printf("  synchronous_commit, wal_writer_delay, source: from the commit p50 p90 p99 max "
           "(#write) | from sending p50 p99 | marked, early, achieved rate, late writes; after "
           "%d writes of warm-up per run, not counted\n",
           b.rate / 10);
    static const char *const delays[] = {"10ms", "200ms"};
    static const char *const syncs[] = {"on", "off"};
    figures fig[2][2][2]; /* [sync][delay][source] */
    int n_delays = 2;
    bool complete = true;
    for (int s = 0; s < 2; s++) {
        for (int d = 0; d < n_delays; d++) {
            const char *delay = delays[d];
            if (!set_wal_writer_delay(delays[d])) {
                /* No superuser: the server's own setting only. */
                n_delays = 1;
                delay = g_wwd_orig;
            }
            for (int src = 0; src < 2; src++) {
                figures *f = &fig[s][d][src];
                *f = run_one(&b, (bench_source)src, syncs[s]);
                complete &= f->marked == (size_t)b.rate * (size_t)b.seconds;
                printf("  %-3s %-5s %-8s  p50 %7.3f  p90 %7.3f  p99 %7.3f  max %7.3f (#%ld) | "
                       "%7.3f %7.3f | %zu/%ld, %zu early, %.0f/s, %ld late\n",
                       syncs[s], delay, SOURCE_NAME[src], f->p50, f->p90, f->p99, f->max,
                       f->max_at,
                       f->s50, f->s99, f->marked, (long)b.rate * b.seconds, f->early, f->rate,
                       f->late);
                fflush(stdout);
            }
        }
    }
    if (n_delays == 2) {
        set_wal_writer_delay(NULL);
        printf("wal_writer_delay restored to %s\n", g_wwd_orig);
    }
    if (n_delays == 2)
        printf("p99 with synchronous_commit = on (wal_writer_delay 10 ms, 200 ms): triggers "
               "%.3f, %.3f ms; stream %.3f, %.3f ms (target <= 5 ms)\n",
               fig[0][0][BENCH_TRIGGERS].p99, fig[0][1][BENCH_TRIGGERS].p99,
               fig[0][0][BENCH_STREAM].p99, fig[0][1][BENCH_STREAM].p99);
    else
        printf("p99 with synchronous_commit = on: triggers %.3f ms, stream %.3f ms (target <= 5 "
               "ms)\n",
               fig[0][0][BENCH_TRIGGERS].p99, fig[0][0][BENCH_STREAM].p99);
    printf(
        "Why the stream differs under off: a walsender decodes only WAL that is flushed. Under "
        "synchronous_commit = on the writer's COMMIT returns once its WAL is flushed, and the "
        "flush wakes the walsender, so the stream sends the transaction at once, whatever "
        "wal_writer_delay is. Under off the COMMIT returns before its WAL is flushed, and the "
        "WAL writer flushes it later: it wakes every wal_writer_delay, and while asynchronous "
        "commits fill WAL pages it writes whole pages and can leave the last one for a later "
        "round, so a commit can wait up to three times wal_writer_delay (PostgreSQL "
        "documentation, \"Asynchronous Commit\"); only then does the stream see it: compare "
        "the 10 ms and 200 ms rows. The triggers' NOTIFY is delivered at commit, flushed or "
        "not: neither setting delays them.\n");
    pgw_pq_listener_free(b.l);
    pgw_index_free(b.idx);
    bench_exec(b.c, "DROP TABLE bench_latency");
    PQfinish(b.c);
    restore_wal_writer_delay();
    PQfinish(g_admin);
    g_admin = NULL;
    return complete ? 0 : 1;
}
