/*
 * tests/bench/bench_triggers.c — pgbench TPS with the statement triggers
 * installed against without them (issue 6), in one run, same settings,
 * interleaved rounds, against the server in the PG* environment
 * (tests/bench/run-pg starts one).
 *
 * pgbench -i -s 10 (10 branches, so that 4 clients rarely wait on the same
 * branch row), then ROUNDS pairs of `pgbench -n -c 4 -j 2 -T SECONDS`: one
 * without triggers, one with the four tables watched. The listener runs
 * in this process during both, draining notifications into an index with
 * a subscription per table, as a host would. Prints every round, the
 * medians and their ratio. PGW_BENCH_SECONDS and PGW_BENCH_ROUNDS override
 * the defaults (8 s, 3 pairs). For reference it also runs a round with a
 * trigger that only calls pg_notify(): the cost of NOTIFY itself; and with
 * a "floor" trigger: what any PL/pgSQL statement trigger that describes the
 * rows must do whatever its logic - the pinned search_path and print
 * setting (SET clauses), a subtransaction (so it never raises), reading the
 * changed rows from the transition tables as JSON, and pg_notify() - with
 * none of notify_statement()'s logic (bench-trigger-cost splits it per
 * part).
 * On Linux every round also says where the CPU went, per transaction: the
 * server's backends that served pgbench (what the postmaster reaped), the
 * backend of the LISTEN connection, the listener (this process) and pgbench
 * itself (/proc/<pid>/stat, getrusage; 10 ms resolution per round). The
 * machine has two cores for all of them.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_listen.h"
#include "bench_pq.h"
#include "bench_util.h"
#include "pgwitness/pgwitness-pq.h"

static const char *const TABLES[] = {"pgbench_accounts", "pgbench_tellers", "pgbench_branches",
                                     "pgbench_history"};

/* Where a round's CPU went: seconds, cumulative. */
typedef struct cpu {
    double server, listen_backend, listener, client;
} cpu;

static long postmaster_pid, listen_backend_pid;

static cpu cpu_now(void)
{
    cpu c = {bench_proc_cpu(postmaster_pid, true), bench_proc_cpu(listen_backend_pid, false),
             bench_rusage_cpu(RUSAGE_SELF), bench_rusage_cpu(RUSAGE_CHILDREN)};
    return c;
}

typedef struct round {
    double tps;
    long tx;
    cpu used; /* during the round */
} round;

static void print_cpu(const round *r)
{
    if (r->tx <= 0 || postmaster_pid <= 0)
        return;
    double k = 1e6 / (double)r->tx;
    printf(" [CPU per transaction: server %.0f us, LISTEN backend %.0f us, listener %.0f us, "
           "pgbench %.0f us]",
           r->used.server * k, r->used.listen_backend * k, r->used.listener * k,
           r->used.client * k);
}

typedef struct ctx {
    pgw_pq_listener *l;
    pgw_index *idx;
    long notifications;
} ctx;

static void on_write(pgw_pq_tenant_id t, const pgw_write *w, void *ud)
{
    (void)t;
    (void)w;
    ((ctx *)ud)->notifications++;
}

static void serve(ctx *x, int ms)
{
    pgw_pq_listener_socket sk[2];
    size_t n;
    pgw_pq_listener_sockets(&n, sk, 2, x->l, NULL);
    struct pollfd p[2];
    for (size_t i = 0; i < n && i < 2; i++) {
        p[i].fd = sk[i].fd;
        p[i].events = POLLIN | ((sk[i].events & PGW_PQ_WAIT_WRITE) ? POLLOUT : 0);
        p[i].revents = 0;
    }
    if (poll(p, (nfds_t)(n < 2 ? n : 2), ms) > 0)
        for (size_t i = 0; i < n && i < 2; i++)
            if (p[i].revents)
                pgw_pq_listener_process(x->l, p[i].fd, PGW_PQ_WAIT_READ | PGW_PQ_WAIT_WRITE,
                                        NULL);
    pgw_pq_listener_tick(NULL, x->l, NULL);
    bench_drain(x->idx);
}

/* One pgbench round while the listener serves. */
static round run_round(ctx *x, const char *db, int seconds, const char *log)
{
    cpu c0 = cpu_now();
    char secs[16];
    snprintf(secs, sizeof secs, "%d", seconds);
    char *args[] = {(char *)bench_pgbench_path(), "-n", "-c", "4", "-j", "2", "-T", secs,
                    (char *)db, NULL};
    pid_t pid = bench_spawn(args, log);
    int st;
    while (waitpid(pid, &st, WNOHANG) == 0)
        serve(x, 20);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench-triggers: pgbench failed, see %s\n", log);
        exit(1);
    }
    for (int i = 0; i < 10; i++)
        serve(x, 5);
    cpu c1 = cpu_now();
    round r;
    r.tps = bench_pgbench_tps(log, &r.tx);
    r.used.server = c1.server - c0.server;
    r.used.listen_backend = c1.listen_backend - c0.listen_backend;
    r.used.listener = c1.listener - c0.listener;
    r.used.client = c1.client - c0.client;
    return r;
}

static void set_triggers(PGconn *c, int mode)
{
    /* 0: none; 1: pgwitness; 2: a trigger that only notifies; 3: the floor */
    for (int i = 0; i < 4; i++) {
        char sql[512];
        pgw_pq_unwatch_table(NULL, c, "public", TABLES[i], NULL);
        snprintf(sql, sizeof sql, "DROP TRIGGER IF EXISTS bench_only_notify_i ON %s; "
                                  "DROP TRIGGER IF EXISTS bench_only_notify_u ON %s",
                 TABLES[i], TABLES[i]);
        bench_exec(c, sql);
        if (mode == 1) {
            pgw_error err;
            if (pgw_pq_watch_table(c, "public", TABLES[i], NULL, &err) != PGW_OK) {
                fprintf(stderr, "bench-triggers: watch %s: %s\n", TABLES[i], err.message);
                exit(1);
            }
        } else if (mode >= 2) {
            const char *fn = mode == 2 ? "bench_only_notify" : "bench_floor";
            snprintf(sql, sizeof sql,
                     "CREATE TRIGGER bench_only_notify_i AFTER INSERT ON %s REFERENCING NEW "
                     "TABLE AS pgw_new FOR EACH STATEMENT EXECUTE PROCEDURE "
                     "%s(); CREATE TRIGGER bench_only_notify_u AFTER UPDATE ON "
                     "%s REFERENCING OLD TABLE AS pgw_old NEW TABLE AS pgw_new FOR EACH "
                     "STATEMENT EXECUTE PROCEDURE %s()",
                     TABLES[i], fn, TABLES[i], fn);
            bench_exec(c, sql);
        }
    }
}

static double median3(double *v, int n)
{
    return bench_median(v, (size_t)n);
}

int main(void)
{
    const char *secs_env = getenv("PGW_BENCH_SECONDS");
    const char *rounds_env = getenv("PGW_BENCH_ROUNDS");
    int seconds = secs_env ? atoi(secs_env) : 8;
    int rounds = rounds_env ? atoi(rounds_env) : 3;
    if (seconds < 1 || rounds < 1 || rounds > 20)
        return 2;
    PGconn *admin = PQconnectdb("dbname=postgres options=-cclient_min_messages=warning");
    if (PQstatus(admin) != CONNECTION_OK) {
        fprintf(stderr, "bench-triggers: no server (run tests/bench/run-pg): %s",
                PQerrorMessage(admin));
        return 1;
    }
    const char *db = "pgw_bench_triggers";
    bench_exec(admin, "DROP DATABASE IF EXISTS pgw_bench_triggers");
    bench_exec(admin, "CREATE DATABASE pgw_bench_triggers");
    char log[128];
    snprintf(log, sizeof log, "/tmp/pgw-bench-triggers-%ld.log", (long)getpid());
    {
        char *args[] = {(char *)bench_pgbench_path(), "-i", "-q", "-s", "10", (char *)db, NULL};
        if (!bench_wait(bench_spawn(args, log))) {
            fprintf(stderr, "bench-triggers: pgbench -i failed, see %s\n", log);
            return 1;
        }
    }
    PGconn *c = PQconnectdb("dbname=pgw_bench_triggers options=-cclient_min_messages=warning");
    if (PQstatus(c) != CONNECTION_OK || pgw_pq_install(NULL, c, NULL, NULL) != PGW_OK)
        return 1;
    bench_exec(c, "CREATE FUNCTION bench_only_notify() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN PERFORM pg_notify('pgwitness', '{\"version\":1,\"schema\":\"public\","
            "\"table\":\"' || TG_TABLE_NAME || '\",\"op\":\"truncate\"}'); RETURN NULL; END $$");
    bench_exec(c, "CREATE FUNCTION bench_floor() RETURNS trigger LANGUAGE plpgsql STABLE "
            "SET search_path = pg_catalog, pg_temp SET extra_float_digits = 3 AS $$ "
            "DECLARE _t text; BEGIN BEGIN "
            "IF TG_OP = 'UPDATE' THEN "
            "SELECT to_json(o.*)::text || to_json(n.*)::text INTO _t "
            "FROM pgw_old o, pgw_new n LIMIT 1; "
            "ELSE SELECT to_json(n.*)::text INTO _t FROM pgw_new n LIMIT 1; END IF; "
            "_t := pg_notify('pgwitness', '{\"version\":1,\"schema\":\"public\","
            "\"table\":\"' || TG_TABLE_NAME || '\",\"op\":\"truncate\"}')::text; "
            "EXCEPTION WHEN OTHERS THEN _t := NULL; END; RETURN NULL; END $$");

    ctx x = {NULL, NULL, 0};
    pgw_index_new(&x.idx, NULL, NULL);
    bench_subscribe_tables(x.idx, db, TABLES, 4);
    x.l = bench_listener_new(x.idx, on_write, &x);
    pgw_scope scope = {"b", "t", db};
    pgw_pq_tenant_id t;
    pgw_pq_listener_add_tenant(&t, x.l, &scope, "dbname=pgw_bench_triggers", NULL);
    pgw_pq_listener_touch(x.l, t, NULL);
    pgw_pq_tenant_info ti;
    do {
        serve(&x, 20);
        pgw_pq_listener_tenant(&ti, x.l, t, NULL);
    } while (ti.state != PGW_PQ_TENANT_LISTENING);

    {
        /* The processes whose CPU the rounds count (Linux). */
        char *v = NULL;
        postmaster_pid = bench_parent_pid(PQbackendPID(c));
        PGresult *r = PQexec(c, "SELECT pid FROM pg_stat_activity "
                                "WHERE application_name = 'pgwitness-listener' "
                                "AND datname = current_database()");
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            v = PQgetvalue(r, 0, 0);
        listen_backend_pid = v ? atol(v) : 0;
        PQclear(r);
    }

    printf("pgbench TPC-B-like, scale 10, 4 clients, 2 threads, %d s per round, %d rounds "
           "each, interleaved; the listener drains notifications in this process\n",
           seconds, rounds);
    double off[20], on[20], only[20], floor_[20];
    int n_only = rounds > 1 ? rounds - 1 : 1;
    for (int k = 0; k < rounds; k++) {
        set_triggers(c, 0);
        round r = run_round(&x, db, seconds, log);
        off[k] = r.tps;
        printf("  round %d: without triggers %.0f tps", k + 1, off[k]);
        print_cpu(&r);
        printf("\n");
        set_triggers(c, 1);
        long before = x.notifications;
        r = run_round(&x, db, seconds, log);
        on[k] = r.tps;
        long got = x.notifications - before;
        printf("           with triggers %.0f tps (%.2f), %ld notifications", on[k],
               on[k] / off[k], got);
        print_cpu(&r);
        printf("\n");
        if (k < n_only) {
            set_triggers(c, 2);
            r = run_round(&x, db, seconds, log);
            only[k] = r.tps;
            printf("           a trigger that only calls pg_notify: %.0f tps (%.2f)", only[k],
                   only[k] / off[k]);
            print_cpu(&r);
            printf("\n");
            set_triggers(c, 3);
            r = run_round(&x, db, seconds, log);
            floor_[k] = r.tps;
            printf("           the floor (SET, subtransaction, rows as JSON, pg_notify): %.0f "
                   "tps (%.2f)",
                   floor_[k], floor_[k] / off[k]);
            print_cpu(&r);
            printf("\n");
        }
        fflush(stdout);
    }
    set_triggers(c, 0);
    double m_off = median3(off, rounds), m_on = median3(on, rounds),
           m_only = median3(only, n_only), m_floor = median3(floor_, n_only);
    printf("median: without %.0f tps, with pgwitness triggers %.0f tps: ratio %.2f "
           "(only pg_notify: %.0f tps, %.2f; the floor: %.0f tps, %.2f)\n",
           m_off, m_on, m_on / m_off, m_only, m_only / m_off, m_floor, m_floor / m_off);
    unlink(log);
    pgw_pq_listener_free(x.l);
    pgw_index_free(x.idx);
    PQfinish(c);
    bench_exec(admin, "DROP DATABASE IF EXISTS pgw_bench_triggers WITH (FORCE)");
    PQfinish(admin);
    return 0;
}
