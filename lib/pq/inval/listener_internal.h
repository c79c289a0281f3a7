/*
 * lib/pq/inval/listener_internal.h — the listener's tenants, shared by
 * listener.c (their life: connecting, backoff, the cap, idle closes, the
 * event loop; and the triggers' source, LISTEN and notifications) and
 * stream.c (the stream's source: the replication connection). Not
 * installed.
 *
 * A tenant's connection goes through these states, whatever its source:
 *
 *   INACTIVE --touch--> CONNECTING --PQconnectPoll OK--> SETUP
 *   --the source is ready--> READY
 *   any connected state --failure or timeout--> RETRYING --backoff-->
 *   CONNECTING;  any state --idle or evicted--> INACTIVE
 *
 * SETUP is, for the triggers, the queries that read the watch's gaps
 * (reported as GAP events), then LISTEN, in flight; the
 * configuration, the slot and START_REPLICATION for the stream. READY is
 * LISTEN in effect, or streaming.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_LISTENER_INTERNAL_H
#define PGWITNESS_LISTENER_INTERNAL_H

#include "pq_internal.h"

typedef enum pgwi_tstate {
    PGWI_T_INACTIVE,
    PGWI_T_CONNECTING,
    PGWI_T_SETUP,
    PGWI_T_READY,
    PGWI_T_RETRYING
} pgwi_tstate;

typedef struct pgwi_stream pgwi_stream;

typedef struct pgwi_tenant {
    pgw_pq_tenant_id id;
    char *strs[3];      /* copies of the scope's project, tenant, database */
    pgw_scope scope;    /* a view of strs */
    char *conninfo;
    PGconn *conn;
    pgwi_tstate state;
    bool poll_read;     /* CONNECTING: PQconnectPoll wants to read (else write) */
    bool want_write;    /* SETUP, READY: PQflush has more to send */
    int64_t touched;    /* last touch, ms */
    int64_t deadline;   /* CONNECTING, SETUP: give up at; RETRYING: retry at */
    uint32_t backoff;   /* the delay after the next failure, ms */
    uint32_t retry_ms;  /* the delay chosen after the last failure */
    uint64_t connects, failures, notifications;
    char notice[256];   /* the last notice or unsolicited error (e.g. FATAL
                           when the backend is terminated), one line */
    pgwi_stream *stream; /* the stream's state; NULL for the triggers */
    /* SETUP of the triggers (listener.c): the step in flight, whether it
     * failed (a gaps query: skipped), and the schemas its gaps are read
     * from (listen_gap_schemas.sql's result, kept until its query ends). */
    unsigned char step;
    bool step_failed;
    PGresult *gap_schemas;
} pgwi_tenant;

struct pgw_pq_listener {
    pgw_pq_listener_options o;
    char *channel;
    char *listen_sql;
    pgwi_tenant **t;
    size_t n, cap;
    struct pollfd *pfd; /* room for one per tenant, for pgw_pq_listener_run */
    pgw_pq_tenant_id next_id;
};

/* CLOCK_MONOTONIC in milliseconds. */
int64_t pgwi_now_ms(void);

/* Reports an event to on_event (if any); message may be NULL. */
void pgwi_listener_emit(pgw_pq_listener *l, pgwi_tenant *t, pgw_pq_listener_event_kind kind,
                        int status, const char *message, uint32_t retry_ms, bool reset,
                        uint64_t lsn);

/* A failure: closes the connection and retries after the backoff, which
 * doubles (a LOST event with `why`, made one line). */
void pgwi_listener_fail(pgw_pq_listener *l, pgwi_tenant *t, int status, const char *why,
                        int64_t now);

/* The same with libpq's connection error (and the last notice): "what: ...". */
void pgwi_listener_fail_conn(pgw_pq_listener *l, pgwi_tenant *t, const char *what,
                             int64_t now);

/* The source is ready: READY, the backoff starts over, connects counts; the
 * scope is reset first when `reset`; then the event of `kind`. */
void pgwi_listener_ready(pgw_pq_listener *l, pgwi_tenant *t, pgw_pq_listener_event_kind kind,
                         bool reset, uint64_t lsn);

/* Closes the connection and opens a new one at once, with no event and no
 * backoff (the stream does so to read its configuration again). */
void pgwi_listener_restart(pgw_pq_listener *l, pgwi_tenant *t, int64_t now);

/* Matches a write set against the index (if any) and hands it to on_write
 * (if any). */
void pgwi_listener_deliver(pgw_pq_listener *l, pgwi_tenant *t, const pgw_write *w);

/* Resets the tenant's scope in the index (never allocates). */
void pgwi_listener_reset_scope(pgw_pq_listener *l, pgwi_tenant *t);

/* ---- the stream's source (stream.c) ---- */

/* Checks and copies a tenant's stream options. */
int pgwi_stream_new(pgwi_stream **out, const pgw_pq_stream_options *opts,
                    const pgw_scope *scope, pgw_pq_tenant_id id, pgw_error *err);
void pgwi_stream_free(pgwi_stream *s);
/* The permanent slot's name, or NULL for a temporary one. */
const char *pgwi_stream_slot(const pgwi_stream *s);
/* The connection's keywords and values after the conninfo (forced), and
 * before it (defaults), for PQconnectStartParams. */
void pgwi_stream_conn_params(const pgwi_stream *s, const char **kw, const char **val,
                             size_t *n_before, size_t *n_after);
/* The connection is made: starts the set-up (SETUP). */
void pgwi_stream_connected(pgw_pq_listener *l, pgwi_tenant *t, int64_t now);
/* The socket is ready in SETUP or READY. */
void pgwi_stream_process(pgw_pq_listener *l, pgwi_tenant *t, int64_t now);
/* What the socket waits for in SETUP or READY. */
unsigned pgwi_stream_events(const pgwi_tenant *t);
/* Timers in READY (status updates); lowers *next to the next one due. */
void pgwi_stream_tick(pgw_pq_listener *l, pgwi_tenant *t, int64_t now, int64_t *next);
/* The connection is about to close (an idle close, an eviction, a
 * removal, the listener freed, or a failure): confirms what was handled,
 * so that the slot resumes after it. */
void pgwi_stream_closing(pgwi_tenant *t);
/* The connection is gone. */
void pgwi_stream_closed(pgwi_tenant *t);
/* Counters for pgw_pq_listener_stream_stats(). */
void pgwi_stream_stats(pgw_pq_stream_stats *out, const pgwi_tenant *t, int64_t now);

#endif /* PGWITNESS_LISTENER_INTERNAL_H */
