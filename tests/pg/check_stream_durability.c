/*
 * tests/pg/check_stream_durability.c — the stream's durability against the
 * real server (issue 15, test 2): a terminated walsender and a killed host
 * resume at the confirmed position, and every write committed while they
 * were down arrives, with exact IDs, with no scope reset (a subscription
 * whose result changed meanwhile is marked); a dropped slot and a slot the
 * server invalidated (max_slot_wal_keep_size) each lead to exactly one
 * reset, and the host is told which of the two happened. A definition
 * change (DDL) made while the host was down, with no later write (issue
 * 16, case 1): announced by the event trigger or pgw_pq_announce_ddl(),
 * it reaches the next process through the permanent slot as the ddl write
 * set (reason DDL, no reset); unannounced, it is not seen by a new
 * process, while an in-process reconnect sees it at the next write.
 *
 * Runs alone (is_parallel: false): one test changes max_slot_wal_keep_size
 * for the whole cluster, which would invalidate other programs' slots.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness-pq.h"
#include "pgwt_stream.h"

static PGconn *setup(void)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "SET client_min_messages = warning; "
                 "DROP PUBLICATION IF EXISTS pgwitness; "
                 "DROP SCHEMA IF EXISTS pgwitness CASCADE; DROP SCHEMA public CASCADE; "
                 "CREATE SCHEMA public; GRANT ALL ON SCHEMA public TO PUBLIC; "
                 "RESET client_min_messages; "
                 "CREATE TABLE t (id int PRIMARY KEY, status text)");
    pgw_error err;
    ck_assert_msg(pgw_pq_install(NULL, c, NULL, &err) == PGW_OK, "%s", err.message);
    static const char *const vals[] = {"status"};
    pgw_pq_stream_watch_options o = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    o.value_columns = vals;
    o.n_value_columns = 1;
    ck_assert_msg(pgw_pq_stream_watch_table(c, "public", "t", &o, &err) == PGW_OK, "%s",
                  err.message);
    return c;
}

static void slot_name(char *buf, size_t size, const char *what)
{
    snprintf(buf, size, "pgwt_dur_%s_%d", what, (int)getpid());
}

static void drop_slot(PGconn *c, const char *slot)
{
    pgw_error err;
    int rc;
    for (int i = 0; i < 500; i++) {
        if ((rc = pgw_pq_drop_slot(c, slot, NULL, &err)) != PGW_ESTATE)
            break;
        usleep(10000);
    }
    ck_assert_msg(rc == PGW_OK, "dropping %s: %s", slot, err.message);
}

/* Waits until no walsender holds the slot (one ends a moment after its
 * connection closes); fails after 30 s. */
static void wait_inactive(PGconn *c, const char *slot)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s' AND active", slot);
    for (int i = 0; i < 3000 && pgwt_int(c, sql) > 0; i++)
        usleep(10000);
    ck_assert_msg(pgwt_int(c, sql) == 0, "slot %s is still active after 30 s", slot);
}

/* Terminates the walsender of a slot and waits until it is gone. */
static void terminate_walsender(PGconn *c, const char *slot)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(pg_terminate_backend(active_pid)) FROM pg_replication_slots "
             "WHERE slot_name = '%s' AND active_pid IS NOT NULL",
             slot);
    ck_assert_int_eq(pgwt_int(c, sql), 1);
    wait_inactive(c, slot);
}

/* The write set an insert of row id gives. */
static void insert_json(char *buf, size_t size, int id, const char *status)
{
    snprintf(buf, size,
             "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"%d\"],"
             "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
             "\"new\":[{\"status\":\"%s\"}],\"pk_changed\":false}",
             id, status);
}

/* One subscription: the open rows, with their IDs. */
static pgw_runner_id subscribe_open(pgw_index *idx)
{
    const char *json = "{\"scope\":{\"project\":\"p\",\"tenant\":\"acme\",\"database\":\"db\"},"
                       "\"query\":\"open\",\"tables\":[{\"schema\":\"public\",\"table\":\"t\","
                       "\"columns\":[\"id\"],\"filters\":[{\"column\":\"status\",\"op\":\"eq\","
                       "\"values\":[\"open\"]}]}],\"result_ids\":[]}";
    pgw_deps *d = NULL;
    ck_assert_int_eq(pgw_deps_from_json(&d, json, strlen(json), NULL), PGW_OK);
    pgw_runner_id r;
    ck_assert_int_eq(pgw_index_register(&r, idx, d, NULL), PGW_OK);
    pgw_deps_free(d);
    return r;
}

/* Pops every dirty runner; true when r was among them (each acknowledged
 * as unknown, the rules then refresh it on any write to its table). */
static bool popped(pgw_index *idx, pgw_runner_id r, pgw_reason *why)
{
    bool hit = false;
    pgw_dirty d;
    while (pgw_index_pop_dirty(&d, idx) == PGW_OK) {
        if (d.runner == r) {
            hit = true;
            if (why)
                *why = d.reason;
        }
        ck_assert_int_eq(pgw_index_ack_unknown(idx, d.runner, NULL), PGW_OK);
    }
    return hit;
}

/* A walsender terminated while writes commit: the stream resumes from the
 * position it handled, and every missed commit arrives with exact IDs, in
 * order, with no reset. */
START_TEST(walsender_terminated)
{
    PGconn *c = setup();
    char slot[64];
    slot_name(slot, sizeof slot, "term");
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    pgw_runner_id open = subscribe_open(idx);
    pgwt_stream *s = pgwt_stream_open(slot, idx, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert(popped(idx, open, NULL)); /* the new slot's reset */
    pgwt_exec(c, "INSERT INTO t VALUES (1, 'open')");
    pgwt_stream_sync(s, c);
    ck_assert(popped(idx, open, NULL));
    pgwt_stream_take(s, NULL);
    terminate_walsender(c, slot);
    /* Down (the listener is not run): commits of every kind. */
    char want[40][512];
    int n = 0;
    for (int i = 2; i < 32; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT INTO t VALUES (%d, '%s')", i, i % 2 ? "open" : "done");
        pgwt_exec(c, sql);
        insert_json(want[n++], sizeof want[0], i, i % 2 ? "open" : "done");
    }
    pgwt_exec(c, "UPDATE t SET status = 'done' WHERE id = 1");
    snprintf(want[n++], sizeof want[0],
             "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"update\",\"ids\":[\"1\"],"
             "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
             "\"new\":[{\"status\":\"done\"}],\"pk_changed\":false}");
    pgwt_exec(c, "DELETE FROM t WHERE id IN (2, 3)");
    snprintf(want[n++], sizeof want[0],
             "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"delete\",\"ids\":[\"2\",\"3\"],"
             "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
             "\"pk_changed\":false}");
    pgwt_stream_until_streaming(s, 2);
    pgwt_stream_sync(s, c);
    for (int i = 0; i < n; i++) {
        const char *got = pgwt_stream_take(s, NULL);
        ck_assert_msg(got != NULL, "write %d of %d missing", i, n);
        ck_assert_str_eq(got, want[i]);
    }
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    ck_assert_int_eq(pgwt_stream_count(s, "STREAMING 0 0"), 1); /* resumed, no reset */
    ck_assert_int_eq(s->resets, 1);                            /* only the slot's creation */
    ck_assert_int_eq(pgwt_stream_count(s, "LOST"), 1);
    pgw_reason why;
    ck_assert(popped(idx, open, &why));
    ck_assert_int_ne(why, PGW_REASON_SCOPE_RESET);
    pgwt_stream_close(s);
    pgw_index_free(idx);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* The host: a child process streaming from the slot, printing each write
 * set as a line ("W <json>") and each STREAMING or reset ("E <kind>
 * <reset>"), until it is killed. */
static FILE *host_out;

static void host_on_write(pgw_pq_tenant_id t, const pgw_write *w, void *ud)
{
    (void)t;
    (void)ud;
    char *json = NULL;
    if (pgw_write_to_json(&json, NULL, w, NULL) < 0)
        _exit(5);
    const char *body = strstr(json, "\"schema\"");
    fprintf(host_out, "W {%s\n", body ? body : json);
    pgw_free(json);
}

static void host_on_event(const pgw_pq_listener_event *ev, void *ud)
{
    (void)ud;
    if (ev->kind == PGW_PQ_LISTENER_STREAMING || ev->kind == PGW_PQ_LISTENER_RESET ||
        ev->kind == PGW_PQ_LISTENER_SLOT_LOST)
        fprintf(host_out, "E %d %d\n", (int)ev->kind, ev->reset ? 1 : 0);
}

static void host_main(const char *slot, int fd)
{
    host_out = fdopen(fd, "w");
    if (!host_out)
        _exit(3);
    setvbuf(host_out, NULL, _IOLBF, 0);
    pgw_pq_listener_options lo = PGW_PQ_LISTENER_OPTIONS_INIT;
    lo.on_write = host_on_write;
    lo.on_event = host_on_event;
    lo.backoff_initial_ms = 20;
    lo.idle_timeout_ms = 0;
    pgw_pq_listener *l = NULL;
    if (pgw_pq_listener_new(&l, &lo, NULL) < 0)
        _exit(3);
    pgw_pq_stream_options so = PGW_PQ_STREAM_OPTIONS_INIT;
    so.slot = slot;
    so.status_interval_ms = 50;
    pgw_scope scope = {"p", "acme", "db"};
    char conninfo[128];
    snprintf(conninfo, sizeof conninfo, "dbname=%s", pgwt_dbname());
    pgw_pq_tenant_id t;
    if (pgw_pq_listener_add_stream(&t, l, &scope, conninfo, &so, NULL) < 0 ||
        pgw_pq_listener_touch(l, t, NULL) < 0)
        _exit(3);
    for (;;)
        pgw_pq_listener_run(l, 1000, NULL);
}

typedef struct host {
    pid_t pid;
    int fd;
    char buf[1 << 16];
    size_t n;
    char *lines[512];
    int n_lines;
} host;

static void host_start(host *h, const char *slot)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
#ifdef __linux__
        /* Killed with the test: a failing test leaves no host behind to
         * hold the slot and meson's output pipes. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        close(p[0]);
        host_main(slot, p[1]);
    }
    close(p[1]);
    memset(h, 0, sizeof *h);
    h->pid = pid;
    h->fd = p[0];
    fcntl(h->fd, F_SETFL, O_NONBLOCK);
}

static int host_writes(const host *h)
{
    int n = 0;
    for (int i = 0; i < h->n_lines; i++)
        n += h->lines[i][0] == 'W';
    return n;
}

static bool host_has(const host *h, const char *line)
{
    for (int i = 0; i < h->n_lines; i++)
        if (strcmp(h->lines[i], line) == 0)
            return true;
    return false;
}

/* Reads the host's lines until it has printed `line` (fails after 60 s:
 * under valgrind on a loaded machine the host starts slowly). */
static void host_read_until(host *h, const char *line)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!host_has(h, line)) {
        struct pollfd pf = {h->fd, POLLIN, 0};
        poll(&pf, 1, 50);
        ssize_t k = read(h->fd, h->buf + h->n, sizeof h->buf - h->n - 1);
        if (k > 0) {
            h->n += (size_t)k;
            h->buf[h->n] = '\0';
            char *start = h->buf;
            char *nl;
            while ((nl = strchr(start, '\n')) != NULL) {
                *nl = '\0';
                ck_assert_int_lt(h->n_lines, 512);
                h->lines[h->n_lines++] = strdup(start);
                start = nl + 1;
            }
            size_t rest = h->n - (size_t)(start - h->buf);
            memmove(h->buf, start, rest);
            h->n = rest;
        }
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ck_assert_msg(t1.tv_sec - t0.tv_sec < 60, "the host did not print %s (%d write sets)",
                      line, host_writes(h));
    }
}

static void host_kill(host *h)
{
    kill(h->pid, SIGKILL);
    waitpid(h->pid, NULL, 0);
    close(h->fd);
    for (int i = 0; i < h->n_lines; i++)
        free(h->lines[i]);
}

/* The host process killed and started again: it resumes at the slot's
 * confirmed position; every write committed while it was down arrives with
 * exact IDs; what comes twice is only what it had handled since its last
 * standby status update (at least once); no reset. */
START_TEST(host_killed_and_restarted)
{
    PGconn *c = setup();
    char slot[64];
    slot_name(slot, sizeof slot, "host");
    host *h = malloc(sizeof *h);
    ck_assert_ptr_nonnull(h);
    host_start(h, slot);
    /* Wait until it streams (its STREAMING event, from its new slot, with
     * the reset), then write. (Not the slot's `active`: it is true while
     * the slot is made, false a moment, then true again.) */
    host_read_until(h, "E 7 1");
    char sql[256];
    char before[10][256], during[10][256];
    for (int i = 0; i < 10; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO t VALUES (%d, 'open')", i);
        pgwt_exec(c, sql);
        insert_json(before[i], sizeof before[0], i, "open");
    }
    char line[300];
    snprintf(line, sizeof line, "W %s", before[9]);
    host_read_until(h, line);
    host_kill(h);
    /* Down: commits the next host must deliver. */
    for (int i = 0; i < 10; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO t VALUES (%d, 'done')", 100 + i);
        pgwt_exec(c, sql);
        insert_json(during[i], sizeof during[0], 100 + i, "done");
    }
    host_start(h, slot);
    snprintf(line, sizeof line, "W %s", during[9]);
    host_read_until(h, line);
    /* Its write sets: a suffix of `before` (handled by the first host
     * after its last status update), then all of `during`, in order. */
    const char *w[64];
    int n = 0;
    for (int i = 0; i < h->n_lines; i++)
        if (h->lines[i][0] == 'W') {
            ck_assert_int_lt(n, 64);
            w[n++] = h->lines[i] + 2;
        }
    ck_assert_int_ge(n, 10);
    int dup = n - 10;
    ck_assert_int_le(dup, 10);
    for (int i = 0; i < dup; i++)
        ck_assert_str_eq(w[i], before[10 - dup + i]);
    for (int i = 0; i < 10; i++)
        ck_assert_str_eq(w[dup + i], during[i]);
    fprintf(stderr, "# the restarted host saw %d write set(s) again\n", dup);
    /* It resumed: streaming without a reset. */
    ck_assert(host_has(h, "E 7 0"));
    ck_assert(!host_has(h, "E 7 1"));
    ck_assert(!host_has(h, "E 6 1"));
    ck_assert(!host_has(h, "E 8 0"));
    host_kill(h);
    free(h);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* A permanent slot dropped: once by another session while this process
 * was streaming from it, once while no process had it (a new process finds
 * its record in <schema>.slots). Each time SLOT_LOST says it was dropped,
 * the slot is made again, and the scope is reset exactly once. */
START_TEST(dropped_slot_resets_once)
{
    PGconn *c = setup();
    char slot[64];
    slot_name(slot, sizeof slot, "drop");
    pgwt_stream *s = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(s->resets, 1); /* made */
    ck_assert_int_eq(s->slot_lost, 0);
    /* While this process streams: its walsender goes, the slot with it. */
    terminate_walsender(c, slot);
    drop_slot(c, slot);
    pgwt_stream_until_streaming(s, 2);
    ck_assert_int_eq(s->slot_lost, 1);
    ck_assert_int_eq(pgwt_stream_count(s, "SLOT_LOST -3 0 replication slot "), 1);
    ck_assert_int_eq(pgwt_stream_count(s, "STREAMING 0 1"), 2);
    ck_assert_int_eq(s->resets, 2);
    pgwt_exec(c, "INSERT INTO t VALUES (1, 'open')");
    pgwt_stream_sync(s, c);
    char want[512];
    insert_json(want, sizeof want, 1, "open");
    ck_assert_str_eq(pgwt_stream_take(s, NULL), want);
    pgwt_stream_close(s);
    /* While nobody streams, dropped behind pgwitness's back (not with
     * pgw_pq_drop_slot(), which forgets its record): a new process learns
     * it from the record. */
    char sql[256];
    wait_inactive(c, slot);
    snprintf(sql, sizeof sql, "SELECT pg_drop_replication_slot('%s')", slot);
    pgwt_exec(c, sql);
    s = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(s->slot_lost, 1);
    ck_assert_int_eq(s->resets, 1);
    pgwt_stream_close(s);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* Two streams sharing one slot name: while the first is disconnected the
 * second reads (and confirms) a write from the slot. The first, back,
 * finds the slot confirmed past its own position: SLOT_LOST (PGW_EEXISTS)
 * names it, and its scope is reset once, since that write never reaches
 * it; then it streams on. */
START_TEST(slot_read_by_another_consumer_resets_once)
{
    PGconn *c = setup();
    char slot[64];
    slot_name(slot, sizeof slot, "shared");
    pgwt_stream *a = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(a, 1);
    ck_assert_int_eq(a->resets, 1); /* made */
    char want[512];
    pgwt_exec(c, "INSERT INTO t VALUES (1, 'open')");
    pgwt_stream_sync(a, c);
    insert_json(want, sizeof want, 1, "open");
    ck_assert_str_eq(pgwt_stream_take(a, NULL), want);
    /* a is away (not run): its walsender ends; b takes the slot. */
    terminate_walsender(c, slot);
    pgwt_stream *b = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(b, 1);
    ck_assert_int_eq(b->resets, 0); /* an existing slot, resumed */
    pgwt_exec(c, "INSERT INTO t VALUES (2, 'open')");
    pgwt_stream_sync(b, c);
    /* Write 1 again when a's last status update had not confirmed it (at
     * least once), then write 2. */
    const char *got = pgwt_stream_take(b, NULL);
    insert_json(want, sizeof want, 1, "open");
    if (got && strcmp(got, want) == 0)
        got = pgwt_stream_take(b, NULL);
    insert_json(want, sizeof want, 2, "open");
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    ck_assert_ptr_null(pgwt_stream_take(b, NULL));
    pgwt_stream_close(b); /* confirms write 2 as it closes */
    wait_inactive(c, slot);
    /* a comes back. */
    pgwt_stream_until_streaming(a, 2);
    ck_assert_int_eq(a->slot_lost, 1);
    ck_assert_int_eq(pgwt_stream_count(a, "SLOT_LOST -10 0 replication slot "), 1);
    ck_assert_int_eq(a->resets, 2);
    ck_assert_ptr_null(pgwt_stream_take(a, NULL)); /* write 2 is b's */
    pgwt_exec(c, "INSERT INTO t VALUES (3, 'open')");
    pgwt_stream_sync(a, c);
    insert_json(want, sizeof want, 3, "open");
    ck_assert_str_eq(pgwt_stream_take(a, NULL), want);
    ck_assert_int_eq(a->resets, 2);
    pgwt_stream_close(a);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* A slot the server invalidated because it kept more WAL than
 * max_slot_wal_keep_size: SLOT_LOST says so (PGW_ESTATE), the slot is made
 * again, the scope is reset once, and writes flow again. */
START_TEST(invalidated_slot_resets_once)
{
    PGconn *c = setup();
    char slot[64];
    slot_name(slot, sizeof slot, "inval");
    pgwt_stream *s = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgwt_stream_close(s);
    char sql[256];
    wait_inactive(c, slot);
    pgwt_exec(c, "ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
    pgwt_exec(c, "SELECT pg_reload_conf()");
    pgwt_exec(c, "CREATE TABLE filler (x text)");
    snprintf(sql, sizeof sql,
             "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '%s'", slot);
    char *status = NULL;
    for (int round = 0; round < 20; round++) {
        pgwt_exec(c, "INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, 3000)");
        pgwt_exec(c, "SELECT pg_switch_wal()");
        pgwt_exec(c, "CHECKPOINT");
        free(status);
        status = pgwt_value(c, sql);
        if (strcmp(status, "lost") == 0)
            break;
    }
    pgwt_exec(c, "ALTER SYSTEM RESET max_slot_wal_keep_size");
    pgwt_exec(c, "SELECT pg_reload_conf()");
    ck_assert_str_eq(status, "lost");
    free(status);
    s = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(s->slot_lost, 1);
    ck_assert_int_eq(pgwt_stream_count(s, "SLOT_LOST -8 0 replication slot "), 1);
    ck_assert_int_eq(pgwt_stream_count(s, "STREAMING 0 1"), 1);
    ck_assert_int_eq(s->resets, 1);
    pgwt_exec(c, "INSERT INTO t VALUES (2, 'done')");
    pgwt_stream_sync(s, c);
    char want[512];
    insert_json(want, sizeof want, 2, "done");
    ck_assert_str_eq(pgwt_stream_take(s, NULL), want);
    pgwt_stream_close(s);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* Definition changes (DDL) while the host is down (issue 16, case 1).
 *
 * The decoder sees a definition change only by comparing a relation's
 * Relation message with the one it last knew (pgoutput.h, "A definition
 * change"). Its relation cache lives as long as the stream tenant: an
 * in-process reconnect (a terminated walsender, a lost connection) keeps
 * it (pgw_pgoutput_restart), but a new process, or a tenant added anew,
 * starts with an empty one, and the first Relation message of each
 * relation is then no change. So an ALTER TABLE made while the host
 * process is down is not seen by the next process from Relation messages,
 * with or without a later write; with no later write, an in-process
 * reconnect does not see it either. What covers it is the announcement:
 * the event trigger (pgw_pq_install_ddl_trigger) or pgw_pq_announce_ddl()
 * emits a transactional logical message (prefix pgwitness) in the DDL's
 * transaction; it sits in the WAL, and a permanent slot delivers it when
 * the host resumes, with no reset. */

#define DDL_T "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"ddl\"}"


/* Waits until the slot's confirmed position reaches what the server had
 * flushed now (every transaction committed so far); fails after 60 s. */
static void wait_confirmed(PGconn *c, const char *slot)
{
    char *lsn = pgwt_value(c, "SELECT pg_current_wal_flush_lsn()");
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s' "
             "AND confirmed_flush_lsn >= '%s'",
             slot, lsn);
    for (int i = 0; i < 6000 && pgwt_int(c, sql) == 0; i++)
        usleep(10000);
    ck_assert_msg(pgwt_int(c, sql) == 1, "slot %s did not confirm %s in 60 s", slot, lsn);
    free(lsn);
}

/* The host resumed in a new listener (a fresh decoder, knowing no
 * relation) on the permanent slot, with the subscription registered again
 * in a new index: streaming with no reset. */
static pgwt_stream *resume(const char *slot, pgw_index **idx)
{
    ck_assert_int_eq(pgw_index_new(idx, NULL, NULL), PGW_OK);
    subscribe_open(*idx);
    pgwt_stream *s = pgwt_stream_open(slot, *idx, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(pgwt_stream_count(s, "STREAMING 0 0"), 1);
    ck_assert_int_eq(s->resets, 0);
    ck_assert_int_eq(s->slot_lost, 0);
    return s;
}

/* After the resume, a write: exactly its insert write set, with no ddl
 * from the new decoder's first Relation message of t (it knew no earlier
 * definition, so that message is no change). */
static void later_insert(pgwt_stream *s, pgw_index *idx, PGconn *c, int id)
{
    char sql[128], want[512];
    snprintf(sql, sizeof sql, "INSERT INTO t VALUES (%d, 'open')", id);
    pgwt_exec(c, sql);
    pgwt_stream_sync(s, c);
    insert_json(want, sizeof want, id, "open");
    const char *got = pgwt_stream_take(s, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    got = pgwt_stream_take(s, NULL);
    ck_assert_msg(got == NULL, "a write set after the insert: %s", got ? got : "");
    ck_assert_str_eq(pgwt_drain(idx), "open:INSERT_MAY_ENTER");
}

/* With the event trigger, the host (its own process) killed; then ADD
 * COLUMN (a constant default: no rewrite, so no row reaches the stream)
 * and RENAME COLUMN, each in its own transaction, and no write. The host
 * resumed in a new listener: exactly the two ddl write sets the event
 * trigger emitted, in order, no reset, the subscription dirty with reason
 * DDL; then a later insert gives exactly its write set. */
START_TEST(ddl_while_host_killed_event_trigger)
{
    PGconn *c = setup();
    pgw_error err;
    ck_assert_msg(pgw_pq_install_ddl_trigger(c, NULL, &err) == PGW_OK, "%s", err.message);
    char slot[64];
    slot_name(slot, sizeof slot, "ddlkill");
    host *h = malloc(sizeof *h);
    ck_assert_ptr_nonnull(h);
    host_start(h, slot);
    host_read_until(h, "E 7 1");
    /* The killed host's decoder knew t's definition; the next one will
     * not. The host confirms the insert before it is killed, so that it
     * is not delivered again (the at-least-once of host_killed_...). */
    pgwt_exec(c, "INSERT INTO t VALUES (1, 'open')");
    char want[512], line[600];
    insert_json(want, sizeof want, 1, "open");
    snprintf(line, sizeof line, "W %s", want);
    host_read_until(h, line);
    wait_confirmed(c, slot);
    host_kill(h);
    free(h);
    wait_inactive(c, slot);
    /* Down: the migration, with no later write. */
    pgwt_exec(c, "ALTER TABLE t ADD COLUMN x int DEFAULT 0");
    pgwt_exec(c, "ALTER TABLE t RENAME COLUMN x TO y");
    pgw_index *idx = NULL;
    pgwt_stream *s = resume(slot, &idx);
    pgwt_stream_sync(s, c);
    const char *got = pgwt_stream_take(s, NULL);
    ck_assert_msg(got != NULL, "no write set for the ADD COLUMN (%d events, the last: %s)",
                  s->n_events, s->n_events ? s->events[s->n_events - 1] : "");
    ck_assert_str_eq(got, DDL_T);
    got = pgwt_stream_take(s, NULL);
    ck_assert_msg(got != NULL, "no write set for the RENAME COLUMN");
    ck_assert_str_eq(got, DDL_T);
    got = pgwt_stream_take(s, NULL);
    ck_assert_msg(got == NULL, "a third write set: %s", got ? got : "");
    ck_assert_str_eq(pgwt_drain(idx), "open:DDL");
    later_insert(s, idx, c, 2);
    ck_assert_int_eq(pgwt_stream_count(s, "STREAMING"), 1);
    ck_assert_int_eq(s->resets, 0);
    pgwt_stream_close(s);
    pgw_index_free(idx);
    ck_assert_msg(pgw_pq_remove_ddl_trigger(c, NULL, &err) == PGW_OK, "%s", err.message);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* Without the event trigger, the host closed (its listener freed: it
 * confirms what it handled on the way out); the migration runs ADD COLUMN
 * and RENAME COLUMN in one transaction and calls pgw_pq_announce_ddl()
 * after them, in it. The host resumed in a new listener: exactly one ddl
 * write set (one per transaction and table), no reset, reason DDL; then a
 * later insert gives exactly its write set. */
START_TEST(ddl_while_host_closed_announced)
{
    PGconn *c = setup();
    pgw_error err;
    char slot[64];
    slot_name(slot, sizeof slot, "ddlclose");
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    subscribe_open(idx);
    pgwt_stream *s = pgwt_stream_open(slot, idx, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_str_eq(pgwt_drain(idx), "open:SCOPE_RESET"); /* the new slot */
    later_insert(s, idx, c, 1);
    pgwt_stream_close(s);
    pgw_index_free(idx);
    wait_inactive(c, slot);
    /* Down: the migration. */
    pgwt_exec(c, "BEGIN");
    pgwt_exec(c, "ALTER TABLE t ADD COLUMN x int DEFAULT 0");
    pgwt_exec(c, "ALTER TABLE t RENAME COLUMN x TO y");
    ck_assert_msg(pgw_pq_announce_ddl(c, "public", "t", NULL, &err) == PGW_OK, "%s",
                  err.message);
    pgwt_exec(c, "COMMIT");
    s = resume(slot, &idx);
    pgwt_stream_sync(s, c);
    const char *got = pgwt_stream_take(s, NULL);
    ck_assert_msg(got != NULL, "no write set for the announcement (%d events, the last: %s)",
                  s->n_events, s->n_events ? s->events[s->n_events - 1] : "");
    ck_assert_str_eq(got, DDL_T);
    got = pgwt_stream_take(s, NULL);
    ck_assert_msg(got == NULL, "a second write set: %s", got ? got : "");
    ck_assert_str_eq(pgwt_drain(idx), "open:DDL");
    later_insert(s, idx, c, 2);
    ck_assert_int_eq(pgwt_stream_count(s, "STREAMING"), 1);
    ck_assert_int_eq(s->resets, 0);
    pgwt_stream_close(s);
    pgw_index_free(idx);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* The limit the announcement covers. Without one, a definition change
 * made while the host is down is not seen by the next process: its
 * decoder has no earlier definition of t to compare with, so neither the
 * resume (no write followed) nor the first Relation message of a later
 * write gives a ddl write set; the subscription is refreshed by the
 * insert alone (a restarted host reruns its subscriptions anyway). An
 * in-process reconnect keeps the relation cache (pgw_pgoutput_restart):
 * a DDL made while its walsender was gone, with no later write, is not
 * seen either, but the next write's Relation message differs from the
 * one the old connection sent, and gives the ddl write set before the
 * insert's. */
START_TEST(ddl_while_down_unannounced)
{
    PGconn *c = setup();
    char slot[64];
    slot_name(slot, sizeof slot, "ddlnone");
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    subscribe_open(idx);
    pgwt_stream *s = pgwt_stream_open(slot, idx, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_str_eq(pgwt_drain(idx), "open:SCOPE_RESET");
    later_insert(s, idx, c, 1); /* its decoder learns t */
    pgwt_stream_close(s);
    pgw_index_free(idx);
    wait_inactive(c, slot);
    /* A new process: nothing on the resume, nothing but the insert after. */
    pgwt_exec(c, "ALTER TABLE t ADD COLUMN x int DEFAULT 0");
    pgwt_exec(c, "ALTER TABLE t RENAME COLUMN x TO y");
    s = resume(slot, &idx);
    pgwt_stream_sync(s, c);
    const char *got = pgwt_stream_take(s, NULL);
    ck_assert_msg(got == NULL, "a write set on the resume: %s", got ? got : "");
    ck_assert_str_eq(pgwt_drain(idx), "");
    later_insert(s, idx, c, 2);
    /* An in-process reconnect: the same decoder, its cache kept. */
    terminate_walsender(c, slot);
    pgwt_exec(c, "ALTER TABLE t DROP COLUMN y");
    pgwt_stream_until_streaming(s, 2);
    pgwt_stream_sync(s, c);
    got = pgwt_stream_take(s, NULL);
    ck_assert_msg(got == NULL, "a write set on the reconnect: %s", got ? got : "");
    ck_assert_str_eq(pgwt_drain(idx), "");
    pgwt_exec(c, "INSERT INTO t VALUES (3, 'open')");
    pgwt_stream_sync(s, c);
    got = pgwt_stream_take(s, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, DDL_T);
    char want[512];
    insert_json(want, sizeof want, 3, "open");
    got = pgwt_stream_take(s, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    ck_assert_str_eq(pgwt_drain(idx), "open:DDL");
    ck_assert_int_eq(pgwt_stream_count(s, "STREAMING 0 0"), 2);
    ck_assert_int_eq(s->resets, 0);
    pgwt_stream_close(s);
    pgw_index_free(idx);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stream_durability");
    TCase *tc = tcase_create("stream_durability");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, walsender_terminated);
    tcase_add_test(tc, host_killed_and_restarted);
    tcase_add_test(tc, dropped_slot_resets_once);
    tcase_add_test(tc, slot_read_by_another_consumer_resets_once);
    tcase_add_test(tc, invalidated_slot_resets_once);
    tcase_add_test(tc, ddl_while_host_killed_event_trigger);
    tcase_add_test(tc, ddl_while_host_closed_announced);
    tcase_add_test(tc, ddl_while_down_unannounced);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("stream_dur");
    return pgwt_main(suite());
}
