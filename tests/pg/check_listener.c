/*
 * tests/pg/check_listener.c — the listener against the real server:
 * notifications reach the index and the callback; tenants in two
 * databases of one server stay isolated; a terminated backend, an idle
 * close and an eviction each end in a scope reset when the tenant listens
 * again, so a write made meanwhile is covered; capped exponential backoff;
 * connection timeouts; undecodable payloads; the event-loop integration
 * (sockets, process, tick); the index's clock; the GAP events of a
 * partition made after its table was watched; bad arguments and
 * allocation failures.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pgw_test.h"
#include "pgwt_stream.h"
#include "pgwitness/pgwitness-pq.h"

/* ------------------------------------------------------------------ */
/* helpers                                                              */

typedef struct rec {
    char events[64][256];
    bool reset[64]; /* each event's `reset` */
    int n_events;
    int writes;
    char last_write[1024];
} rec;

static void on_event(const pgw_pq_listener_event *ev, void *ud)
{
    rec *r = ud;
    if (r->n_events < 64)
        r->reset[r->n_events] = ev->reset;
    if (r->n_events < 64)
        snprintf(r->events[r->n_events++], sizeof r->events[0], "%s %s %d %u %s",
                 pgwt_event_kind_name(ev->kind), ev->scope->tenant ? ev->scope->tenant : "-", ev->status,
                 ev->retry_ms, ev->message);
}

static void on_write(pgw_pq_tenant_id t, const pgw_write *w, void *ud)
{
    (void)t;
    rec *r = ud;
    r->writes++;
    char *json = NULL;
    ck_assert_int_eq(pgw_write_to_json(&json, NULL, w, NULL), PGW_OK);
    snprintf(r->last_write, sizeof r->last_write, "%s", json);
    pgw_free(json);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pgw_pq_tenant_info info(pgw_pq_listener *l, pgw_pq_tenant_id t)
{
    pgw_pq_tenant_info i;
    ck_assert_int_eq(pgw_pq_listener_tenant(&i, l, t, NULL), PGW_OK);
    return i;
}

/* Runs the listener until its tenant reaches a state (or counts), at
 * most 10 s. */
static void run_until_state(pgw_pq_listener *l, pgw_pq_tenant_id t, pgw_pq_tenant_state st)
{
    long long end = now_ms() + 10000;
    while (info(l, t).state != st) {
        ck_assert_msg(now_ms() < end, "tenant never reached state %d (is %d)", st,
                      info(l, t).state);
        ck_assert_int_eq(pgw_pq_listener_run(l, 10, NULL), PGW_OK);
    }
}

static void run_until_notifications(pgw_pq_listener *l, pgw_pq_tenant_id t, uint64_t n)
{
    long long end = now_ms() + 10000;
    while (info(l, t).notifications < n) {
        ck_assert_msg(now_ms() < end, "only %llu of %llu notifications arrived",
                      (unsigned long long)info(l, t).notifications, (unsigned long long)n);
        ck_assert_int_eq(pgw_pq_listener_run(l, 10, NULL), PGW_OK);
    }
}

/* The dirty runners as "query:REASON" in query order, acknowledged. */
static char *drain(pgw_index *idx)
{
    static char out[2048];
    char items[32][96];
    int n = 0;
    pgw_dirty d;
    while (pgw_index_pop_dirty(&d, idx) == PGW_OK) {
        pgw_runner_info ri;
        ck_assert_int_eq(pgw_index_runner(&ri, idx, d.runner, NULL), PGW_OK);
        ck_assert_int_lt(n, 32);
        snprintf(items[n++], sizeof items[0], "%s:%s", ri.query, pgw_reason_name(d.reason));
        ck_assert_int_eq(pgw_index_ack_unknown(idx, d.runner, NULL), PGW_OK);
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(items[j - 1], items[j]) > 0; j--) {
            char tmp[96];
            memcpy(tmp, items[j], sizeof tmp);
            memcpy(items[j], items[j - 1], sizeof tmp);
            memcpy(items[j - 1], tmp, sizeof tmp);
        }
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(out, ",");
        strcat(out, items[i]);
    }
    return out;
}

static pgw_runner_id subscribe(pgw_index *idx, const char *tenant, const char *db,
                               const char *query, const char *tables)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"scope\":{\"project\":\"p\",\"tenant\":\"%s\",\"database\":\"%s\"},"
             "\"query\":\"%s\",\"tables\":%s}",
             tenant, db, query, tables);
    pgw_deps *d = NULL;
    pgw_error err;
    ck_assert_msg(pgw_deps_from_json(&d, json, strlen(json), &err) == PGW_OK, "%s: %s", json,
                  err.message);
    pgw_runner_id r;
    ck_assert_int_eq(pgw_index_register(&r, idx, d, &err), PGW_OK);
    pgw_deps_free(d);
    return r;
}

/* A database of this test program with the library installed and a
 * watched table tasks (id, title, status, updated_at). */
static void prepare_db(const char *db, bool create)
{
    char sql[512];
    if (create) {
        PGconn *a = pgwt_connect_opts("dbname=postgres");
        ck_assert_ptr_nonnull(a);
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", db);
        pgwt_exec(a, sql);
        snprintf(sql, sizeof sql, "CREATE DATABASE \"%s\"", db);
        pgwt_exec(a, sql);
        PQfinish(a);
    }
    snprintf(sql, sizeof sql, "dbname=%s", db);
    PGconn *c = pgwt_connect_opts(sql);
    ck_assert_ptr_nonnull(c);
    pgwt_exec(c, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS pgwitness CASCADE; "
                 "DROP TABLE IF EXISTS tasks; RESET client_min_messages; "
                 "CREATE TABLE tasks (id int PRIMARY KEY, title text, status text, "
                 "updated_at timestamptz DEFAULT now())");
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install(NULL, c, NULL, &err), PGW_OK);
    static const char *const V[] = {"status"};
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.value_columns = V;
    o.n_value_columns = 1;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "tasks", &o, &err), PGW_OK);
    PQfinish(c);
}

static void drop_db(const char *db)
{
    PGconn *a = pgwt_connect_opts("dbname=postgres");
    ck_assert_ptr_nonnull(a);
    char sql[256];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", db);
    pgwt_exec(a, sql);
    PQfinish(a);
}

static char *conninfo(const char *db)
{
    static char buf[4][256];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "dbname=%s", db);
    return b;
}

/* A tenant of scope (p, tenant, db) on db, touched and run until LISTEN is
 * in effect. */
static pgw_pq_tenant_id listening_tenant(pgw_pq_listener *l, const pgw_scope *scope,
                                         const char *db)
{
    pgw_pq_tenant_id t;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, scope, conninfo(db), NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    return t;
}

/* The tasks.list subscriptions of the source design, open and done. */
static void tasks_subscriptions(pgw_index *idx, const char *tenant, const char *db)
{
    subscribe(idx, tenant, db, "tasks.open",
              "[{\"schema\":\"public\",\"table\":\"tasks\","
              "\"columns\":[\"id\",\"title\",\"status\",\"updated_at\"],"
              "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"open\"]}],"
              "\"order_by\":[\"updated_at\"],\"limit\":20}]");
    subscribe(idx, tenant, db, "tasks.done",
              "[{\"schema\":\"public\",\"table\":\"tasks\","
              "\"columns\":[\"id\",\"title\",\"status\",\"updated_at\"],"
              "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"done\"]}],"
              "\"order_by\":[\"updated_at\"],\"limit\":20}]");
    subscribe(idx, tenant, db, "other.table",
              "[{\"schema\":\"public\",\"table\":\"projects\"}]");
}

static pgw_pq_listener *new_listener(pgw_index *idx, rec *r, uint32_t idle_ms,
                                     size_t max_conn)
{
    pgw_pq_listener_options o = PGW_PQ_LISTENER_OPTIONS_INIT;
    o.index = idx;
    o.on_event = on_event;
    o.on_write = on_write;
    o.userdata = r;
    o.idle_timeout_ms = idle_ms;
    o.max_connections = max_conn;
    o.backoff_initial_ms = 50;
    o.backoff_max_ms = 300;
    o.connect_timeout_ms = 2000;
    pgw_pq_listener *l = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_listener_new(&l, &o, &err), PGW_OK);
    return l;
}

/* ------------------------------------------------------------------ */
/* delivery                                                             */

START_TEST(notifications_reach_index_and_callback)
{
    const char *db = pgwt_dbname();
    prepare_db(db, false);
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    tasks_subscriptions(idx, "acme", db);
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(idx, &r, 0, 4);
    pgw_scope scope = {"p", "acme", db};
    pgw_pq_tenant_id t;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, conninfo(db), &err), PGW_OK);
    ck_assert_int_eq(info(l, t).state, PGW_PQ_TENANT_INACTIVE);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, &err), PGW_OK);
    ck_assert_int_eq(info(l, t).state, PGW_PQ_TENANT_CONNECTING);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    /* The first LISTEN resets the scope: every runner is dirty. */
    ck_assert_str_eq(drain(idx), "other.table:SCOPE_RESET,tasks.done:SCOPE_RESET,"
                                 "tasks.open:SCOPE_RESET");
    ck_assert_int_eq(r.n_events, 1);
    ck_assert_str_eq(r.events[0], "LISTENING acme 0 0 ");
    pgw_pq_tenant_info i = info(l, t);
    ck_assert_uint_eq(i.connects, 1);
    ck_assert_int_gt(i.backend_pid, 0);

    PGconn *w = pgwt_connect();
    pgwt_exec(w, "INSERT INTO tasks (id, title, status) VALUES (1, 'write tests', 'open')");
    run_until_notifications(l, t, 1);
    ck_assert_str_eq(drain(idx), "tasks.open:INSERT_MAY_ENTER");
    ck_assert_int_eq(r.writes, 1);
    ck_assert_msg(strstr(r.last_write, "\"op\":\"insert\",\"ids\":[\"1\"]") != NULL, "%s",
                  r.last_write);
    /* open -> done: both lists; a title change of a done task: only done. */
    pgwt_exec(w, "UPDATE tasks SET status = 'done' WHERE id = 1");
    run_until_notifications(l, t, 2);
    ck_assert_str_eq(drain(idx), "tasks.done:FILTER_COLUMN_CHANGED,"
                                 "tasks.open:FILTER_COLUMN_CHANGED");
    pgwt_exec(w, "UPDATE tasks SET title = 'renamed' WHERE id = 1");
    run_until_notifications(l, t, 3);
    ck_assert_str_eq(drain(idx), "tasks.done:RESULT_UNKNOWN");
    ck_assert_int_eq(r.n_events, 1);
    PQfinish(w);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
}
END_TEST

/* Two tenants, acme and globex, in two databases of the server (the
 * second named <db>_<suffix>), with the tasks subscriptions of each in one
 * index and one listener (at most max_conn connections); not yet touched. */
typedef struct two_tenants {
    char db1[96], db2[96];
    pgw_index *idx;
    rec r;
    pgw_pq_listener *l;
    pgw_scope s1, s2;
    pgw_pq_tenant_id t1, t2;
} two_tenants;

static void two_tenants_setup(two_tenants *x, const char *suffix, size_t max_conn)
{
    memset(x, 0, sizeof *x);
    snprintf(x->db1, sizeof x->db1, "%s", pgwt_dbname());
    snprintf(x->db2, sizeof x->db2, "%s_%s", pgwt_dbname(), suffix);
    prepare_db(x->db1, false);
    prepare_db(x->db2, true);
    ck_assert_int_eq(pgw_index_new(&x->idx, NULL, NULL), PGW_OK);
    tasks_subscriptions(x->idx, "acme", x->db1);
    tasks_subscriptions(x->idx, "globex", x->db2);
    x->l = new_listener(x->idx, &x->r, 0, max_conn);
    x->s1 = (pgw_scope){"p", "acme", x->db1};
    x->s2 = (pgw_scope){"p", "globex", x->db2};
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&x->t1, x->l, &x->s1, conninfo(x->db1), NULL),
                     PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&x->t2, x->l, &x->s2, conninfo(x->db2), NULL),
                     PGW_OK);
}

START_TEST(tenants_in_two_databases_stay_isolated)
{
    two_tenants x;
    two_tenants_setup(&x, "globex", 4);
    const char *db1 = x.db1, *db2 = x.db2;
    pgw_index *idx = x.idx;
    pgw_pq_listener *l = x.l;
    pgw_pq_tenant_id t1 = x.t1, t2 = x.t2;
    pgw_scope s1 = x.s1, s2 = x.s2;
    ck_assert_int_eq(pgw_pq_listener_touch(l, t1, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t2, NULL), PGW_OK);
    run_until_state(l, t1, PGW_PQ_TENANT_LISTENING);
    run_until_state(l, t2, PGW_PQ_TENANT_LISTENING);
    drain(idx);
    PGconn *w1 = pgwt_connect_opts(conninfo(db1)), *w2 = pgwt_connect_opts(conninfo(db2));
    ck_assert_ptr_nonnull(w1);
    ck_assert_ptr_nonnull(w2);
    for (int k = 1; k <= 20; k++) {
        char sql[160];
        PGconn *w = k % 2 ? w1 : w2;
        snprintf(sql, sizeof sql, "INSERT INTO tasks (id, title, status) VALUES (%d, 't', '%s')",
                 k, k % 4 < 2 ? "open" : "done");
        pgwt_exec(w, sql);
        run_until_notifications(l, k % 2 ? t1 : t2, (uint64_t)(k + 1) / 2);
        pgw_dirty d;
        int n = 0;
        while (pgw_index_pop_dirty(&d, idx) == PGW_OK) {
            pgw_runner_info ri;
            ck_assert_int_eq(pgw_index_runner(&ri, idx, d.runner, NULL), PGW_OK);
            /* Which tenant owns it: the scope of its declaration. */
            pgw_verdict v;
            pgw_scope other = k % 2 ? s2 : s1;
            pgw_write *probe = NULL;
            ck_assert_int_eq(pgw_write_new_reset(&probe, &other, NULL), PGW_OK);
            ck_assert_int_eq(pgw_index_decide(&v, idx, d.runner, probe, NULL), PGW_OK);
            ck_assert_msg(v.reason == PGW_REASON_SCOPE_DISJOINT,
                          "write %d in %s marked %s of the other tenant", k,
                          k % 2 ? "acme" : "globex", ri.query);
            pgw_write_free(probe);
            ck_assert_int_eq(pgw_index_ack_unknown(idx, d.runner, NULL), PGW_OK);
            n++;
        }
        ck_assert_int_eq(n, 1); /* tasks.open or tasks.done of the writer's tenant */
    }
    ck_assert_uint_eq(info(l, t1).notifications, 10);
    ck_assert_uint_eq(info(l, t2).notifications, 10);
    PQfinish(w1);
    PQfinish(w2);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
    drop_db(db2);
}
END_TEST

/* ------------------------------------------------------------------ */
/* losing the connection                                                */

START_TEST(terminated_backend_reconnects_and_resets)
{
    const char *db = pgwt_dbname();
    prepare_db(db, false);
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    tasks_subscriptions(idx, "acme", db);
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(idx, &r, 0, 4);
    pgw_scope scope = {"p", "acme", db};
    pgw_pq_tenant_id t = listening_tenant(l, &scope, db);
    drain(idx);
    int pid = info(l, t).backend_pid;
    PGconn *w = pgwt_connect();
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d, 5000)", pid);
    char *ok = pgwt_value(w, sql);
    ck_assert_str_eq(ok, "t");
    free(ok);
    /* Written while nobody listens: this notification is lost. */
    pgwt_exec(w, "INSERT INTO tasks (id, title, status) VALUES (1, 'missed', 'done')");
    ck_assert_str_eq(drain(idx), "");
    run_until_state(l, t, PGW_PQ_TENANT_RETRYING);
    ck_assert_int_eq(r.n_events, 2);
    ck_assert_msg(strncmp(r.events[1], "LOST acme -7 50 connection lost: ", 33) == 0, "%s",
                  r.events[1]);
    /* The server's reason, which libpq would have printed, is kept. */
    ck_assert_msg(strstr(r.events[1], "terminating connection due to administrator command"),
                  "%s", r.events[1]);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    ck_assert_int_eq(r.n_events, 3);
    ck_assert_str_eq(r.events[2], "LISTENING acme 0 0 ");
    /* The reset covers the missed write (tasks.done would have refreshed). */
    ck_assert_str_eq(drain(idx), "other.table:SCOPE_RESET,tasks.done:SCOPE_RESET,"
                                 "tasks.open:SCOPE_RESET");
    pgw_pq_tenant_info i = info(l, t);
    ck_assert_uint_eq(i.connects, 2);
    ck_assert_uint_eq(i.failures, 1);
    ck_assert_uint_eq(i.notifications, 0);
    ck_assert_int_ne(i.backend_pid, pid);
    /* And notifications flow again. */
    pgwt_exec(w, "UPDATE tasks SET title = 'seen' WHERE id = 1");
    run_until_notifications(l, t, 1);
    ck_assert_str_eq(drain(idx), "tasks.done:RESULT_UNKNOWN");
    PQfinish(w);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
}
END_TEST

START_TEST(idle_close_and_reopen_reset)
{
    const char *db = pgwt_dbname();
    prepare_db(db, false);
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    tasks_subscriptions(idx, "acme", db);
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(idx, &r, 300, 4);
    pgw_scope scope = {"p", "acme", db};
    pgw_pq_tenant_id t;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, conninfo(db), NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    drain(idx);
    /* Touching keeps it open past the idle time. */
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(pgw_pq_listener_run(l, 100, NULL), PGW_OK);
        ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    }
    ck_assert_int_eq(info(l, t).state, PGW_PQ_TENANT_LISTENING);
    long long t0 = now_ms();
    run_until_state(l, t, PGW_PQ_TENANT_INACTIVE);
    ck_assert_int_ge(now_ms() - t0, 150);
    ck_assert_int_eq(r.n_events, 2);
    ck_assert_str_eq(r.events[1], "CLOSED_IDLE acme 0 0 ");
    size_t ns;
    ck_assert_int_eq(pgw_pq_listener_sockets(&ns, NULL, 0, l, NULL), PGW_OK);
    ck_assert_uint_eq(ns, 0);
    PGconn *w = pgwt_connect();
    pgwt_exec(w, "INSERT INTO tasks (id, title, status) VALUES (1, 'while closed', 'open')");
    ck_assert_int_eq(pgw_pq_listener_run(l, 50, NULL), PGW_OK);
    ck_assert_str_eq(drain(idx), "");
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    ck_assert_str_eq(drain(idx), "other.table:SCOPE_RESET,tasks.done:SCOPE_RESET,"
                                 "tasks.open:SCOPE_RESET");
    ck_assert_uint_eq(info(l, t).connects, 2);
    ck_assert_uint_eq(info(l, t).failures, 0);
    PQfinish(w);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
}
END_TEST

START_TEST(cap_closes_the_least_recently_touched)
{
    two_tenants x;
    two_tenants_setup(&x, "cap", 1);
    const char *db1 = x.db1, *db2 = x.db2;
    pgw_index *idx = x.idx;
    pgw_pq_listener *l = x.l;
    pgw_pq_tenant_id t1 = x.t1, t2 = x.t2;
    ck_assert_int_eq(pgw_pq_listener_touch(l, t1, NULL), PGW_OK);
    run_until_state(l, t1, PGW_PQ_TENANT_LISTENING);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t2, NULL), PGW_OK);
    ck_assert_int_eq(info(l, t1).state, PGW_PQ_TENANT_INACTIVE);
    ck_assert_str_eq(x.r.events[1], "CLOSED_EVICTED acme 0 0 ");
    run_until_state(l, t2, PGW_PQ_TENANT_LISTENING);
    drain(idx);
    PGconn *w = pgwt_connect_opts(conninfo(db1));
    pgwt_exec(w, "INSERT INTO tasks (id, title, status) VALUES (1, 'while evicted', 'open')");
    ck_assert_int_eq(pgw_pq_listener_touch(l, t1, NULL), PGW_OK);
    ck_assert_int_eq(info(l, t2).state, PGW_PQ_TENANT_INACTIVE);
    run_until_state(l, t1, PGW_PQ_TENANT_LISTENING);
    ck_assert_str_eq(drain(idx), "other.table:SCOPE_RESET,tasks.done:SCOPE_RESET,"
                                 "tasks.open:SCOPE_RESET");
    ck_assert_int_eq(x.r.n_events, 5);
    ck_assert_str_eq(x.r.events[3], "CLOSED_EVICTED globex 0 0 ");
    PQfinish(w);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
    drop_db(db2);
}
END_TEST

START_TEST(failed_attempts_back_off_exponentially)
{
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(NULL, &r, 0, 4);
    pgw_scope scope = {"p", "nowhere", "db"};
    pgw_pq_tenant_id t;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope,
                                                "host=/nonexistent-pgwitness-dir port=1",
                                                NULL),
                     PGW_OK);
    long long t0 = now_ms();
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    while (r.n_events < 6)
        ck_assert_int_eq(pgw_pq_listener_run(l, 20, NULL), PGW_OK);
    long long took = now_ms() - t0;
    /* 50, 100, 200, then capped at 300: 650 ms before the 5th attempt. */
    static const unsigned want[] = {50, 100, 200, 300, 300, 300};
    for (int i = 0; i < 6; i++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "LOST nowhere -7 %u connecting: ", want[i]);
        ck_assert_msg(strncmp(r.events[i], prefix, strlen(prefix)) == 0, "event %d: %s", i,
                      r.events[i]);
    }
    ck_assert_msg(strstr(r.events[0], "/nonexistent-pgwitness-dir") != NULL, "%s", r.events[0]);
    ck_assert_int_ge(took, 950);
    ck_assert_uint_eq(info(l, t).failures, 6);
    ck_assert_int_eq(info(l, t).state, PGW_PQ_TENANT_RETRYING);
    ck_assert_uint_eq(info(l, t).retry_ms, 300);
    int64_t next = -2;
    ck_assert_int_eq(pgw_pq_listener_tick(&next, l, NULL), PGW_OK);
    ck_assert_int_ge(next, 0);
    ck_assert_int_le(next, 300);
    pgw_pq_listener_free(l);
}
END_TEST

/* A server that accepts the TCP connection and never answers: the
 * listener's own connect timeout gives up. */
START_TEST(connect_attempts_time_out)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(s, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(s, 4), 0);
    socklen_t len = sizeof a;
    ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
    char ci[128];
    snprintf(ci, sizeof ci, "host=127.0.0.1 port=%d sslmode=disable gssencmode=disable",
             ntohs(a.sin_port));
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener_options o = PGW_PQ_LISTENER_OPTIONS_INIT;
    o.on_event = on_event;
    o.userdata = &r;
    o.connect_timeout_ms = 300;
    o.backoff_initial_ms = 10000;
    o.backoff_max_ms = 10000;
    pgw_pq_listener *l = NULL;
    ck_assert_int_eq(pgw_pq_listener_new(&l, &o, NULL), PGW_OK);
    pgw_scope scope = {"p", "mute", "db"};
    pgw_pq_tenant_id t;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, ci, NULL), PGW_OK);
    long long t0 = now_ms();
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_RETRYING);
    long long took = now_ms() - t0;
    ck_assert_int_ge(took, 290);
    ck_assert_int_lt(took, 3000);
    ck_assert_int_eq(r.n_events, 1);
    ck_assert_str_eq(r.events[0], "LOST mute -7 10000 connecting timed out");
    pgw_pq_listener_free(l);
    close(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* payloads that are not faithful                                        */

START_TEST(undecodable_payloads_fall_back)
{
    const char *db = pgwt_dbname();
    prepare_db(db, false);
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    tasks_subscriptions(idx, "acme", db);
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(idx, &r, 0, 4);
    pgw_scope scope = {"p", "acme", db};
    pgw_pq_tenant_id t;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, conninfo(db), NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    drain(idx);
    PGconn *w = pgwt_connect();
    /* Not JSON: a scope reset. */
    pgwt_exec(w, "NOTIFY pgwitness, 'not json'");
    run_until_notifications(l, t, 1);
    ck_assert_str_eq(drain(idx), "other.table:SCOPE_RESET,tasks.done:SCOPE_RESET,"
                                 "tasks.open:SCOPE_RESET");
    ck_assert_int_eq(r.n_events, 2);
    ck_assert_msg(strncmp(r.events[1], "FALLBACK acme -4 0 ", 19) == 0, "%s", r.events[1]);
    /* Naming a table, another version: an unknown write to that table. */
    pgwt_exec(w, "NOTIFY pgwitness, '{\"version\":2,\"schema\":\"public\",\"table\":\"tasks\"}'");
    run_until_notifications(l, t, 2);
    ck_assert_str_eq(drain(idx), "tasks.done:WRITE_UNKNOWN,tasks.open:WRITE_UNKNOWN");
    ck_assert_str_eq(r.events[2], "FALLBACK acme -9 0 $.version: payload version 2 is not 1");
    /* Other channels are not ours. */
    pgwt_exec(w, "LISTEN elsewhere; NOTIFY elsewhere, 'x'; UNLISTEN elsewhere");
    ck_assert_int_eq(pgw_pq_listener_run(l, 50, NULL), PGW_OK);
    ck_assert_uint_eq(info(l, t).notifications, 2);
    ck_assert_int_eq(r.writes, 2);
    PQfinish(w);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the event-loop integration, without pgw_pq_listener_run              */

START_TEST(driven_by_an_external_poll_loop)
{
    const char *db = pgwt_dbname();
    prepare_db(db, false);
    rec r;
    memset(&r, 0, sizeof r);
    /* Callbacks only, no index. */
    pgw_pq_listener_options o = PGW_PQ_LISTENER_OPTIONS_INIT;
    o.on_write = on_write;
    o.on_event = on_event;
    o.userdata = &r;
    pgw_pq_listener *l = NULL;
    ck_assert_int_eq(pgw_pq_listener_new(&l, &o, NULL), PGW_OK);
    pgw_scope scope = {"p", "acme", db};
    pgw_pq_tenant_id t;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, conninfo(db), NULL), PGW_OK);
    size_t n = 99;
    ck_assert_int_eq(pgw_pq_listener_sockets(&n, NULL, 0, l, NULL), PGW_OK);
    ck_assert_uint_eq(n, 0);
    int64_t next = 0;
    ck_assert_int_eq(pgw_pq_listener_tick(&next, l, NULL), PGW_OK);
    ck_assert_int_eq(next, -1);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_tick(&next, l, NULL), PGW_OK);
    ck_assert_int_gt(next, 9000); /* the connect timeout, 10 s */
    PGconn *w = pgwt_connect();
    bool written = false;
    long long end = now_ms() + 10000;
    while (r.writes == 0) {
        ck_assert(now_ms() < end);
        pgw_pq_listener_socket s[2];
        ck_assert_int_eq(pgw_pq_listener_sockets(&n, s, 2, l, NULL), PGW_OK);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(s[0].tenant, t);
        ck_assert(s[0].events == PGW_PQ_WAIT_READ || s[0].events == PGW_PQ_WAIT_WRITE ||
                  s[0].events == (PGW_PQ_WAIT_READ | PGW_PQ_WAIT_WRITE));
        struct pollfd p = {s[0].fd, (short)(((s[0].events & PGW_PQ_WAIT_READ) ? POLLIN : 0) |
                                            ((s[0].events & PGW_PQ_WAIT_WRITE) ? POLLOUT : 0)),
                           0};
        if (poll(&p, 1, 100) > 0)
            ck_assert_int_eq(pgw_pq_listener_process(l, p.fd,
                                                     ((p.revents & POLLIN) ? PGW_PQ_WAIT_READ : 0u) |
                                                     ((p.revents & POLLOUT) ? PGW_PQ_WAIT_WRITE : 0u),
                                                     NULL),
                             PGW_OK);
        ck_assert_int_eq(pgw_pq_listener_tick(NULL, l, NULL), PGW_OK);
        if (!written && info(l, t).state == PGW_PQ_TENANT_LISTENING) {
            ck_assert_int_eq(pgw_pq_listener_tick(&next, l, NULL), PGW_OK);
            ck_assert_int_gt(next, 290000); /* the idle timeout: 300 s by default */
            pgwt_exec(w, "INSERT INTO tasks (id, title, status) VALUES (9, 'x', 'open')");
            written = true;
        }
    }
    ck_assert_msg(strstr(r.last_write, "\"ids\":[\"9\"]") != NULL, "%s", r.last_write);
    pgw_error err;
    ck_assert_int_eq(pgw_pq_listener_process(l, 9999, PGW_PQ_WAIT_READ, &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "pq_listener_process: no connection has socket 9999");
    ck_assert_int_eq(pgw_pq_listener_remove_tenant(l, t, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_sockets(&n, NULL, 0, l, NULL), PGW_OK);
    ck_assert_uint_eq(n, 0);
    PQfinish(w);
    pgw_pq_listener_free(l);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the index's clock                                                     */

/* The listener drives its index's clock: a time-dependent runner becomes
 * dirty (CLOCK) one interval after its rerun started, with no write; the
 * same query without the flag does not; tick's delay includes the clock's
 * deadline. */
START_TEST(time_dependent_runners_follow_the_clock)
{
    const char *db = pgwt_dbname();
    prepare_db(db, false);
    pgw_index_options io = PGW_INDEX_OPTIONS_INIT;
    io.clock_interval_ms = 300;
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, &io, NULL), PGW_OK);
    const char *tables = "[{\"schema\":\"public\",\"table\":\"tasks\",\"filters\":"
                         "[{\"column\":\"updated_at\",\"op\":\"opaque\"}]}]";
    subscribe(idx, "acme", db, "tasks.recent", tables);
    char json[1024];
    snprintf(json, sizeof json,
             "{\"scope\":{\"project\":\"p\",\"tenant\":\"acme\",\"database\":\"%s\"},"
             "\"query\":\"tasks.recent.now\",\"tables\":%s,\"time_dependent\":true}",
             db, tables);
    pgw_deps *d = NULL;
    ck_assert_int_eq(pgw_deps_from_json(&d, json, strlen(json), NULL), PGW_OK);
    pgw_runner_id timed;
    ck_assert_int_eq(pgw_index_register(&timed, idx, d, NULL), PGW_OK);
    pgw_deps_free(d);
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(idx, &r, 0, 4);
    pgw_scope scope = {"p", "acme", db};
    listening_tenant(l, &scope, db);
    /* Registered before the index had a time, the timed runner may have
     * been marked by the clock at the first tick, or by the reset first. */
    pgw_runner_info ri;
    ck_assert_int_eq(pgw_index_runner(&ri, idx, timed, NULL), PGW_OK);
    ck_assert_int_eq(ri.state, PGW_RUNNER_DIRTY);
    ck_assert(ri.reason == PGW_REASON_CLOCK || ri.reason == PGW_REASON_SCOPE_RESET);
    /* The reruns start at the index's time, which the last tick set: take
     * t0 just before a tick, so every rerun below starts at t0 or later and
     * the clock cannot mark one before t0 + 300. */
    long long t0 = now_ms();
    int64_t delay = -2;
    ck_assert_int_eq(pgw_pq_listener_tick(&delay, l, NULL), PGW_OK);
    drain(idx);
    ck_assert_int_eq(pgw_pq_listener_tick(&delay, l, NULL), PGW_OK);
    ck_assert_str_eq(drain(idx), "");
    ck_assert_int_eq(pgw_pq_listener_tick(&delay, l, NULL), PGW_OK);
    ck_assert_int_ge(delay, 0);
    ck_assert_int_le(delay, 300);
    long long end = t0 + 10000;
    for (;;) {
        ck_assert_int_eq(pgw_index_runner(&ri, idx, timed, NULL), PGW_OK);
        if (ri.state == PGW_RUNNER_DIRTY)
            break;
        ck_assert_msg(now_ms() < end, "the clock never marked the time-dependent runner");
        ck_assert_int_eq(pgw_pq_listener_run(l, 10, NULL), PGW_OK);
    }
    ck_assert_int_ge(now_ms() - t0, 300);
    ck_assert_str_eq(drain(idx), "tasks.recent.now:CLOCK");
    ck_assert_int_eq(r.writes, 0); /* no write was involved */
    pgw_index_stats st = PGW_INDEX_STATS_INIT;
    ck_assert_int_eq(pgw_index_stats_get(&st, idx), PGW_OK);
    ck_assert_uint_ge(st.clocked, 1);
    ck_assert_uint_eq(st.time_dependent, 1);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
}
END_TEST

/* ------------------------------------------------------------------ */
/* arguments and memory                                                  */

/* ------------------------------------------------------------------ */
/* gaps                                                                 */

#define PARTS_GAP                                                                              \
    "GAP acme 0 0 public.parts_2 is a partition of public.parts without pgwitness's triggers, " \
    "so its writes are not sent: watch public.parts again (pgw_pq_watch_table) to add them"

/* prepare_db's database, and a partitioned table parts watched on the
 * default channel whose partition parts_2 was created after the watch (no
 * DDL event trigger: it has no triggers), and a table on another channel
 * with a child made after its watch (not this tenant's gap). */
static void prepare_gaps(const char *db)
{
    prepare_db(db, false);
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "SET client_min_messages = warning; "
                 "DROP TABLE IF EXISTS parts, elsewhere CASCADE; RESET client_min_messages; "
                 "CREATE TABLE parts (id int, k int, PRIMARY KEY (id, k)) PARTITION BY LIST (k); "
                 "CREATE TABLE parts_1 PARTITION OF parts FOR VALUES IN (1); "
                 "CREATE TABLE elsewhere (id int PRIMARY KEY)");
    pgw_error err;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "parts", NULL, &err), PGW_OK);
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.channel = "elsewhere";
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "elsewhere", &o, &err), PGW_OK);
    pgwt_exec(c, "CREATE TABLE parts_2 PARTITION OF parts FOR VALUES IN (2); "
                 "CREATE TABLE elsewhere_child () INHERITS (elsewhere)");
    /* What pgw_pq_watch_gaps() lists: both; the tenant reports its own. */
    pgw_pq_watch_gap *g = NULL;
    size_t n = 0;
    ck_assert_int_eq(pgw_pq_watch_gaps(&g, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 2);
    pgw_free(g);
    PQfinish(c);
}

START_TEST(gaps_of_the_triggers_at_connect)
{
    const char *db = pgwt_dbname();
    prepare_gaps(db);
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    subscribe(idx, "acme", db, "parts.all", "[{\"schema\":\"public\",\"table\":\"parts\"}]");
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(idx, &r, 0, 4);
    pgw_scope scope = {"p", "acme", db};
    pgw_pq_tenant_id t = listening_tenant(l, &scope, db);
    /* One GAP, before LISTENING, which resets the scope; the GAP does not
     * (a reset cannot cover the partition's writes from now on). */
    ck_assert_int_eq(r.n_events, 2);
    ck_assert_str_eq(r.events[0], PARTS_GAP);
    ck_assert(!r.reset[0]);
    ck_assert_str_eq(r.events[1], "LISTENING acme 0 0 ");
    ck_assert(r.reset[1]);
    ck_assert_str_eq(drain(idx), "parts.all:SCOPE_RESET");
    /* What the GAP says: a write into parts_2 is not sent, one into
     * parts_1 is. */
    PGconn *w = pgwt_connect();
    pgwt_exec(w, "INSERT INTO parts VALUES (1, 2)");
    pgwt_exec(w, "INSERT INTO parts_2 VALUES (2, 2)");
    pgwt_exec(w, "INSERT INTO parts_1 VALUES (3, 1)");
    run_until_notifications(l, t, 2);
    ck_assert_int_eq(pgw_pq_listener_run(l, 100, NULL), PGW_OK);
    ck_assert_uint_eq(info(l, t).notifications, 2);
    ck_assert_str_eq(drain(idx), "parts.all:INSERT_MAY_ENTER");

    /* Watched again: no GAP at the next reconnect, and parts_2 sends. */
    pgw_error err;
    ck_assert_int_eq(pgw_pq_watch_table(w, "public", "parts", NULL, &err), PGW_OK);
    int pid = info(l, t).backend_pid;
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d, 5000)", pid);
    char *ok = pgwt_value(w, sql);
    ck_assert_str_eq(ok, "t");
    free(ok);
    run_until_state(l, t, PGW_PQ_TENANT_RETRYING);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    ck_assert_int_eq(r.n_events, 4);
    ck_assert_msg(strncmp(r.events[2], "LOST acme -7 50 connection lost: ", 33) == 0, "%s",
                  r.events[2]);
    ck_assert_str_eq(r.events[3], "LISTENING acme 0 0 ");
    ck_assert_uint_eq(info(l, t).connects, 2);
    ck_assert_str_eq(drain(idx), "parts.all:SCOPE_RESET");
    pgwt_exec(w, "INSERT INTO parts_2 VALUES (4, 2)");
    run_until_notifications(l, t, 3);
    ck_assert_str_eq(drain(idx), "parts.all:INSERT_MAY_ENTER");
    ck_assert_msg(strstr(r.last_write, "\"table\":\"parts\",\"op\":\"insert\",\"ids\":[[\"4\",\"2\"]]"),
                  "%s", r.last_write);
    PQfinish(w);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
}
END_TEST

/* A watched table dropped and made again by a role without USAGE on the
 * library schema (the DDL event triggers could do nothing for it): no
 * triggers, and a GAP at connect that says so, on the channel it was
 * watched on. */
START_TEST(table_made_again_unwatched_is_a_gap_at_connect)
{
    const char *db = pgwt_dbname();
    prepare_db(db, false);
    PGconn *c = pgwt_connect();
    pgw_error err;
    pgwt_exec(c, "SET client_min_messages = warning; DROP TABLE IF EXISTS parts, elsewhere, gone "
                 "CASCADE; DROP ROLE IF EXISTS pgwt_listen_nousage; RESET client_min_messages; "
                 "CREATE ROLE pgwt_listen_nousage; CREATE TABLE gone (id int PRIMARY KEY); "
                 "ALTER TABLE gone OWNER TO pgwt_listen_nousage; "
                 "GRANT CREATE ON SCHEMA public TO pgwt_listen_nousage");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "gone", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "SET client_min_messages = error; SET ROLE pgwt_listen_nousage; DROP TABLE gone; "
                 "CREATE TABLE gone (id int PRIMARY KEY); RESET ROLE; RESET client_min_messages");
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(NULL, &r, 0, 4);
    pgw_scope scope = {"p", "acme", db};
    listening_tenant(l, &scope, db);
    ck_assert_int_eq(r.n_events, 2);
    ck_assert_str_eq(r.events[0],
                     "GAP acme 0 0 public.gone was watched by the triggers (channel pgwitness) "
                     "before it was dropped, and was made again without them, so its writes are "
                     "not sent: watch public.gone again (pgw_pq_watch_table)");
    ck_assert_str_eq(r.events[1], "LISTENING acme 0 0 ");
    pgw_pq_listener_free(l);
    pgwt_exec(c, "DROP TABLE gone; DELETE FROM pgwitness.trigger_watches; "
                 "REVOKE CREATE ON SCHEMA public FROM pgwt_listen_nousage; "
                 "DROP ROLE pgwt_listen_nousage");
    PQfinish(c);
}
END_TEST

/* The gaps cannot be read: the tenant listens all the same, without GAP
 * events (it needs no privilege on the library schema). */
START_TEST(unreadable_gaps_do_not_fail_the_tenant)
{
    const char *db = pgwt_dbname();
    prepare_gaps(db);
    char role[128], sql[512], ci[256];
    snprintf(role, sizeof role, "%s_listen", db);
    PGconn *c = pgwt_connect();
    snprintf(sql, sizeof sql,
             "SET client_min_messages = warning; DROP ROLE IF EXISTS \"%s\"; "
             "RESET client_min_messages; CREATE ROLE \"%s\" LOGIN",
             role, role);
    pgwt_exec(c, sql);
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(NULL, &r, 0, 4);
    pgw_scope scope = {"p", "acme", db};
    pgw_pq_tenant_id t;
    snprintf(ci, sizeof ci, "dbname=%s user=%s", db, role);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, ci, NULL), PGW_OK);
    /* 1. No USAGE on the schema: the schema is not read at all. */
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    ck_assert_int_eq(r.n_events, 1);
    ck_assert_str_eq(r.events[0], "LISTENING acme 0 0 ");
    /* 2. USAGE, but a function below_plan() calls may not be run: the
     * server refuses the gaps query. With it granted: the GAP. */
    snprintf(sql, sizeof sql,
             "GRANT USAGE ON SCHEMA pgwitness TO \"%s\"; "
             "REVOKE EXECUTE ON FUNCTION pgwitness.stream_watched(regclass) FROM PUBLIC",
             role);
    pgwt_exec(c, sql);
    ck_assert_int_eq(pgw_pq_listener_remove_tenant(l, t, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, ci, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    ck_assert_int_eq(r.n_events, 2);
    ck_assert_str_eq(r.events[1], "LISTENING acme 0 0 ");
    ck_assert_uint_eq(info(l, t).failures, 0);
    pgwt_exec(c, "GRANT EXECUTE ON FUNCTION pgwitness.stream_watched(regclass) TO PUBLIC");
    ck_assert_int_eq(pgw_pq_listener_remove_tenant(l, t, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, ci, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    ck_assert_int_eq(r.n_events, 4);
    ck_assert_str_eq(r.events[2], PARTS_GAP);
    ck_assert_str_eq(r.events[3], "LISTENING acme 0 0 ");
    /* 3. No library schema: nothing to read. */
    pgwt_exec(c, "SET client_min_messages = warning; DROP SCHEMA pgwitness CASCADE; "
                 "RESET client_min_messages");
    ck_assert_int_eq(pgw_pq_listener_remove_tenant(l, t, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, ci, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    ck_assert_int_eq(r.n_events, 5);
    ck_assert_str_eq(r.events[4], "LISTENING acme 0 0 ");
    pgw_pq_listener_free(l);
    snprintf(sql, sizeof sql, "DROP OWNED BY \"%s\"; DROP ROLE \"%s\"", role, role);
    pgwt_exec(c, sql);
    PQfinish(c);
}
END_TEST

START_TEST(bad_arguments)
{
    pgw_error err;
    pgw_pq_listener *l = (pgw_pq_listener *)0x1;
    pgw_pq_listener_options o = PGW_PQ_LISTENER_OPTIONS_INIT;
    ck_assert_int_eq(pgw_pq_listener_new(NULL, NULL, &err), PGW_EINVAL);
    o.version = 7;
    ck_assert_int_eq(pgw_pq_listener_new(&l, &o, &err), PGW_EINVAL);
    o = (pgw_pq_listener_options)PGW_PQ_LISTENER_OPTIONS_INIT;
    o.max_connections = 0;
    ck_assert_int_eq(pgw_pq_listener_new(&l, &o, &err), PGW_EINVAL);
    o = (pgw_pq_listener_options)PGW_PQ_LISTENER_OPTIONS_INIT;
    o.backoff_max_ms = 10;
    ck_assert_int_eq(pgw_pq_listener_new(&l, &o, &err), PGW_EINVAL);
    o = (pgw_pq_listener_options)PGW_PQ_LISTENER_OPTIONS_INIT;
    o.connect_timeout_ms = 0;
    ck_assert_int_eq(pgw_pq_listener_new(&l, &o, &err), PGW_EINVAL);
    o = (pgw_pq_listener_options)PGW_PQ_LISTENER_OPTIONS_INIT;
    o.channel = "";
    ck_assert_int_eq(pgw_pq_listener_new(&l, &o, &err), PGW_EINVAL);
    ck_assert(l == (pgw_pq_listener *)0x1); /* untouched on failure */
    ck_assert_int_eq(pgw_pq_listener_new(&l, NULL, &err), PGW_OK);

    pgw_scope s = {"p", "acme", "db"};
    pgw_pq_tenant_id t = 77, t2;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(NULL, l, &s, "dbname=x", &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, NULL, &s, "dbname=x", &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, NULL, "dbname=x", &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &s, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &s, "", &err), PGW_EINVAL);
    pgw_scope bad = {"p", "ac\xc3", "db"};
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &bad, "dbname=x", &err), PGW_EINVAL);
    ck_assert_uint_eq(t, 77);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &s, "dbname=x", &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t2, l, &s, "dbname=y", &err), PGW_EEXISTS);
    pgw_scope s2 = {"p", NULL, "db"}; /* NULL tenant differs from "acme" */
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t2, l, &s2, "dbname=y", &err), PGW_OK);
    ck_assert_uint_ne(t, t2);

    ck_assert_int_eq(pgw_pq_listener_touch(NULL, t, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_touch(l, 12345, &err), PGW_ENOTFOUND);
    pgw_pq_tenant_info i;
    ck_assert_int_eq(pgw_pq_listener_tenant(NULL, l, t, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_tenant(&i, l, 12345, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_pq_listener_remove_tenant(NULL, t, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_remove_tenant(l, 12345, &err), PGW_ENOTFOUND);
    size_t n;
    pgw_pq_listener_socket sk[1];
    ck_assert_int_eq(pgw_pq_listener_sockets(NULL, sk, 1, l, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_sockets(&n, NULL, 1, l, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_sockets(&n, sk, 1, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_process(NULL, 3, 1, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_tick(NULL, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_run(NULL, 0, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_run(l, -1, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_run(l, 0, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_remove_tenant(l, t, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, &err), PGW_ENOTFOUND);
    pgw_pq_listener_free(l);
    pgw_pq_listener_free(NULL);
}
END_TEST

START_TEST(allocation_failures)
{
    const char *db = pgwt_dbname();
    prepare_db(db, false);
    pgwt_alloc_install();
    /* new and add_tenant: every allocation may fail, nothing leaks. */
    bool done = false;
    for (size_t k = 1; k < 200 && !done; k++) {
        pgwt_alloc_reset();
        pgwt_alloc_fail_at(k);
        pgw_pq_listener *l = NULL;
        int rc = pgw_pq_listener_new(&l, NULL, NULL);
        pgw_pq_tenant_id t[6];
        for (int i = 0; rc == PGW_OK && i < 6; i++) {
            char tn[16];
            snprintf(tn, sizeof tn, "t%d", i);
            pgw_scope s = {"p", tn, db};
            rc = pgw_pq_listener_add_tenant(&t[i], l, &s, conninfo(db), NULL);
        }
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (failed) {
            ck_assert_int_eq(rc, PGW_ENOMEM);
        } else {
            ck_assert_int_eq(rc, PGW_OK);
            done = true;
        }
        pgw_pq_listener_free(l);
        ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    }
    ck_assert(done);
    /* A notification that cannot be decoded for lack of memory resets the
     * scope instead. */
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    tasks_subscriptions(idx, "acme", db);
    rec r;
    memset(&r, 0, sizeof r);
    pgw_pq_listener *l = new_listener(idx, &r, 0, 4);
    pgw_scope scope = {"p", "acme", db};
    pgw_pq_tenant_id t;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, conninfo(db), NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
    drain(idx);
    PGconn *w = pgwt_connect();
    pgwt_exec(w, "INSERT INTO tasks (id, title, status) VALUES (1, 'x', 'done')");
    /* Wait for the bytes, then fail the first allocation of processing. */
    pgw_pq_listener_socket sk;
    size_t n;
    ck_assert_int_eq(pgw_pq_listener_sockets(&n, &sk, 1, l, NULL), PGW_OK);
    struct pollfd p = {sk.fd, POLLIN, 0};
    ck_assert_int_eq(poll(&p, 1, 5000), 1);
    pgwt_alloc_fail_at(1);
    ck_assert_int_eq(pgw_pq_listener_process(l, sk.fd, PGW_PQ_WAIT_READ, NULL), PGW_OK);
    ck_assert(pgwt_alloc_failed());
    pgwt_alloc_fail_at(0);
    ck_assert_uint_eq(info(l, t).notifications, 1);
    ck_assert_str_eq(drain(idx), "other.table:SCOPE_RESET,tasks.done:SCOPE_RESET,"
                                 "tasks.open:SCOPE_RESET");
    ck_assert_int_eq(r.n_events, 2);
    ck_assert_msg(strncmp(r.events[1], "RESET acme -1 0 ", 16) == 0, "%s", r.events[1]);
    ck_assert_int_eq(r.writes, 0);
    PQfinish(w);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();

    /* Reading the gaps at connect: an allocation that fails there fails
     * the attempt (LOST, PGW_ENOMEM; the gap is not passed over in
     * silence), and the retry reports it. */
    prepare_gaps(db);
    pgwt_alloc_install();
    done = false;
    size_t lost = 0;
    for (size_t k = 1; k < 50 && !done; k++) {
        memset(&r, 0, sizeof r);
        l = new_listener(NULL, &r, 0, 4);
        ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, conninfo(db), NULL), PGW_OK);
        pgwt_alloc_reset();
        pgwt_alloc_fail_at(k);
        ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
        run_until_state(l, t, PGW_PQ_TENANT_LISTENING);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        int at = 0;
        if (failed) {
            ck_assert_int_eq(r.n_events, 3);
            ck_assert_str_eq(r.events[0],
                             "LOST acme -1 50 reading the watch's gaps: out of memory");
            at = 1;
            lost++;
        } else {
            ck_assert_int_eq(r.n_events, 2);
            done = true;
        }
        ck_assert_str_eq(r.events[at], PARTS_GAP);
        ck_assert_str_eq(r.events[at + 1], "LISTENING acme 0 0 ");
        pgw_pq_listener_free(l);
        ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    }
    ck_assert(done);
    ck_assert_uint_ge(lost, 3); /* the array, the query's parts, the query */
    pgwt_alloc_uninstall();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("listener");
    TCase *tc = tcase_create("listener");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, notifications_reach_index_and_callback);
    tcase_add_test(tc, tenants_in_two_databases_stay_isolated);
    tcase_add_test(tc, terminated_backend_reconnects_and_resets);
    tcase_add_test(tc, idle_close_and_reopen_reset);
    tcase_add_test(tc, cap_closes_the_least_recently_touched);
    tcase_add_test(tc, failed_attempts_back_off_exponentially);
    tcase_add_test(tc, connect_attempts_time_out);
    tcase_add_test(tc, undecodable_payloads_fall_back);
    tcase_add_test(tc, driven_by_an_external_poll_loop);
    tcase_add_test(tc, time_dependent_runners_follow_the_clock);
    tcase_add_test(tc, gaps_of_the_triggers_at_connect);
    tcase_add_test(tc, unreadable_gaps_do_not_fail_the_tenant);
    tcase_add_test(tc, table_made_again_unwatched_is_a_gap_at_connect);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("listener");
    return pgwt_main(suite());
}
