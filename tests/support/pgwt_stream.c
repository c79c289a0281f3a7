/*
 * tests/support/pgwt_stream.c — see pgwt_stream.h.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include "pgwt_stream.h"

#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgw_test.h"

const char *pgwt_event_kind_name(pgw_pq_listener_event_kind k)
{
    switch (k) {
    case PGW_PQ_LISTENER_LISTENING: return "LISTENING";
    case PGW_PQ_LISTENER_LOST: return "LOST";
    case PGW_PQ_LISTENER_CLOSED_IDLE: return "CLOSED_IDLE";
    case PGW_PQ_LISTENER_CLOSED_EVICTED: return "CLOSED_EVICTED";
    case PGW_PQ_LISTENER_FALLBACK: return "FALLBACK";
    case PGW_PQ_LISTENER_RESET: return "RESET";
    case PGW_PQ_LISTENER_STREAMING: return "STREAMING";
    case PGW_PQ_LISTENER_SLOT_LOST: return "SLOT_LOST";
    case PGW_PQ_LISTENER_GAP: return "GAP";
    }
    return "?";
}

static void on_event(const pgw_pq_listener_event *ev, void *ud)
{
    pgwt_stream *s = ud;
    if (s->n_events < 256)
        snprintf(s->events[s->n_events++], sizeof s->events[0], "%s %d %d %s",
                 pgwt_event_kind_name(ev->kind), ev->status, ev->reset ? 1 : 0, ev->message);
    switch (ev->kind) {
    case PGW_PQ_LISTENER_STREAMING:
        s->streaming++;
        s->resets += ev->reset;
        break;
    case PGW_PQ_LISTENER_RESET:
        s->resets++;
        break;
    case PGW_PQ_LISTENER_LOST:
        s->lost++;
        break;
    case PGW_PQ_LISTENER_GAP:
        s->gaps++;
        break;
    case PGW_PQ_LISTENER_SLOT_LOST:
        s->slot_lost++;
        break;
    default:
        break;
    }
}

static void on_write(pgw_pq_tenant_id t, const pgw_write *w, void *ud)
{
    (void)t;
    pgwt_stream *s = ud;
    char *json = NULL;
    ck_assert_int_eq(pgw_write_to_json(&json, NULL, w, NULL), PGW_OK);
    const char *body = strstr(json, "\"schema\"");
    char *copy = NULL;
    if (body) {
        copy = malloc(strlen(body) + 2);
        ck_assert_ptr_nonnull(copy);
        copy[0] = '{';
        strcpy(copy + 1, body);
    } else {
        copy = strdup(json); /* a reset: no table */
    }
    pgw_free(json);
    if (s->n_writes == s->cap_writes) {
        s->cap_writes = s->cap_writes ? s->cap_writes * 2 : 64;
        s->writes = realloc(s->writes, s->cap_writes * sizeof *s->writes);
        s->lsns = realloc(s->lsns, s->cap_writes * sizeof *s->lsns);
        ck_assert(s->writes && s->lsns);
    }
    s->lsns[s->n_writes] = (unsigned long long)pgw_write_lsn(w);
    s->writes[s->n_writes++] = copy;
}

pgwt_stream *pgwt_stream_open_db(const char *db, const pgw_scope *scope, const char *slot,
                                 pgw_index *index, const pgw_pq_stream_options *opts)
{
    pgwt_stream *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    s->index = index;
    pgw_pq_listener_options lo = PGW_PQ_LISTENER_OPTIONS_INIT;
    lo.index = index;
    lo.on_event = on_event;
    lo.on_write = on_write;
    lo.userdata = s;
    lo.backoff_initial_ms = 20;
    lo.backoff_max_ms = 200;
    lo.idle_timeout_ms = 0;
    pgw_error err;
    ck_assert_msg(pgw_pq_listener_new(&s->l, &lo, &err) == PGW_OK, "%s", err.message);
    pgw_pq_stream_options so = PGW_PQ_STREAM_OPTIONS_INIT;
    if (opts)
        so = *opts;
    so.slot = slot;
    if (!opts)
        so.status_interval_ms = 100;
    char conninfo[256];
    snprintf(conninfo, sizeof conninfo, "dbname=%s", db);
    ck_assert_msg(pgw_pq_listener_add_stream(&s->tenant, s->l, scope, conninfo, &so, &err) ==
                      PGW_OK,
                  "%s", err.message);
    ck_assert_int_eq(pgw_pq_listener_touch(s->l, s->tenant, NULL), PGW_OK);
    return s;
}

pgwt_stream *pgwt_stream_open(const char *slot, pgw_index *index,
                              const pgw_pq_stream_options *opts)
{
    static const pgw_scope scope = PGWT_STREAM_SCOPE;
    return pgwt_stream_open_db(pgwt_dbname(), &scope, slot, index, opts);
}

void pgwt_stream_close(pgwt_stream *s)
{
    if (!s)
        return;
    pgw_pq_listener_free(s->l);
    for (size_t i = 0; i < s->n_writes; i++)
        free(s->writes[i]);
    free(s->writes);
    free(s->lsns);
    free(s);
}

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void pgwt_stream_run(pgwt_stream *s, int ms)
{
    ck_assert_int_eq(pgw_pq_listener_run(s->l, ms, NULL), PGW_OK);
}

void pgwt_stream_until_streaming(pgwt_stream *s, int n)
{
    long long until = mono_ms() + 20000;
    while (s->streaming < n) {
        ck_assert_msg(mono_ms() < until, "no STREAMING #%d in 20 s (last event: %s)", n,
                      s->n_events ? s->events[s->n_events - 1] : "none");
        pgwt_stream_run(s, 10);
    }
}

/* Waits for the stream's socket (a frame, or a timer) for up to ms, then
 * handles what is ready: returns as soon as something arrived. */
static void wait_and_process(pgwt_stream *s, int ms)
{
    pgw_pq_listener_socket sk[4];
    size_t n;
    ck_assert_int_eq(pgw_pq_listener_sockets(&n, sk, 4, s->l, NULL), PGW_OK);
    ck_assert_uint_le(n, 4);
    struct pollfd p[4];
    for (size_t i = 0; i < n; i++) {
        p[i].fd = sk[i].fd;
        p[i].events = (short)(((sk[i].events & PGW_PQ_WAIT_READ) ? POLLIN : 0) |
                              ((sk[i].events & PGW_PQ_WAIT_WRITE) ? POLLOUT : 0));
        p[i].revents = 0;
    }
    if (poll(p, (nfds_t)n, ms) > 0)
        for (size_t i = 0; i < n; i++)
            if (p[i].revents)
                pgw_pq_listener_process(s->l, p[i].fd, PGW_PQ_WAIT_READ | PGW_PQ_WAIT_WRITE,
                                        NULL);
    ck_assert_int_eq(pgw_pq_listener_tick(NULL, s->l, NULL), PGW_OK);
}

/* The walsender sends only flushed WAL, and a record that no commit
 * follows (an abort, a prune, a running-xacts record) can sit unflushed
 * in a partial page for as long as nothing else flushes it. A transaction
 * with an xid commits synchronously and so flushes everything before it;
 * it has no changes, so it reaches no write set. Run on the writer when it
 * is idle, else on a connection of its own. */
static void flush_wal(PGconn *writer)
{
    static const char sql[] =
        "BEGIN; SET LOCAL synchronous_commit = on; SELECT txid_current(); COMMIT";
    if (PQtransactionStatus(writer) == PQTRANS_IDLE) {
        pgwt_exec(writer, sql);
        return;
    }
    PGconn *c = pgwt_connect();
    pgwt_exec(c, sql);
    PQfinish(c);
}

/* Runs until the stream has read the WAL up to `target`, read on writer
 * with `sql`. A position just past a WAL page's header (24 bytes; 40 at a
 * segment's start) is the page boundary itself: a record that ends on the
 * boundary leaves the insert position after the next page's header, but
 * the server's end of WAL at the boundary. With flush, it flushes the WAL
 * up to there first. */
static void sync_to(pgwt_stream *s, PGconn *writer, const char *sql, int flush)
{
    static uint64_t block, segment;
    if (!block) {
        block = (uint64_t)pgwt_int(writer, "SELECT current_setting('wal_block_size')::bigint");
        segment = (uint64_t)pgwt_int(writer,
                                     "SELECT pg_size_bytes(current_setting('wal_segment_size'))");
    }
    char *text = pgwt_value(writer, sql);
    uint64_t target = 0;
    ck_assert_int_eq(pgw_lsn_parse(&target, text, NULL), PGW_OK);
    free(text);
    if (target % segment == 40)
        target -= 40;
    else if (target % block == 24)
        target -= 24;
    if (flush)
        flush_wal(writer);
    long long until = mono_ms() + 20000;
    for (;;) {
        pgw_pq_stream_stats st;
        ck_assert_int_eq(pgw_pq_listener_stream_stats(&st, s->l, s->tenant, NULL), PGW_OK);
        if (st.received_lsn >= target)
            break;
        ck_assert_msg(mono_ms() < until, "the stream did not reach %llx in 20 s (at %llx)",
                      (unsigned long long)target, (unsigned long long)st.received_lsn);
        wait_and_process(s, 100);
    }
}

void pgwt_stream_sync(pgwt_stream *s, PGconn *writer)
{
    sync_to(s, writer, "SELECT pg_current_wal_insert_lsn()", 1);
}

void pgwt_stream_sync_flushed(pgwt_stream *s, PGconn *writer)
{
    sync_to(s, writer, "SELECT pg_current_wal_flush_lsn()", 0);
}

const char *pgwt_stream_take(pgwt_stream *s, unsigned long long *lsn)
{
    if (s->taken == s->n_writes)
        return NULL;
    if (lsn)
        *lsn = s->lsns[s->taken];
    return s->writes[s->taken++];
}

int pgwt_stream_count(const pgwt_stream *s, const char *prefix)
{
    int n = 0;
    for (int i = 0; i < s->n_events; i++)
        n += strncmp(s->events[i], prefix, strlen(prefix)) == 0;
    return n;
}
