/*
 * examples/tasks/tasks.c — see tasks.h.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include "tasks.h"

#include "excommon.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TENANTS 4
#define N_SUBS 3

/* The subscriptions every tenant has: tasks.list with a status filter,
 * ordered by updated_at, a page of 20 — and a count of open tasks. */
static const struct {
    const char *key;
    const char *sql;
    const char *tables; /* declared dependencies */
    bool ids;           /* result IDs from the first column */
} SUBS[N_SUBS] = {
    {"tasks.list?status=open",
     "SELECT id, title, status, updated_at FROM tasks WHERE status = 'open' "
     "ORDER BY updated_at, id LIMIT 20",
     "[{\"schema\":\"public\",\"table\":\"tasks\","
     "\"columns\":[\"id\",\"title\",\"status\",\"updated_at\"],"
     "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"open\"]}],"
     "\"order_by\":[\"updated_at\"],\"limit\":20}]",
     true},
    {"tasks.list?status=done",
     "SELECT id, title, status, updated_at FROM tasks WHERE status = 'done' "
     "ORDER BY updated_at, id LIMIT 20",
     "[{\"schema\":\"public\",\"table\":\"tasks\","
     "\"columns\":[\"id\",\"title\",\"status\",\"updated_at\"],"
     "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"done\"]}],"
     "\"order_by\":[\"updated_at\"],\"limit\":20}]",
     true},
    {"tasks.count?status=open", "SELECT count(*) FROM tasks WHERE status = 'open'",
     "[{\"schema\":\"public\",\"table\":\"tasks\",\"columns\":[],"
     "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"open\"]}]}]",
     false},
};

typedef struct host {
    FILE *out;
    size_t n;
    const tasks_tenant *tenants;
    PGconn *conn[MAX_TENANTS];   /* the host's own connection per tenant (reruns) */
    pgw_pq_tenant_id tid[MAX_TENANTS];
    pgw_runner_id runner[MAX_TENANTS][N_SUBS];
    pgw_index *idx;
    pgw_pq_listener *l;
    long notifications, refreshes, skips;
    int lost[MAX_TENANTS], listening[MAX_TENANTS];
    int failed;
} host;

static int tenant_of(const host *h, pgw_pq_tenant_id id)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->tid[i] == id)
            return (int)i;
    return -1;
}

static bool exec_ok(host *h, PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok) {
        fprintf(h->out, "error: %s\n  %s", sql, PQresultErrorMessage(r));
        h->failed = 1;
    }
    PQclear(r);
    return ok;
}

/* Reruns a runner the index gave us and acknowledges its result IDs. */
static void rerun(host *h, int t, int s)
{
    PGresult *r = PQexec(h->conn[t], SUBS[s].sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(h->out, "error: %s", PQresultErrorMessage(r));
        h->failed = 1;
        PQclear(r);
        pgw_index_ack_unknown(h->idx, h->runner[t][s], NULL);
        return;
    }
    h->refreshes++;
    if (SUBS[s].ids) {
        int n = PQntuples(r);
        pgw_rowid ids[64];
        const char *parts[64];
        if (n == 0)
            fprintf(h->out, "  rerun %-6s %-24s no rows", h->tenants[t].name, SUBS[s].key);
        else
            fprintf(h->out, "  rerun %-6s %-24s %d row%s:", h->tenants[t].name, SUBS[s].key, n,
                    n == 1 ? "" : "s");
        for (int i = 0; i < n && i < 64; i++) {
            parts[i] = PQgetvalue(r, i, 0);
            ids[i].parts = &parts[i];
            ids[i].n_parts = 1;
            fprintf(h->out, " %s", ex_text(PQgetvalue(r, i, 1))); /* others' titles */
        }
        fputc('\n', h->out);
        pgw_index_ack(h->idx, h->runner[t][s], ids, (size_t)(n < 64 ? n : 64), NULL);
    } else {
        fprintf(h->out, "  rerun %-6s %-24s = %s\n", h->tenants[t].name, SUBS[s].key,
                PQgetvalue(r, 0, 0));
        pgw_index_ack_unknown(h->idx, h->runner[t][s], NULL);
    }
    PQclear(r);
}

/* Takes every dirty runner, then reruns them in tenant and subscription
 * order (the index pops in no particular order; the output stays stable).
 * Each rerun's snapshot is taken after its pop, as the protocol asks. */
static void rerun_dirty(host *h)
{
    pgw_dirty d;
    bool again = true;
    while (again) {
        bool due[MAX_TENANTS][N_SUBS] = {{false}};
        again = false;
        while (pgw_index_pop_dirty(&d, h->idx) == PGW_OK) {
            again = true;
            for (size_t t = 0; t < h->n; t++)
                for (int s = 0; s < N_SUBS; s++)
                    if (h->runner[t][s] == d.runner)
                        due[t][s] = true;
        }
        for (size_t t = 0; t < h->n; t++)
            for (int s = 0; s < N_SUBS; s++)
                if (due[t][s])
                    rerun(h, (int)t, s);
    }
}

/* The listener hands every write set over after matching it: print the
 * write and the decision for each subscription, with its reason. */
static void on_write(pgw_pq_tenant_id tenant, const pgw_write *w, void *ud)
{
    host *h = ud;
    int t = tenant_of(h, tenant);
    h->notifications++;
    fprintf(h->out, "notification from %s: %s %s.%s", t >= 0 ? h->tenants[t].name : "?",
            pgw_op_name(pgw_write_op(w)), pgw_write_schema(w) ? pgw_write_schema(w) : "-",
            pgw_write_table(w) ? pgw_write_table(w) : "-");
    /* docs/wire.md: an UPDATE that touched rows but changed no value (SET
     * x = x) still notifies, listing no row and no column. */
    bool unchanged =
        pgw_write_op(w) == PGW_OP_UPDATE && pgw_write_ids_known(w) && pgw_write_n_ids(w) == 0;
    if (unchanged)
        fprintf(h->out, ", rows touched, none changed");
    else if (pgw_write_op(w) == PGW_OP_INSERT || pgw_write_op(w) == PGW_OP_UPDATE ||
             pgw_write_op(w) == PGW_OP_DELETE)
        fprintf(h->out, ", %zu row%s%s", pgw_write_n_ids(w), pgw_write_n_ids(w) == 1 ? "" : "s",
                pgw_write_ids_known(w) ? "" : " (IDs unknown)");
    fputc('\n', h->out);
    if (unchanged)
        fprintf(h->out, "  no value changed: the write set lists no rows and no columns (ids [], "
                        "columns [])\n");
    for (size_t u = 0; u < h->n; u++)
        for (int s = 0; s < N_SUBS; s++) {
            pgw_verdict v;
            if (pgw_index_decide(&v, h->idx, h->runner[u][s], w, NULL) != PGW_OK)
                continue;
            fprintf(h->out, "  %-7s %-6s %-24s %s\n", v.refresh ? "refresh" : "skip",
                    h->tenants[u].name, SUBS[s].key, pgw_reason_name(v.reason));
            if (!v.refresh)
                h->skips++;
        }
}

static void on_event(const pgw_pq_listener_event *ev, void *ud)
{
    host *h = ud;
    int t = tenant_of(h, ev->tenant);
    const char *name = t >= 0 ? h->tenants[t].name : "?";
    switch (ev->kind) {
    case PGW_PQ_LISTENER_LISTENING:
        if (t >= 0)
            h->listening[t]++;
        fprintf(h->out,
                t >= 0 && h->listening[t] > 1
                    ? "%s: listening again; NOTIFY is not durable, so every subscription of %s "
                      "refreshes (SCOPE_RESET)\n"
                    : "%s: listening; every subscription of %s refreshes once (SCOPE_RESET)\n",
                name, name);
        break;
    case PGW_PQ_LISTENER_LOST:
        if (t >= 0)
            h->lost[t]++;
        fprintf(h->out, "%s: LISTEN connection lost, retrying in %u ms\n", name, ev->retry_ms);
        break;
    case PGW_PQ_LISTENER_CLOSED_IDLE:
        fprintf(h->out, "%s: idle, connection closed\n", name);
        break;
    case PGW_PQ_LISTENER_CLOSED_EVICTED:
        fprintf(h->out, "%s: connection closed for another tenant\n", name);
        break;
    case PGW_PQ_LISTENER_FALLBACK:
        fprintf(h->out, "%s: a notification could not be read faithfully: %s\n", name,
                ex_text(ev->message));
        break;
    case PGW_PQ_LISTENER_RESET:
        fprintf(h->out, "%s: out of memory reading a notification: scope reset\n", name);
        break;
    case PGW_PQ_LISTENER_STREAMING:
    case PGW_PQ_LISTENER_SLOT_LOST:
    case PGW_PQ_LISTENER_GAP:
        /* The stream's events: this host's tenants use the triggers. */
        fprintf(h->out, "%s: %s\n", name, ex_text(ev->message));
        break;
    }
}

/* Waits on the listener's sockets and processes what is ready, until
 * `until` returns true or 10 s pass. */
static bool serve_until(host *h, bool (*until)(host *, void *), void *arg)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long end = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 10000;
    while (!until(h, arg)) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 > end)
            return false;
        if (pgw_pq_listener_run(h->l, 5, NULL) != PGW_OK)
            return false;
    }
    return true;
}

static bool all_listening(host *h, void *arg)
{
    (void)arg;
    for (size_t t = 0; t < h->n; t++) {
        pgw_pq_tenant_info i;
        if (pgw_pq_listener_tenant(&i, h->l, h->tid[t], NULL) != PGW_OK ||
            i.state != PGW_PQ_TENANT_LISTENING)
            return false;
    }
    return true;
}

static bool notifications_reach(host *h, void *arg)
{
    return h->notifications >= *(long *)arg;
}

static bool listening_again(host *h, void *arg)
{
    return h->listening[0] >= *(int *)arg;
}

static int setup(host *h, FILE *out, const tasks_tenant *tenants, size_t n)
{
    memset(h, 0, sizeof *h);
    h->out = out;
    h->n = 0;
    h->tenants = tenants;
    if (n == 0 || n > MAX_TENANTS) {
        h->n = 0;
        fprintf(out, "error: 1..%d tenants\n", MAX_TENANTS);
        return 1;
    }
    pgw_error err;
    if (pgw_index_new(&h->idx, NULL, &err) != PGW_OK)
        return 1;
    pgw_pq_listener_options o = PGW_PQ_LISTENER_OPTIONS_INIT;
    o.index = h->idx;
    o.on_write = on_write;
    o.on_event = on_event;
    o.userdata = h;
    if (pgw_pq_listener_new(&h->l, &o, &err) != PGW_OK)
        return 1;
    for (size_t t = 0; t < n; t++) {
        h->n = t + 1;
        PGconn *c = PQconnectdb(tenants[t].conninfo);
        h->conn[t] = c;
        if (PQstatus(c) != CONNECTION_OK) {
            fprintf(out, "error: %s: %s", tenants[t].name, PQerrorMessage(c));
            return 1;
        }
        if (!exec_ok(h, c, "SET client_min_messages = warning; DROP TABLE IF EXISTS tasks; "
                           "CREATE TABLE tasks (id int PRIMARY KEY, title text NOT NULL, "
                           "status text NOT NULL, assignee text, updated_at int NOT NULL)"))
            return 1;
        static const char *const vals[] = {"status"};
        pgw_pq_watch_options wo = PGW_PQ_WATCH_OPTIONS_INIT;
        wo.value_columns = vals;
        wo.n_value_columns = 1;
        if (pgw_pq_install(NULL, c, NULL, &err) != PGW_OK ||
            pgw_pq_watch_table(c, "public", "tasks", &wo, &err) != PGW_OK) {
            fprintf(out, "error: %s: %s\n", tenants[t].name, err.message);
            return 1;
        }
        pgw_scope scope = {"tasks-example", tenants[t].name, PQdb(c)};
        for (int s = 0; s < N_SUBS; s++) {
            char json[1024];
            snprintf(json, sizeof json,
                     "{\"scope\":{\"project\":\"tasks-example\",\"tenant\":\"%s\","
                     "\"database\":\"%s\"},\"query\":\"%s\",\"tables\":%s}",
                     tenants[t].name, PQdb(c), SUBS[s].key, SUBS[s].tables);
            pgw_deps *d = NULL;
            if (pgw_deps_from_json(&d, json, strlen(json), &err) != PGW_OK ||
                pgw_index_register(&h->runner[t][s], h->idx, d, &err) != PGW_OK) {
                fprintf(out, "error: %s\n", err.message);
                pgw_deps_free(d);
                return 1;
            }
            pgw_deps_free(d);
        }
        /* One tenant at a time, so that the output's order is stable. */
        if (pgw_pq_listener_add_tenant(&h->tid[t], h->l, &scope, tenants[t].conninfo, &err) !=
                PGW_OK ||
            pgw_pq_listener_touch(h->l, h->tid[t], &err) != PGW_OK) {
            fprintf(out, "error: %s\n", err.message);
            return 1;
        }
        if (!serve_until(h, all_listening, NULL)) {
            fprintf(out, "error: the listener did not start\n");
            return 1;
        }
    }
    rerun_dirty(h);
    return 0;
}

static void teardown(host *h)
{
    pgw_pq_listener_free(h->l);
    pgw_index_free(h->idx);
    for (size_t t = 0; t < h->n; t++)
        PQfinish(h->conn[t]);
}

/* One scripted write: print it, run it from the writer's connection, wait
 * for its notification, rerun what must refresh. */
static void step(host *h, PGconn *writer, int t, const char *sql, long notifications)
{
    fprintf(h->out, "\n%s> %s\n", h->tenants[t].name, sql);
    if (!exec_ok(h, writer, sql))
        return;
    if (notifications == 0)
        fprintf(h->out, "  no row touched: a statement that touches no row sends no "
                        "notification, so nothing reruns\n");
    long want = h->notifications + notifications;
    if (!serve_until(h, notifications_reach, &want)) {
        fprintf(h->out, "error: no notification\n");
        h->failed = 1;
    }
    rerun_dirty(h);
    ex_flush(h->out); /* each step shows as it happens */
}

int tasks_script(FILE *out, const tasks_tenant *tenants, size_t n)
{
    host *h = malloc(sizeof *h);
    if (!h)
        return 1;
    fprintf(out, "pgwitness tasks example: %zu tenant%s, subscriptions", n, n == 1 ? "" : "s");
    for (int s = 0; s < N_SUBS; s++)
        fprintf(out, " %s", SUBS[s].key);
    fputc('\n', out);
    int rc = setup(h, out, tenants, n);
    PGconn *w[MAX_TENANTS] = {NULL};
    for (size_t t = 0; rc == 0 && t < n; t++) {
        w[t] = PQconnectdb(tenants[t].conninfo); /* the writers: another connection */
        if (PQstatus(w[t]) != CONNECTION_OK)
            rc = 1;
    }
    if (rc == 0) {
        int b = n > 1 ? 1 : 0;
        step(h, w[0], 0, "INSERT INTO tasks VALUES (1, 'write the report', 'open', NULL, 10)", 1);
        step(h, w[0], 0, "INSERT INTO tasks VALUES (2, 'review the budget', 'open', NULL, 11), "
                         "(3, 'old invoice', 'done', NULL, 1)", 1);
        step(h, w[0], 0, "UPDATE tasks SET title = 'write the annual report' WHERE id = 1", 1);
        step(h, w[0], 0, "UPDATE tasks SET assignee = 'kim' WHERE id = 2", 1);
        step(h, w[0], 0, "UPDATE tasks SET status = 'done', updated_at = 12 WHERE id = 1", 1);
        step(h, w[0], 0, "UPDATE tasks SET title = 'old invoice (paid)' WHERE id = 3", 1);
        step(h, w[0], 0, "UPDATE tasks SET status = status", 1);
        if (n > 1) /* a write in another tenant's table (with one tenant, there is none) */
            step(h, w[b], b, "INSERT INTO tasks VALUES (1, 'hire a designer', 'open', NULL, 5)",
                 1);
        step(h, w[0], 0, "DELETE FROM tasks WHERE id = 3", 1);
        step(h, w[0], 0, "UPDATE tasks SET status = 'open' WHERE id = 999", 0);

        /* A forced reconnect: the first tenant's LISTEN backend goes away,
         * a write happens while nobody listens, the listener reconnects
         * and resets the scope: the missed write is covered. */
        pgw_pq_tenant_info ti;
        pgw_pq_listener_tenant(&ti, h->l, h->tid[0], NULL);
        fprintf(out, "\n-- forcing a reconnect: pg_terminate_backend(the LISTEN connection of "
                     "%s)\n",
                tenants[0].name);
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d, 5000)", ti.backend_pid);
        exec_ok(h, w[0], sql);
        fprintf(out, "%s> UPDATE tasks SET status = 'done', updated_at = 13 WHERE id = 2   "
                     "-- nobody listens\n",
                tenants[0].name);
        exec_ok(h, w[0], "UPDATE tasks SET status = 'done', updated_at = 13 WHERE id = 2");
        int want = h->listening[0] + 1;
        if (!serve_until(h, listening_again, &want)) {
            fprintf(out, "error: no reconnect\n");
            h->failed = 1;
        }
        rerun_dirty(h);
        pgw_pq_listener_tenant(&ti, h->l, h->tid[0], NULL);
        fprintf(out, "\ndone: %ld notification%s, %ld refresh%s, %ld skip%s, %s reconnected "
                     "%llu time%s\n",
                h->notifications, h->notifications == 1 ? "" : "s", h->refreshes,
                h->refreshes == 1 ? "" : "es", h->skips, h->skips == 1 ? "" : "s",
                tenants[0].name,
                (unsigned long long)(ti.connects - 1), ti.connects == 2 ? "" : "s");
        rc = h->failed;
    }
    for (size_t t = 0; t < n; t++)
        PQfinish(w[t]);
    teardown(h);
    free(h);
    return rc;
}

int tasks_watch(FILE *out, const tasks_tenant *tenants, size_t n, int seconds)
{
    host *h = malloc(sizeof *h);
    if (!h)
        return 1;
    int rc = setup(h, out, tenants, n);
    if (rc == 0) {
        fprintf(out, "watching; write to the tasks tables (e.g. psql: INSERT INTO tasks VALUES "
                     "(1, 'x', 'open', NULL, 1))\n");
        ex_flush(out);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long end = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + seconds * 1000LL;
        for (;;) {
            pgw_pq_listener_run(h->l, 200, NULL);
            rerun_dirty(h);
            if (!ex_flush(out)) /* nobody reads it (a full disk): stop */
                break;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            if (seconds > 0 && (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 >= end)
                break;
        }
        rc = h->failed;
    }
    teardown(h);
    free(h);
    return rc;
}
