/*
 * tests/bench/bench_ddl.c — what the opt-in DDL event triggers
 * (pgw_pq_install_ddl_trigger: pgwitness_ddl_command_end and
 * pgwitness_sql_drop, calling <schema>.on_ddl_event(),
 * lib/pq/sql/migration_005.sql) cost a migration: the time of a DDL
 * statement with the event triggers installed against without them, in
 * one run, interleaved rounds, against the server in the PG* environment
 * (tests/bench/run-pg starts one), in a database of its own that it
 * creates and drops.
 *
 * The cases, each STATEMENTS statements per round, every statement in its
 * own transaction (autocommit), creates and drops (or adds and drops)
 * alternating:
 *   (a) CREATE TABLE (a primary key and two columns) and DROP TABLE of a
 *       table nothing watches: the common case of a migration; the event
 *       triggers look at it and send nothing
 *   (b) ALTER TABLE ... ADD COLUMN / DROP COLUMN of a table watched by the
 *       triggers (pgw_pq_watch_table): each announces (NOTIFY on its
 *       channel and, under wal_level = logical, a logical message)
 *   (c) CREATE TABLE ... PARTITION OF a watched partitioned table, which
 *       gives the partition its triggers (watch_descendant()) and
 *       announces the root, and DROP TABLE of it, which announces the root
 *   (d) the same as (b) on a table watched for the stream
 *       (pgw_pq_stream_watch_table; no stream runs): each announces by
 *       logical message only
 * Each round runs every case without the event triggers and with them
 * (pgw_pq_remove_ddl_trigger / pgw_pq_install_ddl_trigger between the
 * halves, outside the timed part), the halves' order alternating from
 * round to round (without first in odd rounds, with first in even ones),
 * so that a drift of a shared machine's load weighs on both alike. Before
 * each half the tables of (b) and (d) are made anew (and watched again)
 * while no event trigger is installed: the columns their ALTERs drop stay
 * in the catalog (a table holds at most 1600, dropped ones included), and
 * every half then starts from the same table. A warm-up half of each kind
 * comes first (not counted); after it, with the event triggers installed,
 * the run checks that they do what is measured: (a) sends no
 * notification, (b) and (c) send the ddl write set of the watched table
 * on its channel (exact payloads), the partition of (c) gets its four
 * triggers, and ddl_targets() sees the table of (d) as watched for the
 * stream; and any WARNING the server raises (on_ddl_event() turns its
 * failures into warnings) fails the run.
 *
 * Prints every round's milliseconds per statement (wall time around each
 * PQexec, round trip included) without and with, and their ratio; then per
 * case the medians of the rounds, their ratio, the median of the rounds'
 * own ratios, and the backend's CPU per statement (/proc/<pid>/schedstat,
 * Linux only: what the server ran for the statement, without the client
 * or other processes). PGW_BENCH_STATEMENTS (default 200, even) and
 * PGW_BENCH_ROUNDS (default 5) override the sizes.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pq.h"
#include "bench_util.h"
#include "pgwitness/pgwitness-pq.h"

#define DB "pgw_bench_ddl"
#define MAX_ROUNDS 20

typedef enum kase { UNWATCHED, WATCHED, PARTITION, STREAMED, N_CASES } kase;

static const char *const CASE_NAME[N_CASES] = {
    "(a) CREATE + DROP TABLE, not watched",
    "(b) ADD + DROP COLUMN, watched (triggers)",
    "(c) CREATE PARTITION OF + DROP, watched root",
    "(d) ADD + DROP COLUMN, watched (stream)",
};

/* The server's warnings: on_ddl_event() raises its failures as WARNINGs,
 * and a run with a failing event trigger measures something else. */
static int warnings;

static void on_notice(void *arg, const PGresult *r)
{
    (void)arg;
    const char *sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    if (sev && strcmp(sev, "WARNING") == 0) {
        warnings++;
        fprintf(stderr, "bench-ddl: server %s", PQresultErrorMessage(r));
    }
}

static void fail(const char *what, const pgw_error *err)
{
    fprintf(stderr, "bench-ddl: %s: %s\n", what, err->message);
    exit(1);
}

/* The i-th statement of a case (0-based): even ones make, odd ones drop
 * what the one before made. */
static void statement(char *sql, size_t cap, kase k, int i)
{
    int j = i / 2;
    bool make = i % 2 == 0;
    switch (k) {
    case UNWATCHED:
        if (make)
            snprintf(sql, cap, "CREATE TABLE ddl_new_%d (id integer PRIMARY KEY, a integer, b text)",
                     j);
        else
            snprintf(sql, cap, "DROP TABLE ddl_new_%d", j);
        break;
    case WATCHED:
    case STREAMED:
        snprintf(sql, cap, make ? "ALTER TABLE %s ADD COLUMN c%d integer"
                                : "ALTER TABLE %s DROP COLUMN c%d",
                 k == WATCHED ? "ddl_watched" : "ddl_streamed", j);
        break;
    default:
        if (make)
            snprintf(sql, cap,
                     "CREATE TABLE ddl_parted_p%d PARTITION OF ddl_parted "
                     "FOR VALUES FROM (%d) TO (%d)",
                     j, (j + 1) * 10, (j + 2) * 10);
        else
            snprintf(sql, cap, "DROP TABLE ddl_parted_p%d", j);
        break;
    }
}

/* Milliseconds of wall time and microseconds of backend CPU per statement
 * of one half round of a case. */
typedef struct figure {
    double ms, cpu_us;
} figure;

static figure run_case(PGconn *c, kase k, int n)
{
    char sql[256];
    uint64_t wall = 0;
    double cpu0 = bench_schedstat_ns(PQbackendPID(c));
    for (int i = 0; i < n; i++) {
        statement(sql, sizeof sql, k, i);
        uint64_t t0 = bench_now_ns();
        bench_exec(c, sql);
        wall += bench_now_ns() - t0;
    }
    double cpu1 = bench_schedstat_ns(PQbackendPID(c));
    figure f = {(double)wall / 1e6 / n, cpu0 < 0 ? -1 : (cpu1 - cpu0) / 1e3 / n};
    return f;
}

/* Makes the tables of (b) and (d) anew and watches them again, while no
 * event trigger is installed (pgw_pq_install_ddl_trigger records the
 * watches there are when it runs). */
static void reset_tables(PGconn *c)
{
    pgw_error err;
    char v[8];
    if (strcmp(bench_value(c, "SELECT to_regclass('ddl_watched') IS NOT NULL", v, sizeof v),
               "t") == 0) {
        if (pgw_pq_unwatch_table(NULL, c, "public", "ddl_watched", &err) != PGW_OK)
            fail("unwatch ddl_watched", &err);
        bench_stream_unwatch(c, "public", "ddl_streamed");
    }
    bench_exec(c, "DROP TABLE IF EXISTS ddl_watched, ddl_streamed");
    bench_exec(c, "CREATE TABLE ddl_watched (id integer PRIMARY KEY, a integer, b text)");
    bench_exec(c, "CREATE TABLE ddl_streamed (id integer PRIMARY KEY, a integer, b text)");
    if (pgw_pq_watch_table(c, "public", "ddl_watched", NULL, &err) != PGW_OK)
        fail("watch ddl_watched", &err);
    if (pgw_pq_stream_watch_table(c, "public", "ddl_streamed", NULL, &err) != PGW_OK)
        fail("stream watch ddl_streamed", &err);
}

static void set_event_triggers(PGconn *c, bool with)
{
    pgw_error err;
    if (pgw_pq_remove_ddl_trigger(c, NULL, &err) != PGW_OK)
        fail("remove the event triggers", &err);
    reset_tables(c);
    if (with && pgw_pq_install_ddl_trigger(c, NULL, &err) != PGW_OK)
        fail("install the event triggers", &err);
}

/* Runs sql and checks the notifications it brought this session (which
 * LISTENs on the default channel): exactly `want` of them, each with
 * payload `payload`. */
static void expect_notifications(PGconn *c, const char *sql, int want, const char *payload)
{
    bench_exec(c, sql);
    PQconsumeInput(c);
    int got = 0;
    PGnotify *nt;
    while ((nt = PQnotifies(c)) != NULL) {
        if (strcmp(nt->relname, PGW_PQ_DEFAULT_CHANNEL) != 0 ||
            (payload && strcmp(nt->extra, payload) != 0)) {
            fprintf(stderr, "bench-ddl: %s: unexpected notification on %s: %s\n", sql,
                    nt->relname, nt->extra);
            exit(1);
        }
        got++;
        PQfreemem(nt);
    }
    if (got != want) {
        fprintf(stderr, "bench-ddl: %s: %d notifications, expected %d\n", sql, got, want);
        exit(1);
    }
}

/* With the event triggers installed: that they do, for each case, what
 * the rounds measure. */
static void check_cases(PGconn *c)
{
    char v[64];
    bench_exec(c, "LISTEN " PGW_PQ_DEFAULT_CHANNEL);
    expect_notifications(c, "CREATE TABLE ddl_check (id integer PRIMARY KEY, a integer)", 0,
                         NULL);
    expect_notifications(c, "DROP TABLE ddl_check", 0, NULL);
    const char *watched = "{\"version\":1,\"schema\":\"public\",\"table\":\"ddl_watched\","
                          "\"op\":\"ddl\"}";
    expect_notifications(c, "ALTER TABLE ddl_watched ADD COLUMN chk integer", 1, watched);
    expect_notifications(c, "ALTER TABLE ddl_watched DROP COLUMN chk", 1, watched);
    const char *root = "{\"version\":1,\"schema\":\"public\",\"table\":\"ddl_parted\","
                       "\"op\":\"ddl\"}";
    expect_notifications(c,
                         "CREATE TABLE ddl_parted_chk PARTITION OF ddl_parted "
                         "FOR VALUES FROM (-10) TO (0)",
                         1, root);
    if (strcmp(bench_value(c,
                           "SELECT count(*) FROM pg_trigger WHERE tgrelid = "
                           "'ddl_parted_chk'::regclass AND tgname LIKE 'pgwitness\\_%'",
                           v, sizeof v),
               "4") != 0) {
        fprintf(stderr, "bench-ddl: the new partition has %s pgwitness triggers, not 4\n", v);
        exit(1);
    }
    expect_notifications(c, "DROP TABLE ddl_parted_chk", 1, root);
    expect_notifications(c, "ALTER TABLE ddl_streamed ADD COLUMN chk integer", 0, NULL);
    expect_notifications(c, "ALTER TABLE ddl_streamed DROP COLUMN chk", 0, NULL);
    if (strcmp(bench_value(c,
                           "SELECT coalesce(bool_and(streamed AND trigger_channel IS NULL), "
                           "false) FROM " PGW_PQ_DEFAULT_SCHEMA
                           ".ddl_targets('ddl_streamed'::regclass)",
                           v, sizeof v),
               "t") != 0) {
        fprintf(stderr, "bench-ddl: ddl_streamed is not watched for the stream only\n");
        exit(1);
    }
    bench_exec(c, "UNLISTEN *");
}

int main(void)
{
    const char *n_env = getenv("PGW_BENCH_STATEMENTS");
    const char *rounds_env = getenv("PGW_BENCH_ROUNDS");
    int n = n_env ? atoi(n_env) : 200;
    int rounds = rounds_env ? atoi(rounds_env) : 5;
    if (n < 2 || n % 2 || n > 2000 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "bench-ddl: PGW_BENCH_STATEMENTS even, 2..2000; PGW_BENCH_ROUNDS "
                        "1..%d\n", MAX_ROUNDS);
        return 2;
    }
    PGconn *admin = PQconnectdb("dbname=postgres options=-cclient_min_messages=warning");
    if (PQstatus(admin) != CONNECTION_OK) {
        fprintf(stderr, "bench-ddl: no server (run tests/bench/run-pg): %s",
                PQerrorMessage(admin));
        return 1;
    }
    char v[64];
    if (strcmp(bench_value(admin, "SHOW wal_level", v, sizeof v), "logical") != 0) {
        printf("bench-ddl: wal_level is %s, case (d) needs logical: skipped\n", v);
        PQfinish(admin);
        return 0;
    }
    if (strcmp(bench_value(admin, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user",
                           v, sizeof v),
               "t") != 0) {
        printf("bench-ddl: the event triggers need a superuser: skipped\n");
        PQfinish(admin);
        return 0;
    }
    bench_exec(admin, "DROP DATABASE IF EXISTS " DB " WITH (FORCE)");
    bench_exec(admin, "CREATE DATABASE " DB);
    PGconn *c = PQconnectdb("dbname=" DB);
    pgw_error err;
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "bench-ddl: %s", PQerrorMessage(c));
        return 1;
    }
    PQsetNoticeReceiver(c, on_notice, NULL);
    bench_exec(c, "SET client_min_messages = warning");
    if (pgw_pq_install(NULL, c, NULL, &err) != PGW_OK)
        fail("install", &err);
    bench_exec(c, "CREATE TABLE ddl_parted (id integer PRIMARY KEY, a integer, b text) "
                  "PARTITION BY RANGE (id)");
    bench_exec(c, "CREATE TABLE ddl_parted_base PARTITION OF ddl_parted FOR VALUES FROM (0) TO (10)");
    if (pgw_pq_watch_table(c, "public", "ddl_parted", NULL, &err) != PGW_OK)
        fail("watch ddl_parted", &err);

    printf("pgwitness %s — DDL event trigger benchmark, PostgreSQL %d: %d statements per case "
           "per round, each its own transaction, %d rounds without and with the event "
           "triggers, interleaved\n",
           pgw_version(), PQserverVersion(c), n, rounds);
    /* Cold caches and plans: not counted. Then, with the event triggers
     * installed, the check that they do what is measured. */
    int warm = n / 4 < 2 ? 2 : n / 4 - n / 4 % 2;
    for (int with = 0; with < 2; with++) {
        set_event_triggers(c, with);
        for (kase k = UNWATCHED; k < N_CASES; k++)
            run_case(c, k, warm);
    }
    check_cases(c);
    printf("checked, with the event triggers: (a) sends nothing; (b) and (c) announce the "
           "watched table (ddl write set, channel %s); the partition of (c) got its 4 "
           "triggers; (d) is watched for the stream only (logical message)\n",
           PGW_PQ_DEFAULT_CHANNEL);

    figure fig[2][N_CASES][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        int first = r % 2; /* round 1 starts without */
        for (int h = 0; h < 2; h++) {
            int with = h == 0 ? first : !first;
            set_event_triggers(c, with);
            for (kase k = UNWATCHED; k < N_CASES; k++)
                fig[with][k][r] = run_case(c, k, n);
        }
        printf("round %d (%s first):\n", r + 1, first ? "with" : "without");
        for (kase k = UNWATCHED; k < N_CASES; k++)
            printf("  %-46s without %6.3f ms, with %6.3f ms per statement (%.2f)\n",
                   CASE_NAME[k], fig[0][k][r].ms, fig[1][k][r].ms,
                   fig[1][k][r].ms / fig[0][k][r].ms);
        fflush(stdout);
    }
    set_event_triggers(c, false);
    if (warnings > 0) {
        fprintf(stderr, "bench-ddl: the server raised %d warnings (above): the figures do not "
                        "measure the event triggers' normal path\n", warnings);
        return 1;
    }

    printf("median of %d rounds, per statement: wall time (round trip included) without, "
           "with, ratio; median of the rounds' own ratios; backend CPU without, with, ratio\n",
           rounds);
    bool cpu = fig[0][0][0].cpu_us >= 0;
    for (kase k = UNWATCHED; k < N_CASES; k++) {
        double ms[2][MAX_ROUNDS], us[2][MAX_ROUNDS], ratio[MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            for (int w = 0; w < 2; w++) {
                ms[w][r] = fig[w][k][r].ms;
                us[w][r] = fig[w][k][r].cpu_us;
            }
            ratio[r] = ms[1][r] / ms[0][r];
        }
        double m0 = bench_median(ms[0], (size_t)rounds), m1 = bench_median(ms[1], (size_t)rounds);
        printf("  %-46s %6.3f ms  %6.3f ms  %5.2fx  (rounds %5.2fx)", CASE_NAME[k], m0, m1,
               m1 / m0, bench_median(ratio, (size_t)rounds));
        if (cpu) {
            double c0 = bench_median(us[0], (size_t)rounds),
                   c1 = bench_median(us[1], (size_t)rounds);
            printf("  CPU %5.0f us  %5.0f us  %5.2fx", c0, c1, c1 / c0);
        }
        printf("\n");
    }
    if (!cpu)
        printf("  (no backend CPU: /proc/<pid>/schedstat unreadable: not Linux, or the server "
               "runs as another user)\n");
    PQfinish(c);
    bench_exec(admin, "DROP DATABASE IF EXISTS " DB " WITH (FORCE)");
    PQfinish(admin);
    return 0;
}
