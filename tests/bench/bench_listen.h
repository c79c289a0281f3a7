/*
 * tests/bench/bench_listen.h — a write source's tenant for the benchmarks
 * that compare the triggers with the stream (bench-stream, bench-latency):
 * opening it until writes flow, a consumer thread that runs the listener as
 * a host's would (its own thread, draining the index), waiting until it has
 * read everything, and closing it so that nothing of it is left on the
 * server (its backend or walsender gone, and with it a temporary slot).
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_BENCH_LISTEN_H
#define PGW_BENCH_LISTEN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/pgwitness-pq.h"

typedef enum bench_source {
    BENCH_TRIGGERS, /* statement triggers + NOTIFY: pgw_pq_listener_add_tenant */
    BENCH_STREAM    /* logical decoding: pgw_pq_listener_add_stream */
} bench_source;

/* Adds a tenant of `src` to l (so: stream options, NULL for the defaults;
 * ignored for the triggers), touches it and runs l until it listens or
 * streams; exits 1 when that takes over 30 s. Then drains idx (may be
 * NULL) of the scope reset its connect made. */
pgw_pq_tenant_id bench_tenant_open(pgw_pq_listener *l, pgw_index *idx, bench_source src,
                                   const pgw_scope *scope, const char *conninfo,
                                   const pgw_pq_stream_options *so);

/* The tenant's server process: the LISTEN backend or the walsender. */
long bench_tenant_backend(const pgw_pq_listener *l, pgw_pq_tenant_id t);

/* Removes the tenant, then waits (up to 10 s) until its server process is
 * gone, reaped by the postmaster: its CPU is then in the postmaster's
 * children's, and a temporary slot is dropped. False when it did not go. */
bool bench_tenant_close(pgw_pq_listener *l, pgw_pq_tenant_id t, long backend);

/* A listener feeding idx that never closes an idle tenant, with on_write
 * (may be NULL) called with userdata; exits 1 on failure. */
pgw_pq_listener *bench_listener_new(pgw_index *idx,
                                    void (*on_write)(pgw_pq_tenant_id, const pgw_write *,
                                                     void *),
                                    void *userdata);

/* Registers the subscription a dependency declaration (JSON, inval.h)
 * describes; exits 1 when it does not parse or register. */
pgw_runner_id bench_subscribe(pgw_index *idx, const char *json);

/* One subscription per table (public.<table>, scope {"b", "t", db}), a
 * query reading the whole table. */
void bench_subscribe_tables(pgw_index *idx, const char *db, const char *const *tables,
                            size_t n);

/* Takes every dirty runner of idx and acknowledges it with unknown IDs:
 * what a host does once it has rerun the subscription. */
void bench_drain(pgw_index *idx);

/* A thread that runs a listener (5 ms slices of pgw_pq_listener_run) and
 * drains idx after each, until stopped. Between start and stop, only it
 * touches the listener. */
typedef struct bench_consumer {
    pgw_pq_listener *l;
    pgw_index *idx;          /* may be NULL */
    pgw_pq_tenant_id tenant; /* the one it reports on */
    bool stream;
    pthread_t th;
    atomic_bool stop;
    atomic_uint_fast64_t received_lsn; /* stream: stats.received_lsn */
    atomic_uint_fast64_t delivered;    /* tenant info: notifications (write sets) */
    atomic_uint_fast64_t last_delivery_ns; /* when `delivered` last grew */
} bench_consumer;

void bench_consumer_start(bench_consumer *c, pgw_pq_listener *l, pgw_index *idx,
                          pgw_pq_tenant_id tenant, bool stream);

/* Waits until everything committed before the call is delivered: for the
 * stream, until it has received the WAL up to `lsn` (bench_wal_insert_lsn()
 * of the writer); for the triggers (lsn ignored), until no notification
 * came for 100 ms. Returns the nanoseconds waited; exits 1 after 120 s. */
uint64_t bench_consumer_sync(bench_consumer *c, uint64_t lsn);

void bench_consumer_stop(bench_consumer *c);

#endif
