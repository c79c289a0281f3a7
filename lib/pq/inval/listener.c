/*
 * lib/pq/inval/listener.c — the listener of query invalidation (pgw_pq_listener,
 * pgwitness-pq.h): one connection per active tenant, its life (the states
 * of listener_internal.h, the cap, idle closes, backoff, the event loop),
 * and the triggers' source: LISTEN, the watch's gaps read at each connect
 * (GAP events), and notifications decoded with the core codec and matched
 * against a pgw_index. The stream's source is stream.c.
 *
 * Nothing blocks: connections start with PQconnectStartParams and advance
 * with PQconnectPoll when their socket is ready (libpq "Connection Control
 * Functions"); LISTEN goes out with PQsendQuery/PQflush on a non-blocking
 * connection and its result is read with PQconsumeInput/PQisBusy/
 * PQgetResult (libpq "Asynchronous Command Processing"); notifications
 * come from PQnotifies after PQconsumeInput (libpq "Asynchronous
 * Notification").
 * SPDX-License-Identifier: MIT
 */
#include "listener_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t pgwi_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* libpq's messages end with a newline; events carry one line. */
void pgwi_listener_emit(pgw_pq_listener *l, pgwi_tenant *t, pgw_pq_listener_event_kind kind,
                        int status, const char *message, uint32_t retry_ms, bool reset,
                        uint64_t lsn)
{
    if (!l->o.on_event)
        return;
    pgw_pq_listener_event ev;
    ev.kind = kind;
    ev.tenant = t->id;
    ev.scope = &t->scope;
    ev.status = status;
    ev.message = message ? message : "";
    ev.retry_ms = retry_ms;
    ev.reset = reset;
    ev.lsn = lsn;
    l->o.on_event(&ev, l->o.userdata);
}

static void emit(pgw_pq_listener *l, pgwi_tenant *t, pgw_pq_listener_event_kind kind, int status,
                 const char *message, uint32_t retry_ms)
{
    pgwi_listener_emit(l, t, kind, status, message, retry_ms, false, 0);
}

static void drop_conn(pgwi_tenant *t)
{
    if (t->conn && t->stream)
        pgwi_stream_closing(t);
    if (t->conn)
        PQfinish(t->conn);
    t->conn = NULL;
    t->want_write = false;
    PQclear(t->gap_schemas);
    t->gap_schemas = NULL;
    if (t->stream)
        pgwi_stream_closed(t);
}

void pgwi_listener_reset_scope(pgw_pq_listener *l, pgwi_tenant *t)
{
    if (l->o.index)
        pgw_index_reset_scope(NULL, l->o.index, &t->scope, NULL);
}

void pgwi_listener_deliver(pgw_pq_listener *l, pgwi_tenant *t, const pgw_write *w)
{
    if (l->o.index)
        pgw_index_match(NULL, l->o.index, w, NULL);
    if (l->o.on_write)
        l->o.on_write(t->id, w, l->o.userdata);
}

/* A failure: close, and retry after the backoff, which doubles. */
void pgwi_listener_fail(pgw_pq_listener *l, pgwi_tenant *t, int status, const char *why,
                        int64_t now)
{
    char msg[PGW_ERROR_MESSAGE_SIZE];
    pgwi_pq_one_line(msg, sizeof msg, why);
    drop_conn(t);
    t->failures++;
    t->retry_ms = t->backoff;
    t->deadline = now + t->backoff;
    t->backoff = t->backoff > l->o.backoff_max_ms / 2 ? l->o.backoff_max_ms : t->backoff * 2;
    t->state = PGWI_T_RETRYING;
    emit(l, t, PGW_PQ_LISTENER_LOST, status, msg, t->retry_ms);
}

void pgwi_listener_fail_conn(pgw_pq_listener *l, pgwi_tenant *t, const char *what, int64_t now)
{
    char msg[PGW_ERROR_MESSAGE_SIZE * 2];
    char reason[PGW_ERROR_MESSAGE_SIZE];
    pgwi_pq_one_line(reason, sizeof reason, t->conn ? PQerrorMessage(t->conn) : NULL);
    if (t->notice[0])
        snprintf(msg, sizeof msg, "%s: %s (%s)", what, reason, t->notice);
    else
        snprintf(msg, sizeof msg, "%s: %s", what, reason);
    pgwi_listener_fail(l, t, PGW_ECONN, msg, now);
}

#define fail pgwi_listener_fail
#define fail_conn pgwi_listener_fail_conn

/* libpq's default notice processor prints to stderr; the library prints
 * nothing. The server's message for an unsolicited error (such as FATAL
 * on pg_terminate_backend) arrives as a notice: kept for the LOST event. */
static void keep_notice(void *arg, const PGresult *res)
{
    pgwi_tenant *t = arg;
    pgwi_pq_one_line(t->notice, sizeof t->notice, PQresultErrorMessage(res));
}

static void start_connect(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    /* Keywords before dbname are defaults the conninfo may override; the
     * ones after it are forced (libpq, PQconnectdbParams: the last value
     * of a repeated keyword wins). A stream adds its own on both sides. */
    const char *kw[24] = {"application_name", "keepalives", "keepalives_idle",
                          "keepalives_interval", "keepalives_count"};
    const char *val[24] = {"pgwitness-listener", "1", "30", "10", "3"};
    size_t n = 5;
    const char *skw[16], *sval[16];
    size_t before = 0, after = 0;
    if (t->stream)
        pgwi_stream_conn_params(t->stream, skw, sval, &before, &after);
    for (size_t i = 0; i < before; i++) {
        kw[n] = skw[i];
        val[n++] = sval[i];
    }
    kw[n] = "dbname";
    val[n++] = t->conninfo;
    kw[n] = "client_encoding";
    val[n++] = "UTF8";
    for (size_t i = 0; i < after; i++) {
        kw[n] = skw[before + i];
        val[n++] = sval[before + i];
    }
    kw[n] = val[n] = NULL;
    t->conn = PQconnectStartParams(kw, val, 1);
    t->deadline = now + l->o.connect_timeout_ms;
    t->poll_read = false; /* libpq: start as if PQconnectPoll said WRITING */
    t->state = PGWI_T_CONNECTING;
    if (!t->conn) {
        fail(l, t, PGW_ECONN, "libpq could not start a connection (out of memory)", now);
        return;
    }
    PQsetNoticeReceiver(t->conn, keep_notice, t);
    t->notice[0] = '\0';
    if (PQstatus(t->conn) == CONNECTION_BAD)
        fail_conn(l, t, "connecting", now);
}

void pgwi_listener_ready(pgw_pq_listener *l, pgwi_tenant *t, pgw_pq_listener_event_kind kind,
                         bool reset, uint64_t lsn)
{
    t->state = PGWI_T_READY;
    t->backoff = l->o.backoff_initial_ms;
    t->connects++;
    if (reset)
        pgwi_listener_reset_scope(l, t);
    pgwi_listener_emit(l, t, kind, PGW_OK, "", 0, reset, lsn);
}

void pgwi_listener_restart(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    drop_conn(t);
    start_connect(l, t, now);
}

/* LISTEN is in effect: from now on every committed write is notified, so
 * a reset of the scope covers everything before (NOTIFY is not durable). */
static void listening(pgw_pq_listener *l, pgwi_tenant *t)
{
    pgwi_listener_ready(l, t, PGW_PQ_LISTENER_LISTENING, true, 0);
}

static void handle_notify(pgw_pq_listener *l, pgwi_tenant *t, const PGnotify *n)
{
    if (strcmp(n->relname, l->channel) != 0)
        return;
    t->notifications++;
    pgw_write *w = NULL;
    pgw_error de;
    pgw_error_clear(&de);
    const char *payload = n->extra ? n->extra : "";
    int rc;
    if ((rc = pgw_payload_decode(&w, &t->scope, payload, strlen(payload), &de)) < 0) {
        /* Out of memory (the decoder is total otherwise): whatever the
         * notification said, a reset of its scope covers it and cannot
         * fail. */
        pgwi_listener_reset_scope(l, t);
        emit(l, t, PGW_PQ_LISTENER_RESET, rc, de.message, 0);
        return;
    }
    if (l->o.index)
        pgw_index_match(NULL, l->o.index, w, NULL);
    if ((rc = pgw_write_fallback_status(w)) < 0)
        emit(l, t, PGW_PQ_LISTENER_FALLBACK, rc, pgw_write_fallback_message(w), 0);
    if (l->o.on_write)
        l->o.on_write(t->id, w, l->o.userdata);
    pgw_write_free(w);
}

static void drain_notifies(pgw_pq_listener *l, pgwi_tenant *t)
{
    PGnotify *n;
    while (t->conn && (n = PQnotifies(t->conn)) != NULL) {
        handle_notify(l, t, n);
        PQfreemem(n);
    }
}

/* The triggers' SETUP: the schemas whose gaps are read
 * (listen_gap_schemas.sql), the gaps (listen_gaps.sql, reported as they
 * arrive), then LISTEN, the session's last query (what pg_stat_activity
 * shows); LISTENING once it is in effect. */
enum { STEP_SCHEMAS, STEP_GAPS, STEP_LISTEN };
static const char *const step_what[] = {"reading the watch's gaps", "reading the watch's gaps",
                                        "waiting for LISTEN"};

/* Sends a step's query (params: NULL, or the one parameter); false when
 * the tenant failed. */
static bool send_step(pgw_pq_listener *l, pgwi_tenant *t, unsigned char step, const char *sql,
                      const char *const *params, int64_t now)
{
    t->step = step;
    t->step_failed = false;
    int ok = params ? PQsendQueryParams(t->conn, sql, 1, NULL, params, NULL, NULL, 0)
                    : PQsendQuery(t->conn, sql);
    int f = ok ? PQflush(t->conn) : -1;
    if (f < 0) {
        fail_conn(l, t, step == STEP_LISTEN ? "sending LISTEN" : "reading the watch's gaps",
                  now);
        return false;
    }
    t->want_write = f == 1;
    return true;
}

static void advance_connect(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    switch (PQconnectPoll(t->conn)) {
    case PGRES_POLLING_READING:
        t->poll_read = true;
        return;
    case PGRES_POLLING_WRITING:
        t->poll_read = false;
        return;
    case PGRES_POLLING_OK:
        break;
    default: /* PGRES_POLLING_FAILED */
        fail_conn(l, t, "connecting", now);
        return;
    }
    if (PQsetnonblocking(t->conn, 1) != 0) {
        fail_conn(l, t, "connecting", now);
        return;
    }
    if (t->stream) {
        t->state = PGWI_T_SETUP;
        pgwi_stream_connected(l, t, now);
        return;
    }
    t->state = PGWI_T_SETUP;
    send_step(l, t, STEP_SCHEMAS, pgwi_sql_listen_gap_schemas, NULL, now);
}

/* The schemas named by listen_gap_schemas.sql (kept in t->gap_schemas)
 * are read with listen_gaps.sql, one query, a UNION ALL of one part per
 * schema; the channel is its parameter. False when the tenant failed (out
 * of memory). */
static bool send_gaps(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    const PGresult *r = t->gap_schemas;
    int n = PQntuples(r);
    char **parts = pgwi_calloc((size_t)n, sizeof *parts);
    char *sql = NULL;
    pgw_error e;
    pgw_error_clear(&e);
    int rc = parts ? PGW_OK : pgwi_enomem(&e);
    size_t len = 1;
    for (int i = 0; rc >= 0 && i < n; i++) {
        char *gaps = NULL, *remembered = NULL;
        const char *schema = PQgetvalue(r, i, 0);
        if ((rc = pgwi_pq_sql(&gaps, t->conn, pgwi_sql_listen_gaps, schema, &e)) >= 0 &&
            PQnfields(r) > 1 && strcmp(PQgetvalue(r, i, 1), "t") == 0 &&
            (rc = pgwi_pq_sql(&remembered, t->conn, pgwi_sql_listen_remembered_gaps, schema,
                              &e)) >= 0) {
            /* both, each in parentheses (each ends in ORDER BY) */
            static const char both[] = "(\n%s\n)\nUNION ALL\n(\n%s\n)";
            size_t lp = strlen(gaps) + strlen(remembered) + sizeof both;
            if ((parts[i] = pgwi_malloc(lp)))
                snprintf(parts[i], lp, both, gaps, remembered);
            else
                rc = pgwi_enomem(&e);
            pgwi_free(gaps);
        } else if (rc >= 0) {
            parts[i] = gaps;
        } else {
            pgwi_free(gaps);
        }
        pgwi_free(remembered);
        if (rc >= 0)
            len += strlen(parts[i]) + sizeof "(\n)\nUNION ALL\n";
    }
    if (rc >= 0 && !(sql = pgwi_malloc(len)))
        rc = pgwi_enomem(&e);
    if (rc >= 0) {
        /* Each part ends in ORDER BY (and may end in a comment): in
         * parentheses, on lines of their own. */
        char *p = sql;
        for (int i = 0; i < n; i++)
            p += sprintf(p, "%s%s%s", n == 1 ? "" : "(\n", parts[i],
                         n == 1 ? "" : i + 1 < n ? "\n)\nUNION ALL\n" : "\n)");
        *p = '\0';
    }
    for (int i = 0; parts && i < n; i++)
        pgwi_free(parts[i]);
    pgwi_free(parts);
    PQclear(t->gap_schemas);
    t->gap_schemas = NULL;
    if (rc < 0) {
        char msg[PGW_ERROR_MESSAGE_SIZE + 32];
        snprintf(msg, sizeof msg, "reading the watch's gaps: %s", e.message);
        fail(l, t, rc, msg, now);
        return false;
    }
    const char *params[1] = {l->channel};
    bool ok = send_step(l, t, STEP_GAPS, sql, params, now);
    pgwi_free(sql);
    return ok;
}

/* A step's query is over (PQgetResult gave NULL): the next one, or READY. */
static void step_done(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    bool failed = t->step_failed;
    t->step_failed = false;
    switch (t->step) {
    case STEP_SCHEMAS:
        if (!failed && t->gap_schemas && PQntuples(t->gap_schemas) > 0) {
            send_gaps(l, t, now);
            return;
        }
        PQclear(t->gap_schemas);
        t->gap_schemas = NULL;
        send_step(l, t, STEP_LISTEN, l->listen_sql, NULL, now);
        return;
    case STEP_GAPS: /* reported as its rows arrived */
        send_step(l, t, STEP_LISTEN, l->listen_sql, NULL, now);
        return;
    default:
        listening(l, t);
        drain_notifies(l, t);
    }
}

/* A result of the step in flight (taken over: cleared or kept); false
 * when the tenant failed. */
static bool step_result(pgw_pq_listener *l, pgwi_tenant *t, PGresult *r, int64_t now)
{
    ExecStatusType st = PQresultStatus(r);
    if (t->step == STEP_LISTEN) {
        if (st == PGRES_COMMAND_OK) {
            PQclear(r);
            return true;
        }
        char msg[PGW_ERROR_MESSAGE_SIZE * 2];
        char reason[PGW_ERROR_MESSAGE_SIZE];
        pgwi_pq_one_line(reason, sizeof reason, PQresultErrorMessage(r));
        snprintf(msg, sizeof msg, "LISTEN failed: %s", reason);
        PQclear(r);
        fail(l, t, PGW_EPG, msg, now);
        return false;
    }
    if (st != PGRES_TUPLES_OK) {
        /* The server refused (a schema changed under the query, a
         * privilege revoked since the first): the tenant needs no
         * privilege on the schema, so it listens without the gaps. An
         * error of libpq's own (no SQLSTATE: out of memory, the
         * connection lost) is a failure, retried. */
        bool server = PQresultErrorField(r, PG_DIAG_SQLSTATE) != NULL;
        char reason[PGW_ERROR_MESSAGE_SIZE];
        pgwi_pq_one_line(reason, sizeof reason, PQresultErrorMessage(r));
        PQclear(r);
        if (PQstatus(t->conn) == CONNECTION_BAD) {
            fail_conn(l, t, "reading the watch's gaps", now);
            return false;
        }
        if (!server) {
            char msg[PGW_ERROR_MESSAGE_SIZE + 32];
            snprintf(msg, sizeof msg, "reading the watch's gaps: %s", reason);
            fail(l, t, PGW_ECONN, msg, now);
            return false;
        }
        t->step_failed = true;
        return true;
    }
    if (t->step == STEP_SCHEMAS) {
        PQclear(t->gap_schemas);
        t->gap_schemas = r;
        return true;
    }
    /* STEP_GAPS: one GAP per row, in the shape of the stream's (its
     * scope is not reset: LISTENING, which follows, resets it, and no
     * reset covers the relation's writes from now on). */
    if (PQnfields(r) == 5)
        for (int i = 0; i < PQntuples(r); i++)
            pgwi_listener_emit(l, t, PGW_PQ_LISTENER_GAP, PGW_OK, PQgetvalue(r, i, 4), 0, false,
                               0);
    PQclear(r);
    return true;
}

static void advance_listen(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    if (t->want_write) {
        int f = PQflush(t->conn);
        if (f < 0) {
            fail_conn(l, t, t->step == STEP_LISTEN ? "sending LISTEN" : step_what[t->step], now);
            return;
        }
        t->want_write = f == 1;
    }
    if (!PQconsumeInput(t->conn)) {
        fail_conn(l, t, step_what[t->step], now);
        return;
    }
    while (t->conn && t->state == PGWI_T_SETUP && !PQisBusy(t->conn)) {
        PGresult *r = PQgetResult(t->conn);
        if (!r) {
            step_done(l, t, now);
            continue;
        }
        if (!step_result(l, t, r, now))
            return;
    }
}

static void read_notifies(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    if (!PQconsumeInput(t->conn)) {
        fail_conn(l, t, "connection lost", now);
        return;
    }
    drain_notifies(l, t);
    /* Nothing else is expected on a listening connection; a result here
     * (or a broken connection) is a failure. */
    if (t->conn && PQstatus(t->conn) == CONNECTION_BAD)
        fail_conn(l, t, "connection lost", now);
}

static void close_tenant(pgw_pq_listener *l, pgwi_tenant *t, pgw_pq_listener_event_kind kind)
{
    drop_conn(t);
    t->state = PGWI_T_INACTIVE;
    if (kind)
        emit(l, t, kind, PGW_OK, "", 0);
}

/* The tenant `id` (its slot in *at when at is non-NULL), or NULL after
 * setting PGW_ENOTFOUND in err on behalf of `fn`. */
static pgwi_tenant *find(const pgw_pq_listener *l, pgw_pq_tenant_id id, size_t *at,
                         const char *fn, pgw_error *err)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->t[i]->id == id) {
            if (at)
                *at = i;
            return l->t[i];
        }
    pgwi_error(err, PGW_ENOTFOUND, "%s: no tenant %llu", fn, (unsigned long long)id);
    return NULL;
}

static bool str_eq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static void tenant_free(pgwi_tenant *t)
{
    if (!t)
        return;
    drop_conn(t);
    pgwi_stream_free(t->stream);
    for (int i = 0; i < 3; i++)
        pgwi_free(t->strs[i]);
    pgwi_free(t->conninfo);
    pgwi_free(t);
}

/* ------------------------------------------------------------------ */
/* public API                                                          */

static int check_options(const pgw_pq_listener_options *o, pgw_error *err)
{
    if (o->version != PGW_PQ_LISTENER_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "listener options version %u is not %u (use "
                          "PGW_PQ_LISTENER_OPTIONS_INIT)",
                          o->version, (unsigned)PGW_PQ_LISTENER_OPTIONS_VERSION);
    if (o->channel) {
        int rc;
        if ((rc = pgwi_pq_check_channel(o->channel, err)) < 0)
            return rc;
    }
    if (o->max_connections < 1)
        return pgwi_error(err, PGW_EINVAL, "listener options: max_connections must be >= 1");
    if (o->connect_timeout_ms < 1 || o->backoff_initial_ms < 1 ||
        o->backoff_max_ms < o->backoff_initial_ms)
        return pgwi_error(err, PGW_EINVAL,
                          "listener options: connect_timeout_ms and backoff_initial_ms must be "
                          ">= 1, backoff_max_ms >= backoff_initial_ms");
    return PGW_OK;
}

int pgw_pq_listener_new(pgw_pq_listener **out, const pgw_pq_listener_options *opts,
                        pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "pq_listener_new: out is NULL");
    pgw_pq_listener_options defaults = PGW_PQ_LISTENER_OPTIONS_INIT;
    const pgw_pq_listener_options *o = opts ? opts : &defaults;
    int rc;
    if ((rc = check_options(o, err)) < 0)
        return rc;
    pgw_pq_listener *l = pgwi_calloc(1, sizeof *l);
    if (!l)
        return pgwi_enomem(err);
    l->o = *o;
    l->next_id = 1;
    l->channel = pgwi_strdup(o->channel ? o->channel : PGW_PQ_DEFAULT_CHANNEL);
    if (l->channel) {
        /* LISTEN "<channel>": an identifier, quoted by doubling quotes. */
        size_t len = strlen(l->channel);
        l->listen_sql = pgwi_malloc(len * 2 + sizeof "LISTEN \"\"");
        if (l->listen_sql) {
            char *p = l->listen_sql;
            p += sprintf(p, "LISTEN \"");
            for (const char *c = l->channel; *c; c++) {
                if (*c == '"')
                    *p++ = '"';
                *p++ = *c;
            }
            strcpy(p, "\"");
        }
    }
    if (!l->channel || !l->listen_sql) {
        pgw_pq_listener_free(l);
        return pgwi_enomem(err);
    }
    l->o.channel = l->channel;
    *out = l;
    return PGW_OK;
}

void pgw_pq_listener_free(pgw_pq_listener *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        tenant_free(l->t[i]);
    pgwi_free(l->t);
    pgwi_free(l->pfd);
    pgwi_free(l->channel);
    pgwi_free(l->listen_sql);
    pgwi_free(l);
}

/* Registers a tenant of either source (stream NULL: the triggers'; the
 * tenant takes it over, also on failure). */
static int add_tenant(pgw_pq_tenant_id *out, pgw_pq_listener *l, const pgw_scope *scope,
                      const char *conninfo, pgwi_stream *stream, const char *fn, pgw_error *err)
{
    const char *sp[3] = {scope->project, scope->tenant, scope->database};
    int rc = PGW_OK;
    for (int i = 0; i < 3; i++)
        if (sp[i] && !pgwi_utf8_valid(sp[i], strlen(sp[i]))) {
            rc = pgwi_error(err, PGW_EINVAL, "%s: a scope string is not valid UTF-8", fn);
            goto fail;
        }
    if (!conninfo[0] || !pgwi_utf8_valid(conninfo, strlen(conninfo))) {
        rc = pgwi_error(err, PGW_EINVAL, "%s: conninfo is empty or not valid UTF-8", fn);
        goto fail;
    }
    const char *slot = stream ? pgwi_stream_slot(stream) : NULL;
    for (size_t i = 0; i < l->n; i++) {
        const pgwi_tenant *u = l->t[i];
        const pgw_scope *s = &u->scope;
        if (str_eq(s->project, scope->project) && str_eq(s->tenant, scope->tenant) &&
            str_eq(s->database, scope->database)) {
            rc = pgwi_error(err, PGW_EEXISTS, "%s: a tenant with this scope exists", fn);
            goto fail;
        }
        if (slot && u->stream && str_eq(pgwi_stream_slot(u->stream), slot)) {
            rc = pgwi_error(err, PGW_EEXISTS, "%s: tenant %llu streams from slot %.63s already",
                            fn, (unsigned long long)u->id, slot);
            goto fail;
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        pgwi_tenant **arr = pgwi_reallocarray(l->t, cap, sizeof *arr);
        if (!arr)
            goto nomem;
        l->t = arr;
        struct pollfd *pfd = pgwi_reallocarray(l->pfd, cap, sizeof *pfd);
        if (!pfd)
            goto nomem;
        l->pfd = pfd;
        l->cap = cap;
    }
    pgwi_tenant *t = pgwi_calloc(1, sizeof *t);
    if (!t)
        goto nomem;
    t->stream = stream;
    stream = NULL;
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        t->strs[i] = pgwi_strdup(sp[i]);
        ok = ok && (!sp[i] || t->strs[i]);
    }
    t->conninfo = pgwi_strdup(conninfo);
    if (!ok || !t->conninfo) {
        tenant_free(t);
        goto nomem;
    }
    t->scope.project = t->strs[0];
    t->scope.tenant = t->strs[1];
    t->scope.database = t->strs[2];
    t->id = l->next_id++;
    t->state = PGWI_T_INACTIVE;
    t->backoff = l->o.backoff_initial_ms;
    l->t[l->n++] = t;
    *out = t->id;
    return PGW_OK;
nomem:
    rc = pgwi_enomem(err);
fail:
    pgwi_stream_free(stream);
    return rc;
}

int pgw_pq_listener_add_tenant(pgw_pq_tenant_id *out, pgw_pq_listener *l,
                               const pgw_scope *scope, const char *conninfo, pgw_error *err)
{
    if (pgwi_check_nonnull(err, "pq_listener_add_tenant", "out, listener, scope, conninfo",
                           (const void *const[]){out, l, scope, conninfo}, 4) < 0)
        return PGW_EINVAL;
    return add_tenant(out, l, scope, conninfo, NULL, "pq_listener_add_tenant", err);
}

int pgw_pq_listener_add_stream(pgw_pq_tenant_id *out, pgw_pq_listener *l,
                               const pgw_scope *scope, const char *conninfo,
                               const pgw_pq_stream_options *opts, pgw_error *err)
{
    if (pgwi_check_nonnull(err, "pq_listener_add_stream", "out, listener, scope, conninfo",
                           (const void *const[]){out, l, scope, conninfo}, 4) < 0)
        return PGW_EINVAL;
    pgwi_stream *s = NULL;
    int rc;
    if ((rc = pgwi_stream_new(&s, opts, scope, l->next_id, err)) < 0)
        return rc;
    return add_tenant(out, l, scope, conninfo, s, "pq_listener_add_stream", err);
}

int pgw_pq_listener_stream_stats(pgw_pq_stream_stats *out, const pgw_pq_listener *l,
                                 pgw_pq_tenant_id id, pgw_error *err)
{
    if (pgwi_check_nonnull(err, "pq_listener_stream_stats", "out, listener",
                           (const void *const[]){out, l}, 2) < 0)
        return PGW_EINVAL;
    const pgwi_tenant *t = find(l, id, NULL, "pq_listener_stream_stats", err);
    if (!t)
        return PGW_ENOTFOUND;
    if (!t->stream)
        return pgwi_error(err, PGW_EINVAL,
                          "pq_listener_stream_stats: tenant %llu is fed by the triggers, not "
                          "the stream",
                          (unsigned long long)id);
    pgwi_stream_stats(out, t, pgwi_now_ms());
    return PGW_OK;
}

int pgw_pq_listener_remove_tenant(pgw_pq_listener *l, pgw_pq_tenant_id id, pgw_error *err)
{
    if (!l)
        return pgwi_error(err, PGW_EINVAL, "pq_listener_remove_tenant: listener is NULL");
    size_t at;
    pgwi_tenant *t = find(l, id, &at, "pq_listener_remove_tenant", err);
    if (!t)
        return PGW_ENOTFOUND;
    tenant_free(t);
    l->t[at] = l->t[--l->n];
    return PGW_OK;
}

int pgw_pq_listener_touch(pgw_pq_listener *l, pgw_pq_tenant_id id, pgw_error *err)
{
    if (!l)
        return pgwi_error(err, PGW_EINVAL, "pq_listener_touch: listener is NULL");
    pgwi_tenant *t = find(l, id, NULL, "pq_listener_touch", err);
    if (!t)
        return PGW_ENOTFOUND;
    int64_t now = pgwi_now_ms();
    t->touched = now;
    if (t->state != PGWI_T_INACTIVE)
        return PGW_OK;
    /* Room for one more: close the least recently touched active tenants. */
    for (;;) {
        size_t active = 0;
        pgwi_tenant *lru = NULL;
        for (size_t i = 0; i < l->n; i++) {
            pgwi_tenant *u = l->t[i];
            if (u == t || u->state == PGWI_T_INACTIVE)
                continue;
            active++;
            if (!lru || u->touched < lru->touched)
                lru = u;
        }
        if (active < l->o.max_connections || !lru)
            break;
        close_tenant(l, lru, PGW_PQ_LISTENER_CLOSED_EVICTED);
    }
    start_connect(l, t, now);
    return PGW_OK;
}

int pgw_pq_listener_tenant(pgw_pq_tenant_info *out, const pgw_pq_listener *l,
                           pgw_pq_tenant_id id, pgw_error *err)
{
    if (pgwi_check_nonnull(err, "pq_listener_tenant", "out, listener",
                           (const void *const[]){out, l}, 2) < 0)
        return PGW_EINVAL;
    const pgwi_tenant *t = find(l, id, NULL, "pq_listener_tenant", err);
    if (!t)
        return PGW_ENOTFOUND;
    pgw_pq_tenant_info info;
    memset(&info, 0, sizeof info);
    switch (t->state) {
    case PGWI_T_INACTIVE:
        info.state = PGW_PQ_TENANT_INACTIVE;
        break;
    case PGWI_T_CONNECTING:
    case PGWI_T_SETUP:
        info.state = PGW_PQ_TENANT_CONNECTING;
        break;
    case PGWI_T_READY:
        info.state = PGW_PQ_TENANT_LISTENING;
        info.backend_pid = PQbackendPID(t->conn);
        break;
    case PGWI_T_RETRYING:
        info.state = PGW_PQ_TENANT_RETRYING;
        info.retry_ms = t->retry_ms;
        break;
    }
    info.connects = t->connects;
    info.failures = t->failures;
    info.notifications = t->notifications;
    *out = info;
    return PGW_OK;
}

/* The socket of a tenant and what it waits for; false when none. */
static bool socket_of(const pgwi_tenant *t, int *fd, unsigned *events)
{
    if (!t->conn)
        return false;
    int s = PQsocket(t->conn);
    if (s < 0)
        return false;
    switch (t->state) {
    case PGWI_T_CONNECTING:
        *events = t->poll_read ? PGW_PQ_WAIT_READ : PGW_PQ_WAIT_WRITE;
        break;
    case PGWI_T_SETUP:
    case PGWI_T_READY:
        if (t->stream)
            *events = pgwi_stream_events(t);
        else
            *events = PGW_PQ_WAIT_READ |
                      (t->state == PGWI_T_SETUP && t->want_write ? PGW_PQ_WAIT_WRITE : 0u);
        break;
    default:
        return false;
    }
    *fd = s;
    return true;
}

int pgw_pq_listener_sockets(size_t *out, pgw_pq_listener_socket *sockets, size_t cap,
                            const pgw_pq_listener *l, pgw_error *err)
{
    if (pgwi_check_nonnull(err, "pq_listener_sockets", "out, listener",
                           (const void *const[]){out, l}, 2) < 0)
        return PGW_EINVAL;
    if (!sockets && cap)
        return pgwi_error(err, PGW_EINVAL, "pq_listener_sockets: sockets is NULL with cap %zu",
                          cap);
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        int fd;
        unsigned ev;
        if (!socket_of(l->t[i], &fd, &ev))
            continue;
        if (n < cap) {
            sockets[n].fd = fd;
            sockets[n].events = ev;
            sockets[n].tenant = l->t[i]->id;
        }
        n++;
    }
    *out = n;
    return PGW_OK;
}

int pgw_pq_listener_process(pgw_pq_listener *l, int fd, unsigned events, pgw_error *err)
{
    if (!l)
        return pgwi_error(err, PGW_EINVAL, "pq_listener_process: listener is NULL");
    pgwi_tenant *t = NULL;
    for (size_t i = 0; i < l->n && !t; i++) {
        int s;
        unsigned ev;
        if (socket_of(l->t[i], &s, &ev) && s == fd)
            t = l->t[i];
    }
    if (!t)
        return pgwi_error(err, PGW_ENOTFOUND, "pq_listener_process: no connection has socket %d",
                          fd);
    (void)events; /* libpq finds out what is ready by trying */
    int64_t now = pgwi_now_ms();
    switch (t->state) {
    case PGWI_T_CONNECTING:
        advance_connect(l, t, now);
        break;
    case PGWI_T_SETUP:
    case PGWI_T_READY:
        if (t->stream)
            pgwi_stream_process(l, t, now);
        else if (t->state == PGWI_T_SETUP)
            advance_listen(l, t, now);
        else
            read_notifies(l, t, now);
        break;
    default:
        break;
    }
    return PGW_OK;
}

/* Drives the index's clock (index.h, "Time-dependent runners") and
 * lowers *next to its next deadline. A time earlier than the index's (a
 * host that drives it with another clock) is refused by the index and
 * marks nothing. */
static void clock_tick(pgw_pq_listener *l, int64_t now, int64_t *next)
{
    if (!l->o.index)
        return;
    pgw_index_clock(NULL, l->o.index, now, NULL);
    int64_t due;
    if (pgw_index_clock_next(&due, l->o.index) < 0)
        return; /* no time-dependent runner waits */
    if (due < *next)
        *next = due;
}

int pgw_pq_listener_tick(int64_t *out, pgw_pq_listener *l, pgw_error *err)
{
    if (!l)
        return pgwi_error(err, PGW_EINVAL, "pq_listener_tick: listener is NULL");
    int64_t now = pgwi_now_ms();
    int64_t next = INT64_MAX;
    for (size_t i = 0; i < l->n; i++) {
        pgwi_tenant *t = l->t[i];
        if (t->state == PGWI_T_INACTIVE)
            continue;
        if (l->o.idle_timeout_ms && now - t->touched >= (int64_t)l->o.idle_timeout_ms) {
            close_tenant(l, t, PGW_PQ_LISTENER_CLOSED_IDLE);
            continue;
        }
        switch (t->state) {
        case PGWI_T_CONNECTING:
        case PGWI_T_SETUP:
            if (now >= t->deadline)
                fail(l, t, PGW_ECONN,
                     t->state == PGWI_T_CONNECTING ? "connecting timed out"
                     : t->stream                   ? "setting up the stream timed out"
                     : t->step == STEP_LISTEN      ? "waiting for LISTEN timed out"
                                                   : "reading the watch's gaps timed out",
                     now);
            break;
        case PGWI_T_RETRYING:
            if (now >= t->deadline)
                start_connect(l, t, now);
            break;
        case PGWI_T_READY:
            if (t->stream)
                pgwi_stream_tick(l, t, now, &next);
            break;
        default:
            break;
        }
        if (t->state == PGWI_T_CONNECTING || t->state == PGWI_T_SETUP || t->state == PGWI_T_RETRYING)
            next = t->deadline < next ? t->deadline : next;
        if (l->o.idle_timeout_ms && t->state != PGWI_T_INACTIVE) {
            int64_t idle_at = t->touched + (int64_t)l->o.idle_timeout_ms;
            next = idle_at < next ? idle_at : next;
        }
    }
    clock_tick(l, now, &next);
    if (out)
        *out = next == INT64_MAX ? -1 : (next > now ? next - now : 0);
    return PGW_OK;
}

int pgw_pq_listener_run(pgw_pq_listener *l, int timeout_ms, pgw_error *err)
{
    if (!l || timeout_ms < 0)
        return pgwi_error(err, PGW_EINVAL, "pq_listener_run: %s",
                          l ? "timeout_ms is negative" : "listener is NULL");
    int64_t deadline = pgwi_now_ms() + timeout_ms;
    for (;;) {
        int64_t next;
        pgw_pq_listener_tick(&next, l, NULL);
        size_t n = 0;
        for (size_t i = 0; i < l->n; i++) {
            int fd;
            unsigned ev;
            if (!socket_of(l->t[i], &fd, &ev))
                continue;
            l->pfd[n].fd = fd;
            l->pfd[n].events = (short)(((ev & PGW_PQ_WAIT_READ) ? POLLIN : 0) |
                                       ((ev & PGW_PQ_WAIT_WRITE) ? POLLOUT : 0));
            l->pfd[n].revents = 0;
            n++;
        }
        int64_t now = pgwi_now_ms();
        int64_t wait = deadline > now ? deadline - now : 0;
        if (next >= 0 && next < wait)
            wait = next;
        int rc = poll(l->pfd, (nfds_t)n, (int)wait);
        if (rc < 0 && errno != EINTR)
            return pgwi_error(err, PGW_ECONN, "pq_listener_run: poll failed: %s",
                              strerror(errno));
        for (size_t i = 0; rc > 0 && i < n; i++) {
            short re = l->pfd[i].revents;
            if (!re)
                continue;
            unsigned ev = ((re & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) ? PGW_PQ_WAIT_READ : 0u) |
                          ((re & POLLOUT) ? PGW_PQ_WAIT_WRITE : 0u);
            /* A descriptor may have been closed by an earlier one's
             * processing: ENOTFOUND then, which is fine. */
            pgw_pq_listener_process(l, l->pfd[i].fd, ev, NULL);
        }
        if (pgwi_now_ms() >= deadline) {
            pgw_pq_listener_tick(NULL, l, NULL);
            return PGW_OK;
        }
    }
}
