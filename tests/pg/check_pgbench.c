/*
 * tests/pg/check_pgbench.c — a real client (issue 6, test 6): pgbench's
 * TPC-B-like transactions on its own tables (pgbench -i), watched, with
 * several clients at once, while the listener and an index with
 * subscriptions over accounts, tellers, branches and history are live.
 *
 * The oracle works while the writers write. Each round:
 *   1. read every subscription's SQL in one REPEATABLE READ snapshot S;
 *   2. from another session commit a marker notification: every commit
 *      visible in S committed before it, and notifications are delivered
 *      in commit order (PostgreSQL documentation, NOTIFY), so once the
 *      listener has the marker it has processed every write S contains;
 *   3. every runner that is CLEAN (not marked since its last rerun) must
 *      have, in S, the result of its last rerun — otherwise a write that
 *      changed it was not marked: a missed refresh;
 *   4. take the dirty runners and rerun them (snapshot after the take, as
 *      the rerun protocol of index.h says), acknowledging their result IDs.
 * pgbench's exit status and transaction count are checked too.
 * PGW_TEST_SCALE scales the number of transactions.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <glob.h>
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness-pq.h"

extern char **environ;

static double test_scale(void)
{
    const char *s = getenv("PGW_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
    return f > 0 && f <= 1.0 ? f : 1.0;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* pgbench: $PGW_PG_BINDIR/pgbench (tests/run exports it), else the newest
 * /usr/lib/postgresql/<version>/bin. */
static const char *pgbench_path(void)
{
    static char path[512];
    const char *dir = getenv("PGW_PG_BINDIR");
    if (dir && *dir) {
        snprintf(path, sizeof path, "%s/pgbench", dir);
        return path;
    }
    glob_t g;
    if (glob("/usr/lib/postgresql/*/bin/pgbench", 0, NULL, &g) == 0 && g.gl_pathc > 0) {
        /* versions sort as numbers: pick the longest, then greatest */
        const char *best = g.gl_pathv[0];
        for (size_t i = 1; i < g.gl_pathc; i++)
            if (strlen(g.gl_pathv[i]) > strlen(best) ||
                (strlen(g.gl_pathv[i]) == strlen(best) && strcmp(g.gl_pathv[i], best) > 0))
                best = g.gl_pathv[i];
        snprintf(path, sizeof path, "%s", best);
        globfree(&g);
        return path;
    }
    return "pgbench";
}

/* Starts pgbench with args; output goes to `log`. */
static pid_t spawn_pgbench(char *const *args, const char *log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, args[0], &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot start %s", args[0]);
    return pid;
}

static int wait_exit(pid_t pid, bool block)
{
    int st;
    pid_t r = waitpid(pid, &st, block ? 0 : WNOHANG);
    if (r == 0)
        return -1;
    ck_assert_int_eq(r, pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return strdup("");
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

typedef struct sub {
    const char *name;
    const char *sql;
    const char *deps; /* JSON members after scope and query */
    int ids;          /* result IDs: 1 from the first column, 0 none */
    pgw_runner_id runner;
    char *last;       /* the result of its last rerun */
    long refreshes, checks;
} sub;

static sub SUBS[] = {
    {"branch_balance", "SELECT bid, bbalance FROM pgbench_branches WHERE bid = 1",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_branches\","
     "\"columns\":[\"bid\",\"bbalance\"],"
     "\"filters\":[{\"column\":\"bid\",\"op\":\"eq\",\"values\":[\"1\"]}]}]",
     1, 0, NULL, 0, 0},
    {"branch_fillers", "SELECT bid, filler FROM pgbench_branches ORDER BY bid",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_branches\","
     "\"columns\":[\"bid\",\"filler\"]}]",
     1, 0, NULL, 0, 0},
    {"tellers_of_branch_1", "SELECT tid, tbalance FROM pgbench_tellers WHERE bid = 1 ORDER BY tid",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_tellers\","
     "\"columns\":[\"tid\",\"tbalance\",\"bid\"],"
     "\"filters\":[{\"column\":\"bid\",\"op\":\"eq\",\"values\":[\"1\"]}]}]",
     1, 0, NULL, 0, 0},
    {"teller_3", "SELECT tid, tbalance FROM pgbench_tellers WHERE tid = 3",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_tellers\","
     "\"columns\":[\"tid\",\"tbalance\"],"
     "\"filters\":[{\"column\":\"tid\",\"op\":\"eq\",\"values\":[\"3\"]}]}]",
     1, 0, NULL, 0, 0},
    {"teller_count", "SELECT count(*) FROM pgbench_tellers",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_tellers\",\"columns\":[]}]",
     0, 0, NULL, 0, 0},
    {"accounts_1_to_50",
     "SELECT aid, abalance FROM pgbench_accounts WHERE aid BETWEEN 1 AND 50 ORDER BY aid",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_accounts\","
     "\"columns\":[\"aid\",\"abalance\"],"
     "\"filters\":[{\"column\":\"aid\",\"op\":\"opaque\"}]}]",
     1, 0, NULL, 0, 0},
    {"account_7", "SELECT aid, abalance FROM pgbench_accounts WHERE aid = 7",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_accounts\","
     "\"columns\":[\"aid\",\"abalance\"],"
     "\"filters\":[{\"column\":\"aid\",\"op\":\"eq\",\"values\":[\"7\"]}]}]",
     1, 0, NULL, 0, 0},
    {"top_balances",
     "SELECT aid, abalance FROM pgbench_accounts ORDER BY abalance DESC, aid LIMIT 5",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_accounts\","
     "\"columns\":[\"aid\",\"abalance\"],\"order_by\":[\"abalance\"],\"limit\":5}]",
     1, 0, NULL, 0, 0},
    {"account_count", "SELECT count(*) FROM pgbench_accounts",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_accounts\",\"columns\":[]}]",
     0, 0, NULL, 0, 0},
    {"history_count", "SELECT count(*) FROM pgbench_history",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_history\",\"columns\":[]}]",
     0, 0, NULL, 0, 0},
    {"history_of_teller_3", "SELECT count(*), sum(delta) FROM pgbench_history WHERE tid = 3",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_history\","
     "\"columns\":[\"tid\",\"delta\"],"
     "\"filters\":[{\"column\":\"tid\",\"op\":\"eq\",\"values\":[\"3\"]}]}]",
     0, 0, NULL, 0, 0},
    {"branch_teller_join",
     "SELECT t.tid, t.tbalance, b.bbalance FROM pgbench_tellers t JOIN pgbench_branches b "
     "USING (bid) WHERE t.tid <= 2 ORDER BY t.tid",
     "\"tables\":[{\"schema\":\"public\",\"table\":\"pgbench_tellers\","
     "\"columns\":[\"tid\",\"tbalance\",\"bid\"],"
     "\"filters\":[{\"column\":\"tid\",\"op\":\"opaque\"},{\"column\":\"bid\",\"op\":\"opaque\"}]},"
     "{\"schema\":\"public\",\"table\":\"pgbench_branches\",\"columns\":[\"bid\",\"bbalance\"],"
     "\"filters\":[{\"column\":\"bid\",\"op\":\"opaque\"}]}]",
     1, 0, NULL, 0, 0},
};
#define N_SUBS ((int)(sizeof SUBS / sizeof SUBS[0]))

static char *result_text(const PGresult *r)
{
    size_t len = 1;
    for (int i = 0; i < PQntuples(r); i++)
        for (int j = 0; j < PQnfields(r); j++)
            len += (size_t)PQgetlength(r, i, j) + 2;
    char *s = malloc(len), *p = s;
    for (int i = 0; i < PQntuples(r); i++)
        for (int j = 0; j < PQnfields(r); j++) {
            const char *v = PQgetisnull(r, i, j) ? "~" : PQgetvalue(r, i, j);
            size_t n = strlen(v);
            memcpy(p, v, n);
            p += n;
            *p++ = j + 1 < PQnfields(r) ? '|' : '\n';
        }
    *p = '\0';
    return s;
}

/* Reruns a taken runner: snapshot now, acknowledge its result IDs. */
static void rerun(PGconn *c, pgw_index *idx, sub *s)
{
    PGresult *r = PQexec(c, s->sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQresultErrorMessage(r));
    free(s->last);
    s->last = result_text(r);
    s->refreshes++;
    if (s->ids) {
        int n = PQntuples(r);
        pgw_rowid *ids = calloc((size_t)n + 1, sizeof *ids);
        const char **parts = calloc((size_t)n + 1, sizeof *parts);
        for (int i = 0; i < n; i++) {
            parts[i] = PQgetvalue(r, i, 0);
            ids[i].parts = &parts[i];
            ids[i].n_parts = 1;
        }
        ck_assert_int_eq(pgw_index_ack(idx, s->runner, ids, (size_t)n, NULL), PGW_OK);
        free(ids);
        free(parts);
    } else {
        ck_assert_int_eq(pgw_index_ack_unknown(idx, s->runner, NULL), PGW_OK);
    }
    PQclear(r);
}

typedef struct state {
    long markers, writes;
} state;

static void on_write(pgw_pq_tenant_id t, const pgw_write *w, void *ud)
{
    (void)t;
    state *st = ud;
    const char *schema = pgw_write_schema(w);
    if (schema && strcmp(schema, "pgwt") == 0)
        st->markers++;
    else
        st->writes++;
}

static void wait_and_process(pgw_pq_listener *l, int ms)
{
    pgw_pq_listener_socket sk[2];
    size_t n;
    ck_assert_int_eq(pgw_pq_listener_sockets(&n, sk, 2, l, NULL), PGW_OK);
    struct pollfd p[2];
    for (size_t i = 0; i < n && i < 2; i++) {
        p[i].fd = sk[i].fd;
        p[i].events = POLLIN | ((sk[i].events & PGW_PQ_WAIT_WRITE) ? POLLOUT : 0);
        p[i].revents = 0;
    }
    if (poll(p, (nfds_t)(n < 2 ? n : 2), ms) > 0)
        for (size_t i = 0; i < n && i < 2; i++)
            if (p[i].revents)
                pgw_pq_listener_process(l, p[i].fd, PGW_PQ_WAIT_READ | PGW_PQ_WAIT_WRITE, NULL);
    ck_assert_int_eq(pgw_pq_listener_tick(NULL, l, NULL), PGW_OK);
}

START_TEST(pgbench_with_live_invalidation)
{
    const char *db = pgwt_dbname();
    const char *pgbench = pgbench_path();
    char log[256];
    snprintf(log, sizeof log, "/tmp/pgwt-pgbench-%ld.log", (long)getpid());
    {
        char *args[] = {(char *)pgbench, "-i", "-q", "-s", "1", (char *)db, NULL};
        pid_t pid = spawn_pgbench(args, log);
        int rc = wait_exit(pid, true);
        char *out = slurp(log);
        ck_assert_msg(rc == 0, "pgbench -i failed (%d): %s", rc, out);
        free(out);
    }
    PGconn *c = pgwt_connect();
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install(NULL, c, NULL, &err), PGW_OK);
    static const char *const acc_vals[] = {"bid"}, *const tel_vals[] = {"bid"},
                             *const his_vals[] = {"tid", "bid", "aid"};
    struct {
        const char *table;
        const char *const *vals;
        size_t n;
    } watched[] = {{"pgbench_accounts", acc_vals, 1},
                   {"pgbench_tellers", tel_vals, 1},
                   {"pgbench_branches", NULL, 0},
                   {"pgbench_history", his_vals, 3}};
    for (int i = 0; i < 4; i++) {
        pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
        o.value_columns = watched[i].vals;
        o.n_value_columns = watched[i].n;
        ck_assert_int_eq(pgw_pq_watch_table(c, "public", watched[i].table, &o, &err), PGW_OK);
    }

    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    state st = {0, 0};
    pgw_pq_listener_options lo = PGW_PQ_LISTENER_OPTIONS_INIT;
    lo.index = idx;
    lo.on_write = on_write;
    lo.userdata = &st;
    pgw_pq_listener *l = NULL;
    ck_assert_int_eq(pgw_pq_listener_new(&l, &lo, NULL), PGW_OK);
    pgw_scope scope = {"bench", "acme", db};
    char ci[160];
    snprintf(ci, sizeof ci, "dbname=%s", db);
    pgw_pq_tenant_id t;
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t, l, &scope, ci, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(l, t, NULL), PGW_OK);
    pgw_pq_tenant_info ti;
    long long end = now_ms() + 10000;
    do {
        ck_assert(now_ms() < end);
        wait_and_process(l, 20);
        ck_assert_int_eq(pgw_pq_listener_tenant(&ti, l, t, NULL), PGW_OK);
    } while (ti.state != PGW_PQ_TENANT_LISTENING);
    pgw_dirty d;
    while (pgw_index_pop_dirty(&d, idx) == PGW_OK)
        ck_assert_int_eq(pgw_index_ack_unknown(idx, d.runner, NULL), PGW_OK);
    for (int i = 0; i < N_SUBS; i++) {
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"scope\":{\"project\":\"bench\",\"tenant\":\"acme\",\"database\":\"%s\"},"
                 "\"query\":\"%s\",%s}",
                 db, SUBS[i].name, SUBS[i].deps);
        pgw_deps *dp = NULL;
        ck_assert_msg(pgw_deps_from_json(&dp, json, strlen(json), &err) == PGW_OK, "%s: %s",
                      SUBS[i].name, err.message);
        ck_assert_int_eq(pgw_index_register(&SUBS[i].runner, idx, dp, &err), PGW_OK);
        pgw_deps_free(dp);
        ck_assert_int_eq(pgw_index_begin(idx, SUBS[i].runner, NULL), PGW_OK);
        rerun(c, idx, &SUBS[i]);
        SUBS[i].refreshes = 0;
    }

    /* Several clients, a few thousand transactions. */
    int clients = 4;
    long per_client = (long)(750 * test_scale());
    if (per_client < 50)
        per_client = 50;
    char tx[32], cl[16];
    snprintf(tx, sizeof tx, "%ld", per_client);
    snprintf(cl, sizeof cl, "%d", clients);
    char *args[] = {(char *)pgbench, "-n", "-c", cl, "-j", "2", "-t", tx, (char *)db, NULL};
    long long t0 = now_ms();
    pid_t pid = spawn_pgbench(args, log);
    PGconn *marker = pgwt_connect();
    long rounds = 0, missed = 0, clean_checks = 0;
    int status = -1;
    for (bool last = false;;) {
        /* 1. A snapshot of every result. */
        pgwt_exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ");
        char *in_s[N_SUBS];
        for (int i = 0; i < N_SUBS; i++) {
            PGresult *r = PQexec(c, SUBS[i].sql);
            ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
            in_s[i] = result_text(r);
            PQclear(r);
        }
        /* 2. The marker, committed after the snapshot was taken. */
        pgwt_exec(marker, "SELECT pg_notify('" PGW_PQ_DEFAULT_CHANNEL "', '{\"version\":1,"
                          "\"schema\":\"pgwt\",\"table\":\"marker\",\"op\":\"truncate\"}')");
        rounds++;
        end = now_ms() + 30000;
        while (st.markers < rounds) {
            ck_assert_msg(now_ms() < end, "marker %ld did not arrive", rounds);
            wait_and_process(l, 50);
        }
        pgwt_exec(c, "COMMIT");
        /* 3. Clean runners must have kept their result. */
        for (int i = 0; i < N_SUBS; i++) {
            pgw_runner_info ri;
            ck_assert_int_eq(pgw_index_runner(&ri, idx, SUBS[i].runner, NULL), PGW_OK);
            ck_assert_int_ne(ri.state, PGW_RUNNER_RUNNING);
            if (ri.state == PGW_RUNNER_CLEAN) {
                clean_checks++;
                SUBS[i].checks++;
                if (strcmp(in_s[i], SUBS[i].last) != 0) {
                    if (missed < 5)
                        printf("# MISSED: %s changed without being marked (round %ld)\n"
                               "#   last rerun: %.160s\n#   now: %.160s\n",
                               SUBS[i].name, rounds, SUBS[i].last, in_s[i]);
                    missed++;
                }
            }
            free(in_s[i]);
        }
        /* 4. Rerun the dirty ones. */
        while (pgw_index_pop_dirty(&d, idx) == PGW_OK)
            for (int i = 0; i < N_SUBS; i++)
                if (SUBS[i].runner == d.runner)
                    rerun(c, idx, &SUBS[i]);
        if (last)
            break;
        if (status < 0)
            status = wait_exit(pid, false);
        if (status >= 0)
            last = true; /* one more round after the writers are done */
    }
    long long took = now_ms() - t0;
    char *out = slurp(log);
    unlink(log);
    ck_assert_msg(status == 0, "pgbench failed (%d): %s", status, out);
    char want[128];
    snprintf(want, sizeof want, "number of transactions actually processed: %ld/%ld",
             per_client * clients, per_client * clients);
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    ck_assert_int_eq(pgw_pq_listener_tenant(&ti, l, t, NULL), PGW_OK);
    printf("# pgbench: %d clients, %ld transactions in %.1f s; %ld notifications from "
           "the triggers; %ld oracle rounds, %ld clean runners checked, %ld missed\n",
           clients, per_client * clients, took / 1e3, st.writes, rounds, clean_checks, missed);
    printf("# reruns per subscription (of %ld rounds):", rounds);
    for (int i = 0; i < N_SUBS; i++)
        printf(" %s=%ld", SUBS[i].name, SUBS[i].refreshes);
    printf("\n");
    fflush(stdout);
    /* TPC-B: each transaction updates three tables and inserts into one. */
    ck_assert_int_eq(st.writes, 4 * per_client * clients);
    ck_assert_uint_eq(ti.failures, 0);
    ck_assert_int_gt(rounds, 2);
    ck_assert_int_gt(clean_checks, 0);
    ck_assert_msg(missed == 0, "%ld missed refreshes", missed);
    /* Some subscriptions cannot change under TPC-B and were never rerun. */
    ck_assert_int_eq(SUBS[1].refreshes, 0); /* branch fillers: COLUMNS_DISJOINT */
    ck_assert_int_eq(SUBS[4].refreshes, 0); /* teller count: COLUMNS_DISJOINT */
    ck_assert_int_eq(SUBS[8].refreshes, 0); /* account count: COLUMNS_DISJOINT */
    free(out);
    for (int i = 0; i < N_SUBS; i++) {
        free(SUBS[i].last);
        SUBS[i].last = NULL;
    }
    PQfinish(marker);
    PQfinish(c);
    pgw_pq_listener_free(l);
    pgw_index_free(idx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pgbench");
    TCase *tc = tcase_create("pgbench");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, pgbench_with_live_invalidation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("pgbench");
    return pgwt_main(suite());
}
