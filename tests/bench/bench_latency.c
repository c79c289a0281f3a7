/*
 * tests/bench/bench_latency.c — commit → runner marked dirty (issue 6): a
 * writer thread commits single-row UPDATEs of a watched table at a fixed
 * rate (1,000 per second by default), a listener thread waits on the LISTEN
 * socket (poll), decodes each notification and matches it against an index
 * holding the subscription the row belongs to. For each write, the time
 * from the writer's commit acknowledgement (and, as an upper bound, from
 * sending the statement) to the moment the runner is dirty. Prints p50,
 * p90, p99 and the maximum. Against the server in the PG* environment
 * (tests/bench/run-pg). PGW_BENCH_RATE and PGW_BENCH_SECONDS override the
 * defaults (1000 writes/s, 5 s).
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_pq.h"
#include "bench_util.h"
#include "pgwitness/pgwitness-pq.h"

#define ROWS 100

static long n_writes;
static uint64_t *t_sent, *t_acked, *t_marked;
static atomic_int writer_done;
static pgw_runner_id runners[ROWS + 1];

typedef struct lctx {
    pgw_pq_listener *l;
    pgw_index *idx;
    long seen;
} lctx;

/* Called after the write set was matched: the runner of the row is dirty
 * now. The write's sequence number is its new value of v. */
static void on_write(pgw_pq_tenant_id t, const pgw_write *w, void *ud)
{
    (void)t;
    uint64_t now = bench_now_ns();
    lctx *x = ud;
    char *json = NULL;
    if (pgw_write_to_json(&json, NULL, w, NULL) != PGW_OK)
        return;
    const char *v = strstr(json, "\"new\":[{\"v\":\"");
    if (v) {
        long k = atol(v + 13);
        if (k >= 0 && k < n_writes) {
            /* Confirm the runner is marked, then take it, as a host would. */
            pgw_dirty d;
            while (pgw_index_pop_dirty(&d, x->idx) == PGW_OK) {
                t_marked[k] = now;
                pgw_index_ack_unknown(x->idx, d.runner, NULL);
            }
            x->seen++;
        }
    }
    pgw_free(json);
}

static void *listener_main(void *arg)
{
    lctx *x = arg;
    while (!atomic_load(&writer_done) || x->seen < n_writes) {
        pgw_pq_listener_socket sk[1];
        size_t n;
        pgw_pq_listener_sockets(&n, sk, 1, x->l, NULL);
        struct pollfd p = {n ? sk[0].fd : -1, POLLIN, 0};
        if (poll(&p, n ? 1 : 0, 50) > 0)
            pgw_pq_listener_process(x->l, p.fd, PGW_PQ_WAIT_READ, NULL);
        pgw_pq_listener_tick(NULL, x->l, NULL);
        if (atomic_load(&writer_done) == 2)
            break;
    }
    return NULL;
}

static void sleep_until(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

int main(void)
{
    const char *rate_env = getenv("PGW_BENCH_RATE");
    const char *secs_env = getenv("PGW_BENCH_SECONDS");
    int rate = rate_env ? atoi(rate_env) : 1000;
    int seconds = secs_env ? atoi(secs_env) : 5;
    if (rate < 1 || seconds < 1)
        return 2;
    n_writes = (long)rate * seconds;
    PGconn *c = PQconnectdb("");
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "bench-latency: no server (run tests/bench/run-pg): %s",
                PQerrorMessage(c));
        return 1;
    }
    bench_exec(c, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS pgwitness CASCADE; "
            "DROP TABLE IF EXISTS bench_latency; "
            "CREATE TABLE bench_latency (id int PRIMARY KEY, v bigint, note text); "
            "INSERT INTO bench_latency SELECT g, -1, 'n' FROM generate_series(1, 100) g");
    if (pgw_pq_install(NULL, c, NULL, NULL) != PGW_OK)
        return 1;
    static const char *const vals[] = {"v"};
    pgw_pq_watch_options wo = PGW_PQ_WATCH_OPTIONS_INIT;
    wo.value_columns = vals;
    wo.n_value_columns = 1;
    pgw_error err;
    if (pgw_pq_watch_table(c, "public", "bench_latency", &wo, &err) != PGW_OK) {
        fprintf(stderr, "bench-latency: %s\n", err.message);
        return 1;
    }
    const char *db = PQdb(c);

    /* One subscription per row (row-aware: each write marks one runner). */
    lctx x = {NULL, NULL, 0};
    pgw_index_new(&x.idx, NULL, NULL);
    for (int i = 1; i <= ROWS; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"scope\":{\"project\":\"b\",\"tenant\":\"t\",\"database\":\"%s\"},"
                 "\"query\":\"row%d\",\"tables\":[{\"schema\":\"public\",\"table\":"
                 "\"bench_latency\",\"columns\":[\"id\",\"v\"],\"filters\":[{\"column\":\"id\","
                 "\"op\":\"eq\",\"values\":[\"%d\"]}]}],\"result_ids\":[\"%d\"]}",
                 db, i, i, i);
        pgw_deps *d = NULL;
        if (pgw_deps_from_json(&d, json, strlen(json), &err) != PGW_OK) {
            fprintf(stderr, "bench-latency: %s\n", err.message);
            return 1;
        }
        pgw_index_register(&runners[i], x.idx, d, NULL);
        pgw_deps_free(d);
    }
    pgw_pq_listener_options o = PGW_PQ_LISTENER_OPTIONS_INIT;
    o.index = x.idx;
    o.on_write = on_write;
    o.userdata = &x;
    pgw_pq_listener_new(&x.l, &o, NULL);
    pgw_scope scope = {"b", "t", db};
    pgw_pq_tenant_id t;
    char ci[256];
    snprintf(ci, sizeof ci, "dbname=%s", db);
    if (pgw_pq_listener_add_tenant(&t, x.l, &scope, ci, &err) != PGW_OK) {
        fprintf(stderr, "bench-latency: %s\n", err.message);
        return 1;
    }
    pgw_pq_listener_touch(x.l, t, NULL);
    pgw_pq_tenant_info ti;
    do {
        pgw_pq_listener_run(x.l, 10, NULL);
        pgw_pq_listener_tenant(&ti, x.l, t, NULL);
    } while (ti.state != PGW_PQ_TENANT_LISTENING);
    pgw_dirty d;
    while (pgw_index_pop_dirty(&d, x.idx) == PGW_OK)
        pgw_index_ack_unknown(x.idx, d.runner, NULL);

    t_sent = calloc((size_t)n_writes, sizeof *t_sent);
    t_acked = calloc((size_t)n_writes, sizeof *t_acked);
    t_marked = calloc((size_t)n_writes, sizeof *t_marked);
    pthread_t th;
    pthread_create(&th, NULL, listener_main, &x);

    /* The writer: one autocommit UPDATE every 1/rate s. */
    uint64_t period = 1000000000u / (uint64_t)rate, start = bench_now_ns() + 20000000u;
    long late = 0;
    for (long k = 0; k < n_writes; k++) {
        uint64_t due = start + (uint64_t)k * period;
        if (bench_now_ns() < due)
            sleep_until(due);
        else if (bench_now_ns() > due + period)
            late++;
        char sql[128];
        snprintf(sql, sizeof sql, "UPDATE bench_latency SET v = %ld WHERE id = %ld", k,
                 k % ROWS + 1);
        t_sent[k] = bench_now_ns();
        bench_exec(c, sql);
        t_acked[k] = bench_now_ns();
    }
    uint64_t wall = bench_now_ns() - start;
    atomic_store(&writer_done, 1);
    uint64_t give_up = bench_now_ns() + 5000000000u;
    while (x.seen < n_writes && bench_now_ns() < give_up) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&writer_done, 2);
    pthread_join(th, NULL);

    double *from_ack = calloc((size_t)n_writes, sizeof(double));
    double *from_sent = calloc((size_t)n_writes, sizeof(double));
    size_t m = 0, negative = 0;
    for (long k = 0; k < n_writes; k++) {
        if (!t_marked[k])
            continue;
        from_ack[m] = ((double)t_marked[k] - (double)t_acked[k]) / 1e6;
        from_sent[m] = ((double)t_marked[k] - (double)t_sent[k]) / 1e6;
        negative += from_ack[m] < 0;
        m++;
    }
    printf("commit -> runner marked dirty: %ld single-row UPDATEs at %d/s for %d s "
           "(achieved %.0f/s, %ld late), %zu marked of %ld\n",
           n_writes, rate, seconds, (double)n_writes / ((double)wall / 1e9), late, m, n_writes);
    if (m) {
        double max_a = 0, max_s = 0;
        for (size_t i = 0; i < m; i++) {
            max_a = from_ack[i] > max_a ? from_ack[i] : max_a;
            max_s = from_sent[i] > max_s ? from_sent[i] : max_s;
        }
        printf("  from the commit acknowledgement: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, "
               "max %.3f ms (%zu marked before the writer saw its acknowledgement)\n",
               bench_percentile(from_ack, m, 50), bench_percentile(from_ack, m, 90),
               bench_percentile(from_ack, m, 99), max_a, negative);
        printf("  from sending the statement (upper bound, includes executing it): p50 %.3f "
               "ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n",
               bench_percentile(from_sent, m, 50), bench_percentile(from_sent, m, 90),
               bench_percentile(from_sent, m, 99), max_s);
    }
    free(from_ack);
    free(from_sent);
    free(t_sent);
    free(t_acked);
    free(t_marked);
    pgw_pq_listener_free(x.l);
    pgw_index_free(x.idx);
    bench_exec(c, "DROP TABLE bench_latency");
    PQfinish(c);
    return m == (size_t)n_writes ? 0 : 1;
}
