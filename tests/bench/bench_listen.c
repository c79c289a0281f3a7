/*
 * tests/bench/bench_listen.c — see bench_listen.h.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include "bench_listen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pq.h"
#include "bench_util.h"

void bench_drain(pgw_index *idx)
{
    pgw_dirty d;
    while (idx && pgw_index_pop_dirty(&d, idx) == PGW_OK)
        pgw_index_ack_unknown(idx, d.runner, NULL);
}

pgw_pq_listener *bench_listener_new(pgw_index *idx,
                                    void (*on_write)(pgw_pq_tenant_id, const pgw_write *,
                                                     void *),
                                    void *userdata)
{
    pgw_pq_listener_options o = PGW_PQ_LISTENER_OPTIONS_INIT;
    o.index = idx;
    o.on_write = on_write;
    o.userdata = userdata;
    o.idle_timeout_ms = 0;
    pgw_pq_listener *l = NULL;
    pgw_error err;
    if (pgw_pq_listener_new(&l, &o, &err) != PGW_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    return l;
}

pgw_runner_id bench_subscribe(pgw_index *idx, const char *json)
{
    pgw_deps *d = NULL;
    pgw_runner_id r = 0;
    pgw_error err;
    if (pgw_deps_from_json(&d, json, strlen(json), &err) != PGW_OK ||
        pgw_index_register(&r, idx, d, &err) != PGW_OK) {
        fprintf(stderr, "bench: subscribing %s: %s\n", json, err.message);
        exit(1);
    }
    pgw_deps_free(d);
    return r;
}

void bench_subscribe_tables(pgw_index *idx, const char *db, const char *const *tables,
                            size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"scope\":{\"project\":\"b\",\"tenant\":\"t\",\"database\":\"%s\"},"
                 "\"query\":\"q%zu\",\"tables\":[{\"schema\":\"public\",\"table\":\"%s\"}]}",
                 db, i, tables[i]);
        bench_subscribe(idx, json);
    }
}

pgw_pq_tenant_id bench_tenant_open(pgw_pq_listener *l, pgw_index *idx, bench_source src,
                                   const pgw_scope *scope, const char *conninfo,
                                   const pgw_pq_stream_options *so)
{
    pgw_pq_tenant_id t = 0;
    pgw_error err;
    int rc = src == BENCH_STREAM ? pgw_pq_listener_add_stream(&t, l, scope, conninfo, so, &err)
                                 : pgw_pq_listener_add_tenant(&t, l, scope, conninfo, &err);
    if (rc != PGW_OK) {
        fprintf(stderr, "bench: adding the %s tenant: %s\n",
                src == BENCH_STREAM ? "stream" : "triggers", err.message);
        exit(1);
    }
    pgw_pq_listener_touch(l, t, NULL);
    uint64_t give_up = bench_now_ns() + 30000000000u;
    pgw_pq_tenant_info ti;
    do {
        if (bench_now_ns() > give_up) {
            fprintf(stderr, "bench: the %s tenant did not start in 30 s (%llu failures)\n",
                    src == BENCH_STREAM ? "stream" : "triggers",
                    (unsigned long long)ti.failures);
            exit(1);
        }
        pgw_pq_listener_run(l, 10, NULL);
        pgw_pq_listener_tenant(&ti, l, t, NULL);
    } while (ti.state != PGW_PQ_TENANT_LISTENING);
    bench_drain(idx);
    return t;
}

long bench_tenant_backend(const pgw_pq_listener *l, pgw_pq_tenant_id t)
{
    pgw_pq_tenant_info ti;
    if (pgw_pq_listener_tenant(&ti, l, t, NULL) != PGW_OK)
        return 0;
    return ti.backend_pid;
}

bool bench_tenant_close(pgw_pq_listener *l, pgw_pq_tenant_id t, long backend)
{
    pgw_pq_listener_remove_tenant(l, t, NULL);
    for (int i = 0; i < 1000 && bench_proc_alive(backend); i++)
        bench_sleep_ms(10);
    return !bench_proc_alive(backend);
}

static void publish(bench_consumer *c)
{
    pgw_pq_tenant_info ti;
    if (pgw_pq_listener_tenant(&ti, c->l, c->tenant, NULL) == PGW_OK &&
        ti.notifications != atomic_load(&c->delivered)) {
        atomic_store(&c->delivered, ti.notifications);
        atomic_store(&c->last_delivery_ns, bench_now_ns());
    }
    pgw_pq_stream_stats st;
    if (c->stream && pgw_pq_listener_stream_stats(&st, c->l, c->tenant, NULL) == PGW_OK)
        atomic_store(&c->received_lsn, st.received_lsn);
}

static void *consumer_main(void *arg)
{
    bench_consumer *c = arg;
    while (!atomic_load(&c->stop)) {
        pgw_pq_listener_run(c->l, 5, NULL);
        bench_drain(c->idx);
        publish(c);
    }
    return NULL;
}

void bench_consumer_start(bench_consumer *c, pgw_pq_listener *l, pgw_index *idx,
                          pgw_pq_tenant_id tenant, bool stream)
{
    c->l = l;
    c->idx = idx;
    c->tenant = tenant;
    c->stream = stream;
    atomic_init(&c->stop, false);
    atomic_init(&c->received_lsn, 0);
    atomic_init(&c->delivered, 0);
    atomic_init(&c->last_delivery_ns, bench_now_ns());
    publish(c);
    if (pthread_create(&c->th, NULL, consumer_main, c) != 0) {
        fprintf(stderr, "bench: cannot start the consumer thread\n");
        exit(1);
    }
}

uint64_t bench_consumer_sync(bench_consumer *c, uint64_t lsn)
{
    uint64_t t0 = bench_now_ns(), give_up = t0 + 120000000000u;
    for (;;) {
        uint64_t now = bench_now_ns();
        if (c->stream ? atomic_load(&c->received_lsn) >= lsn
                      : now - atomic_load(&c->last_delivery_ns) >= 100000000u)
            return now - t0;
        if (now > give_up) {
            fprintf(stderr, "bench: the %s did not catch up in 120 s\n",
                    c->stream ? "stream" : "triggers' listener");
            exit(1);
        }
        bench_sleep_ms(1);
    }
}

void bench_consumer_stop(bench_consumer *c)
{
    atomic_store(&c->stop, true);
    pthread_join(c->th, NULL);
}
