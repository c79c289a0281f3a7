/*
 * tests/support/pgwt_stream.h — the stream in the pg suites: a listener
 * with one stream tenant on the test database that records every event
 * and write set, and a way to wait until it has read everything a writer
 * committed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWT_STREAM_H
#define PGWT_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "pgwitness/pgwitness-pq.h"

/* The event kind's name as the recorders write it ("STREAMING"). */
const char *pgwt_event_kind_name(pgw_pq_listener_event_kind k);

/* The scope of the recorder's tenant. */
#define PGWT_STREAM_SCOPE {"p", "acme", "db"}

typedef struct pgwt_stream {
    pgw_pq_listener *l;
    pgw_pq_tenant_id tenant;
    pgw_index *index;      /* borrowed; may be NULL */
    char **writes;         /* each write set's JSON without its scope member */
    unsigned long long *lsns;
    size_t n_writes, cap_writes, taken;
    char events[256][640]; /* "KIND status reset message" */
    int n_events;
    int streaming, resets, lost, gaps, slot_lost;
} pgwt_stream;

/* A listener (fast status updates, short backoff) with one stream tenant
 * on the test database: slot NULL for a temporary one; opts NULL for the
 * defaults (slot and status_interval_ms are the recorder's); index may be
 * NULL. Touched; not yet streaming. Fails the test on error. */
pgwt_stream *pgwt_stream_open(const char *slot, pgw_index *index,
                              const pgw_pq_stream_options *opts);
/* The same on another database (conninfo "dbname=<db>") and scope. */
pgwt_stream *pgwt_stream_open_db(const char *db, const pgw_scope *scope, const char *slot,
                                 pgw_index *index, const pgw_pq_stream_options *opts);
void pgwt_stream_close(pgwt_stream *s);

/* Runs the listener for up to ms milliseconds. */
void pgwt_stream_run(pgwt_stream *s, int ms);
/* Runs until the tenant has streamed n times in all (STREAMING events);
 * fails the test after 20 s. */
void pgwt_stream_until_streaming(pgwt_stream *s, int n);
/* Runs until the stream has read the WAL up to what `writer` has written
 * (pg_current_wal_insert_lsn() read on it now): every transaction it
 * committed is then delivered. Fails the test after 20 s. The insert
 * position may count records nobody flushed yet, which a walsender never
 * sends until something flushes them, so it commits an empty transaction
 * synchronously first (on the writer if idle, else on a connection of its
 * own). */
void pgwt_stream_sync(pgwt_stream *s, PGconn *writer);
/* The same up to pg_current_wal_flush_lsn(): quicker, and enough when the
 * writer commits synchronously (synchronous_commit = on), so that its
 * commits are flushed when they return. */
void pgwt_stream_sync_flushed(pgwt_stream *s, PGconn *writer);
/* The next recorded write set not yet taken (its JSON), or NULL. *lsn (when
 * non-NULL) receives its commit LSN. */
const char *pgwt_stream_take(pgwt_stream *s, unsigned long long *lsn);
/* The number of events whose text starts with `prefix`. */
int pgwt_stream_count(const pgwt_stream *s, const char *prefix);

#endif
